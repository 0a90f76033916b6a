"""Every command runs trio so that Ctrl-C and SIGTERM stop it at a checkpoint.

Trio's default raises KeyboardInterrupt wherever the signal lands; landing inside the
web server's connection handling it corrupted that library's cancel scopes, and
``oddtrick web`` ended with a trio error and status 1 (2 stops in 60 under load). The
stop is a race no test can hit every time, so this test guards the one way a command
starts trio: ``oddtrick_referee.command_runner.run_command``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server" / "oddtrick_referee"

# Where trio.run is right as it is, and why.
ALLOWED = {
    # Starts trio itself, for every command.
    "command_runner.py": "run_command is the one place",
}


def _trio_runs(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "run"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "trio"
    ]


def test_every_command_starts_trio_through_run_command() -> None:
    found = {
        f"{path.relative_to(SERVER).as_posix()}:{line}"
        for path in sorted(SERVER.rglob("*.py"))
        if path.relative_to(SERVER).as_posix() not in ALLOWED
        for line in _trio_runs(path)
    }
    assert not found, f"trio.run outside run_command (Ctrl-C could land inside a library): {sorted(found)}"


def test_the_allowed_places_still_exist() -> None:
    for name in ALLOWED:
        assert _trio_runs(SERVER / name), f"{name} no longer calls trio.run: take it off ALLOWED"
