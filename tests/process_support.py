"""Child processes a test runs, with every wait on them bounded.

A test that waits on a child without a deadline hangs the whole run when the child
does not end: one that ignores the signal it is sent (SIGINT, SIGTERM), stops while
it is being read, or never says the line the test reads for. Here each wait has a
timeout, a child that outlives it is killed, and the test fails saying what it said.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import trio

CHILD_EXIT_S = 30.0
"""How long a child may take to end once asked (loaded machines are slow to exit too)."""

_EOF = None


class Lines:
    """A child's text output, read a line at a time in a thread, so that a test waits for
    a line with a deadline: a plain read blocks for ever on a child that says nothing."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.said: list[str] = []
        """Every line read so far, for failure messages."""
        self._ended = False
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        try:
            for line in stream:
                self._lines.put(line)
        except (OSError, ValueError):  # the pipe closed under the reader: the child is gone
            pass
        self._lines.put(_EOF)

    def _next(self, timeout: float, waiting_for: str) -> str | None:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"nothing more within {timeout} s while waiting for {waiting_for}; it said: {self.said}"
            ) from None
        if line is _EOF:
            self._ended = True
            return None
        self.said.append(line)
        return line

    def until(self, text: str, timeout: float) -> list[str]:
        """The lines up to the first that has ``text`` (fails if the output ends first or
        no such line comes within ``timeout`` seconds of the one before)."""
        read: list[str] = []
        while not self._ended:
            line = self._next(timeout, repr(text))
            if line is None:
                break
            read.append(line)
            if text in line:
                return read
        raise AssertionError(f"the output ended without {text!r}: {self.said}")

    def rest(self, timeout: float) -> list[str]:
        """The lines until the output ends (fails if it has not within ``timeout`` seconds
        of the line before)."""
        read: list[str] = []
        while not self._ended:
            line = self._next(timeout, "the output to end")
            if line is not None:
                read.append(line)
        return read


def stop(
    process: subprocess.Popen[Any], signal_number: int = signal.SIGTERM, timeout: float = CHILD_EXIT_S
) -> int:
    """Send ``signal_number`` and wait at most ``timeout`` seconds for the exit code; a child
    still running then is killed, and the test fails saying it ignored the signal."""
    if process.poll() is None:
        process.send_signal(signal_number)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        reap(process)
        name = signal.Signals(signal_number).name
        raise AssertionError(
            f"the child {process.args!r} did not end within {timeout} s of {name}; killed"
        ) from None


async def stop_beside_referee(
    process: subprocess.Popen[Any], signal_number: int = signal.SIGTERM, timeout: float = CHILD_EXIT_S
) -> int:
    """:func:`stop`, waited for off the event loop: a bot stopping beside an in-process referee
    says Leave, and that referee, on this loop, must answer it. Shielded, so a failing test
    still stops its child."""
    with trio.CancelScope(shield=True):
        return await trio.to_thread.run_sync(stop, process, signal_number, timeout)


def reap(process: subprocess.Popen[Any], timeout: float = CHILD_EXIT_S) -> None:
    """Kill the child if it still runs and collect it (bounded: a child stuck in the kernel
    is left for the run to report rather than hang it)."""
    if process.poll() is None:
        process.kill()
    process.wait(timeout=timeout)


@contextmanager
def child(command: list[str], **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """``subprocess.Popen`` whose end kills the child if it still runs (``with Popen`` waits
    for it without a deadline instead) and closes its pipes."""
    process = subprocess.Popen(command, **popen)
    try:
        yield process
    finally:
        reap(process)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()
