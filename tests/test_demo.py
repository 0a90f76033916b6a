"""The README's first command: `oddtrick demo` plays and prints the standings."""

import subprocess
import sys
from pathlib import Path

from oddtrick_referee import check_log


def test_the_demo_plays_both_games_and_prints_standings(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "demo", "--deals", "2", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("Standings (duplicate)") == 2
    assert "Classic Whist" in run.stdout
    assert "Contract Whist" in run.stdout
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 2 * 2 * 2  # two games, two sets of one deal each, each set at two tables
    assert all(check_log(log).ok for log in logs)
