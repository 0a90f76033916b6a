"""Every Play call ends with a status and its resources are released, whatever the bot
sent: bytes that are not a BotMessage, or a half-close of its side, before the Hello,
idle or seated. A normal table plays on meanwhile."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
import trio
from referee_support import (
    PATIENCE_S,
    RawBot,
    connect_and_play,
    count_faults,
    first_legal,
    in_thread,
    referee_running,
)

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.play.table import Fault
from oddtrick_referee.transport.sessions import SessionLimits

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
NOT_A_MESSAGE = b"\xff\xff\xff\xff"
"""Field 31 with an invalid wire type: no protobuf parser accepts it."""

Misdeed = Callable[[RawBot], None]


def garbage(bot: RawBot) -> None:
    bot.send_bytes(NOT_A_MESSAGE)


def half_close(bot: RawBot) -> None:
    bot.half_close()


def misbehave(address: str, name: str, misdeed: Misdeed, when: str) -> tuple[grpc.StatusCode, str]:
    """Commit ``misdeed`` before the Hello, once idle, or at the first request; then wait
    (with the channel open: only the referee can end the call) for the call's status."""
    bot = RawBot(address, name)
    if when != "before hello":
        bot.hello()
    if when == "seated":
        bot.next_request()
    misdeed(bot)
    status = bot.wait_status()
    bot.close()
    return status


async def test_garbage_and_half_closes_end_the_call_with_a_status_and_free_it(tmp_path: Path) -> None:
    fair = {N: "fair-ns", E: "fair-ew", S: "fair-ns", W: "fair-ew"}
    abused = {N: "garbler", E: "closer", S: "calm-s", W: "calm-w"}
    names = ["idle", *fair.values(), *abused.values()]
    endings: dict[tuple[str, str], set[grpc.StatusCode]] = {}
    records = {}
    async with referee_running(tmp_path, names) as referee:
        address = referee.address

        async def play(key: str, spec: MatchSpec) -> None:
            records[key] = await referee.play_match(spec, wait_s=20)

        async def abuse(name: str, misdeed: Misdeed, when: str) -> None:
            code, _ = await in_thread(misbehave, address, name, misdeed, when)
            endings.setdefault((misdeed.__name__, when), set()).add(code)

        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for name in ("fair-ns", "fair-ns", "fair-ew", "fair-ew", "calm-s", "calm-w"):
                    nursery.start_soon(in_thread, connect_and_play, address, name, first_legal)
                config = GameConfig.contract(format=MatchFormat.DEALS, deals=2)
                relaxed = TableRules(deadline_s=5.0, grace_s=5.0)
                nursery.start_soon(play, "fair", MatchSpec(config, fair, relaxed, seed="fair"))
                one_hand = GameConfig.classic(format=MatchFormat.HAND)
                short = TableRules(deadline_s=2.0, grace_s=0.5)
                nursery.start_soon(play, "abused", MatchSpec(one_hand, abused, short, seed="abused"))
                nursery.start_soon(abuse, "garbler", garbage, "seated")
                nursery.start_soon(abuse, "closer", half_close, "seated")
                for misdeed in (garbage, half_close):
                    for when in ("before hello", "idle"):
                        for _ in range(10):
                            await abuse("idle", misdeed, when)
        assert not referee.lobby.sessions, referee.lobby.sessions
        with trio.fail_after(5):
            await referee.calls.wait_until_at_most(0)
    assert endings == {
        ("garbage", "before hello"): {grpc.StatusCode.INVALID_ARGUMENT},
        ("garbage", "idle"): {grpc.StatusCode.INVALID_ARGUMENT},
        ("garbage", "seated"): {grpc.StatusCode.INVALID_ARGUMENT},
        ("half_close", "before hello"): {grpc.StatusCode.INVALID_ARGUMENT},
        ("half_close", "idle"): {grpc.StatusCode.CANCELLED},
        ("half_close", "seated"): {grpc.StatusCode.CANCELLED},
    }
    fair_record, abused_record = records["fair"], records["abused"]
    assert check_log(fair_record.log_path).ok
    assert count_faults(fair_record.seats) == 0, fair_record.seats
    for seat in (N, E):  # a broken call is a dropped connection: the seat is forfeited after grace
        assert abused_record.seats[seat].forfeited
        assert abused_record.seats[seat].faults.get(Fault.FORFEITED, 0) >= 1
    assert check_log(abused_record.log_path).ok


def silent(address: str) -> tuple[grpc.StatusCode, str]:
    """Open a call and send nothing."""
    bot = RawBot(address, "silent")
    status = bot.wait_status()
    bot.close()
    return status


async def test_a_connection_that_never_says_hello_is_dropped_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="oddtrick")
    limits = SessionLimits(hello_timeout_s=0.3)
    async with referee_running(tmp_path, [], limits=limits) as referee:
        code, details = await in_thread(silent, referee.address)
        with trio.fail_after(5):
            await referee.calls.wait_until_at_most(0)
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert "Hello" in details
    assert any("no Hello within 0.3 s" in record.getMessage() for record in caplog.records)
