"""The documented limits hold against a bot flooding the open request: max_attempts answers
are evaluated, max_unsolicited more are tolerated, the next one ends the call; the other
table plays on without a fault."""

from __future__ import annotations

import logging
from pathlib import Path

import grpc
import pytest
import trio
from referee_support import (
    PATIENCE_S,
    RawBot,
    card_action,
    cards_of,
    connect_and_play,
    count_faults,
    first_legal,
    in_thread,
    log_records,
    referee_running,
)

from oddtrick.rules import PACK, GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules, check_log

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
FLOOD = 3_000
UNKNOWN_ID = 10**15


def flood_open_request(address: str, name: str) -> tuple[grpc.StatusCode, int, int]:
    """At the first request, answer it FLOOD times with a card not held. Returns the final
    status, how many refusals came back, and how many of them said attempts were left."""
    bot = RawBot(address, name)
    bot.hello()
    request = bot.next_request()
    held = set(cards_of(request.hand.cards))
    not_held = next(card for card in PACK if card not in held)
    bot.answer(UNKNOWN_ID, card_action(not_held))  # an id never issued: refused, logged
    for _ in range(FLOOD):
        bot.answer(request.request_id, card_action(not_held))
    code, _ = bot.wait_status()
    refusals = [m.refusal for m in bot.received if m.HasField("refusal")]
    bot.close()
    return code, len(refusals), sum(1 for r in refusals if r.attempts_left)


async def test_a_flood_on_the_open_request_is_cut_off_at_the_documented_limits(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="oddtrick")
    flooded = {N: "calm-n", E: "calm-e", S: "calm-s", W: "flooder"}
    fair = {N: "fair-ns", E: "fair-ew", S: "fair-ns", W: "fair-ew"}
    records = {}
    async with referee_running(tmp_path, [*flooded.values(), "fair-ns", "fair-ew"]) as referee:
        limits = referee.settings.limits
        address = referee.address

        async def play(key: str, spec: MatchSpec) -> None:
            records[key] = await referee.play_match(spec, wait_s=20)

        async def flooder() -> None:
            records["flooder"] = await in_thread(flood_open_request, address, "flooder")

        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(flooder)
                for name in ("calm-n", "calm-e", "calm-s", "fair-ns", "fair-ns", "fair-ew", "fair-ew"):
                    nursery.start_soon(in_thread, connect_and_play, address, name, first_legal)
                one_hand = GameConfig.classic(format=MatchFormat.HAND)
                short = TableRules(deadline_s=1.0, grace_s=0.5)
                nursery.start_soon(play, "flooded", MatchSpec(one_hand, flooded, short, seed="flood"))
                relaxed = TableRules(deadline_s=5.0, grace_s=5.0)
                config = GameConfig.contract(format=MatchFormat.DEALS, deals=2)
                nursery.start_soon(play, "fair", MatchSpec(config, fair, relaxed, seed="fair"))
    code, refusals, with_attempts_left = records["flooder"]
    assert code is grpc.StatusCode.RESOURCE_EXHAUSTED
    # The referee evaluates one UNKNOWN_REQUEST refusal, then one per attempt, and nothing
    # for the rest (the record and the log below say so exactly). What reaches the flooder is
    # at most that: the flood is cut off as it arrives, and on a busy machine the cut can come
    # before the table has sent its refusals of the attempts it was given, which the closed
    # stream then never carries.
    assert 1 <= refusals <= 1 + limits.max_attempts
    assert with_attempts_left <= limits.max_attempts - 1
    flooded_record = records["flooded"]
    assert flooded_record.seats[W].refusals == limits.max_attempts
    logged = log_records(flooded_record.log_path, "refusal")
    assert [r["reason"] for r in logged][:1] == ["REFUSAL_REASON_UNKNOWN_REQUEST"]
    assert len(logged) == 1 + limits.max_attempts
    assert any("never issued" in r.getMessage() for r in caplog.records)
    assert check_log(flooded_record.log_path).ok
    fair_record = records["fair"]
    assert count_faults(fair_record.seats) == 0, fair_record.seats
    assert check_log(fair_record.log_path).ok
