"""The strong bot's levels as ladder house bots: ``--house-bot strong:LEVEL``.

A ladder on a real socket runs the level-1 strong bot as a house bot (its own
process, started by the ladder) and an entrant plays it; the match's log shows
the house bot's comments, the samples it solved. A level that does not exist,
or a level that is not a number, stops the ladder before it starts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import trio
from ladder_support import LADDER_BOTS, ladder_serving, ladder_settings, register, stop_all

from oddtrick._argparse import EntryArgument
from oddtrick._logfile import read_log_text
from oddtrick_referee.competitions.ladder.cli import _house_bot


def _oddtrick(cwd: Path, *words: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "oddtrick", *words]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


async def test_a_strong_house_bot_at_level_one_plays_an_entrant_and_says_what_it_solved(
    tmp_path: Path,
) -> None:
    house = _house_bot(EntryArgument("house-bot", "strong:1"))
    assert house.name == "house-strong-1"
    assert dict(house.options) == {"level": 1}
    settings = ladder_settings(
        tmp_path / "data", trusted=True, house_bots=(house,), house_seats=4, deals=1, compress_logs=False
    )
    token = register(settings, "alice")["alice"]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with ladder_serving(settings) as ladder:
            command = [sys.executable, "-m", "oddtrick", "bot", f"{LADDER_BOTS}:Heuristic", "--seats", "4"]
            command += ["--server", ladder.referee.address, "--name", "alice", f"--token={token}"]
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with trio.fail_after(300):
                [outcome, *_] = await ladder.wait_outcomes(1)
            ladder.referee.finish()
    finally:
        stop_all(processes)
    assert outcome.status == "finished"
    assert outcome.lineup.names == {"alice", "house-strong-1"}
    logs = sorted((tmp_path / "data" / "logs").rglob("*.jsonl"))
    assert logs
    text = "".join(read_log_text(path) for path in logs)
    # Its comments: two samples a card and one a call, at level 1 (on a busy machine it may
    # have solved none of them in time, and says so).
    assert re.search(r'"comment":"(fallback: )?[012] of 2 samples solved in', text)
    assert re.search(r'"comment":"(fallback: )?[01] of 1 samples solved in', text)


def test_a_level_that_does_not_exist_stops_the_ladder_before_it_starts(tmp_path: Path) -> None:
    unknown = _oddtrick(tmp_path, "ladder", "serve", "--house-bot", "strong:7", "--data-dir", "lad")
    assert unknown.returncode == 2
    assert "house bot 'house-strong-7': option level of PimcBot is 7: the levels are 1 (" in unknown.stderr
    assert unknown.stderr.strip().endswith("the ladder did not start")
    garbled = _oddtrick(tmp_path, "ladder", "serve", "--house-bot", "strong:two", "--data-dir", "lad2")
    assert garbled.returncode == 2
    assert "strong:LEVEL takes a level number, e.g. strong:2" in garbled.stderr
    assert not (tmp_path / "lad2").exists()
    assert list((tmp_path / "lad").rglob("*.*")) == []
