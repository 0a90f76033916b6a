"""``oddtrick bot`` stops gracefully: the first SIGTERM or Ctrl-C finishes the matches it
sits in (Leave on each session) and takes no new one, then the process exits 0; a second
signal stops it at once.

A real referee on a socket and a real ``oddtrick bot --seats 2`` process at North and
South of one table. East holds its second answer until the test has signalled the bot and
read its line (by then North and South have played a card each, so the bot knows it is
seated), so the signal always comes mid-match.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio
from process_support import reap
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

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import cards_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.referee import MatchRecord

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
TABLE = {N: "stopping", E: "east", S: "stopping", W: "west"}


class Bot:
    """The ``oddtrick bot`` process, its stderr read a line at a time."""

    def __init__(self, address: str) -> None:
        command = [sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot", "--server", address]
        command += ["--name", "stopping", f"--token={token_of('stopping')}", "--seats", "2"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.said: list[str] = []

    async def line_with(self, text: str) -> str:
        """Read the bot's output until a line has ``text`` (fails at its end without one)."""
        assert self.process.stderr is not None
        while True:
            line = await in_thread(self.process.stderr.readline)
            self.said.append(line)
            assert line, f"the bot ended without saying {text!r}: {''.join(self.said)}"
            if text in line:
                return line

    async def seated_twice(self) -> None:
        for _ in range(2):
            await self.line_with("seated at match")

    async def exit_code(self) -> int:
        code: int = await in_thread(self.process.wait, GUARD_S)
        return code


async def a_match_and_a_signal(
    tmp_path: Path, signals: list[signal.Signals]
) -> tuple[MatchRecord, Bot, int, str]:
    """Play one match with the bot at North and South; once both have said they are seated, send it
    ``signals`` (one after the other, each once the bot has said its line), then let
    East answer. The match's record, the bot, its exit code and its line."""
    gate = threading.Event()
    asked: list[int] = []

    def held(bot: RawBot, request: referee_pb2.DecisionRequest) -> cards_pb2.Action:
        asked.append(request.request_id)
        if len(asked) == 2:
            gate.wait(PATIENCE_S)
        return first_legal(bot, request)

    async with referee_running(tmp_path, set(TABLE.values())) as referee:
        bot = Bot(referee.address)
        try:
            with trio.fail_after(PATIENCE_S):
                await referee.lobby.wait_for({"stopping": 2}, GameConfig.classic().game)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(in_thread, connect_and_play, referee.address, "east", held)
                    nursery.start_soon(in_thread, connect_and_play, referee.address, "west", first_legal)
                    # Long deadlines: only the held East and the signals decide what happens.
                    rules = TableRules(deadline_s=PATIENCE_S, grace_s=2.0)
                    spec = MatchSpec(GameConfig.classic(format=MatchFormat.HAND), TABLE, rules, seed="stop")
                    record: list[MatchRecord] = []

                    async def play() -> None:
                        record.append(await referee.play_match(spec, wait_s=20))

                    nursery.start_soon(play)
                    await bot.seated_twice()
                    os.kill(bot.process.pid, signals[0])
                    line = await bot.line_with("finishing")
                    for later in signals[1:]:
                        os.kill(bot.process.pid, later)
                        await bot.line_with("stopping now")
                    gate.set()
                code = await bot.exit_code()
        finally:
            gate.set()
            reap(bot.process)
            assert bot.process.stderr is not None
            bot.process.stderr.close()
    return record[0], bot, code, line


@pytest.mark.parametrize("first", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
async def test_the_first_signal_finishes_the_match_then_the_bot_exits_0(
    tmp_path: Path, first: signal.Signals
) -> None:
    record, bot, code, line = await a_match_and_a_signal(tmp_path, [first])
    assert line.split(" ", 1)[1].strip() == "finishing 1 match; Ctrl-C again to stop now"
    assert check_log(record.log_path).ok
    assert record.state.match_result is not None
    for seat in (N, S):
        assert not record.seats[seat].forfeited
        assert not record.seats[seat].faults
        assert record.seats[seat].decisions == 13
    assert code == 0, "".join(bot.said)


async def test_a_second_signal_stops_the_bot_at_once(tmp_path: Path) -> None:
    record, bot, code, _ = await a_match_and_a_signal(tmp_path, [signal.SIGINT, signal.SIGTERM])
    assert code == 128 + signal.SIGTERM, "".join(bot.said)
    # It left its seats mid-match: the referee played on without it.
    assert any(record.seats[seat].forfeited for seat in (N, S))
