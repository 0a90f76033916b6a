"""Time, dropped connections and abusive bots, on a real referee.

A bot that misses its deadline gets the fallback and a fault; one that drops
its stream can resume within the grace period, and forfeits after it; one
that floods or sends garbage is cut off while another table plays on.
"""

from __future__ import annotations

import threading

import grpc
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from referee_support import (
    GUARD_S,
    PATIENCE_S,
    RawBot,
    card_action,
    connect_and_play,
    count_faults,
    first_legal,
    in_thread,
    log_records,
    lowest_legal_card,
    opening_bidder,
    own_event,
    referee_running,
    run_sdk_bot,
)

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.play.table import Fault

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
R = referee_pb2
ONE_CLASSIC_HAND = GameConfig.classic(format=MatchFormat.HAND)


# ---------------------------------------------------------------------------
# Timeouts
# ---------------------------------------------------------------------------


class Sleeper:
    """Lets its first call and its first card time out, then answers the expired
    requests late (which must be ignored, not refused) and plays on."""

    def __init__(self) -> None:
        self.skipped: dict[int, R.DecisionRequest] = {}
        self.late: list[R.DecisionRequest] = []

    def __call__(self, bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action | None:
        for old in self.late:
            bot.answer(old.request_id, old.legal_actions[0])
        self.late = []
        if request.kind not in self.skipped:
            self.skipped[request.kind] = request
            self.late.append(request)
            return None
        return opening_bidder(bot, request)


async def test_a_timeout_gets_the_fallback_and_a_fault(tmp_path):
    names = {N: "quick-n", E: "quick-e", S: "sleeper", W: "quick-w"}
    sleeper = Sleeper()
    bots: dict[Seat, RawBot] = {}
    rules = TableRules(deadline_s=0.4, grace_s=2.0)

    async def player(seat: Seat, address: str) -> None:
        policy = sleeper if seat is S else opening_bidder
        bots[seat] = await in_thread(connect_and_play, address, names[seat], policy)

    config = GameConfig.contract(format=MatchFormat.HAND)
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(player, seat, referee.address)
                record = await referee.play_match(MatchSpec(config, names, rules, seed="timeouts"), wait_s=20)

    assert record.seats[S].faults == {Fault.TIMEOUT: 2}
    assert record.seats[S].refusals == 0
    assert not record.seats[S].forfeited
    call = own_event(bots[S], "call_made", cards_pb2.SEAT_SOUTH)
    assert call.call.HasField("pass_call")
    assert call.by_referee
    assert call.fault == game_pb2.FAULT_KIND_TIMEOUT
    assert not call.HasField("think_ms")
    card_request = sleeper.skipped[R.DECISION_KIND_CARD]
    card = own_event(bots[S], "card_played", cards_pb2.SEAT_SOUTH)
    assert card.card == card_action(lowest_legal_card(card_request)).card
    assert card.by_referee
    assert card.fault == game_pb2.FAULT_KIND_TIMEOUT
    # Every seat is told the same about the referee's actions.
    for bot in bots.values():
        assert own_event(bot, "card_played", cards_pb2.SEAT_SOUTH) == card
    faulted = [r for r in log_records(record.log_path, "action") if "fault" in r]
    assert [(r["seat"], r["fault"]) for r in faulted] == [("S", "timeout"), ("S", "timeout")]
    assert faulted[0]["action"] == "pass"
    assert faulted[1]["action"] == str(lowest_legal_card(card_request))
    assert faulted[0]["think_ms"] is None
    report = check_log(record.log_path)
    assert report.ok, report.describe()
    ended = next(e.match_ended for e in bots[S].events if e.HasField("match_ended"))
    south = next(s for s in ended.seats if s.seat == cards_pb2.SEAT_SOUTH)
    assert [(f.kind, f.count) for f in south.faults] == [(game_pb2.FAULT_KIND_TIMEOUT, 2)]


# ---------------------------------------------------------------------------
# Dropped connections
# ---------------------------------------------------------------------------


def play_until_card(bot: RawBot, nth: int) -> R.DecisionRequest:
    """Answer first-legal until the ``nth`` card request, which is returned unanswered."""
    cards = 0
    while True:
        request = bot.next_request()
        if request.kind == R.DECISION_KIND_CARD:
            cards += 1
            if cards == nth:
                return request
        bot.answer(request.request_id, request.legal_actions[0])


def drop_and_resume(address: str, name: str) -> dict:
    bot = RawBot(address, name)
    welcome = bot.hello()
    dropped = play_until_card(bot, 3)
    last_sequence = bot.events[-1].sequence
    bot.drop()
    again = RawBot(address, name)
    resumed = again.hello(resume_token=welcome.resume_token)
    resync = again.next_message("resync").resync
    again.answer(resync.request.request_id, resync.request.legal_actions[0])
    again.play(first_legal)
    first_update = next(m.update for m in again.received if m.HasField("update"))
    return {
        "welcome": welcome,
        "dropped": dropped,
        "last_sequence": last_sequence,
        "old_status": bot.status,
        "resumed": resumed,
        "resync": resync,
        "first_update": first_update,
    }


async def test_a_dropped_bot_resumes_within_the_grace_period(tmp_path):
    names = {N: "steady-n", E: "steady-e", S: "flaky", W: "steady-w"}
    results = {}
    rules = TableRules(deadline_s=3.0, grace_s=5.0)

    async def flaky(address: str) -> None:
        results.update(await in_thread(drop_and_resume, address, "flaky"))

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(flaky, referee.address)
                for seat in (N, E, W):
                    nursery.start_soon(in_thread, connect_and_play, referee.address, names[seat], first_legal)
                spec = MatchSpec(ONE_CLASSIC_HAND, names, rules, seed="resume")
                record = await referee.play_match(spec, wait_s=20)

    assert results["old_status"][0] is grpc.StatusCode.CANCELLED
    resumed, welcome = results["resumed"], results["welcome"]
    assert resumed.resumed
    assert resumed.session_id == welcome.session_id
    assert resumed.resume_token == welcome.resume_token
    resync, dropped = results["resync"], results["dropped"]
    assert resync.last_sequence == results["last_sequence"]
    assert resync.match.seat == cards_pb2.SEAT_SOUTH
    assert resync.match.match_id == record.match_id
    assert resync.HasField("request")
    assert resync.request.request_id == dropped.request_id
    assert list(resync.request.legal_actions) == list(dropped.legal_actions)
    assert 0 < resync.request.time_left_ms <= dropped.time_left_ms
    assert resync.hand.hand_number == dropped.hand.hand_number
    assert list(resync.hand.cards) == list(dropped.hand.cards)
    assert list(resync.hand.tricks) == list(dropped.hand.tricks)
    assert resync.hand.current_trick == dropped.hand.current_trick
    assert len(resync.hand.cards) == 11  # mid-hand: two cards played
    events = results["first_update"].events
    assert events[0].sequence == resync.last_sequence + 1
    assert events[0].card_played.seat == cards_pb2.SEAT_SOUTH
    assert events[0].card_played.card == resync.request.legal_actions[0].card
    assert not events[0].card_played.by_referee
    assert not record.seats[S].forfeited
    assert count_faults(record.seats) == 0, record.seats
    assert [r["seat"] for r in log_records(record.log_path, "reconnect")] == ["S"]
    assert [r["seat"] for r in log_records(record.log_path, "disconnect")] == ["S"]
    kinds = [r["type"] for r in log_records(record.log_path)]
    assert kinds.index("disconnect") < kinds.index("reconnect")
    assert check_log(record.log_path).ok


class ForfeitWatch:
    """North's policy: first legal, and it signals once it sees South's forfeited card."""

    def __init__(self) -> None:
        self.seen = threading.Event()

    def __call__(self, bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
        for event in bot.events:
            if event.card_played.fault == game_pb2.FAULT_KIND_FORFEITED:
                assert event.card_played.seat == cards_pb2.SEAT_SOUTH
                assert event.card_played.by_referee
                self.seen.set()
        return request.legal_actions[0]


def drop_for_good(address: str, name: str, forfeited: threading.Event) -> tuple:
    bot = RawBot(address, name)
    welcome = bot.hello()
    play_until_card(bot, 3)
    bot.drop()
    assert forfeited.wait(GUARD_S), "no forfeited card was ever reported"
    late = RawBot(address, name)
    late.send_hello(resume_token=welcome.resume_token)
    status = late.wait_status()
    late.close()
    return status, [m.WhichOneof("kind") for m in late.received]


async def test_a_bot_gone_past_the_grace_period_forfeits(tmp_path):
    names = {N: "watch-n", E: "stay-e", S: "vanisher", W: "stay-w"}
    watch = ForfeitWatch()
    rules = TableRules(deadline_s=0.3, grace_s=0.6)
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=2)
    outcome = {}

    async def vanisher(address: str) -> None:
        outcome["late"] = await in_thread(drop_for_good, address, "vanisher", watch.seen)

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(vanisher, referee.address)
                nursery.start_soon(in_thread, connect_and_play, referee.address, names[N], watch)
                for seat in (E, W):
                    nursery.start_soon(in_thread, connect_and_play, referee.address, names[seat], first_legal)
                record = await referee.play_match(MatchSpec(config, names, rules, seed="forfeit"), wait_s=20)

    status, received = outcome["late"]
    assert status[0] is grpc.StatusCode.NOT_FOUND, status
    assert received == []
    south = record.seats[S]
    assert south.forfeited
    assert south.faults.get(Fault.DISCONNECTED, 0) >= 1
    assert south.faults.get(Fault.FORFEITED, 0) >= 1
    # 26 turns in two hands: 2 answered before the drop, every other one a fallback, each a fault.
    assert south.decisions == 2
    assert sum(south.faults.values()) == 24
    assert not any(r.forfeited or r.faults for seat, r in record.seats.items() if seat is not S)
    assert record.state.match_result is not None
    assert record.state.match_result.hands_played == 2
    forfeits = log_records(record.log_path, "forfeit")
    assert [(r["seat"], r["hand"]) for r in forfeits] == [("S", 1)]
    south_faults = [
        r["fault"] for r in log_records(record.log_path, "action") if r["seat"] == "S" and "fault" in r
    ]
    assert set(south_faults) == {"disconnected", "forfeited"}
    assert south_faults[-1] == "forfeited"
    report = check_log(record.log_path)
    assert report.ok, report.describe()


# ---------------------------------------------------------------------------
# Abuse at one table, a normal match at another
# ---------------------------------------------------------------------------


def flood(address: str, name: str) -> tuple:
    """Answer the first request, then send the same answer again and again."""
    bot = RawBot(address, name)
    bot.hello()
    request = bot.next_request()
    for _ in range(60):
        bot.answer(request.request_id, request.legal_actions[0])
    status = bot.wait_status()
    bot.close()
    return status


def garbage(address: str, name: str) -> tuple:
    """At its first request, send messages with no field set, then a second Hello."""
    bot = RawBot(address, name)
    bot.hello()
    bot.next_request()
    for _ in range(5):
        bot.send_raw(R.BotMessage())
    bot.send_hello()
    status = bot.wait_status()
    bot.close()
    return status


def health_status(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5).status


def welcome_after(address: str, name: str) -> R.Welcome:
    bot = RawBot(address, name)
    welcome = bot.hello()
    bot.leave()
    assert bot.wait_status()[0] is grpc.StatusCode.OK
    bot.close()
    return welcome


async def test_flooding_and_garbage_are_cut_off_while_another_table_plays_on(tmp_path):
    table_a = {N: "flooder", E: "garbler", S: "calm-s", W: "calm-w"}
    table_b = {N: "fair-ns", E: "fair-ew", S: "fair-ns", W: "fair-ew"}
    statuses = {}
    records = {}

    async def abuser(name: str, script, address: str) -> None:
        statuses[name] = await in_thread(script, address, name)

    async def play(key: str, spec: MatchSpec) -> None:
        records[key] = await referee.play_match(spec, wait_s=20)

    names = [*table_a.values(), "fair-ns", "fair-ew", "late-comer"]
    async with referee_running(tmp_path, names) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(abuser, "flooder", flood, referee.address)
                nursery.start_soon(abuser, "garbler", garbage, referee.address)
                for seat in (S, W):
                    nursery.start_soon(
                        in_thread, connect_and_play, referee.address, table_a[seat], first_legal
                    )
                for name in ("fair-ns", "fair-ew"):
                    nursery.start_soon(in_thread, run_sdk_bot, referee.address, name, 2, 1)
                harsh = TableRules(deadline_s=0.3, grace_s=0.5)
                nursery.start_soon(play, "A", MatchSpec(ONE_CLASSIC_HAND, table_a, harsh, seed="abuse"))
                relaxed = TableRules(deadline_s=5.0, grace_s=5.0)
                config_b = GameConfig.contract(format=MatchFormat.DEALS, deals=2)
                nursery.start_soon(play, "B", MatchSpec(config_b, table_b, relaxed, seed="fair"))
            serving = await in_thread(health_status, referee.address)
            welcome = await in_thread(welcome_after, referee.address, "late-comer")

    assert statuses["flooder"][0] is grpc.StatusCode.RESOURCE_EXHAUSTED, statuses
    assert statuses["garbler"][0] is grpc.StatusCode.INVALID_ARGUMENT, statuses
    a, b = records["A"], records["B"]
    assert a.state.match_result is not None
    assert a.seats[N].forfeited
    assert a.seats[E].forfeited
    assert a.seats[N].faults.get(Fault.FORFEITED, 0) >= 1
    assert a.seats[E].faults.get(Fault.FORFEITED, 0) >= 1
    assert check_log(a.log_path).ok
    assert b.state.match_result is not None
    assert b.state.match_result.hands_played == 2
    assert count_faults(b.seats) == 0, b.seats
    assert check_log(b.log_path).ok
    assert serving == health_pb2.HealthCheckResponse.SERVING
    assert welcome.session_id


def chatty(bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
    """Sends a message of a kind the referee does not know before each answer (a newer bot might)."""
    bot.send_raw(R.BotMessage())
    return request.legal_actions[0]


async def test_a_few_unknown_messages_per_request_are_tolerated_for_a_whole_match(tmp_path):
    """The unsolicited count starts again at every request: 26 unknown messages over two
    deals (more than max_unsolicited in all, one per request) must not cut the bot off."""
    names = {N: "chatty", E: "plain-e", S: "plain-s", W: "plain-w"}
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=2)
    async with referee_running(tmp_path, names.values()) as referee:
        assert referee.settings.limits.max_unsolicited < 26
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat, name in names.items():
                    policy = chatty if seat is N else first_legal
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, policy)
                spec = MatchSpec(config, names, TableRules(deadline_s=5.0, grace_s=5.0), seed="chatty")
                record = await referee.play_match(spec, wait_s=20)
    assert record.seats[N].decisions == 26
    assert count_faults(record.seats) == 0, record.seats
