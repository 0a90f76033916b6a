"""A bot with too few streams for its match is told why it waits (RefereeMessage.waiting).

A real referee plays a match that needs two seats (or four) of one bot. On the wire: an
idle stream of that bot gets one Waiting notice, however often the referee's wait wakes
meanwhile, and a stream that makes the numbers enough gets none. As processes: a real
``oddtrick bot --seats 1`` says so on stderr, once, and is seated once started with
``--seats 2``; a process whose two streams are both told says it once.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio
from referee_support import (
    GUARD_S,
    PATIENCE_S,
    RawBot,
    connect_and_play,
    first_legal,
    in_thread,
    referee_running,
    token_of,
)

from oddtrick._codec_protocol import waiting_message
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import game_pb2
from oddtrick_referee import MatchRecord, MatchSpec, TableRules, check_log
from oddtrick_referee.referee import Referee

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
CONFIG = GameConfig.classic(format=MatchFormat.HAND)
RULES = TableRules(deadline_s=5.0, grace_s=5.0)


async def play_into(referee: Referee, spec: MatchSpec, records: list[MatchRecord]) -> None:
    records.append(await referee.play_match(spec, wait_s=PATIENCE_S))


def test_the_waiting_text_says_what_to_do() -> None:
    notice = waiting_message("nora", 2, 1, CONFIG.game).waiting
    assert (notice.seats_needed, notice.seats_offered) == (2, 1)
    assert notice.game == game_pb2.GAME_KIND_CLASSIC
    assert notice.message == (
        "waiting: a match here needs 2 seats of nora at once, and nora has 1 stream open "
        "(a bot opens one stream per seat); start the bot with --seats 2"
    )


async def test_an_idle_stream_is_told_once_and_the_stream_that_completes_not_at_all(tmp_path: Path) -> None:
    names = {N: "pair", E: "east", S: "pair", W: "west"}
    records: list[MatchRecord] = []
    async with referee_running(tmp_path, set(names.values())) as referee, trio.open_nursery() as nursery:
        nursery.start_soon(play_into, referee, MatchSpec(CONFIG, names, RULES, seed="short"), records)
        first = RawBot(referee.address, "pair")
        await in_thread(first.hello)
        notice = (await in_thread(first.next_message, "waiting", PATIENCE_S)).waiting
        assert (notice.seats_needed, notice.seats_offered) == (2, 1), notice
        assert notice.game == game_pb2.GAME_KIND_CLASSIC
        assert notice.message.endswith("start the bot with --seats 2"), notice.message

        # The wait wakes at each connection; the notice is not sent again for it.
        for name in ("east", "west"):
            nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
        with trio.fail_after(PATIENCE_S):
            await referee.lobby.wait_for({"east": 1, "west": 1}, CONFIG.game)
        second = RawBot(referee.address, "pair")
        await in_thread(second.hello)
        async with trio.open_nursery() as players:
            players.start_soon(in_thread, first.play, first_legal)
            players.start_soon(in_thread, second.play, first_legal)
    (record,) = records
    assert check_log(record.log_path).ok
    assert record.seats[N].decisions == record.seats[S].decisions == 13
    kinds = [message.WhichOneof("kind") for message in first.received]
    assert kinds.count("waiting") == 1, kinds
    assert kinds.index("waiting") < kinds.index("update"), kinds
    assert "waiting" not in [message.WhichOneof("kind") for message in second.received]


def bot_process(address: str, name: str, seats: int, output: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "oddtrick", "bot", str(RANDOM_BOT), "--server", address, "--name", name]
    command += [f"--token={token_of(name)}", "--seats", str(seats), "--max-matches", "1"]
    with output.open("wb") as sink:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=sink)


async def said(output: Path, text: str) -> str:
    """The bot's stderr once it has a line with ``text`` (a process's output can only be
    polled: with a deadline)."""
    with trio.fail_after(PATIENCE_S):
        while text not in output.read_text():
            await trio.sleep(0.1)
    return output.read_text()


def waiting_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if "waiting: a match here needs" in line]


async def stop(process: subprocess.Popen[bytes]) -> int:
    process.terminate()
    return await in_thread(process.wait, GUARD_S)


async def test_a_bot_started_with_too_few_seats_says_why_and_plays_with_enough(tmp_path: Path) -> None:
    names = {N: "pair", E: "east", S: "pair", W: "west"}
    records: list[MatchRecord] = []
    async with referee_running(tmp_path, set(names.values())) as referee, trio.open_nursery() as nursery:
        nursery.start_soon(play_into, referee, MatchSpec(CONFIG, names, RULES, seed="seats"), records)
        for name in ("east", "west"):
            nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
        one = bot_process(referee.address, "pair", 1, tmp_path / "one-seat.log")
        try:
            output = await said(tmp_path / "one-seat.log", "waiting:")
        finally:
            assert await stop(one) == 0
        (line,) = waiting_lines(output)
        assert "needs 2 seats of pair at once, and pair has 1 stream open" in line, line
        assert line.endswith("start the bot with --seats 2"), line

        two = bot_process(referee.address, "pair", 2, tmp_path / "two-seats.log")
        try:
            code = await in_thread(two.wait, PATIENCE_S)
        finally:
            if two.poll() is None:
                await stop(two)
    assert code == 0, (tmp_path / "two-seats.log").read_text()
    (record,) = records
    assert record.seats[N].bot_name == record.seats[S].bot_name == "pair"
    assert record.seats[N].decisions == record.seats[S].decisions == 13


async def test_a_bot_whose_streams_are_all_told_says_it_once(tmp_path: Path) -> None:
    names = {N: "self", E: "self", S: "self", W: "self"}
    records: list[MatchRecord] = []
    told = "self has 2 streams open"
    async with referee_running(tmp_path, {"self"}) as referee, trio.open_nursery() as nursery:
        nursery.start_soon(play_into, referee, MatchSpec(CONFIG, names, RULES, seed="self"), records)
        first = bot_process(referee.address, "self", 2, tmp_path / "first.log")
        second = None
        try:
            # Both idle streams are told that, together; the process says it once.
            await said(tmp_path / "first.log", told)
            second = bot_process(referee.address, "self", 2, tmp_path / "second.log")
            codes = [await in_thread(process.wait, PATIENCE_S) for process in (first, second)]
        finally:
            for process in (first, second):
                if process is not None and process.poll() is None:
                    await stop(process)
    assert codes == [0, 0], (tmp_path / "second.log").read_text()
    (record,) = records
    assert {seat.bot_name for seat in record.seats.values()} == {"self"}
    # Read once the process has ended: both streams' notices were handled by then.
    lines = waiting_lines((tmp_path / "first.log").read_text())
    assert sum(told in line for line in lines) == 1, lines
