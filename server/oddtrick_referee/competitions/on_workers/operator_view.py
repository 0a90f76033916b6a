"""What an operator asks of a run on workers, as Fishtest's and fishnet's pages answer it:
who works on it, are they alive, how fast, with which errors; who played which set; when
will it end.

Read from ``work_leases`` (every lease of a job, kept with how it ended) and ``workers``
(each worker's last beat, and how long it may stay silent before it is dead). A run
submitted before leases were kept shows what its jobs' ``done_by`` says instead. One
function for ``oddtrick tournament status`` and the web page's run page, through
:func:`~.distributed_results.status_report`, so the two cannot disagree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from oddtrick_referee.storage.run_store import LeaseSeen, Run, SetJob, WorkerSeen

ERRORS = ("failed", "given back", "not here", "expired", "refused")
"""The ends of a lease that are the worker's errors (``stopped``, ``lost`` and ``cancelled``
are not: a stop it asked for, an answer the database lost, a run no longer needed)."""


@dataclasses.dataclass
class _Tally:
    """One worker's part in one run."""

    sets: int = 0
    deals: int = 0
    seconds: float = 0.0
    errors: int = 0
    last_error: str | None = None


def _deals(job: SetJob) -> int:
    """The deals a job's tables play (each table run its own deals)."""
    return sum(int(record.get("deals", 0)) for record in job.runs)


def _tallies(jobs: Sequence[SetJob], leases: Sequence[LeaseSeen]) -> dict[str, _Tally]:
    """Each worker's sets done, deals, seconds spent on them and errors in the run; the jobs
    done with no lease kept (done before leases were) count for their ``done_by``."""
    by_id = {job.id: job for job in jobs}
    tallies: dict[str, _Tally] = {}
    for lease in leases:
        tally = tallies.setdefault(lease.worker, _Tally())
        if lease.outcome == "done" and lease.job_id in by_id:
            tally.sets += 1
            tally.deals += _deals(by_id[lease.job_id])
            tally.seconds += lease.seconds
        elif lease.outcome in ERRORS:
            tally.errors += 1
            tally.last_error = f"{lease.outcome}: {lease.reason}" if lease.reason else lease.outcome
    leased = {lease.job_id for lease in leases}
    for job in jobs:
        if job.status == "done" and job.done_by and job.id not in leased:
            tally = tallies.setdefault(job.done_by, _Tally())
            tally.sets += 1
            tally.deals += _deals(job)
    return tallies


def _worker_row(
    worker: WorkerSeen, tally: _Tally, set_of: dict[int, int], needed: str | None
) -> dict[str, Any]:
    rate = tally.deals / tally.seconds * 60 if tally.seconds > 0 else None
    row: dict[str, Any] = {
        "name": worker.name,
        "state": worker.state,
        "version": worker.version,
        "last_beat": worker.last_beat.isoformat(),
        "seconds_ago": round(worker.seconds_ago, 1),
        "dead_after": worker.dead_after,
        "job": worker.job_id if worker.state == "alive" else None,
        "set": set_of.get(worker.job_id) if worker.job_id and worker.state == "alive" else None,
        "sets_played": tally.sets,
        "deals_played": tally.deals,
        "deals_per_minute": None if rate is None else round(rate, 1),
        "errors": tally.errors,
        "last_error": tally.last_error,
    }
    if needed is not None and worker.version != needed:
        row["refused"] = f"oddtrick {worker.version}: this run's sets are for oddtrick {needed} only"
    return row


def run_version(run: Run) -> str | None:
    """The oddtrick version the run was submitted with, whose workers alone play its sets
    (None: a run submitted before runs kept it, open to any worker)."""
    version = run.settings.get("oddtrick")
    return version if isinstance(version, str) else None


def worker_rows(
    run: Run, jobs: Sequence[SetJob], leases: Sequence[LeaseSeen], workers: Sequence[WorkerSeen],
    every: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """The run's workers (those that leased one of its jobs, or hold one now), the alive
    first; with ``every``, the database's other workers after them (``in_run`` False)."""
    tallies = _tallies(jobs, leases)
    set_of = {job.id: job.index + 1 for job in jobs}
    needed = run_version(run)
    rows = []
    for worker in workers:
        in_run = worker.name in tallies or worker.job_id in set_of
        if in_run or every:
            row = _worker_row(worker, tallies.get(worker.name, _Tally()), set_of, needed)
            rows.append({**row, "in_run": in_run})
    order = {"alive": 0, "stopped": 1, "dead": 2}
    return sorted(rows, key=lambda row: (not row["in_run"], order[row["state"]], row["name"]))


def set_rows(jobs: Sequence[SetJob], leases: Sequence[LeaseSeen]) -> list[dict[str, Any]]:
    """Each set: its status, who played it (the worker whose result counts, or who holds it
    now) and every lease of it before, with how it ended."""
    by_job: dict[int, list[LeaseSeen]] = {}
    for lease in leases:
        by_job.setdefault(lease.job_id, []).append(lease)
    rows = []
    for job in jobs:
        history = by_job.get(job.id, [])
        current = history[-1] if history and history[-1].outcome in ("leased", "done") else None
        worker = job.done_by if job.status in ("done", "failed") else None
        if current is not None and job.status in ("leased", "done"):
            worker = current.worker
        rows.append({
            "set": job.index + 1, "job": job.id, "status": job.status, "worker": worker,
            "seconds": None if current is None else round(current.seconds, 1),
            "attempts": job.attempts,
            "before": [
                {"worker": lease.worker, "outcome": lease.outcome, "reason": lease.reason}
                for lease in (history[:-1] if current is not None else history)
            ],
        })  # fmt: skip
    return rows


def eta(run: Run, jobs: Sequence[SetJob], elapsed: float | None) -> dict[str, Any]:
    """When the run should end, at the pace of its sets done so far: ``elapsed`` seconds since
    its first lease, the sets left (waiting or leased), and the seconds they should take (None
    until a set is done). An SPRT may end sooner: its estimate runs to its cap of pairs."""
    done = sum(job.status == "done" for job in jobs)
    left = sum(job.status in ("waiting", "leased") for job in jobs)
    seconds = None
    if left == 0:
        seconds = 0.0
    elif done and elapsed:
        seconds = round(left * elapsed / done, 1)
    return {
        "sets_done": done,
        "sets_left": left,
        "elapsed_seconds": None if elapsed is None else round(elapsed, 1),
        "seconds_left": seconds,
        "at_most": run.kind == "sprt",
    }
