"""A lease queue of work on PostgreSQL: workers on any machine pull jobs, one at a time each.

PostgreSQL is the whole coordinator. A job is a row of ``work``; a worker
claims one with ``SELECT … FOR UPDATE SKIP LOCKED`` (two workers never get the
same row, and neither waits on the other's lock), holds it for a lease that it
renews with :meth:`WorkQueue.beat`, and records its result with
:meth:`WorkQueue.finish`. Every lease draws a new *fencing token* from a
sequence; ``beat``, ``finish``, ``fail`` and ``hand_back`` act only while the
token they carry is still the row's, so a worker that comes back after its
lease was scavenged and the job leased again (SIGSTOP, a network partition) has
its result refused and the job is counted once. Expired leases are put back to
waiting by whichever worker next asks for work; a job whose leases expired
:data:`MAX_ATTEMPTS` times is marked failed rather than retried forever.
Times are the database's own clock (``now()``), so the workers' clocks need not agree.

Adding work sends ``NOTIFY`` on :data:`CHANNEL`, which wakes idle workers
(:meth:`WorkQueue.wait_for_work`). A job may require a newest-enough worker
(``required_version``, compared part by part): an older worker never leases it. A job
may also name the one version whose workers may do it (``version``, the version that
submitted a tournament's sets: a worker of other code could score otherwise); a worker of
any other version never leases it.

Statuses: ``waiting → leased → done | failed``, ``leased → waiting`` on
hand-back or expiry, ``waiting | leased → cancelled`` when the work is no longer
needed (a sequential test decided, an operator's cancel), ``failed → waiting`` on
retry. A worker that cannot do a job it leased (a bot that differs from the one
submitted, a bot that dies at start) gives it
back with the reason (:meth:`WorkQueue.give_back`): the attempt counts, so a
job nobody can do fails after :data:`MAX_ATTEMPTS`. One it cannot do *here* (its bot
differs on this worker) goes back uncounted (:meth:`WorkQueue.hand_back` with the reason):
the fault is the worker's, not the job's. A run's failed work can be brought back to
waiting (:meth:`WorkQueue.retry_run`) once its cause is put right, and a run's waiting
and leased work cancelled (:meth:`WorkQueue.cancel_run`). A result that whoever reads it
refuses (a run's standings check every table's log) goes back the same way
(:meth:`WorkQueue.reopen`). Workers say who they are
and when they last beat in ``workers``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import select
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from oddtrick_referee._exceptions import DatabaseUnreachable, WorkQueueError
from oddtrick_referee.storage.database import Cursor, Database, PostgresDatabase

CHANNEL = "oddtrick_work"
"""The LISTEN/NOTIFY channel: its payload is the kind of the work added."""

LEASE_SECONDS = 360.0
"""How long a lease lasts without a beat: Fishtest declares a task dead after 360 s."""

BEAT_SECONDS = 60.0
"""How often a working worker renews its lease: six beats may be missed before it expires."""

MAX_ATTEMPTS = 5
"""Leases a job may lose by expiry before it is marked failed (a job that kills its workers)."""

LOOK_AGAIN_SECONDS = 0.5
"""How soon an idle worker looks again when work it may lease is seen waiting although its
lease got none: another worker's lease of that job was in flight (its row locked, skipped),
so neither that lease nor its expiry could be seen yet (:meth:`WorkQueue.seconds_to_next_look`)."""

_LEASABLE = (
    "status = 'waiting' AND kind = ANY(?) AND required_version <= ?::integer[] "
    "AND (version IS NULL OR version = ?) AND NOT id = ANY(?::bigint[])"
)
"""The jobs a worker may lease: of its kinds, its version may do them, not ones it refused.
Its parameters: the kinds, the version (numbers), the version's text, the refused ids."""

SCHEMA_VERSION = 4

