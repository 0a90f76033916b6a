"""Each seat of a Python bot process decides on its own thread: one seat's slow
synchronous code (a decision, a hook) never delays the process's other seats.

A real ``oddtrick bot --seats 2`` process holds North and South of one table on a real
referee; its North blocks its thread until South has decided after it blocked (or
gives up, long after the deadline). South must answer every request in time.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import trio
from process_support import stop_beside_referee
from referee_support import (
    PATIENCE_S,
    connect_and_play,
    first_legal,
    in_thread,
    referee_running,
    token_of,
)

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.play.table import Fault

BLOCKING_BOT = Path(__file__).resolve().parent / "blocking_bot.py"
N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST


def bot_process(address: str, spec: str, name: str, seats: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "oddtrick", "bot", spec, "--server", address, "--name", name]
    command += [f"--token={token_of(name)}", "--seats", str(seats)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("blocks_in", ["BlockingDecision", "BlockingHook"])
async def test_a_seat_blocked_in_the_bots_code_does_not_delay_the_other_seat(
    tmp_path: Path, blocks_in: str
) -> None:
    names = {N: "two-seats", E: "east", S: "two-seats", W: "west"}
    async with referee_running(tmp_path, set(names.values())) as referee:
        process = bot_process(referee.address, f"{BLOCKING_BOT}:{blocks_in}", "two-seats", 2)
        try:
            with trio.fail_after(PATIENCE_S):
                await referee.lobby.wait_for({"two-seats": 2}, GameConfig.classic().game)
                async with trio.open_nursery() as nursery:
                    for name in ("east", "west"):
                        nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
                    # South answers at once; the deadline only bounds how long North blocks
                    # the test when the seats are kept apart.
                    rules = TableRules(deadline_s=2.0, grace_s=5.0)
                    spec = MatchSpec(GameConfig.classic(format=MatchFormat.HAND), names, rules, seed="apart")
                    record = await referee.play_match(spec, wait_s=20)
        finally:
            await stop_beside_referee(process)
    assert check_log(record.log_path).ok
    south = record.seats[S]
    assert not south.faults, south
    assert not south.refusals, south
    assert south.decisions == 13
    if blocks_in == "BlockingDecision":
        # North did block past the deadline (what the test is about), and only North paid.
        assert record.seats[N].faults.get(Fault.TIMEOUT, 0) >= 1
