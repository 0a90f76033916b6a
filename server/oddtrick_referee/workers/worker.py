"""``oddtrick worker``'s loop: lease a job, do it while beating, record the result, repeat.

Idle, the worker sleeps on LISTEN until work is added, or until the first
lease held by anyone expires (so that some worker scavenges it back to
waiting without polling); a job it may lease seen waiting after its lease got
none is one another worker is leasing that moment, and it looks again soon, once
that lease and its expiry can be seen. While a job runs, a thread renews the lease every
``beat_seconds`` and says in ``workers`` that this worker is alive. Ctrl-C or
SIGTERM hands the job held back to waiting and stops with one line; a stop
that comes while a lease or a result is being committed waits for the commit,
so no job is left leased to a worker gone.

The database may go away (a restart, a failover): every call to it is tried
again, with a growing pause, until it answers, and a result played meanwhile
is recorded then if its lease still holds. A job the worker cannot do
(:class:`HandBack`) goes back with the reason; one it cannot do *here* (its
bot differs) goes back without using an attempt and is not leased by this worker again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import Any, TextIO, TypeVar

import psycopg

from oddtrick_referee._exceptions import BadJob, DatabaseUnreachable, HandBack
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.storage.work_queue import Lease, WorkQueue, open_queue, version_text
from oddtrick_referee.workers.kinds import AFTER, KINDS, LEASE_AND_BEAT, Capacity, close_all, describe

IDLE_LOOK_SECONDS = 60.0
"""The longest an idle worker sleeps without looking at the queue, even with no NOTIFY."""

IDLE_DEAD_AFTER = 1.5 * IDLE_LOOK_SECONDS
"""An idle worker beats each time it looks at the queue: silent this long, it is dead."""

RETRY_MAX_SECONDS = 5.0
"""The longest pause between two tries of a database that does not answer."""

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    url: str
    name: str
    kinds: Sequence[str]
    version: tuple[int, ...]
    lease_seconds: float | None
    """The lease taken on every job (None: each kind's own, :data:`LEASE_AND_BEAT`)."""
    beat_seconds: float | None
    once: bool = False
    """Stop after one job (for scripts): the worker does one and exits."""
    tables: int = 2
    """Tables a tournament job plays at once here (``--tables``)."""
    metrics: Metrics | None = None
    """Its figures for ``--metrics``: its referees', its lease waits and its queue's depth."""

    def lease_for(self, kind: str) -> float:
        return self.lease_seconds or LEASE_AND_BEAT[kind][0]

    def beat_for(self, kind: str) -> float:
        """``--beat``, or the kind's own, and never fewer than five beats to a lease."""
        return self.beat_seconds or min(LEASE_AND_BEAT[kind][1], self.lease_for(kind) / 5)

    def leases(self) -> dict[str, float]:
        return {kind: self.lease_for(kind) for kind in self.kinds}

    def describe_leases(self) -> str:
        return "; ".join(
            f"{kind}: lease {self.lease_for(kind):g} s, beat every {self.beat_for(kind):g} s"
            for kind in self.kinds
        )


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What came of a job: its result, or why it failed (``error``) or went back (``back``)."""

    result: Any = None
    error: str | None = None
    back: HandBack | None = None
    seconds: float = 0.0


def until_answered(out: TextIO, what: str, call: Callable[[], T]) -> T:
    """``call()``, tried again while the database cannot be reached, with one line when it
    goes and one when it is back."""
    pause, told = 0.25, False
    while True:
        try:
            answer = call()
        except (psycopg.OperationalError, DatabaseUnreachable) as error:
            if not told:
                first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
                _say(out, f"database unreachable while {what} ({first}); trying again")
                told = True
            time.sleep(pause)
            pause = min(pause * 2, RETRY_MAX_SECONDS)
            continue
        if told:
            _say(out, f"database reachable again ({what})")
        return answer


class _Beater(threading.Thread):
    """Renews one lease until told to stop, on a connection of its own (``beats``), so a
    beat never waits behind the worker's other statements."""

    def __init__(self, beats: WorkQueue, settings: WorkerSettings, lease: Lease, out: TextIO) -> None:
        # Stopped and joined when the job ends (:func:`_work`); a daemon all the same, so that a
        # second Ctrl-C stops the worker at once while a beat waits on a database out of reach.
        super().__init__(name=f"beat-{lease.id}", daemon=True)
        self._beats, self._settings, self._lease, self._out = beats, settings, lease, out
        self._stopped = threading.Event()

    def run(self) -> None:
        told = False
        settings, lease = self._settings, self._lease
        while not self._stopped.wait(settings.beat_for(lease.kind)):
            try:
                if not self._beats.beat(lease.id, lease.token, settings.lease_for(lease.kind)):
                    _say(self._out, f"job {lease.id}: lease lost (it expired and was taken back)")
                    return
                _seen(self._beats, settings, lease)
                told = False
            except Exception as error:  # the database out of reach: try at the next beat
                if not told:
                    _say(
                        self._out,
                        f"job {lease.id}: cannot renew the lease ({error}); trying at the next beat",
                    )
                    told = True

    def stop(self) -> None:
        self._stopped.set()


def _seen(queue: WorkQueue, settings: WorkerSettings, held: Lease | None) -> None:
    """Beat in ``workers``: alive, holding ``held``; dead if silent past its lease (a worker
    that holds a job beats every ``beat_for``) or, idle, past :data:`IDLE_DEAD_AFTER`."""
    dead_after = settings.lease_for(held.kind) if held is not None else IDLE_DEAD_AFTER
    queue.seen(settings.name, settings.version, settings.kinds, held.id if held else None, dead_after)


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
            f"{', '.join(settings.kinds)} work at {queue.database.url}; {settings.describe_leases()}",
        )
        told: set[str] = set()
        refused: list[int] = []
        until_answered(out, "saying hello", functools.partial(_seen, queue, settings, None))
        owner = f"{settings.name} {secrets.token_hex(4)}"  # two processes given one --name stay apart
        asked = time.monotonic()
        while True:
            with stopping.deferred():
                lease = functools.partial(_lease, queue, settings, owner, refused)
                held = until_answered(out, "leasing", lease)
            asked = _measure(queue, settings, held, asked)
            until_answered(out, "saying which job it holds", functools.partial(_seen, queue, settings, held))
            if held is None:
                _idle(queue, settings, out, told, refused)
                continue
            outcome = _work(beats, settings, held, out)
            asked = time.monotonic()
            with stopping.deferred():
                record = functools.partial(_record, queue, settings.name, held, outcome)
                accepted = until_answered(out, "recording", record)
                done, held = held, None
            _after(queue, done, accepted, outcome, refused, out)
            if settings.once:
                _goodbye(queue, settings)
                return 0
    except KeyboardInterrupt:
        what = "no job held"
        if held is not None:
            what = _hand_back(settings, held)
        _goodbye(queue, settings)
        print(f"worker {settings.name}: stopped; {what}", file=out, flush=True)
        close_all(wait=2.0)
        return 130
    finally:
        close_all(wait=15.0)
        for number, handler in previous.items():
            signal.signal(number, handler)
        beats.close()
        queue.close()


