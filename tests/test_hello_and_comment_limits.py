"""The documented byte limits on what a bot writes: bot_version (64) and comments (256)."""

from __future__ import annotations

from pathlib import Path

import grpc
import trio
from referee_support import (
    ALL_GAMES,
    PATIENCE_S,
    PROTOCOL,
    RawBot,
    connect_and_play,
    first_legal,
    in_thread,
    log_records,
    referee_running,
    token_of,
)

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
ONE_HAND = GameConfig.classic(format=MatchFormat.HAND)


def send_hello(bot: RawBot, version: str) -> None:
    hello = referee_pb2.Hello(
        bot_name=bot.name,
        bot_version=version,
        token=token_of(bot.name),
        protocol=referee_pb2.ProtocolVersion(name=PROTOCOL, minor=0),
        games=list(ALL_GAMES),
    )
    bot.send_raw(referee_pb2.BotMessage(hello=hello))


def welcomed_with_version(address: str, name: str, version: str) -> tuple[grpc.StatusCode, str]:
    """Say Hello with ``version``, expect a Welcome, leave; the final status."""
    bot = RawBot(address, name)
    send_hello(bot, version)
    bot.next_message("welcome")
    bot.leave()
    status = bot.wait_status()
    bot.close()
    return status


def refused_hello(address: str, name: str, version: str) -> tuple[grpc.StatusCode, str]:
    bot = RawBot(address, name)
    send_hello(bot, version)
    status = bot.wait_status()
    bot.close()
    return status


async def test_a_bot_version_over_64_bytes_is_refused_at_the_hello(tmp_path: Path) -> None:
    async with referee_running(tmp_path, ["v"]) as referee:
        long_ascii = await in_thread(refused_hello, referee.address, "v", "x" * 60_000)
        long_utf8 = await in_thread(refused_hello, referee.address, "v", "é" * 33)  # 66 bytes, 33 chars
        fits = await in_thread(welcomed_with_version, referee.address, "v", "é" * 32)  # 64 bytes
    for code, details in (long_ascii, long_utf8):
        assert code is grpc.StatusCode.INVALID_ARGUMENT, details
        assert "bot_version" in details
        assert "64" in details
    assert fits[0] is grpc.StatusCode.OK, fits


def commenting(comment: str):
    def policy(bot: RawBot, request: referee_pb2.DecisionRequest) -> None:
        bot.answer(request.request_id, request.legal_actions[0], comment=comment)

    return policy


async def test_comments_are_cut_at_256_bytes_of_utf8_at_a_character_boundary(tmp_path: Path) -> None:
    emoji = "🂡" * 300  # 4 bytes each: 1,200 bytes
    mixed = "a" + "é" * 200  # 401 bytes: a cut at 256 would split an 'é'
    table = {N: "emoji", E: "mixed", S: "quiet-s", W: "quiet-w"}
    other = {N: "other-ns", E: "other-ew", S: "other-ns", W: "other-ew"}
    records = {}
    async with referee_running(tmp_path, [*table.values(), "other-ns", "other-ew"]) as referee:

        async def play(key: str, spec: MatchSpec) -> None:
            records[key] = await referee.play_match(spec, wait_s=20)

        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(in_thread, connect_and_play, referee.address, "emoji", commenting(emoji))
                nursery.start_soon(in_thread, connect_and_play, referee.address, "mixed", commenting(mixed))
                for name in ("quiet-s", "quiet-w", "other-ns", "other-ns", "other-ew", "other-ew"):
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
                rules = TableRules(deadline_s=5.0, grace_s=5.0)
                nursery.start_soon(play, "commented", MatchSpec(ONE_HAND, table, rules, seed="comments"))
                nursery.start_soon(play, "other", MatchSpec(ONE_HAND, other, rules, seed="other"))
    logged = [r for r in log_records(records["commented"].log_path, "action") if "comment" in r]
    by_seat = {r["seat"]: r["comment"] for r in logged}
    assert by_seat["N"] == "🂡" * 64  # 256 bytes
    assert by_seat["E"] == "a" + "é" * 127  # 255 bytes: the 128th 'é' would straddle the limit
    for record in logged:
        assert len(record["comment"].encode()) <= 256
    assert check_log(records["commented"].log_path).ok
    assert check_log(records["other"].log_path).ok
    assert not log_records(records["other"].log_path, "refusal")