_SCHEMA_1 = (
    "CREATE SEQUENCE IF NOT EXISTS work_fencing",
    """CREATE TABLE IF NOT EXISTS work (
        id                BIGSERIAL PRIMARY KEY,
        kind              TEXT NOT NULL,
        payload           JSONB NOT NULL,
        status            TEXT NOT NULL DEFAULT 'waiting'
                          CHECK (status IN ('waiting', 'leased', 'done', 'failed')),
        required_version  INTEGER[] NOT NULL DEFAULT '{0}',
        lease_owner       TEXT,
        lease_expires     TIMESTAMPTZ,
        token             BIGINT NOT NULL DEFAULT 0,
        attempts          INTEGER NOT NULL DEFAULT 0,
        result            JSONB,
        error             TEXT,
        done_by           TEXT,
        created           TIMESTAMPTZ NOT NULL DEFAULT now(),
        leased            TIMESTAMPTZ,
        finished          TIMESTAMPTZ
    )""",
    "CREATE INDEX IF NOT EXISTS work_waiting ON work (kind, id) WHERE status = 'waiting'",
    "CREATE INDEX IF NOT EXISTS work_leased ON work (lease_expires) WHERE status = 'leased'",
)

_SCHEMA_2 = (
    # Cancelled: waiting work no longer needed (a sequential test that decided).
    "ALTER TABLE work DROP CONSTRAINT IF EXISTS work_status_check",
    "ALTER TABLE work ADD CONSTRAINT work_status_check "
    "CHECK (status IN ('waiting', 'leased', 'done', 'failed', 'cancelled'))",
    # The work of one run (a distributed tournament or test), found without a scan.
    "CREATE INDEX IF NOT EXISTS work_run ON work ((payload->>'run'), id) WHERE payload->>'run' IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS workers (
        name       TEXT PRIMARY KEY,
        version    TEXT NOT NULL,
        kinds      TEXT NOT NULL,
        started    TIMESTAMPTZ NOT NULL DEFAULT now(),
        last_beat  TIMESTAMPTZ NOT NULL DEFAULT now(),
        job_id     BIGINT
    )""",
)

_SCHEMA_3 = (
    # The one oddtrick version whose workers may lease the job (NULL: any, as before).
    "ALTER TABLE work ADD COLUMN IF NOT EXISTS version TEXT",
)

_SCHEMA_4 = (
    # Every lease of a job, kept after it ends: who held it, from when to when, how it ended
    # and why: which worker played which set, each worker's rate and errors (``status``).
    """CREATE TABLE IF NOT EXISTS work_leases (
        token    BIGINT PRIMARY KEY,
        job_id   BIGINT NOT NULL,
        run      TEXT,
        worker   TEXT NOT NULL,
        leased   TIMESTAMPTZ NOT NULL DEFAULT now(),
        ended    TIMESTAMPTZ,
        outcome  TEXT NOT NULL DEFAULT 'leased',
        reason   TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS work_leases_run ON work_leases (run, job_id) WHERE run IS NOT NULL",
    # How long the worker may go without a beat, as it said at its last one (NULL: a worker
    # of before, judged by LEASE_SECONDS), and when it said it stopped (NULL: it has not).
    "ALTER TABLE workers ADD COLUMN IF NOT EXISTS dead_after DOUBLE PRECISION",
    "ALTER TABLE workers ADD COLUMN IF NOT EXISTS stopped TIMESTAMPTZ",
)

_STEPS = {1: _SCHEMA_1, 2: _SCHEMA_2, 3: _SCHEMA_3, 4: _SCHEMA_4}
"""The statements that bring the schema from the version before to each version."""


Version = tuple[int, ...]


def parse_version(text: str) -> Version:
    """``"0.1.0"`` → ``(0, 1, 0)``; a suffix such as ``.dev1`` or ``rc2`` is ignored."""
    match = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    if match is None:
        raise WorkQueueError(f"a version is numbers with dots, such as 0.1.0, not {text!r}")
    return tuple(int(part) for part in match.group(1).split("."))


def version_text(version: Sequence[int]) -> str:
    return ".".join(str(part) for part in version)


@dataclasses.dataclass(frozen=True)
class Lease:
    """One job held by one worker until ``expires``; ``token`` proves it is still theirs."""

    id: int
    kind: str
    payload: dict[str, Any]
    token: int
    attempts: int
    expires: datetime


