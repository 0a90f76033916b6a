"""Runs played by workers (distributed tournaments and sequential tests) in PostgreSQL.

A *run* is one row of ``runs``: its name, what it is (``tournament`` or
``sprt``), its settings as submitted (the bots' content hashes among them) and
its master seed. Its work is the rows of ``work`` whose payload names it
(``payload->>'run'``); each job's result holds the tables it played, and the
match logs' text apart (``result->'logs'``). Nothing here says what a result
counts for: the store hands a job's result as it was recorded (:meth:`RunStore.result`),
and the standings read each table off its log
(:mod:`oddtrick_referee.competitions.on_workers.distributed_results`), refusing
(:meth:`RunStore.refuse`) a result the logs do not bear out.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from oddtrick_referee._exceptions import WorkQueueError
from oddtrick_referee.storage.results import TableResult
from oddtrick_referee.storage.work_queue import LEASE_SECONDS, WorkQueue, submit_in

_SCHEMA = """CREATE TABLE IF NOT EXISTS runs (
    name         TEXT PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('tournament', 'sprt')),
    settings     JSONB NOT NULL,
    master_seed  TEXT NOT NULL,
    created      TIMESTAMPTZ NOT NULL DEFAULT now()
)"""


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    kind: str
    settings: dict[str, Any]
    master_seed: str
    created: datetime


@dataclasses.dataclass(frozen=True)
class SetJob:
    """One job of a run as the standings read it: its status, and the tables it counts for
    (none from the store: only a check of its logs fills them in)."""

    id: int
    index: int
    status: str
    attempts: int
    error: str | None
    done_by: str | None
    tables: list[TableResult] = dataclasses.field(default_factory=list)
    token: int = 0
    """The lease it was done under: a refusal of its result names it (WorkQueue.reopen)."""
    digest: str | None = None
    """Of its recorded result (md5 of its JSON, the database's): changed, it is checked again."""
    runs: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Its table runs as planned at submission (``run_record``): what its result must be of."""
    refused: str | None = None
    """Why its result was refused by the check that read it (it went back to be played again)."""


@dataclasses.dataclass(frozen=True)
class WorkerSeen:
    name: str
    version: str
    last_beat: datetime
    seconds_ago: float
    job_id: int | None
    dead_after: float = LEASE_SECONDS
    """Silent past this many seconds, it is dead (what it said at its last beat)."""
    stopped: bool = False
    """It said it stopped (Ctrl-C, ``--once``) rather than fell silent."""

    @property
    def state(self) -> str:
        """``alive``, ``stopped`` (it said so) or ``dead`` (silent past ``dead_after``)."""
        if self.stopped:
            return "stopped"
        return "dead" if self.seconds_ago > self.dead_after else "alive"


@dataclasses.dataclass(frozen=True)
class LeaseSeen:
    """One lease of one of a run's jobs: who held it, how long, and how it ended."""

    token: int
    job_id: int
    worker: str
    leased: datetime
    seconds: float
    """From its lease to its end (to now, while it is held)."""
    outcome: str
    """``leased`` (held now), ``done``, ``failed``, ``given back``, ``not here``, ``expired``,
    ``refused``, ``stopped``, ``lost`` or ``cancelled``."""
    reason: str | None


class RunStore:
    """The runs of one database, beside its work queue."""

    def __init__(self, queue: WorkQueue) -> None:
        self.queue = queue
        with queue.database.transaction() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('oddtrick runs schema'))")
            cursor.execute(_SCHEMA)

    def create(
        self, name: str, kind: str, settings: dict[str, Any], master_seed: str, job_kind: str,
        payloads: list[dict[str, Any]], version: Sequence[int] = (0,), only_version: str | None = None,
    ) -> tuple[Run, bool]:  # fmt: skip
        """Create the run and its jobs, all or none; or find it, if the same settings were
        submitted before (then nothing is added). Returns the run and whether it is new."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows("SELECT * FROM runs WHERE name = ? FOR UPDATE", (name,))
            if rows:
                run = Run(**rows[0])
                if run.kind != kind or run.settings != json.loads(json.dumps(settings)):
                    raise WorkQueueError(
                        f"a run named {name!r} was submitted with other settings (or other bots, or "
                        "by another oddtrick version): give another --name"
                    )
                return run, False
            cursor.execute(
                "INSERT INTO runs (name, kind, settings, master_seed) VALUES (?, ?, ?::jsonb, ?)",
                (name, kind, json.dumps(settings), master_seed),
            )
            submit_in(
                cursor, job_kind, [{**payload, "run": name} for payload in payloads], version, only_version
            )
        found = self.get(name)
        assert found is not None
        return found, True

    def get(self, name: str) -> Run | None:
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows("SELECT * FROM runs WHERE name = ?", (name,))
        return Run(**rows[0]) if rows else None

    def names(self) -> list[str]:
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows("SELECT name FROM runs ORDER BY created, name")
        return [str(row["name"]) for row in rows]

    def jobs(self, name: str) -> list[SetJob]:
        """Every job of the run, in the order of its plan (their results are not read)."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT id, (payload->>'index')::int AS index, status, attempts, error, done_by, token, "
                "CASE WHEN status = 'done' THEN md5(result::text) END AS digest, payload->'runs' AS runs "
                "FROM work WHERE payload->>'run' = ? ORDER BY id",
                (name,),
            )
        return [
            SetJob(
                int(row["id"]),
                int(row["index"]),
                row["status"],
                int(row["attempts"]),
                row["error"],
                row["done_by"],
                token=int(row["token"]),
                digest=row["digest"],
                runs=list(row["runs"] or []),
            )
            for row in rows
        ]

    def result(self, job_id: int, token: int) -> tuple[Any, str] | None:
        """A done job's result as recorded (its tables and logs) and its digest (as
        :attr:`SetJob.digest`), if it is still done under ``token``; None if not."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT result, md5(result::text) AS digest FROM work "
                "WHERE id = ? AND token = ? AND status = 'done'",
                (job_id, token),
            )
        return (rows[0]["result"], str(rows[0]["digest"])) if rows else None

    def refuse(self, job_id: int, token: int, reason: str) -> str | None:
        """Refuse a done job's result: back to waiting (or failed past its attempts), with
        the reason (:meth:`WorkQueue.reopen`)."""
        return self.queue.reopen(job_id, token, reason)

    def counts(self, name: str) -> dict[str, int]:
        """How many of the run's jobs are in each status (a cheap look, for progress lines)."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT status, count(*) AS n FROM work WHERE payload->>'run' = ? GROUP BY status", (name,)
            )
        return {str(row["status"]): int(row["n"]) for row in rows}

    def logs(self, name: str) -> dict[str, str]:
        """The match logs of the run's tables, by match id (gzip and base64 as recorded)."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT result->'logs' AS logs FROM work WHERE payload->>'run' = ? AND status = 'done'",
                (name,),
            )
        logs: dict[str, str] = {}
        for row in rows:
            logs.update(row["logs"] or {})
        return logs

    def workers(self) -> list[WorkerSeen]:
        """Every worker that has said it is alive, the most recent first."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT name, version, last_beat, extract(epoch FROM now() - last_beat) AS ago, job_id, "
                "dead_after, stopped IS NOT NULL AS stopped FROM workers ORDER BY last_beat DESC"
            )
        return [
            WorkerSeen(
                row["name"], row["version"], row["last_beat"], float(row["ago"]), row["job_id"],
                LEASE_SECONDS if row["dead_after"] is None else float(row["dead_after"]), row["stopped"],
            )
            for row in rows
        ]  # fmt: skip

    def leases(self, name: str) -> list[LeaseSeen]:
        """Every lease of the run's jobs, oldest first (none of a job leased before they were
        kept: its ``done_by`` alone says who did it)."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT token, job_id, worker, leased, outcome, reason, "
                "extract(epoch FROM coalesce(ended, now()) - leased) AS seconds "
                "FROM work_leases WHERE run = ? ORDER BY leased, token",
                (name,),
            )
        return [
            LeaseSeen(
                int(row["token"]), int(row["job_id"]), row["worker"], row["leased"],
                float(row["seconds"]), row["outcome"], row["reason"],
            )
            for row in rows
        ]  # fmt: skip

    def seconds_since(self, when: datetime) -> float:
        """Seconds from ``when`` to now, by the database's clock (the one leases are timed by)."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows("SELECT extract(epoch FROM now() - ?::timestamptz) AS s", (when,))
        return float(rows[0]["s"])
