"""The strong bot answers in time when it gets little CPU.

Every core is kept busy by other processes, and the strong bot's processes
are held to one core, through a real tournament: referee on a socket, every
entry its own process, the referee's deadline running. The bot's anytime
search must answer every request before the deadline: the test counts the
referee's time-outs over at least 2,000 of its decisions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sdk" / "oddtrick" / "bots" / "heuristic_bot.py"
PINNED = Path(__file__).resolve().parent / "pinned_pimc_bot.py"

DEADLINE_S = 1.0
"""Shorter than the bot's own think time (1 s a card, 2 s a call), so that every
budget is cut by the referee's clock less the margin, and the run is quick."""
DEALS = 36
"""Deal pairs: each play has about 28 decisions of the strong bot (two seats,
thirteen cards less the forced ones, and the auction), so 72 plays make 2,000."""


def _hog() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _pimc_decisions(data_dir: Path) -> tuple[int, int, int]:
    """The strong bot's decisions, time-outs and other faults over every match log."""
    decisions = timeouts = other = 0
    for path in sorted((data_dir / "logs").rglob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        start = next(r for r in records if r["type"] == "match_start")
        end = next(r for r in records if r["type"] == "match_end")
        for seat, player in start["players"].items():
            if not player["name"].startswith("pimc"):
                continue
            record = end["seats"][seat]
            faults = record["faults"]
            decisions += record["decisions"] + sum(faults.values())
            timeouts += faults.get("timeout", 0)
            other += sum(faults.values()) - faults.get("timeout", 0) + record["refusals"]
    return decisions, timeouts, other


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs os.sched_setaffinity (Linux)")
def test_no_timeouts_with_every_core_busy_and_the_bot_on_one(tmp_path):
    cpu = min(os.sched_getaffinity(0))
    hogs = [_hog() for _ in range(os.cpu_count() or 2)]
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "oddtrick",
                "tournament",
                "--game",
                "contract",
                "--deals",
                str(DEALS),
                "--tables",
                "2",
                "--deadline",
                str(DEADLINE_S),
                "--bot",
                f"pimc=cmd:{sys.executable} {PINNED} {cpu}",
                "--bot",
                f"heuristic={HEURISTIC}",
                "--data-dir",
                str(tmp_path),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert result.returncode == 0, result.stderr[-2000:]
    decisions, timeouts, other = _pimc_decisions(tmp_path)
    print(f"strong bot: {decisions} decisions, {timeouts} time-outs, {other} other faults")
    assert decisions >= 2000
    assert (timeouts, other) == (0, 0)