@dataclasses.dataclass(frozen=True)
class Job:
    """A row of the queue as a user asks about it (``oddtrick analyze --results``)."""

    id: int
    kind: str
    payload: dict[str, Any]
    status: str
    attempts: int
    result: Any
    error: str | None
    done_by: str | None
    created: datetime
    finished: datetime | None


def open_queue(url: str) -> WorkQueue:
    """The queue at ``url`` (``postgresql://…``), its schema made or checked."""
    if not url.startswith(("postgresql://", "postgres://")):
        raise WorkQueueError(
            f"the work queue needs PostgreSQL (--database postgresql://USER@HOST/DB), not {url!r}: "
            "workers on other machines lease from it with SKIP LOCKED and wake on NOTIFY"
        )
    return WorkQueue(PostgresDatabase(url), url)


class WorkQueue:
    """Submit, lease, beat, finish, fail and hand back jobs; each call is one transaction."""

    def __init__(self, database: Database, url: str) -> None:
        if database.dialect != "postgresql":
            raise WorkQueueError("the work queue needs PostgreSQL")
        self.database = database
        self._url = url
        self._listener: Any = None
        migrate(database)

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self.database.close()

    def submit(
        self,
        kind: str,
        payloads: Sequence[dict[str, Any]],
        required_version: Sequence[int] = (0,),
        only_version: str | None = None,
    ) -> list[int]:
        """Add one job per payload, all or none, and wake idle workers; return their ids.
        ``only_version``: only workers of that version (``version_text``) may lease them."""
        if not kind or not re.fullmatch(r"[a-z][a-z0-9_-]*", kind):
            raise WorkQueueError(f"a kind of work is lower-case letters, digits, - and _, not {kind!r}")
        with self.database.transaction() as cursor:
            return submit_in(cursor, kind, payloads, required_version, only_version)

    def lease(
        self,
        worker: str,
        kinds: Sequence[str],
        version: Sequence[int],
        lease_seconds: float | Mapping[str, float] = LEASE_SECONDS,
        refused: Sequence[int] = (),
        holds_none: bool = False,
        name: str | None = None,
    ) -> Lease | None:
        """Claim the oldest waiting job of ``kinds`` that ``version`` may do, or None;
        ``refused`` are jobs this worker gave back as ones it cannot do. ``lease_seconds``
        may be a length per kind (the one of the job leased applies; others get the longest).

        Expired leases are scavenged first, in the same transaction. ``holds_none``
        says that ``worker`` names one process that holds no job as it leases
        (``oddtrick worker`` adds a nonce to its name): a job leased to it already is
        then one whose lease committed but whose answer was lost with the connection,
        and it goes back to waiting first, its attempt uncounted (the worker never saw
        it), rather than stay out of reach until its lease expires and count twice.
        ``name`` is the worker's name in ``workers`` (default ``worker``), kept with the
        lease in ``work_leases``.
        """
        by_kind = dict(lease_seconds) if isinstance(lease_seconds, Mapping) else {}
        longest = max(by_kind.values()) if by_kind else float(lease_seconds)  # type: ignore[arg-type]
        with self.database.transaction() as cursor:
            if holds_none:
                lost = cursor.rows(
                    "UPDATE work SET status = 'waiting', lease_owner = NULL, lease_expires = NULL, "
                    "attempts = greatest(attempts - 1, 0) WHERE status = 'leased' AND lease_owner = ? "
                    "RETURNING token",
                    (worker,),
                )
                _end_leases(cursor, [row["token"] for row in lost], "lost", "its lease's answer was lost")
            _scavenge(cursor)
            rows = cursor.rows(
                f"""WITH picked AS (
                       SELECT id FROM work WHERE {_LEASABLE}
                       ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
                   UPDATE work SET status = 'leased', lease_owner = ?, token = nextval('work_fencing'),
                       lease_expires = now()
                           + make_interval(secs => coalesce((?::jsonb ->> work.kind)::float8, ?)),
                       attempts = attempts + 1,
                       leased = now()
                   FROM picked WHERE work.id = picked.id
                   RETURNING work.id, kind, payload, token, attempts, lease_expires""",
                (
                    list(kinds),
                    list(version),
                    version_text(version),
                    list(refused),
                    worker,
                    json.dumps(by_kind),
                    longest,
                ),
            )
            if rows:
                cursor.execute(
                    "INSERT INTO work_leases (token, job_id, run, worker) VALUES (?, ?, ?, ?)",
                    (rows[0]["token"], rows[0]["id"], rows[0]["payload"].get("run"), name or worker),
                )
        if not rows:
            return None
        row = rows[0]
        return Lease(
            int(row["id"]),
            row["kind"],
            row["payload"],
            int(row["token"]),
            int(row["attempts"]),
            row["lease_expires"],
        )

    def newer_version_waiting(self, kinds: Sequence[str], version: Sequence[int]) -> Version | None:
        """The newest worker version that waiting work of ``kinds`` requires beyond ``version``."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT max(required_version) AS needed FROM work "
                "WHERE status = 'waiting' AND kind = ANY(?) AND required_version > ?::integer[]",
                (list(kinds), list(version)),
            )
        needed = rows[0]["needed"] if rows else None
        return tuple(needed) if needed else None

    def other_version_waiting(self, kinds: Sequence[str], version: Sequence[int]) -> list[str]:
        """The versions that waiting work of ``kinds`` is for, other than ``version``: work
        a worker of this version leaves to workers of those."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT DISTINCT version FROM work WHERE status = 'waiting' AND kind = ANY(?) "
                "AND version IS NOT NULL AND version <> ? ORDER BY version",
                (list(kinds), version_text(version)),
            )
        return [str(row["version"]) for row in rows]

    def beat(self, job_id: int, token: int, lease_seconds: float = LEASE_SECONDS) -> bool:
        """Renew the lease; False when it is no longer this token's (expired and taken back)."""
        with self.database.transaction() as cursor:
            return (
                cursor.execute(
                    "UPDATE work SET lease_expires = now() + make_interval(secs => ?) "
                    "WHERE id = ? AND token = ? AND status = 'leased'",
                    (lease_seconds, job_id, token),
                )
                == 1
            )

    def finish(self, job_id: int, token: int, result: Any, worker: str) -> bool:
        """Record the result if ``token`` still holds the job; False (nothing recorded) if not."""
        with self.database.transaction() as cursor:
            done = cursor.execute(
                "UPDATE work SET status = 'done', result = ?::jsonb, done_by = ?, finished = now(), "
                "lease_expires = NULL WHERE id = ? AND token = ? AND status = 'leased'",
                (json.dumps(result), worker, job_id, token),
            )
            if done:
                _end_leases(cursor, [token], "done")
        return done == 1

    def fail(self, job_id: int, token: int, error: str, worker: str) -> bool:
        """Mark the job failed for good (its input is bad: retrying cannot help)."""
        with self.database.transaction() as cursor:
            failed = cursor.execute(
                "UPDATE work SET status = 'failed', error = ?, done_by = ?, finished = now(), "
                "lease_expires = NULL WHERE id = ? AND token = ? AND status = 'leased'",
                (error, worker, job_id, token),
            )
            if failed:
                _end_leases(cursor, [token], "failed", error)
        return failed == 1

    def hand_back(self, job_id: int, token: int, reason: str | None = None) -> bool:
        """Return a held job to waiting at once; it is not counted as an attempt. Without a
        reason the worker is stopping; with one, the job is not for this worker (its bot
        differs here), the reason kept for ``status``: a misconfigured worker, however many
        of them, must not use up the attempts of a job that a well-configured one can do."""
        with self.database.transaction() as cursor:
            changed = cursor.execute(
                "UPDATE work SET status = 'waiting', lease_owner = NULL, lease_expires = NULL, "
                "attempts = greatest(attempts - 1, 0), error = coalesce(?, error) "
                "WHERE id = ? AND token = ? AND status = 'leased'",
                (reason, job_id, token),
            )
            if changed:
                cursor.execute("SELECT pg_notify(?, kind) FROM work WHERE id = ?", (CHANNEL, job_id))
                _end_leases(cursor, [token], "not here" if reason else "stopped", reason)
        return changed == 1

    def give_back(self, job_id: int, token: int, reason: str) -> str | None:
        """Return a leased job this worker cannot do, with the reason: to waiting for
        another worker, or failed once it has had :data:`MAX_ATTEMPTS` attempts. Returns
        the job's new status (None: the token no longer holds it)."""
        return self._send_back(job_id, token, reason, "leased", "given back")

    def reopen(self, job_id: int, token: int, reason: str) -> str | None:
        """Refuse a recorded result (its reader found it does not bear out): the job goes
        back to waiting with the reason, to be done again, or to failed once it has had
        :data:`MAX_ATTEMPTS` attempts. Only while ``token`` is still the one it was done
        under, so two readers refusing it at once send it back once. Returns the job's new
        status (None: it was not done under that token)."""
        return self._send_back(job_id, token, reason, "done", "refused")

    def _send_back(self, job_id: int, token: int, reason: str, status: str, outcome: str) -> str | None:
        """A job in ``status`` under ``token`` goes back to waiting with ``reason`` (failed once
        it has had its attempts): its new status, or None when the token no longer holds it."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "UPDATE work SET status = CASE WHEN attempts >= ? THEN 'failed' ELSE 'waiting' END, "
                "error = ?, done_by = CASE WHEN status = 'done' THEN NULL ELSE done_by END, "
                "lease_owner = NULL, lease_expires = NULL, "
                "finished = CASE WHEN attempts >= ? THEN now() END "
                "WHERE id = ? AND token = ? AND status = ? RETURNING status, kind",
                (MAX_ATTEMPTS, reason, MAX_ATTEMPTS, job_id, token, status),
            )
            if rows and rows[0]["status"] == "waiting":
                cursor.execute("SELECT pg_notify(?, ?)", (CHANNEL, rows[0]["kind"]))
            if rows:
                _end_leases(cursor, [token], outcome, reason)
        return str(rows[0]["status"]) if rows else None

    def cancel_run(self, run: str) -> int:
        """Cancel the waiting and leased work of one run (its answer is known, or its operator
        stopped it). A leased job's token then holds nothing: its worker's next beat says so,
        and its result is refused, so nothing of the run is played and counted after this.
        Returns how many jobs were cancelled."""
        with self.database.transaction() as cursor:
            cancelled = cursor.execute(
                "UPDATE work SET status = 'cancelled', finished = now(), lease_owner = NULL, "
                "lease_expires = NULL WHERE payload->>'run' = ? AND status IN ('waiting', 'leased')",
                (run,),
            )
            cursor.execute(
                "UPDATE work_leases SET ended = now(), outcome = 'cancelled' WHERE run = ? AND ended IS NULL",
                (run,),
            )
        return cancelled

    def retry_run(self, run: str) -> int:
        """Bring the failed work of one run back to waiting with its attempts at zero (its
        cause, a missing file on the workers, has been put right). The last error is kept, for
        ``status`` to show until the job is done. Returns how many jobs went back."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "UPDATE work SET status = 'waiting', attempts = 0, done_by = NULL, finished = NULL, "
                "lease_owner = NULL, lease_expires = NULL "
                "WHERE payload->>'run' = ? AND status = 'failed' RETURNING kind",
                (run,),
            )
            for kind in sorted({row["kind"] for row in rows}):
                cursor.execute("SELECT pg_notify(?, ?)", (CHANNEL, kind))
        return len(rows)

    def seen(
        self,
        worker: str,
        version: Sequence[int],
        kinds: Sequence[str],
        job_id: int | None,
        dead_after: float = LEASE_SECONDS,
    ) -> None:
        """Say this worker is alive (and which job it holds) in ``workers``, for status pages;
        ``dead_after``: the seconds past which, without another beat, it is to be judged dead
        (the longest it goes between two beats, with room to spare)."""
        with self.database.transaction() as cursor:
            cursor.execute(
                "INSERT INTO workers (name, version, kinds, job_id, dead_after) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET version = excluded.version, kinds = excluded.kinds, "
                "last_beat = now(), job_id = excluded.job_id, dead_after = excluded.dead_after, "
                "stopped = NULL",
                (worker, version_text(version), ",".join(kinds), job_id, dead_after),
            )

    def gone(self, worker: str) -> None:
        """Say this worker stopped of its own accord (a status page shows it stopped, not dead)."""
        with self.database.transaction() as cursor:
            cursor.execute("UPDATE workers SET stopped = now(), job_id = NULL WHERE name = ?", (worker,))

    def depth(self, kinds: Sequence[str]) -> int:
        """How many jobs of ``kinds`` are waiting (the queue's depth, for ``/metrics``)."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT count(*) AS n FROM work WHERE status = 'waiting' AND kind = ANY(?)", (list(kinds),)
            )
        return int(rows[0]["n"])

    def seconds_to_next_expiry(self) -> float | None:
        """How long until the first lease now held expires (None: none is held)."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT extract(epoch FROM min(lease_expires) - now()) AS left_s "
                "FROM work WHERE status = 'leased'"
            )
        left = rows[0]["left_s"] if rows else None
        return None if left is None else max(0.0, float(left))

    def seconds_to_next_look(
        self, kinds: Sequence[str], version: Sequence[int], refused: Sequence[int] = ()
    ) -> float | None:
        """How long an idle worker may sleep before it asks for work again, after a lease
        that got none (None: until work is added, NOTIFY wakes it).

        Until the first lease held expires, as :meth:`seconds_to_next_expiry` says, unless
        a job this worker may lease is seen waiting: its lease skipped that row because
        another worker was leasing it, in a transaction not committed when this one began.
        That lease and its expiry are not seen here either, and no NOTIFY comes when it
        expires; sleeping until some other expiry (or for good) would leave that job, should
        its worker die, unleased long after its lease ran out. So it looks again after
        :data:`LOOK_AGAIN_SECONDS`, when the lease is committed and its expiry seen.
        """
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                f"SELECT EXISTS (SELECT 1 FROM work WHERE {_LEASABLE}) AS waiting, "
                "extract(epoch FROM (SELECT min(lease_expires) FROM work WHERE status = 'leased') - now()) "
                "AS left_s",
                (list(kinds), list(version), version_text(version), list(refused)),
            )
        if rows[0]["waiting"]:
            return LOOK_AGAIN_SECONDS
        left = rows[0]["left_s"]
        return None if left is None else max(0.0, float(left))

    def listen(self) -> None:
        """Start listening for added work; call before the first :meth:`lease`, so that work
        added between an empty lease and the wait is not missed."""
        import psycopg

        if self._listener is not None and not (self._listener.closed or self._listener.broken):
            return
        try:
            self._listener = psycopg.connect(self._url, autocommit=True, connect_timeout=10)
            self._listener.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as error:
            raise DatabaseUnreachable(f"cannot listen for work at {self.database.url}: {error}") from error

    def wait_for_work(self, timeout: float) -> bool:
        """Sleep until work is added (NOTIFY) or ``timeout`` seconds pass; True if woken by work."""
        import psycopg

        self.listen()
        try:
            ready, _, _ = select.select([self._listener.fileno()], [], [], max(0.0, timeout))
            if not ready:
                return False
            return any(True for _ in self._listener.notifies(timeout=0))
        except psycopg.OperationalError:
            self._listener.close()  # the server went away: the next listen() connects again
            raise

    def jobs(
        self, kind: str | None = None, ids: Sequence[int] | None = None, leave_out: Sequence[str] = ()
    ) -> list[Job]:
        """The queue's jobs, oldest first, of one kind or with the given ids; ``leave_out``
        names payload keys not to fetch (a match log's text, when only its name is shown)."""
        where: list[str] = ["TRUE"]
        params: list[Any] = [list(leave_out)]
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        if ids is not None:
            where.append("id = ANY(?)")
            params.append(list(ids))
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT id, kind, payload - ?::text[] AS payload, status, attempts, result, error, "
                "done_by, created, finished "
                f"FROM work WHERE {' AND '.join(where)} ORDER BY id",
                params,
            )
        return [Job(**row) for row in rows]

    def latest_result(self, kind: str, log_names: Sequence[str]) -> Any | None:
        """The newest recorded result of a ``kind`` job whose payload's ``log_name`` is one of
        ``log_names`` (None: none is done): how the web page finds a match's analysis that a
        worker did, whoever submitted it."""
        with self.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT result FROM work WHERE kind = ? AND status = 'done' "
                "AND payload->>'log_name' = ANY(?) ORDER BY finished DESC LIMIT 1",
                (kind, list(log_names)),
            )
        return rows[0]["result"] if rows else None


