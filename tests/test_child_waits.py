"""Every wait a test makes on a child process (or a thread) has a deadline.

A wait without one hangs the whole run when the child does not end: a referee that
ignores the Ctrl-C it is sent, a bot stuck in its own code. The suite then stops
with no test named, which costs far more than a failure saying which child it was.
"""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from process_support import Lines, child, stop

TESTS = Path(__file__).resolve().parent


def unbounded_waits(source: str) -> list[str]:
    """``x.wait()`` and ``x.communicate()`` calls given no timeout, outside an ``await``
    (an awaited event's wait is the event loop's, bounded by the test's own scope)."""
    tree = ast.parse(source)
    awaited = {id(node) for top in ast.walk(tree) if isinstance(top, ast.Await) for node in ast.walk(top)}
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("wait", "communicate") or id(node) in awaited:
            continue
        if node.args or any(keyword.arg == "timeout" for keyword in node.keywords):
            continue
        found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_the_check_finds_a_wait_without_a_timeout_and_passes_one_with() -> None:
    source = textwrap.dedent(
        """
        process.wait()
        process.communicate()
        process.wait(timeout=5)
        process.communicate(timeout=5)
        event.wait(5)
        async def f():
            await event.wait()
            await asyncio.wait_for(event.wait(), 5)
        """
    )
    assert unbounded_waits(source) == ["line 2: process.wait()", "line 3: process.communicate()"]


def test_every_wait_in_the_tests_has_a_timeout() -> None:
    found = [
        f"{path.name} {wait}"
        for path in sorted(TESTS.glob("*.py"))
        for wait in unbounded_waits(path.read_text(encoding="utf-8"))
    ]
    assert not found, "give these a timeout (tests/process_support.py: stop, reap, child):\n" + "\n".join(
        found
    )


IGNORES_CTRL_C = textwrap.dedent(
    """
    import signal, time
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("waiting for a, b to connect", flush=True)
    while True:
        time.sleep(60)
    """
)


def test_a_child_that_ignores_ctrl_c_fails_the_test_and_is_killed() -> None:
    """What a referee that ignored SIGINT did to the test of serve's first lines: it hung."""
    command = [sys.executable, "-c", IGNORES_CTRL_C]
    with child(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        assert process.stdout is not None
        lines = Lines(process.stdout)
        assert lines.until("waiting for a, b to connect", timeout=60)
        with pytest.raises(AssertionError, match=r"did not end within 0.5 s of SIGINT; killed"):
            stop(process, signal.SIGINT, timeout=0.5)
        assert process.returncode == -signal.SIGKILL
        assert lines.rest(timeout=60) == []  # its output ends with it


def test_a_child_that_says_nothing_fails_the_test_at_the_deadline() -> None:
    with child(
        [sys.executable, "-c", "import time; time.sleep(600)"], stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None
        with pytest.raises(AssertionError, match=r"nothing more within 0.5 s while waiting for 'listening'"):
            Lines(process.stdout).until("listening", timeout=0.5)
    assert process.returncode == -signal.SIGKILL  # killed at the end of the block
