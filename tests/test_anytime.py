"""The anytime-decision helper: the best result so far at the budget, even while a
step is still running; budgets reckoned from the referee's clock less a measured
margin; and the client measuring that margin on a real referee."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
import time
from typing import ClassVar

import pytest
import trio
from referee_support import GUARD_S, in_thread, referee_running, token_of

from oddtrick import Bot, GameConfig, MatchFormat, Seat
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._lag import LagMeter
from oddtrick._local import bot_view
from oddtrick.anytime import Budget, anytime, budget, clock_share, margin
from oddtrick.rules import GameState
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, read_log


def _view(time_left_ms=None, received_at=None, transport_ms=None):
    state = GameState(GameConfig.classic(), "anytime")
    view = bot_view(state, state.to_act, dict.fromkeys(Seat, "bot"), time_left_ms=time_left_ms)
    return dataclasses.replace(view, received_at=received_at, transport_ms=transport_ms)


def _soon(seconds):
    return Budget(time.monotonic() + seconds, 0.0)


def test_answers_with_the_last_result_while_a_step_still_runs():
    """The second step blocks until the test releases it, after the answer is back:
    the answer can only be the first step's, and the search is closed afterwards."""
    release, closed = threading.Event(), threading.Event()

    def search():
        try:
            yield "first"
            release.wait(GUARD_S)
            yield "second"
        finally:
            closed.set()

    answer = asyncio.run(anytime(_soon(0.2), search(), "fallback"))
    assert answer == "first"
    assert not closed.is_set()  # the step in flight is abandoned, not waited for
    release.set()
    assert closed.wait(GUARD_S)


def test_the_fallback_when_no_step_finished_in_time():
    release = threading.Event()

    def search():
        release.wait(GUARD_S)
        yield "late"

    assert asyncio.run(anytime(_soon(0.1), search(), "fallback")) == "fallback"
    release.set()


def test_a_search_that_ends_is_answered_at_once():
    """A budget of a minute, a search of three steps: the answer does not wait
    for the budget (the guard would fail the test)."""

    async def run():
        return await asyncio.wait_for(anytime(_soon(60), iter([1, 2, 3]), 0), GUARD_S)

    assert asyncio.run(run()) == 3


def test_an_error_in_the_search_is_raised_to_the_bot():
    def search():
        yield 1
        raise ValueError("the search broke")

    with pytest.raises(ValueError, match="the search broke"):
        asyncio.run(anytime(_soon(GUARD_S), search(), 0))


def test_a_spent_budget_answers_the_fallback_without_starting_the_search():
    started = threading.Event()

    def search():
        started.set()
        yield "searched"

    assert asyncio.run(anytime(_soon(-1), search(), "fallback")) == "fallback"
    assert not started.is_set()


def test_a_budget_spent_before_the_search_does_not_grow_the_margin():
    """Lateness counts from when the search could start: a request that came in with
    no time left must not make the next budgets shorter (which would feed itself)."""
    for _ in range(3):
        assert asyncio.run(anytime(_soon(-5), iter([1]), 0)) == 0
    assert margin(_view(time_left_ms=1000)) < 1


def test_the_budget_runs_from_receipt_and_stops_short_of_the_deadline():
    received = time.monotonic() - 0.3  # the request came in 0.3 s ago
    far = budget(_view(time_left_ms=60_000, received_at=received), think_s=1.0)
    assert far.answer_by == pytest.approx(received + 1.0)  # the think time is what limits
    near = budget(_view(time_left_ms=500, received_at=received), think_s=1.0)
    assert near.answer_by == pytest.approx(received + 0.5 - near.margin_s)
    assert near.margin_s > 0


def test_with_a_time_bank_the_budget_is_a_share_of_it():
    """A 5 s deadline and a bank of 3.5 s, 0.5 of it this decision's increment: the
    budget is the increment and a 30th of the rest (0.6 s), not the deadline."""
    received = time.monotonic()
    view = dataclasses.replace(
        _view(time_left_ms=3500, received_at=received), clock_left_ms=3500, clock_increment_ms=500
    )
    assert clock_share(view) == pytest.approx(0.5 + 3.0 / 30)
    limit = budget(view, think_s=2.0)
    assert limit.answer_by == pytest.approx(received + 0.6)
    # An empty bank leaves the increment; a short deadline still caps it.
    empty = dataclasses.replace(view, clock_left_ms=500, time_left_ms=500)
    assert clock_share(empty) == pytest.approx(0.5)
    assert budget(empty, think_s=2.0).answer_by < received + 0.5
    without = budget(_view(time_left_ms=3500, received_at=received), think_s=2.0)
    assert without.answer_by == pytest.approx(received + 2.0)


def test_the_client_tells_the_bot_its_bank():
    """The request's clock_left_ms and the match's increment reach the bot's view."""
    from oddtrick._codec import config_to_wire
    from oddtrick._seat_state import SeatState

    state = SeatState()
    started = referee_pb2.MatchStarted(
        seat=cards_pb2.SEAT_NORTH,
        config=config_to_wire(GameConfig.classic()),
        rules=game_pb2.TableRules(decision_deadline_ms=5000, clock_initial_ms=60_000, clock_increment_ms=500),
    )
    state.start_match(started)
    request = referee_pb2.DecisionRequest(
        request_id=1, time_left_ms=5000, clock_left_ms=42_000, seat=cards_pb2.SEAT_NORTH
    )
    view = state.view(request)
    assert (view.clock_left_ms, view.clock_increment_ms) == (42_000, 500)
    state.start_match(referee_pb2.MatchStarted(seat=cards_pb2.SEAT_NORTH, config=started.config))
    plain = referee_pb2.DecisionRequest(request_id=2, time_left_ms=5000, seat=cards_pb2.SEAT_NORTH)
    assert state.view(plain).clock_left_ms is None


