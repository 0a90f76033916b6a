"""The Node.js example bot (examples/node_bot) plays real tournaments against a Python bot.

The bot was written from proto/oddtrick/v1/*.proto and proto/README.md alone, so these
tests back the protocol's claim that a bot can be written in any language from them.
The referee starts it as a ``cmd:`` entry, which is also how a user would run it.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NODE_BOT = ROOT / "examples" / "node_bot"
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
DEPENDENCIES = ("@grpc/grpc-js", "@grpc/proto-loader")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("node") is None or shutil.which("npm") is None,
        reason="the Node.js example bot needs `node` and `npm` on PATH",
    ),
]


@pytest.fixture(scope="module")
def node_bot() -> Path:
    """bot.js, with its dependencies installed (`npm ci` from package-lock.json if missing)."""
    if not all((NODE_BOT / "node_modules" / name / "package.json").is_file() for name in DEPENDENCIES):
        result = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"],
            cwd=NODE_BOT,
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        if result.returncode != 0:
            output = f"{result.stdout}\n{result.stderr}"
            pytest.fail(f"`npm ci` in {NODE_BOT} failed (it needs the npm registry):\n{output}")
    return NODE_BOT / "bot.js"


def run(*command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=timeout)


def bot_output(data_dir: Path, entry: str) -> str:
    return "".join(path.read_text() for path in sorted((data_dir / "bot-output").glob(f"{entry}~*.log")))


def play_tournament(node_bot: Path, game: str, data_dir: Path) -> dict[str, Any]:
    result = run(
        sys.executable, "-m", "oddtrick", "tournament",
        "--game", game, "--deals", "2", "--set-size", "1", "--tables", "1", "--seed", "node-test",
        "--data-dir", str(data_dir),
        "--bot", f"nodebot=cmd:node {shlex.quote(str(node_bot))}",
        "--bot", f"random={RANDOM_BOT}",
        "--json",
    )  # fmt: skip
    assert result.returncode == 0, (
        f"tournament failed:\n{result.stderr}\n--- node bot output ---\n{bot_output(data_dir, 'nodebot')}"
    )
    standings: dict[str, Any] = json.loads(result.stdout)
    return standings


@pytest.mark.parametrize("game", ["contract", "classic"])
def test_the_node_bot_plays_a_tournament_without_faults(node_bot: Path, game: str, tmp_path: Path) -> None:
    standings = play_tournament(node_bot, game, tmp_path)

    entries = {row["entry"]: row for row in standings["entries"]}
    assert set(entries) == {"nodebot", "random"}
    assert all(row["deals"] == 2 for row in entries.values())
    assert entries["nodebot"]["faults"] == {
        "timeouts": 0,
        "illegal": 0,
        "disconnected": 0,
        "forfeits": 0,
        "refusals": 0,
        "bot_errors": 0,
        "clock": 0,
    }, bot_output(tmp_path, "nodebot")

    # Duplicate: 2 sets of 1 deal, each played at 2 tables with the partnerships swapped.
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 4
    check = run(sys.executable, "-m", "oddtrick", "check", *map(str, logs))
    assert check.returncode == 0, check.stdout + check.stderr

    # The bot reports each match it played once, on stderr, with the final totals.
    reported = re.findall(r"^match (\S+) over: NS \d+ EW \d+$", bot_output(tmp_path, "nodebot"), re.M)
    assert sorted(reported) == sorted(log.stem for log in logs)
