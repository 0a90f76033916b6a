"""``oddtrick worker``'s loop: lease a job, do it while beating, record the result, repeat.

Idle, the worker sleeps on LISTEN until work is added, or until the first
lease held by anyone expires (so that some worker scavenges it back to
waiting without polling). While a job runs, a thread renews the lease every
``beat_seconds``. Ctrl-C or SIGTERM hands the job held back to waiting and
stops with one line; a stop that comes while a lease or a result is being
committed waits for the commit, so no job is left leased to a worker gone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from types import FrameType
from typing import Any, TextIO

from oddtrick_referee._exceptions import BadJob
from oddtrick_referee.storage.work_queue import Lease, WorkQueue, open_queue, version_text
from oddtrick_referee.workers.kinds import KINDS, describe

IDLE_LOOK_SECONDS = 60.0
"""The longest an idle worker sleeps without looking at the queue, even with no NOTIFY."""


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    url: str
    name: str
    kinds: Sequence[str]
    version: tuple[int, ...]
    lease_seconds: float
    beat_seconds: float
    once: bool = False
    """Stop after one job (for scripts): the worker does one and exits."""


class _Beater(threading.Thread):
    """Renews one lease until told to stop, on a connection of its own (``beats``), so a
    beat never waits behind the worker's other statements."""

    def __init__(self, beats: WorkQueue, settings: WorkerSettings, lease: Lease, out: TextIO) -> None:
        super().__init__(name=f"beat-{lease.id}", daemon=True)
        self._beats, self._settings, self._lease, self._out = beats, settings, lease, out
        self._stop = threading.Event()

    def run(self) -> None:
        try:
            while not self._stop.wait(self._settings.beat_seconds):
                if not self._beats.beat(self._lease.id, self._lease.token, self._settings.lease_seconds):
                    _say(self._out, f"job {self._lease.id}: lease lost (it expired and was taken back)")
                    return
        except Exception as error:  # a beat that cannot reach the database: the lease may expire
            _say(self._out, f"job {self._lease.id}: cannot renew the lease: {error}")

    def stop(self) -> None:
        self._stop.set()


def _say(out: TextIO, line: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {line}", file=out, flush=True)


class _Stopping:
    """SIGINT and SIGTERM as KeyboardInterrupt, held back inside :meth:`deferred`.

    A lease or a result the database has committed must be known to the loop
    before a stop may land, or a Ctrl-C at the wrong moment would strand a job
    leased to nobody until its lease expires. A second signal in the meantime
    stops at once (a commit may hang on a database that went out of reach).
    """

    def __init__(self) -> None:
        self._depth = 0
        self._pending = False

    def handler(self, signum: int, frame: FrameType | None) -> None:
        if self._depth and not self._pending:
            self._pending = True  # a second one stops at once: the database may be out of reach
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
        if not self._depth and self._pending:
            self._pending = False
            raise KeyboardInterrupt


def run_worker(settings: WorkerSettings, out: TextIO = sys.stdout) -> int:
    """Work until stopped; return the exit status (0 after --once, 130 when stopped)."""
    queue = open_queue(settings.url)
    beats = open_queue(settings.url)
    stopping = _Stopping()
    previous = {number: signal.signal(number, stopping.handler) for number in (signal.SIGINT, signal.SIGTERM)}
    held: Lease | None = None
    try:
        queue.listen()
        _say(
            out,
            f"worker {settings.name} (oddtrick {version_text(settings.version)}) waiting for "
            f"{', '.join(settings.kinds)} work at {queue.database.url}; lease {settings.lease_seconds:g} s, "
            f"beat every {settings.beat_seconds:g} s",
        )
        told_update = False
        while True:
            with stopping.deferred():
                held = queue.lease(settings.name, settings.kinds, settings.version, settings.lease_seconds)
            if held is None:
                needed = queue.newer_version_waiting(settings.kinds, settings.version)
                if needed is not None and not told_update:
                    told_update = True
                    _say(
                        out,
                        f"update required: waiting work needs oddtrick {version_text(needed)} or newer, "
                        f"this worker is {version_text(settings.version)}; it does the rest meanwhile",
                    )
                left = queue.seconds_to_next_expiry()
                queue.wait_for_work(
                    IDLE_LOOK_SECONDS if left is None else min(IDLE_LOOK_SECONDS, left + 0.05)
                )
                continue
            result, error, seconds = _work(beats, settings, held, out)
            with stopping.deferred():
                accepted = _record(queue, settings.name, held, result, error)
                done, held = held, None
            _report(out, done, accepted, error, seconds)
            if settings.once:
                return 0
    except KeyboardInterrupt:
        what = "no job held"
        if held is not None:
            what = _hand_back(settings, held)
        print(f"worker {settings.name}: stopped; {what}", file=out, flush=True)
        return 130
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        beats.close()
        queue.close()


def _hand_back(settings: WorkerSettings, held: Lease) -> str:
    """Return the job held to waiting, on a fresh connection (the interrupt may have cut the other)."""
    try:
        queue = open_queue(settings.url)
    except Exception as error:
        return f"job {held.id} not handed back ({error}); its lease expires by itself"
    try:
        if queue.hand_back(held.id, held.token):
            return f"job {held.id} handed back to waiting"
        return f"job {held.id} was no longer held by this worker (recorded, or its lease had expired)"
    finally:
        queue.close()


def _work(
    beats: WorkQueue, settings: WorkerSettings, lease: Lease, out: TextIO
) -> tuple[Any, str | None, float]:
    """Do the job while beating; return its result, or the error that stopped it, and its seconds."""
    _say(
        out,
        f"leased job {lease.id} ({describe(lease.kind, lease.payload)}, attempt {lease.attempts}, "
        f"token {lease.token})",
    )
    beater = _Beater(beats, settings, lease, out)
    beater.start()
    started = time.perf_counter()
    result: Any = None
    error: str | None = None
    try:
        result = KINDS[lease.kind](lease.payload)
    except BadJob as bad:
        error = str(bad)
    except Exception as crash:  # the job broke the code that does it: record why, move on
        error = f"{type(crash).__name__}: {crash}"
    finally:
        beater.stop()
    return result, error, time.perf_counter() - started


def _record(queue: WorkQueue, worker: str, lease: Lease, result: Any, error: str | None) -> bool:
    """Store the result (or the failure); False when the token no longer holds the job."""
    if error is not None:
        return queue.fail(lease.id, lease.token, error, worker)
    return queue.finish(lease.id, lease.token, result, worker)


def _report(out: TextIO, lease: Lease, accepted: bool, error: str | None, seconds: float) -> None:
    if error is not None:
        outcome = f"failed after {seconds:.2f} s: {error}"
    else:
        outcome = f"done in {seconds:.2f} s, result recorded"
    if accepted:
        _say(out, f"job {lease.id} {outcome}")
    else:
        _say(
            out,
            f"job {lease.id}: result refused after {seconds:.2f} s: lease token {lease.token} is no longer "
            "current (the lease expired and the job went back to the queue); nothing recorded, the job "
            "counts once",
        )