def submit_in(
    cursor: Cursor,
    kind: str,
    payloads: Sequence[dict[str, Any]],
    required_version: Sequence[int] = (0,),
    only_version: str | None = None,
) -> list[int]:
    """:meth:`WorkQueue.submit` inside a transaction of the caller's, so that what else it
    writes (a run's own row) is committed with the jobs or not at all."""
    ids: list[int] = []
    for payload in payloads:
        rows = cursor.rows(
            "INSERT INTO work (kind, payload, required_version, version) "
            "VALUES (?, ?::jsonb, ?::integer[], ?) RETURNING id",
            (kind, json.dumps(payload), list(required_version), only_version),
        )
        ids.append(int(rows[0]["id"]))
    cursor.execute("SELECT pg_notify(?, ?)", (CHANNEL, kind))
    return ids


def _scavenge(cursor: Cursor) -> None:
    """Put expired leases back to waiting (or failed after MAX_ATTEMPTS), waking idle workers."""
    failed = cursor.rows(
        "UPDATE work SET status = 'failed', lease_owner = NULL, lease_expires = NULL, finished = now(), "
        "error = 'its lease expired ' || attempts || ' times: the job may kill its workers' "
        "WHERE status = 'leased' AND lease_expires < now() AND attempts >= ? RETURNING token",
        (MAX_ATTEMPTS,),
    )
    back = cursor.rows(
        "UPDATE work SET status = 'waiting', lease_owner = NULL, lease_expires = NULL "
        "WHERE status = 'leased' AND lease_expires < now() RETURNING kind, token"
    )
    expired = "its lease expired: the worker stopped beating (killed, stopped, or cut off)"
    _end_leases(cursor, [row["token"] for row in [*failed, *back]], "expired", expired)
    for kind in sorted({row["kind"] for row in back}):
        cursor.execute("SELECT pg_notify(?, ?)", (CHANNEL, kind))


