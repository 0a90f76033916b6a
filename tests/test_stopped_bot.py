"""A bot process stopped with SIGSTOP is noticed by the referee's keepalive pings and
treated as disconnected (the seat is kept for its grace period, then forfeited), rather
than left to time out decision after decision; the other table plays on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import trio
from process_support import stop_beside_referee
from referee_support import (
    PATIENCE_S,
    connect_and_play,
    count_faults,
    first_legal,
    in_thread,
    log_records,
    referee_running,
    token_of,
)

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.play.table import Fault

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST


def bot_process(address: str, name: str, seats: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot"]
    command += ["--server", address, "--name", name, f"--token={token_of(name)}", "--seats", str(seats)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def test_a_stopped_bot_is_disconnected_by_keepalive(tmp_path: Path) -> None:
    table = {N: "sleeper", E: "awake", S: "sleeper", W: "awake"}
    other = {N: "other-ns", E: "other-ew", S: "other-ns", W: "other-ew"}
    records = {}
    processes: list[subprocess.Popen[bytes]] = []
    names = ["sleeper", "awake", "other-ns", "other-ew"]
    async with referee_running(tmp_path, names, keepalive_s=(1.0, 1.0)) as referee:
        try:
            for name in ("sleeper", "awake"):
                processes.append(bot_process(referee.address, name, 2))
            with trio.fail_after(PATIENCE_S):
                await referee.lobby.wait_for({"sleeper": 2, "awake": 2}, GameConfig.classic().game)
            os.kill(processes[0].pid, signal.SIGSTOP)

            async def play(key: str, spec: MatchSpec) -> None:
                records[key] = await referee.play_match(spec, wait_s=20)

            with trio.fail_after(PATIENCE_S):
                async with trio.open_nursery() as nursery:
                    for name in ("other-ns", "other-ns", "other-ew", "other-ew"):
                        nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
                    one_hand = GameConfig.classic(format=MatchFormat.HAND)
                    # A decision may take 20 s: only keepalive can notice the stop before that.
                    patient = TableRules(deadline_s=20.0, grace_s=0.5)
                    nursery.start_soon(play, "stopped", MatchSpec(one_hand, table, patient, seed="stop"))
                    relaxed = TableRules(deadline_s=5.0, grace_s=5.0)
                    nursery.start_soon(play, "other", MatchSpec(one_hand, other, relaxed, seed="other"))
        finally:
            for process in processes:
                os.kill(process.pid, signal.SIGCONT)
                await stop_beside_referee(process)
    stopped = records["stopped"]
    for seat in (N, S):
        assert stopped.seats[seat].forfeited
        assert Fault.TIMEOUT not in stopped.seats[seat].faults
    assert {r["seat"] for r in log_records(stopped.log_path, "disconnect")} == {"N", "S"}
    assert check_log(stopped.log_path).ok
    assert count_faults(records["other"].seats) == 0
