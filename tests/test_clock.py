"""The match clock (a time bank per seat, ``--clock BANK+INCREMENT``): its rule, its
enforcement by a real referee, its record in the log and ``oddtrick check`` of it."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from referee_support import (
    PATIENCE_S,
    RawBot,
    connect_and_play,
    first_legal,
    in_thread,
    log_records,
    own_event,
    referee_running,
)
from tournament_support import entries, match_logs, run_tournament, sample_bot

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.play.clock import ClockRule, SeatClock, replay_bank, time_control
from oddtrick_referee.play.table import Fault

ROOT = Path(__file__).resolve().parents[1]
N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST


# ------------------------------------------------------------------ the rule


def test_a_clock_is_written_bank_plus_increment_in_seconds():
    assert ClockRule.parse("60+0.5") == ClockRule(60_000, 500)
    assert ClockRule.parse(" 0+1 ") == ClockRule(0, 1000)
    assert str(ClockRule.parse("90+.25")) == "90+0.25"
    assert ClockRule.from_record(ClockRule(60_000, 500).to_record()) == ClockRule(60_000, 500)
    assert time_control(5.0, ClockRule(60_000, 500)) == (
        "5 s a decision; clock 60+0.5 (a bank of 60 s a seat per match, +0.5 s a decision)"
    )


@pytest.mark.parametrize("text", ["60", "60+", "+1", "a+b", "-1+1", "0+0", "60+0.5+1"])
def test_a_clock_that_is_not_bank_plus_increment_is_refused(text):
    with pytest.raises(ValueError, match=r"BANK|no time at all"):
        ClockRule.parse(text)


def test_the_bank_takes_the_increment_then_the_decisions_time():
    clock = SeatClock(ClockRule(1000, 300))
    assert clock.begin(deadline_ms=5000) == 1300  # the bank bounds it
    assert clock.bank_bounds
    clock.answered(400)
    assert clock.left_ms == 900
    assert clock.begin(deadline_ms=1000) == 1000  # the deadline caps it
    assert not clock.bank_bounds
    clock.expired()  # a time-out costs the whole deadline
    assert clock.left_ms == 200
    assert clock.begin(deadline_ms=1000) == 500
    clock.expired()  # the bank ran out
    assert clock.left_ms == 0
    assert clock.begin(deadline_ms=1000) == 300  # an empty bank still has the increment
    assert replay_bank(ClockRule(1000, 300), 5000, 400, None, 1000) == 900
    assert replay_bank(ClockRule(1000, 300), 1000, None, "timeout", 900) == 200
    assert replay_bank(ClockRule(1000, 300), 1000, None, "forfeited", 200) == 200


# ------------------------------------------------------------------ at a real referee


CLOCK = ClockRule(1200, 300)
DEADLINE_S = 1.0


class Spender:
    """Lets its first request reach the deadline (the bank is fuller), and its second
    run out of bank (now less than the deadline); then answers at once."""

    def __init__(self) -> None:
        self.requests: list[referee_pb2.DecisionRequest] = []

    def __call__(self, bot: RawBot, request: referee_pb2.DecisionRequest) -> cards_pb2.Action | None:
        self.requests.append(request)
        return None if len(self.requests) <= 2 else first_legal(bot, request)


async def _play_one_hand(tmp_path: Path) -> tuple[object, Spender, dict[Seat, RawBot]]:
    names = {N: "quick-n", E: "quick-e", S: "spender", W: "quick-w"}
    spender = Spender()
    bots: dict[Seat, RawBot] = {}
    rules = TableRules(deadline_s=DEADLINE_S, grace_s=5.0, clock=CLOCK)

    async def player(seat: Seat, address: str) -> None:
        policy = spender if seat is S else first_legal
        bots[seat] = await in_thread(connect_and_play, address, names[seat], policy)

    config = GameConfig.classic(format=MatchFormat.HAND)
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(player, seat, referee.address)
                record = await referee.play_match(MatchSpec(config, names, rules, seed="clock"), wait_s=20)
    return record, spender, bots


async def test_the_referee_enforces_the_bank_and_tells_the_seat(tmp_path):
    record, spender, bots = await _play_one_hand(tmp_path)
    assert record.seats[S].faults == {Fault.TIMEOUT: 1, Fault.CLOCK: 1}
    assert sum(sum(seat.faults.values()) for seat in record.seats.values()) == 2
    first, second, third = spender.requests[:3]
    # Each request: the bank with this decision's increment, and the smaller of it and the deadline.
    assert (first.clock_left_ms, first.time_left_ms) == (1500, 1000)
    assert (second.clock_left_ms, second.time_left_ms) == (800, 800)
    assert (third.clock_left_ms, third.time_left_ms) == (300, 300)
    # The seat (and every seat) is told which limit ran out, in the event of its action.
    cards = [e.card_played for e in bots[S].events if e.HasField("card_played")]
    south = [card for card in cards if card.seat == cards_pb2.SEAT_SOUTH]
    assert [(card.by_referee, card.fault) for card in south[:2]] == [
        (True, game_pb2.FAULT_KIND_TIMEOUT),
        (True, game_pb2.FAULT_KIND_CLOCK),
    ]
    assert own_event(bots[N], "card_played", cards_pb2.SEAT_SOUTH).fault == game_pb2.FAULT_KIND_TIMEOUT
    started = next(e.match_started for e in bots[S].events if e.HasField("match_started"))
    assert (started.rules.clock_initial_ms, started.rules.clock_increment_ms) == (1200, 300)
    ended = next(e.match_ended for e in bots[S].events if e.HasField("match_ended"))
    faults = next(seat.faults for seat in ended.seats if seat.seat == cards_pb2.SEAT_SOUTH)
    assert [(f.kind, f.count) for f in faults] == [
        (game_pb2.FAULT_KIND_TIMEOUT, 1),
        (game_pb2.FAULT_KIND_CLOCK, 1),
    ]

    # The log: the clock in the header, every bank after its decision, checked by replay.
    header = log_records(record.log_path, "match_start")[0]
    assert header["rules"]["clock"] == {"initial_ms": 1200, "increment_ms": 300}
    south_actions = [r for r in log_records(record.log_path, "action") if r["seat"] == "S"]
    assert [(r.get("fault"), r["clock_ms"]) for r in south_actions[:2]] == [("timeout", 500), ("clock", 0)]
    for before, after in itertools.pairwise(south_actions[1:]):
        assert after["clock_ms"] == before["clock_ms"] + 300 - after["think_ms"]
    report = check_log(record.log_path)
    assert report.ok, report.describe()

    # A bank that does not follow from the log is found, with the action it is on.
    lines = record.log_path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"clock_ms":0' in line)
    lines[at] = lines[at].replace('"clock_ms":0', '"clock_ms":700')
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(lines))
    report = check_log(tampered)
    assert not report.ok
    assert any("logged as 700 ms; the clock's rule makes it 0 ms" in problem for problem in report.problems)


def _drop_and_resume(address: str, name: str) -> tuple[referee_pb2.DecisionRequest, referee_pb2.Resync]:
    """Play to the third card request, drop the stream, resume, answer, play on."""
    bot = RawBot(address, name)
    welcome = bot.hello()
    cards = 0
    while True:
        request = bot.next_request()
        cards += request.kind == referee_pb2.DECISION_KIND_CARD
        if cards == 3:
            break
        bot.answer(request.request_id, request.legal_actions[0])
    bot.drop()
    again = RawBot(address, name)
    again.hello(resume_token=welcome.resume_token)
    resync = again.next_message("resync").resync
    again.answer(resync.request.request_id, resync.request.legal_actions[0])
    again.play(first_legal)
    return request, resync


async def test_a_resumed_seat_is_told_its_bank_less_the_time_spent(tmp_path):
    names = {N: "steady-n", E: "steady-e", S: "flaky", W: "steady-w"}
    rules = TableRules(deadline_s=3.0, grace_s=5.0, clock=ClockRule(10_000, 500))
    seen: list[tuple[referee_pb2.DecisionRequest, referee_pb2.Resync]] = []

    async def flaky(address: str) -> None:
        seen.append(await in_thread(_drop_and_resume, address, "flaky"))

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(flaky, referee.address)
                for seat in (N, E, W):
                    nursery.start_soon(in_thread, connect_and_play, referee.address, names[seat], first_legal)
                spec = MatchSpec(GameConfig.classic(format=MatchFormat.HAND), names, rules, seed="resume")
                record = await referee.play_match(spec, wait_s=20)
    ((dropped, resync),) = seen
    spent = dropped.time_left_ms - resync.request.time_left_ms
    assert 0 <= spent < dropped.time_left_ms
    assert resync.request.clock_left_ms == dropped.clock_left_ms - spent
    assert resync.match.rules.clock_initial_ms == 10_000
    assert sum(sum(seat.faults.values()) for seat in record.seats.values()) == 0
    assert check_log(record.log_path).ok


# ------------------------------------------------------------------ the commands


def test_tournament_offers_the_clock_and_shows_it_in_the_standings(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--game",
            "classic",
            "--deals",
            "1",
            "--bot",
            f"a={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--bot",
            f"b={ROOT / 'sample_bots' / 'heuristic_bot.py'}",
            "--clock",
            "30+0.5",
            "--data-dir",
            str(tmp_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    standings = json.loads(result.stdout)
    assert (
        standings["time_control"]
        == "5 s a decision; clock 30+0.5 (a bank of 30 s a seat per match, +0.5 s a decision)"
    )
    log = next((tmp_path / "logs").rglob("*.jsonl"))
    assert json.loads(log.read_text().split("\n")[0])["rules"]["clock"] == {
        "initial_ms": 30_000,
        "increment_ms": 500,
    }
    assert check_log(log).ok


def test_the_strong_bot_spends_its_bank_over_the_match(tmp_path):
    """The strong bot thinks a second a decision when it may; under a clock of 3+0.2 that
    would empty its bank in a few cards. Its anytime budget takes a share of the bank
    instead (the increment and a 30th of the rest), so it never runs out."""
    pytest.importorskip("endplay")
    result = run_tournament(
        tmp_path,
        "--set-size",
        "1",
        "--clock",
        "3+0.2",
        "--json",
        bots={"pimc": sample_bot("pimc"), "heuristic": sample_bot("heuristic")},
        timeout=900,
    )
    pimc = entries(result)["pimc"]
    assert pimc["faults"]["clock"] == pimc["faults"]["timeouts"] == 0
    assert pimc["time"]["answered"] > 60
    # A second a decision would have spent 3 s of bank plus 0.2 s a decision long before.
    assert pimc["time"]["think_ms"]["p50"] < 600
    logs = match_logs(tmp_path)
    assert len(logs) == 4
    for log in logs:
        assert check_log(log).ok


@pytest.mark.parametrize("command", [["tournament"], ["sprt"], ["ladder", "serve"], ["serve"]])
def test_the_commands_say_what_the_clock_is(command):
    result = subprocess.run(
        [sys.executable, "-m", "oddtrick", *command, "--help"], capture_output=True, text=True, check=True
    )
    assert "--clock BANK+INCREMENT" in result.stdout
    assert "60+0.5" in result.stdout


def test_a_bad_clock_is_refused_before_anything_starts(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--deals",
            "1",
            "--bot",
            f"a={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--bot",
            f"b={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--clock",
            "60",
            "--data-dir",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "--clock expects BANK+INCREMENT in seconds, e.g. 60+0.5" in result.stderr
    assert not (tmp_path / "data").exists()
