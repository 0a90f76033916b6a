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
import urllib.request
from pathlib import Path

import grpc
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
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, cards_pb2, referee_pb2
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


async def test_a_ladder_shows_a_draining_entrant_which_finishes_its_match_and_takes_no_new_one(
    tmp_path: Path,
) -> None:
    """An entrant stopped with SIGTERM mid-match: GetLadder and the leaderboard page say it
    is draining while its match plays on; the match finishes with no fault of its, it is seated
    in no other, and it exits 0 (then it is neither connected nor draining)."""
    from ladder_support import ladder_serving, ladder_settings, register

    from oddtrick_referee.competitions.ladder.service import default_house_bots
    from oddtrick_referee.play.table import TableRules
    from oddtrick_referee.web.server import bind_web

    gate = tmp_path / "gate"
    os.mkfifo(gate)
    rules = TableRules(deadline_s=PATIENCE_S, grace_s=5.0)
    settings = ladder_settings(
        tmp_path / "data", house_bots=default_house_bots(7), house_seats=1, rules=rules
    )
    token = register(settings, "alice")["alice"]
    web = bind_web("127.0.0.1:0")
    port = web.getsockname()[1]

    def look() -> tuple[arena_pb2.LadderEntry, str]:
        with grpc.insecure_channel(ladder.referee.address) as channel:
            board = arena_pb2_grpc.ArenaStub(channel).GetLadder(arena_pb2.GetLadderRequest(), timeout=30)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/leaderboard", timeout=30) as response:
            page = response.read().decode()
        [alice] = [entry for entry in board.entries if entry.bot_name == "alice"]
        [row] = [line for line in page.split("<tr") if ">alice</a>" in line]
        return alice, row

    def open_the_gate() -> None:
        with open(gate, "wb") as writer:
            writer.write(b"go")

    command = [sys.executable, "-m", "oddtrick", "bot", f"{ROOT / 'tests' / 'gated_bot.py'}:Gated"]
    bot = Bot.__new__(Bot)
    bot.said = []
    async with ladder_serving(settings, web=web) as ladder:
        command += ["--server", ladder.referee.address, "--name", "alice", f"--token={token}"]
        environment = {**os.environ, "ODDTRICK_TEST_GATE": str(gate)}
        bot.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=environment
        )
        try:
            with trio.fail_after(PATIENCE_S):
                await bot.line_with("seated at match")
                before, before_row = await in_thread(look)
                os.kill(bot.process.pid, signal.SIGTERM)
                await bot.line_with("finishing 1 match")
                while not ladder.presence().get("alice"):
                    await ladder.referee.lobby.change_event.wait()
                during, during_row = await in_thread(look)
                await in_thread(open_the_gate)
                code = await bot.exit_code()
                [outcome, *_] = await ladder.wait_outcomes(1)
                after, after_row = await in_thread(look)
            outcomes = [o for o in ladder.outcomes if "alice" in o.lineup.names]
            ladder.referee.finish()
        finally:
            reap(bot.process)
            assert bot.process.stderr is not None
            bot.process.stderr.close()
    assert (before.connected, before.draining) == (True, False)
    assert "draining" not in before_row
    assert (during.connected, during.draining) == (True, True)
    assert ">draining</span>" in during_row
    assert code == 0, "".join(bot.said)
    assert (after.connected, after.draining) == (False, False)
    assert "draining" not in after_row
    assert [o.match_id for o in outcomes] == [outcome.match_id]
    assert "alice" in outcome.lineup.names
    assert outcome.status == "finished"
    assert (after.matches, after.forfeits, after.faults) == (1, 0, 0)
