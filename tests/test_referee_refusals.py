"""Illegal actions refused with their reason and the game unchanged, and
sessions refused at the handshake, on a real referee with raw gRPC bots.
"""

from __future__ import annotations

import grpc
import pytest
import trio
from referee_support import (
    PATIENCE_S,
    RawBot,
    bid_action,
    card_action,
    cards_of,
    connect_and_play,
    double_action,
    first_legal,
    in_thread,
    log_records,
    opening_bidder,
    pass_action,
    referee_running,
)

from oddtrick.rules import Card, GameConfig, GameKind, MatchFormat, Seat
from oddtrick.v1 import cards_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
RULES = TableRules(deadline_s=3.0, grace_s=3.0)
"""Refusals are answered at once; the deadline only guards a slow machine."""
R = referee_pb2

UNKNOWN_ID = 10**15


class Misbehaver:
    """A policy that tries illegal actions first, then answers legally.

    In the auction (when a bid stands): a bid too low, a double, a card, an
    empty action, a call with nothing set, a bid outside 7 … 13, an answer to
    request id 0 and to an id never issued. In play: a call, a card it does
    not hold, and (once the chance comes) a card of another suit while it
    holds the suit led. Each refusal is checked on the spot; the position at
    the next request is checked against the position before the refusals.
    """

    def __init__(self, seat: Seat, max_attempts: int) -> None:
        self.seat = seat
        self.wire_seat = seat + 1
        self.max_attempts = max_attempts
        self.tried: list[int] = []
        """The reasons of all refusals received, in order."""
        self.done: set[str] = set()
        self.pending: tuple[R.DecisionRequest, cards_pb2.Action, int] | None = None
        self.attempts = 0
        """Refused attempts at the request being answered."""

    def refused(
        self, bot: RawBot, request: R.DecisionRequest, action: cards_pb2.Action, reason: int, *, id_=None
    ):
        request_id = request.request_id if id_ is None else id_
        bot.answer(request_id, action)
        refusal = bot.next_message("refusal").refusal
        assert refusal.reason == reason, (R.RefusalReason.Name(refusal.reason), refusal.message)
        assert refusal.request_id == request_id
        assert refusal.action == action
        assert refusal.message
        if reason != R.REFUSAL_REASON_UNKNOWN_REQUEST:
            self.attempts += 1
            assert refusal.attempts_left == self.max_attempts - self.attempts
            assert 0 < refusal.time_left_ms <= request.time_left_ms
        self.tried.append(reason)
        return refusal

    def __call__(self, bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
        self.check_unchanged(bot, request)
        self.attempts = 0
        if request.kind == R.DECISION_KIND_CALL:
            return self.auction(bot, request)
        return self.play(bot, request)

    def auction(self, bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
        bids = [c.call.bid for c in request.hand.auction if c.call.HasField("bid")]
        if "auction" in self.done or not bids:
            return request.legal_actions[0]
        self.done.add("auction")
        highest = bids[-1]
        own = cards_of(request.hand.cards)
        self.refused(
            bot, request, bid_action(highest.level, highest.denomination), R.REFUSAL_REASON_BID_TOO_LOW
        )
        self.refused(bot, request, double_action(), R.REFUSAL_REASON_DOUBLE_NOT_ALLOWED)
        self.refused(bot, request, card_action(own[0]), R.REFUSAL_REASON_WRONG_PHASE)
        self.refused(bot, request, cards_pb2.Action(), R.REFUSAL_REASON_MALFORMED)
        self.refused(bot, request, cards_pb2.Action(call=cards_pb2.Call()), R.REFUSAL_REASON_MALFORMED)
        self.refused(bot, request, bid_action(6, cards_pb2.DENOMINATION_SPADES), R.REFUSAL_REASON_MALFORMED)
        for never_issued in (UNKNOWN_ID, 0):
            self.refused(bot, request, pass_action(), R.REFUSAL_REASON_UNKNOWN_REQUEST, id_=never_issued)
        self.pending = (request, pass_action(), len(bot.events))
        return pass_action()

    def play(self, bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
        hand = request.hand
        own = cards_of(hand.cards)
        legal = cards_of(a.card for a in request.legal_actions)
        if len(own) < 2:
            return request.legal_actions[0]
        if "play" not in self.done:
            self.done.add("play")
            not_held = next(c for c in map(Card.from_index, range(52)) if c not in own)
            self.refused(bot, request, pass_action(), R.REFUSAL_REASON_WRONG_PHASE)
            self.refused(bot, request, card_action(not_held), R.REFUSAL_REASON_CARD_NOT_HELD)
            self.refused(bot, request, cards_pb2.Action(card=cards_pb2.Card()), R.REFUSAL_REASON_MALFORMED)
            self.pending = (request, request.legal_actions[-1], len(bot.events))
            return request.legal_actions[-1]
        off_suit = [c for c in own if c not in legal]
        if "follow" not in self.done and hand.current_trick.cards and off_suit:
            self.done.add("follow")
            self.refused(bot, request, card_action(off_suit[0]), R.REFUSAL_REASON_MUST_FOLLOW_SUIT)
            self.pending = (request, request.legal_actions[0], len(bot.events))
            return request.legal_actions[0]
        return request.legal_actions[0]

    def check_unchanged(self, bot: RawBot, request: R.DecisionRequest) -> None:
        """At the request after a refused one: only the legal answer changed the game."""
        if self.pending is None:
            return
        before, answered, events_at = self.pending
        self.pending = None
        assert request.hand.hand_number == before.hand.hand_number
        mine = [e for e in bot.events[events_at:] if e.WhichOneof("kind") in ("call_made", "card_played")]
        mine = [getattr(e, e.WhichOneof("kind")) for e in mine]
        mine = [m for m in mine if m.seat == self.wire_seat]
        assert len(mine) == 1, mine
        made = mine[0]
        assert not made.by_referee
        assert made.HasField("think_ms")
        if answered.HasField("call"):
            assert made.call == answered.call
            assert list(request.hand.cards) == list(before.hand.cards)
            own_calls = [c.call for c in request.hand.auction if c.seat == self.wire_seat]
            assert own_calls == [answered.call]
        else:
            assert made.card == answered.card
            expected = [c for c in before.hand.cards if c != answered.card]
            assert list(request.hand.cards) == expected
            played = [p.card for t in request.hand.tricks for p in t.cards if p.seat == self.wire_seat]
            played += [p.card for p in request.hand.current_trick.cards if p.seat == self.wire_seat]
            before_played = [p.card for t in before.hand.tricks for p in t.cards if p.seat == self.wire_seat]
            assert played == [*before_played, answered.card]


@pytest.mark.parametrize("game", [GameKind.CONTRACT, GameKind.CLASSIC], ids=lambda g: g.value)
async def test_illegal_actions_are_refused_and_change_nothing(tmp_path, game):
    names = {N: "opener-n", E: "opener-e", S: "misbehaver", W: "opener-w"}
    config = GameConfig(game=game, format=MatchFormat.HAND)
    async with referee_running(tmp_path, names.values()) as referee:
        misbehaver = Misbehaver(S, referee.settings.limits.max_attempts)
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat, name in names.items():
                    policy = misbehaver if seat is S else opening_bidder
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, policy)
                record = await referee.play_match(MatchSpec(config, names, RULES, seed="refusals"), wait_s=20)

    reasons = {
        R.REFUSAL_REASON_WRONG_PHASE,
        R.REFUSAL_REASON_CARD_NOT_HELD,
        R.REFUSAL_REASON_MUST_FOLLOW_SUIT,
        R.REFUSAL_REASON_MALFORMED,
    }
    if game is GameKind.CONTRACT:
        reasons |= {
            R.REFUSAL_REASON_BID_TOO_LOW,
            R.REFUSAL_REASON_DOUBLE_NOT_ALLOWED,
            R.REFUSAL_REASON_UNKNOWN_REQUEST,
        }
        assert misbehaver.done == {"auction", "play", "follow"}
    else:
        assert misbehaver.done == {"play", "follow"}
    assert set(misbehaver.tried) == reasons
    report = check_log(record.log_path)
    assert report.ok, report.describe()
    seat_record = record.seats[S]
    unknown = misbehaver.tried.count(R.REFUSAL_REASON_UNKNOWN_REQUEST)
    assert seat_record.refusals == len(misbehaver.tried) - unknown
    assert seat_record.faults == {}
    assert not any(r.faults or r.refusals for s, r in record.seats.items() if s is not S)
    logged = [r["reason"] for r in log_records(record.log_path, "refusal")]
    assert logged == [R.RefusalReason.Name(r) for r in misbehaver.tried]  # UNKNOWN_REQUEST too
    assert all(r["seat"] == "S" for r in log_records(record.log_path, "refusal"))


def double_own_side(bot: RawBot, request: R.DecisionRequest) -> cards_pb2.Action:
    """West, partner of the opening bidder East: a double of its own side's bid is refused."""
    if request.kind == R.DECISION_KIND_CALL and not getattr(bot, "doubled", False):
        bot.doubled = True  # type: ignore[attr-defined]
        assert [c.seat for c in request.hand.auction] == [cards_pb2.SEAT_EAST, cards_pb2.SEAT_SOUTH]
        assert double_action() not in request.legal_actions
        bot.answer(request.request_id, double_action())
        refusal = bot.next_message("refusal").refusal
        assert refusal.reason == R.REFUSAL_REASON_DOUBLE_NOT_ALLOWED
        assert "own side" in refusal.message
        return pass_action()
    return request.legal_actions[0]


async def test_a_double_of_the_own_sides_bid_is_refused(tmp_path):
    names = {N: "dbl-n", E: "dbl-e", S: "dbl-s", W: "dbl-w"}
    policies = {N: opening_bidder, E: opening_bidder, S: first_legal, W: double_own_side}
    config = GameConfig.contract(format=MatchFormat.HAND, doubling=True)
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat, name in names.items():
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, policies[seat])
                record = await referee.play_match(MatchSpec(config, names, RULES, seed="double"), wait_s=20)
    assert check_log(record.log_path).ok
    assert record.seats[W].refusals == 1
    assert record.seats[W].faults == {}
    assert record.state.hand_results[0].contract is not None
    assert not record.state.hand_results[0].contract.doubled


# ---------------------------------------------------------------------------
# The handshake
# ---------------------------------------------------------------------------


def handshake(address: str, name: str, first: R.BotMessage | None = None, **hello) -> tuple:
    bot = RawBot(address, name)
    if first is not None:
        bot.send_raw(first)
    else:
        bot.send_hello(**hello)
    status = bot.wait_status()
    bot.close()
    return status, [m.WhichOneof("kind") for m in bot.received]


def second_hello(address: str, name: str) -> tuple:
    bot = RawBot(address, name)
    welcome = bot.hello()
    bot.send_hello()
    status = bot.wait_status()
    bot.close()
    return welcome, status


async def test_sessions_refused_at_the_handshake(tmp_path):
    async with referee_running(tmp_path, ["gina"]) as referee:
        address = referee.address
        with trio.fail_after(PATIENCE_S):
            wrong_token = await in_thread(lambda: handshake(address, "gina", token="not-her-token"))
            unknown_name = await in_thread(lambda: handshake(address, "stranger"))
            wrong_protocol = await in_thread(lambda: handshake(address, "gina", protocol="oddtrick.v9"))
            no_game = await in_thread(lambda: handshake(address, "gina", games=[]))
            decision_first = R.BotMessage(decision=R.Decision(request_id=1, action=pass_action()))
            not_hello = await in_thread(handshake, address, "gina", decision_first)
            empty_first = await in_thread(handshake, address, "gina", R.BotMessage())
            stale_resume = await in_thread(lambda: handshake(address, "gina", resume_token="nope"))
            welcome, twice = await in_thread(second_hello, address, "gina")

    assert wrong_token[0][0] is grpc.StatusCode.UNAUTHENTICATED, wrong_token
    assert unknown_name[0][0] is grpc.StatusCode.UNAUTHENTICATED, unknown_name
    assert wrong_protocol[0][0] is grpc.StatusCode.FAILED_PRECONDITION, wrong_protocol
    assert "oddtrick.v1" in wrong_protocol[0][1]
    assert no_game[0][0] is grpc.StatusCode.FAILED_PRECONDITION, no_game
    assert not_hello[0][0] is grpc.StatusCode.INVALID_ARGUMENT, not_hello
    assert empty_first[0][0] is grpc.StatusCode.INVALID_ARGUMENT, empty_first
    assert stale_resume[0][0] is grpc.StatusCode.NOT_FOUND, stale_resume
    for refused in (wrong_token, unknown_name, wrong_protocol, no_game, not_hello, empty_first, stale_resume):
        assert refused[1] == [], "a refused session must get no Welcome"
    assert welcome.session_id
    assert welcome.resume_token
    assert not welcome.resumed
    assert welcome.protocol.name == "oddtrick.v1"
    assert twice[0] is grpc.StatusCode.INVALID_ARGUMENT, twice
