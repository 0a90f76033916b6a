"""Runs played by workers (distributed tournaments and sequential tests) in PostgreSQL.

A *run* is one row of ``runs``: its name, what it is (``tournament`` or
``sprt``), its settings as submitted (the bots' content hashes among them) and
its master seed. Its work is the rows of ``work`` whose payload names it
(``payload->>'run'``); each job's result holds the tables it played, and the
match logs' text apart (``result->'logs'``), so standings read the small part
and only an export of the logs reads the rest.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from oddtrick_referee._exceptions import WorkQueueError
from oddtrick_referee.storage.work_queue import WorkQueue, submit_in

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
    """One job of a run as the standings read it: its status and the tables it recorded."""

    id: int
    index: int
    status: str
    attempts: int
    error: str | None
    done_by: str | None
    tables: list[dict[str, Any]]


@dataclasses.dataclass(frozen=True)
class WorkerSeen:
    name: str
    version: str
    last_beat: datetime
    seconds_ago: float
    job_id: int | None


class RunStore:
    """The runs of one database, beside its work queue."""

    def __init__(self, queue: WorkQueue) -> None:
        self.queue = queue
        with queue.database.transaction() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('oddtrick runs schema'))")
            cursor.execute(_SCHEMA)

    def create(
        self, name: str, kind: str, settings: dict[str, Any], master_seed: str, job_kind: str,
        payloads: list[dict[str, Any]], version: Sequence[int] = (0,),
    ) -> tuple[Run, bool]:  # fmt: skip
        """Create the run and its jobs, all or none; or find it, if the same settings were
        submitted before (then nothing is added). Returns the run and whether it is new."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows("SELECT * FROM runs WHERE name = ? FOR UPDATE", (name,))
            if rows:
                run = Run(**rows[0])
                if run.kind != kind or run.settings != json.loads(json.dumps(settings)):
                    raise WorkQueueError(
                        f"a run named {name!r} was submitted with other settings (or other bots): "
                        "give another --name"
                    )
                return run, False
            cursor.execute(
                "INSERT INTO runs (name, kind, settings, master_seed) VALUES (?, ?, ?::jsonb, ?)",
                (name, kind, json.dumps(settings), master_seed),
            )
            submit_in(cursor, job_kind, [{**payload, "run": name} for payload in payloads], version)
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
        """Every job of the run, in the order of its plan, the tables of those done."""
        with self.queue.database.transaction() as cursor:
            rows = cursor.rows(
                "SELECT id, (payload->>'index')::int AS index, status, attempts, error, done_by, "
                "result->'tables' AS tables FROM work WHERE payload->>'run' = ? ORDER BY id",
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
                list(row["tables"] or []) if row["status"] == "done" else [],
            )
            for row in rows
        ]

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
                "SELECT name, version, last_beat, extract(epoch FROM now() - last_beat) AS ago, job_id "
                "FROM workers ORDER BY last_beat DESC"
            )
        return [
            WorkerSeen(row["name"], row["version"], row["last_beat"], float(row["ago"]), row["job_id"])
            for row in rows
        ]
