"""A daemon thread that runs jobs in order, and awaiting one of them from asyncio.

The bot client runs on one asyncio loop for all the seats of a process; a bot's
synchronous code (a decision, a hook) run on that loop would stop every seat until it
returns. Each seat therefore has a :class:`Worker` of its own, and :mod:`oddtrick.anytime`
one for all its searches. The threads are daemons: a job still running when the bot is
done (a decision abandoned at its deadline, a search step past its budget) must not keep
the process alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_Job = tuple[Callable[[], Any], Callable[[bool, Any], None] | None]


class Worker:
    """One daemon thread running jobs in order, started with the first job."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], Any], done: Callable[[bool, Any], None] | None) -> None:
        """Run ``job`` after those submitted before it; ``done(ok, result_or_error)``
        is called on the worker's thread when it is over."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
                self._thread.start()
        self._jobs.put((job, done))

    async def run(self, job: Callable[[], T]) -> T:
        """``job()`` run on this worker, awaited on the running loop: its result, or the
        exception it raised. Cancelling the await abandons the job (it still runs)."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        self.submit(job, settle(loop, waiter))
        ok, value = await waiter
        if not ok:
            raise value
        result: T = value
        return result

    def _run(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                result: tuple[bool, Any] = (True, job())
            except BaseException as error:  # handed to whoever awaits the job
                result = (False, error)
            if done is not None:
                done(*result)


def settle(
    loop: asyncio.AbstractEventLoop, waiter: asyncio.Future[tuple[bool, Any]]
) -> Callable[[bool, Any], None]:
    """A callback for a worker that hands a job's outcome to ``waiter`` on its loop,
    doing nothing if nobody waits any more or the loop has closed."""

    def resolve(ok: bool, value: Any) -> None:
        if not waiter.done():
            waiter.set_result((ok, value))

    def done(ok: bool, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(resolve, ok, value)

    return done