def _measure(queue: WorkQueue, settings: WorkerSettings, held: Lease | None, asked: float) -> float:
    """With ``--metrics``: the queue's depth now and, once a lease is held, how long since the
    worker began asking for one. Returns when the wait being measured began."""
    if settings.metrics is None:
        return asked
    with contextlib.suppress(psycopg.Error, DatabaseUnreachable):  # a figure, not worth a retry
        settings.metrics.queue_depth.set(queue.depth(settings.kinds))
    if held is None:
        return asked
    settings.metrics.lease_wait.observe(time.monotonic() - asked)
    return time.monotonic()


def _goodbye(queue: WorkQueue, settings: WorkerSettings) -> None:
    """Say in ``workers`` that this worker stopped (not died); skipped if the database is away."""
    with contextlib.suppress(Exception):
        queue.gone(settings.name)


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


def _lease(queue: WorkQueue, settings: WorkerSettings, owner: str, refused: Sequence[int]) -> Lease | None:
    """Lease the next job as ``owner`` (this process alone): tried again after a lost
    answer, the lease takes the job it had committed back first (WorkQueue.lease)."""
    return queue.lease(
        owner,
        settings.kinds,
        settings.version,
        settings.leases(),
        refused,
        holds_none=True,
        name=settings.name,
    )