def test_the_margin_holds_back_the_measured_transport_lag_twice():
    quiet = margin(_view(time_left_ms=1000, transport_ms=0.0))
    laggy = margin(_view(time_left_ms=1000, transport_ms=40.0))
    assert laggy - quiet == pytest.approx(0.08)
    unmeasured = margin(_view(time_left_ms=1000))
    assert unmeasured - quiet == pytest.approx(0.25)  # a quarter of the time left, until measured


def test_without_a_referee_clock_the_budget_is_the_think_time_from_now():
    before = time.monotonic()
    limit = budget(_view(), think_s=0.5)
    assert before + 0.5 <= limit.answer_by <= time.monotonic() + 0.5
    assert limit.margin_s == 0


# ----------------------------------------------------------------- the lag meter


def _played(seat, think_ms=None, by_referee=False):
    played = referee_pb2.CardPlayed(seat=seat, by_referee=by_referee)
    if think_ms is not None:
        played.think_ms = think_ms
    return referee_pb2.Event(card_played=played)


def test_the_lag_is_the_referees_time_less_the_bots_own():
    meter = LagMeter()
    assert meter.lag_ms is None
    meter.answered(0.250)
    meter.observe(_played(cards_pb2.SEAT_EAST, 270), cards_pb2.SEAT_NORTH)  # another seat's card
    assert meter.lag_ms is None
    meter.observe(_played(cards_pb2.SEAT_NORTH, 270), cards_pb2.SEAT_NORTH)
    assert meter.lag_ms == pytest.approx(20)
    meter.answered(0.100)
    meter.observe(_played(cards_pb2.SEAT_NORTH, 105), cards_pb2.SEAT_NORTH)
    assert meter.lag_ms == pytest.approx(20)  # the worst of the recent ones


def test_the_lag_is_the_worst_of_the_window_as_lags_age_out():
    """The meter keeps its worst lag as it goes: it must be the worst of the last
    ``window`` round trips whatever their order, the worst one leaving included."""
    rng = random.Random(7)
    window = 5
    meter = LagMeter(window)
    lags: list[int] = []
    for think_ms in [rng.choice([10, 40, 40, 90, 200]) for _ in range(300)]:
        meter.answered(0.0)
        meter.observe(_played(cards_pb2.SEAT_NORTH, think_ms), cards_pb2.SEAT_NORTH)
        lags.append(think_ms)
        assert meter.lag_ms == pytest.approx(max(lags[-window:]))


def test_a_fallback_closes_the_round_trip_without_a_measure():
    meter = LagMeter()
    meter.answered(0.1)
    meter.observe(_played(cards_pb2.SEAT_NORTH, by_referee=True), cards_pb2.SEAT_NORTH)
    meter.observe(_played(cards_pb2.SEAT_NORTH, 900), cards_pb2.SEAT_NORTH)  # no answer in flight
    assert meter.lag_ms is None


# ------------------------------------------------------------ on a real referee


class Sleeper(Bot):
    """Answers the first legal action after 0.5 s in the first tricks; records its views."""

    views: ClassVar[list] = []

    async def choose_call(self, view):
        return view.legal_actions[0]

    async def choose_card(self, view):
        Sleeper.views.append(view)
        if len(view.tricks) < 3:
            await asyncio.sleep(0.5)
        return view.legal_actions[0]


async def test_the_client_measures_the_lag_apart_from_the_bots_own_time(tmp_path):
    """Through the referee: each view says when its request arrived, and from the
    second decision on the lag measured; the bot's own 0.5 s is not counted in it,
    and the match log has the bot's own time beside the referee's."""
    Sleeper.views = []
    names = {seat: f"sleeper-{seat.name.lower()}" for seat in Seat}

    def play(name):
        options = ClientOptions(
            server=referee.address, name=name, token=token_of(name), max_matches=1, reconnect_for_s=5.0
        )
        asyncio.run(asyncio.wait_for(run_bot_async(Sleeper, options), GUARD_S * 4))

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(GUARD_S * 4):
            async with trio.open_nursery() as nursery:
                for name in names.values():
                    nursery.start_soon(in_thread, play, name)
                config = GameConfig.classic(format=MatchFormat.HAND)
                spec = MatchSpec(config, names, TableRules(deadline_s=5.0, grace_s=5.0), seed="lag")
                record = await referee.play_match(spec, wait_s=20)
    views = Sleeper.views
    assert len(views) == 52
    assert all(view.received_at is not None and view.received_at <= time.monotonic() for view in views)
    actions = [r for r in read_log(record.log_path) if r["type"] == "action"]
    assert len(actions) == 52
    # The log has the bot's own time beside the referee's, for every decision.
    assert all(0 <= r["bot_think_ms"] <= r["think_ms"] for r in actions)
    # The first three tricks' cards took the bot its 0.5 s (the others' own time is left
    # unasserted: a loaded machine may stall any decision, and timings are benchmarks' job).
    assert all(r["bot_think_ms"] >= 500 for r in actions[:12])
    for seat in Seat:
        seat_views = [v for v in views if v.seat is seat]
        answers = [r for r in actions if r["seat"] == str(seat)]
        assert seat_views[0].transport_ms is None  # nothing answered yet
        for number, view in enumerate(seat_views[1:], 1):
            # The lag in the view is the worst so far of the referee's time less the
            # bot's own (to rounding): the bot's 0.5 s sleeps are not counted in it.
            lag = max(r["think_ms"] - r["bot_think_ms"] for r in answers[:number])
            assert view.transport_ms == pytest.approx(lag, abs=1)
