"""The Python SDK passes its own conformance kit: every sample bot, and the bot of the
README, each run as a tournament would run it (``oddtrick bot FILE.py`` as a ``cmd:``
entry, a real process on a real socket, everything else from the environment)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from referee_support import GUARD_S, PATIENCE_S

from oddtrick_referee.conformance.runner import Options, run_conformance

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_BOTS = ["random_bot.py", "heuristic_bot.py", "pimc_bot.py"]
"""The strong bot (pimc_bot.py, the ``strong`` extra that ``.[dev]`` installs) among them: it
thinks at most half the time left (PimcBot.deadline_share), so the kit's 1 s deadline holds
even when a busy machine wakes its process late."""


def readme_bot(folder: Path) -> Path:
    """The bot the README teaches (its ``# my_bot.py`` block), written to ``folder``."""
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```python\n(# my_bot\.py\n.*?)```", readme, re.S)
    assert block is not None, "README.md has no `# my_bot.py` block"
    path = folder / "my_bot.py"
    path.write_text(block.group(1))
    return path


def assert_conforms(command: str) -> None:
    report = trio.run(run_conformance, Options(command=command))
    failed = "\n".join(
        f"{c.name}: expected {c.expected}; actual {c.actual}" for c in report.checks if not c.passed
    )
    assert report.passed, f"{failed}\n" + "\n".join(report.notes)
    assert len(report.checks) >= 26


@pytest.mark.parametrize("bot", SAMPLE_BOTS)
def test_every_sample_bot_conforms(bot: str) -> None:
    # Through sample_bots/, the path the README and the tournaments use.
    assert_conforms(f"{sys.executable} -m oddtrick bot {ROOT / 'sample_bots' / bot}")


def test_the_readme_bot_conforms_as_the_readme_runs_it(tmp_path: Path) -> None:
    """`oddtrick conformance my_bot.py`, the README's command, from the bot's folder."""
    readme_bot(tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "conformance", "my_bot.py", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=PATIENCE_S, check=False,
    )  # fmt: skip
    report = json.loads(run.stdout)
    failed = [check for check in report["checks"] if not check["passed"]]
    assert report["passed"], (failed, run.stderr[-2000:])
    assert run.returncode == 0
    assert len(report["checks"]) >= 26


def test_a_bot_file_that_is_not_there_is_one_line_saying_what_to_give() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "conformance", "no_such_bot.py"],
        capture_output=True, text=True, timeout=GUARD_S, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "oddtrick conformance: no bot file no_such_bot.py; give a Python bot (FILE.py or FILE.py:Class), "
        'or --bot-command "CMD" for a bot in another language'
    ]
