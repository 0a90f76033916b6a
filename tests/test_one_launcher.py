"""Every bot process starts in one place, the launcher, so that every bot is walled off.

Every call in the SDK and the referee that starts a process (``subprocess``, trio's
``open_process``/``run_process``, asyncio's ``create_subprocess_*``, ``os.fork``,
``os.exec*``, ``os.spawn*``, ``os.system``, ``os.posix_spawn``, a process pool,
``multiprocessing``) is found with ``ast``; a failure names the file and the line.
``competitions/entries/entrants.py`` (which runs the launcher) and ``competitions/entries/launcher.py``
(which starts the bot) may; the few others are listed with why none of them starts a bot.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk" / "oddtrick", ROOT / "server" / "oddtrick_referee")
COMPETITIONS = ROOT / "server" / "oddtrick_referee" / "competitions"
LAUNCHERS = (COMPETITIONS / "entries" / "entrants.py", COMPETITIONS / "entries" / "launcher.py")
NOT_BOTS = {
    COMPETITIONS
    / "entries"
    / "sandbox.py": "tries bubblewrap once on `true` at start, to say why it cannot sandbox",
    ROOT
    / "server"
    / "oddtrick_referee"
    / "replay"
    / "check.py": "oddtrick check reads match logs on every core",
    ROOT / "sdk" / "oddtrick" / "_strong_cli.py": (
        "oddtrick sprt A.py B.py with no referee plays two Python bot files on every core: "
        "the operator's own code, run as its own (docs/security.md says so), not an entry"
    ),
}
SUBPROCESS = {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"}
CALLS = {
    ("trio", "run_process"),
    ("lowlevel", "open_process"),
    ("asyncio", "create_subprocess_exec"),
    ("asyncio", "create_subprocess_shell"),
    ("os", "fork"),
    ("os", "forkpty"),
    ("os", "system"),
    ("os", "popen"),
    ("os", "posix_spawn"),
    ("os", "posix_spawnp"),
    ("pty", "spawn"),
    ("multiprocessing", "Process"),
    ("multiprocessing", "Pool"),
    *(("subprocess", name) for name in SUBPROCESS),
}
NAMES = {"Popen", "ProcessPoolExecutor", "open_process", "run_process", "create_subprocess_exec", "Process"}
"""Names that start a process however they were imported."""


def _annotations(tree: ast.Module) -> set[int]:
    """The nodes inside type annotations (``subprocess.Popen[bytes]`` starts nothing)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.arg | ast.AnnAssign):
            found.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.returns)
        for annotation in found:
            if annotation is not None:
                inside |= {id(part) for part in ast.walk(annotation)}
    return inside


def _starts(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each line of ``tree`` that names a way to start a process, and the name."""
    skipped = _annotations(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (node.module.rpartition(".")[2], alias.name) in CALLS or alias.name in NAMES:
                    yield node.lineno, f"from {node.module} import {alias.name}"
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name | ast.Attribute):
            owner = node.value.id if isinstance(node.value, ast.Name) else node.value.attr
            spawning = owner == "os" and node.attr.startswith(("exec", "spawn"))
            if (owner, node.attr) in CALLS or spawning or node.attr in NAMES:
                yield node.lineno, f"{owner}.{node.attr}"
        elif isinstance(node, ast.Name) and node.id in NAMES and isinstance(node.ctx, ast.Load):
            yield node.lineno, node.id


def test_only_the_launcher_starts_a_bot_process() -> None:
    found = []
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if path in LAUNCHERS or path in NOT_BOTS or "v1" in path.relative_to(source).parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            found += [f"{path.relative_to(ROOT)}:{line}: {what}" for line, what in _starts(tree)]
    assert found == [], "a process started outside the launcher (entrants.run_bot_process):\n" + "\n".join(
        found
    )


def test_the_listed_exceptions_still_start_processes() -> None:
    """An exception that no longer starts one is taken off the list."""
    for path in [*LAUNCHERS, *NOT_BOTS]:
        assert list(_starts(ast.parse(path.read_text(encoding="utf-8")))), path


def test_the_check_finds_a_bot_started_elsewhere() -> None:
    started = """
import asyncio, os, subprocess, trio
from subprocess import Popen
process: subprocess.Popen[bytes] = subprocess.Popen(["bot"])
trio.lowlevel.open_process(["bot"])
asyncio.create_subprocess_exec("bot")
os.execvp("bot", ["bot"])
subprocess.run(["bot"])
"""
    said = [what for _, what in _starts(ast.parse(started))]
    assert said.count("subprocess.Popen") == 1  # the call, not the annotation
    for expected in (
        "from subprocess import Popen",
        "lowlevel.open_process",
        "asyncio.create_subprocess_exec",
    ):
        assert expected in said
    assert "os.execvp" in said
    assert "subprocess.run" in said
