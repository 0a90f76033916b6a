"""``oddtrick worker`` processes for the tests, their lines read as they come, and waits
that poll the database with a deadline."""

from __future__ import annotations

import queue as queues
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import pytest

DEADLINE = 120.0
"""The longest any wait lasts on a busy two-core machine before the test fails."""


def until(what: str, check: Callable[[], bool], deadline: float = DEADLINE) -> None:
    """Poll ``check`` (a database query) until it holds; fail after ``deadline`` seconds."""
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"not within {deadline:g} s: {what}")
        time.sleep(0.05)


OTHER_VERSION = (
    "import sys\n"
    "import oddtrick_referee.workers.kinds as kinds\n"
    "kinds.WORKER_VERSION = sys.argv.pop(1)\n"
    "from oddtrick._cli import main\n"
    "sys.exit(main())\n"
)
"""``oddtrick`` as a worker of other code would run it: the same, but saying another version."""


class Worker:
    """An ``oddtrick worker`` process whose lines are read as they come; ``version``: one
    that runs as another oddtrick version would (its code changed, its version its own)."""

    def __init__(self, url: str, name: str, *options: str, version: str | None = None) -> None:
        self.name = name
        program = ["-m", "oddtrick"] if version is None else ["-c", OTHER_VERSION, version]
        self.process = subprocess.Popen(
            [sys.executable, *program, "worker", "--database", url, "--name", name, *options],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        self._new: queues.Queue[str | None] = queues.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self.lines.append(line.rstrip("\n"))
                self._new.put(line)
        self._new.put(None)

    def wait_for(self, pattern: str, deadline: float = DEADLINE) -> re.Match[str]:
        """The first line (from now or before) matching ``pattern``, waiting for it."""
        seen = 0
        end = time.monotonic() + deadline
        while True:
            for line in self.lines[seen:]:
                if found := re.search(pattern, line):
                    return found
            seen = len(self.lines)
            try:
                if self._new.get(timeout=max(0.0, end - time.monotonic())) is None and not any(
                    re.search(pattern, line) for line in self.lines[seen:]
                ):
                    pytest.fail(f"{self.name} ended without {pattern!r}: {self.lines}")
            except queues.Empty:
                pytest.fail(f"{self.name} said no {pattern!r} within {deadline:g} s: {self.lines}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=DEADLINE)