def _after(
    queue: WorkQueue, done: Lease, accepted: bool, outcome: Outcome, refused: list[int], out: TextIO
) -> None:
    """Say what came of the job, remember a job not to lease again, run its kind's after-step."""
    if outcome.back is not None and outcome.back.not_here:
        refused.append(done.id)
    _report(out, done, accepted, outcome)
    if accepted and outcome.error is None and outcome.back is None and done.kind in AFTER:
        line = until_answered(out, "checking the run", functools.partial(AFTER[done.kind], queue, done))
        if line:
            _say(out, line)


def _idle(
    queue: WorkQueue, settings: WorkerSettings, out: TextIO, told: set[str], refused: Sequence[int]
) -> None:
    """Wait for work (or the first expiry, or a lease seen in flight: WorkQueue.seconds_to_next_look);
    say once why waiting work is not this worker's (``told`` keeps what was said): it needs a
    newer oddtrick, or another version's."""

    def wait() -> None:
        mine = version_text(settings.version)
        needed = queue.newer_version_waiting(settings.kinds, settings.version)
        if needed is not None and "update" not in told:
            told.add("update")
            _say(
                out,
                f"update required: waiting work needs oddtrick {version_text(needed)} or newer, "
                f"this worker is {mine}; it does the rest meanwhile",
            )
        for other in queue.other_version_waiting(settings.kinds, settings.version):
            if other not in told:
                told.add(other)
                _say(
                    out,
                    f"waiting work is for oddtrick {other} only, this worker is {mine}: it is left to "
                    f"workers of oddtrick {other}",
                )
        left = queue.seconds_to_next_look(settings.kinds, settings.version, refused)
        queue.wait_for_work(IDLE_LOOK_SECONDS if left is None else min(IDLE_LOOK_SECONDS, left + 0.05))

    until_answered(out, "waiting for work", wait)


def _work(beats: WorkQueue, settings: WorkerSettings, lease: Lease, out: TextIO) -> Outcome:
    """Do the job while beating (on a connection of the beats' own)."""
    _say(
        out,
        f"leased job {lease.id} ({describe(lease.kind, lease.payload)}, attempt {lease.attempts}, "
        f"token {lease.token})",
    )
    beater = _Beater(beats, settings, lease, out)
    beater.start()
    started = time.perf_counter()
    try:
        result = KINDS[lease.kind](lease.payload, Capacity(settings.tables, settings.metrics))
        outcome = Outcome(result=result)
    except BadJob as bad:
        outcome = Outcome(error=str(bad))
    except HandBack as back:
        outcome = Outcome(back=back)
    except Exception as crash:  # the job broke the code that does it: record why, move on
        outcome = Outcome(error=f"{type(crash).__name__}: {crash}")
    finally:
        beater.stop()
        beater.join()
    return dataclasses.replace(outcome, seconds=time.perf_counter() - started)


def _record(queue: WorkQueue, worker: str, lease: Lease, outcome: Outcome) -> bool:
    """Store the result (or the failure, or give the job back); False when the token no
    longer holds the job."""
    if outcome.back is not None and outcome.back.not_here:  # this worker's fault: no attempt used
        return queue.hand_back(lease.id, lease.token, str(outcome.back))
    if outcome.back is not None:
        return queue.give_back(lease.id, lease.token, str(outcome.back)) is not None
    if outcome.error is not None:
        return queue.fail(lease.id, lease.token, outcome.error, worker)
    return queue.finish(lease.id, lease.token, outcome.result, worker)


def _report(out: TextIO, lease: Lease, accepted: bool, outcome: Outcome) -> None:
    seconds = outcome.seconds
    if outcome.back is not None:
        elsewhere = "; this worker will not take it again" if outcome.back.not_here else ""
        what = f"given back after {seconds:.2f} s: {outcome.back}{elsewhere}"
    elif outcome.error is not None:
        what = f"failed after {seconds:.2f} s: {outcome.error}"
    else:
        what = f"done in {seconds:.2f} s, result recorded"
    if accepted:
        _say(out, f"job {lease.id} {what}")
    else:
        _say(
            out,
            f"job {lease.id}: result refused after {seconds:.2f} s: lease token {lease.token} is no longer "
            "current (the lease expired and the job went back to the queue, or its run was cancelled); "
            "nothing recorded, the job counts once",
        )
