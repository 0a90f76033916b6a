"""Every thread has an owner that ends it: a daemon thread is made only where one is right.

A thread started as a daemon is one nothing waits for: the process may end in the middle
of whatever it does, and nothing says when it stopped. So each thread the SDK and the
referee start is owned by something with a lifetime: a trio nursery (``trio.to_thread``,
with a limiter where there may be many), a ``concurrent.futures`` pool shut down with its
owner, or a thread joined when its owner closes. Every place that makes a daemon thread
(``Thread(daemon=True)``, a ``Thread`` subclass passing ``daemon=True`` up, ``.daemon =
True``, ``setDaemon(True)``) is found with ``ast``; a failure names the file, the line and
the function. The few listed in :data:`DAEMONS` are daemons on purpose, each with why.
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Iterator
from pathlib import Path

from oddtrick.rules import GameConfig
from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings
from oddtrick_referee.competitions.tournaments.tournament_plan import shipped_entry
from oddtrick_referee.workers.table_session import Session

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk" / "oddtrick", ROOT / "server" / "oddtrick_referee")

DAEMONS: dict[tuple[str, str], str] = {
    ("sdk/oddtrick/_worker.py", "Worker.submit"): (
        "a seat's worker runs the bot author's code, which cannot be stopped: a decision "
        "abandoned at its deadline, or a search past its budget, must not keep the bot's "
        "process alive once it is done"
    ),
    ("server/oddtrick_referee/web/analysis.py", "Analyses._enqueue"): (
        "the page's solver is stopped by Analyses.close when the page stops serving, after "
        "the match it is solving; that solve is C code that cannot be stopped, and the page "
        "does not wait for it (its result is written whole or not at all)"
    ),
    ("server/oddtrick_referee/workers/worker.py", "_Beater.__init__"): (
        "the lease's beater is stopped and joined when its job ends; a daemon so that a "
        "second Ctrl-C stops the worker at once while a beat waits on a database out of reach"
    ),
}
"""(file, function) → why the thread it makes is a daemon (docs/architecture.md, "Threads")."""


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _daemons(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """Each line of ``tree`` that makes a daemon thread, and the function it is in."""
    for scope, node in _walk(tree, ""):
        if _makes_a_daemon(node):
            yield getattr(node, "lineno", 0), scope


def _makes_a_daemon(node: ast.AST) -> bool:
    """``...(daemon=True)``, ``x.setDaemon(True)`` or ``x.daemon = True``."""
    if isinstance(node, ast.Call):
        if any(keyword.arg == "daemon" and _is_true(keyword.value) for keyword in node.keywords):
            return True
        named = node.func.attr if isinstance(node.func, ast.Attribute) else ""
        return named == "setDaemon" and bool(node.args) and _is_true(node.args[0])
    if isinstance(node, ast.Assign) and _is_true(node.value):
        return any(isinstance(target, ast.Attribute) and target.attr == "daemon" for target in node.targets)
    return False


def _walk(node: ast.AST, scope: str) -> Iterator[tuple[str, ast.AST]]:
    """Every node below ``node`` with the dotted name of the class or function it is in."""
    for child in ast.iter_child_nodes(node):
        inner = scope
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = f"{scope}.{child.name}" if scope else child.name
        yield inner, child
        yield from _walk(child, inner)


def _found() -> dict[tuple[str, str], list[int]]:
    found: dict[tuple[str, str], list[int]] = {}
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if "v1" in path.relative_to(source).parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            for line, scope in _daemons(tree):
                found.setdefault((path.relative_to(ROOT).as_posix(), scope), []).append(line)
    return found


def test_a_daemon_thread_is_made_only_where_listed_with_a_reason() -> None:
    unlisted = [
        f"{path}:{line} ({scope})"
        for (path, scope), lines in _found().items()
        if (path, scope) not in DAEMONS
        for line in lines
    ]
    assert not unlisted, (
        "daemon threads nobody owns (give each an owner that ends it: trio.to_thread with a "
        "limiter, a pool shut down with its owner, or a join at its owner's close; or list it "
        "in DAEMONS with why a daemon is right):\n" + "\n".join(unlisted)
    )


def test_every_listed_daemon_is_still_made() -> None:
    """A listed place that no longer makes a daemon is taken off the list."""
    assert set(DAEMONS) <= set(_found()), sorted(set(DAEMONS) - set(_found()))


def test_the_check_finds_a_daemon_made_each_way() -> None:
    made = """
import threading
from threading import Thread

def pump():
    threading.Thread(target=print, daemon=True).start()

class Reader(Thread):
    def __init__(self):
        super().__init__(name="reader", daemon=True)

def later(thread):
    thread.daemon = True
    thread.setDaemon(True)

def owned():
    threading.Thread(target=print, daemon=False).start()
"""
    found = list(_daemons(ast.parse(made)))
    assert [scope for _, scope in found] == ["pump", "Reader.__init__", "later", "later"]


def test_a_worker_session_still_running_at_close_is_cancelled_and_its_thread_joined() -> None:
    """A worker's local tournament (its referee, its bots) runs in a thread its session
    owns: closing the session ends that thread before close returns, cancelling the run
    when it does not end within the time given (here none)."""
    settings = TournamentSettings(
        entries=(shipped_entry("a", "random"), shipped_entry("b", "random")),
        config=GameConfig.classic(),
        deals=1,
        set_size=1,
        tables=1,
        seed="owned",
    )
    session = Session("owned-session", settings)
    session.close(wait=0.0)
    assert [t.name for t in threading.enumerate() if t.name.startswith("session-owned")] == []
    assert not session.data_dir.exists()
