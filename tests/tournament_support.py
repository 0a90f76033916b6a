"""A duplicate tournament run as a user runs one, for the tests that need what it leaves.

``oddtrick tournament`` in a child process: the referee on a socket, every entry its own
bot processes, the referee's deadline running. Tests that need finished match logs, the
standings' JSON or the fallbacks a tournament counted start one here, so the command is
spelled out once and a failed run fails the test with what the command said.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oddtrick.bots import bot_file


def sample_bot(name: str) -> str:
    """The sample bot ``name``'s file as a ``--bot`` word: ``sample_bot("pimc")``."""
    return str(bot_file(name))


RANDOM_AND_HEURISTIC: Mapping[str, str] = {
    "random": sample_bot("random"),
    "heuristic": sample_bot("heuristic"),
}
"""The two quickest sample bots: a tournament of a few deals in seconds."""


def run_tournament(
    data_dir: Path,
    *options: str,
    game: str = "contract",
    deals: int = 2,
    bots: Mapping[str, str | Sequence[str]] = RANDOM_AND_HEURISTIC,
    timeout: float = 600,
    check: bool = True,
) -> subprocess.CompletedProcess[str]:
    """Run ``oddtrick tournament`` into ``data_dir`` and return what it printed.

    ``bots`` maps each entry's name to its bot file, or to the file and its options
    (``[sample_bot("pimc"), "option.level=1"]``); ``options`` are further flags
    (``"--json"``, ``"--seed", "s1"``). With ``check`` a run that fails raises
    AssertionError quoting the end of its error output."""
    command = [sys.executable, "-m", "oddtrick", "tournament", "--game", game, "--deals", str(deals)]
    for name, bot in bots.items():
        spec = [bot] if isinstance(bot, str) else list(bot)
        command += ["--bot", f"{name}={spec[0]}", *spec[1:]]
    command += ["--data-dir", str(data_dir), *options]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if check:
        assert result.returncode == 0, (
            f"oddtrick tournament exited {result.returncode}: {result.stderr[-2000:]}"
        )
    return result


def entries(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """Each entry's standings row by name, from a run given ``--json``."""
    return {entry["entry"]: entry for entry in json.loads(result.stdout)["entries"]}


def match_logs(data_dir: Path) -> list[Path]:
    """The tournament's match logs, in the order they were started."""
    return sorted((data_dir / "logs").rglob("*.jsonl"))