def _end_leases(cursor: Cursor, tokens: Sequence[int], outcome: str, reason: str | None = None) -> None:
    """Say in ``work_leases`` how these leases ended (a refused result's lease ended already:
    its end stays, its outcome becomes the refusal)."""
    if tokens:
        cursor.execute(
            "UPDATE work_leases SET ended = coalesce(ended, now()), outcome = ?, reason = ? "
            "WHERE token = ANY(?::bigint[])",
            (outcome, reason, list(tokens)),
        )


def migrate(database: Database) -> int:
    """Make the queue's tables (or check them); return the schema version found (0: new)."""
    with database.transaction() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtext('oddtrick work schema'))")
        cursor.execute("CREATE TABLE IF NOT EXISTS work_schema (version INTEGER NOT NULL)")
        rows = cursor.rows("SELECT version FROM work_schema")
        found = int(rows[0]["version"]) if rows else 0
        if found > SCHEMA_VERSION:
            raise WorkQueueError(
                f"the work queue at {database.url} has schema version {found}, newer than this "
                f"oddtrick understands ({SCHEMA_VERSION}): upgrade oddtrick"
            )
        if found < SCHEMA_VERSION:
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for step in _STEPS[version]:
                    cursor.execute(step)
            if rows:
                cursor.execute("UPDATE work_schema SET version = ?", (SCHEMA_VERSION,))
            else:
                cursor.execute("INSERT INTO work_schema (version) VALUES (?)", (SCHEMA_VERSION,))
    return found
