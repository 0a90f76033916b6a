"""The kinds of work a worker can do, each a function from a job's payload to its result.

A kind's function gets the payload as submitted (and the worker's own
:class:`Capacity`), reads it into its kind's typed value (``from_dict``:
:class:`~oddtrick_referee.storage.analysis_jobs.AnalysisPayload`,
:class:`~oddtrick_referee.competitions.on_workers.job_payloads.SetPayload`) and returns
plain JSON data; it raises :class:`BadJob` when the payload itself is wrong
(retrying it on another worker cannot help, so the job is marked failed),
and :class:`HandBack` when this worker cannot do it (the job goes back to
waiting, the attempt counted). A kind may also
have a step run once its result is recorded (:data:`AFTER`): a sequential
test's job checks whether the test has decided and cancels what still waits or is played.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oddtrick import __version__
from oddtrick_referee._exceptions import BadJob
from oddtrick_referee.competitions.on_workers.distributed import TOURNAMENT_SET
from oddtrick_referee.competitions.on_workers.job_payloads import SetPayload
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.storage.analysis_jobs import ANALYSIS as ANALYSIS  # the old names work
from oddtrick_referee.storage.analysis_jobs import ANALYSIS_FIRST_VERSION, AnalysisPayload
from oddtrick_referee.storage.analysis_jobs import MAX_LOG_BYTES as MAX_LOG_BYTES
from oddtrick_referee.storage.analysis_jobs import analysis_payload as analysis_payload
from oddtrick_referee.storage.work_queue import Lease, WorkQueue
from oddtrick_referee.workers import tournament_job
from oddtrick_referee.workers.sprt_job import after_batch
from oddtrick_referee.workers.table_session import close_session


@dataclasses.dataclass(frozen=True)
class Capacity:
    """What this worker offers a job: how many tables it plays at once (``--tables``)."""

    tables: int = 2
    metrics: Metrics | None = None
    """Where the referees of its sets count decisions, faults and tables (``--metrics``)."""


def describe(kind: str, payload: dict[str, Any]) -> str:
    """A few words for a progress line: what the job is about."""
    if kind == ANALYSIS:
        name = payload.get("log_name") if isinstance(payload, dict) else None
        return f"analysis of {name if isinstance(name, str) else '?'}"
    if kind == TOURNAMENT_SET:
        return tournament_job.describe(payload)
    return kind


def analyse(payload: dict[str, Any], capacity: Capacity | None = None) -> Any:
    """What ``oddtrick analyze --json`` prints for the log carried in the payload."""
    from oddtrick.analysis import AnalysisError, analyze_logs

    job = AnalysisPayload.from_dict(payload)
    name = job.log_name
    with tempfile.TemporaryDirectory(prefix="oddtrick-work-") as folder:
        path = Path(folder) / (Path(name).name or "log.jsonl")
        path.write_text(job.log_text, encoding="utf-8")
        try:
            result = analyze_logs([path], par=job.par)
        except (AnalysisError, ValueError, KeyError) as error:
            raise BadJob(f"{name}: {error}") from error
    for log in result.get("logs", []):
        log["path"] = name  # the name it was submitted under, not the worker's temporary copy
    return result


def play_set(payload: dict[str, Any], capacity: Capacity | None = None) -> Any:
    """A duplicate set of a distributed tournament, or a batch of a test's deal pairs."""
    capacity = capacity or Capacity()
    return tournament_job.play_job(SetPayload.from_dict(payload), capacity.tables, capacity.metrics)


KINDS: dict[str, Callable[[dict[str, Any], Capacity], Any]] = {ANALYSIS: analyse, TOURNAMENT_SET: play_set}
"""Every kind this worker does, by name."""

AFTER: dict[str, Callable[[WorkQueue, Lease], str | None]] = {TOURNAMENT_SET: after_batch}
"""What runs once a kind's result is recorded; the line it returns is printed."""

LEASE_AND_BEAT: dict[str, tuple[float, float]] = {ANALYSIS: (360.0, 60.0), TOURNAMENT_SET: (10.0, 2.0)}
"""Each kind's default lease and beat, in seconds, when the worker is not given ``--lease``/``--beat``.

Analysis keeps Fishtest's 360 s: a job is one log, its loss costs little. A
tournament set is seconds of play that a whole run waits on: a set whose worker
died should be played elsewhere within 15 s, and it is leased again once its
lease runs out (idle workers wake at that moment), so its lease is 10 s, renewed
every 2 s: five beats may be missed (a pause, a database blip) before it expires,
and one beat every 2 s per busy worker is little for PostgreSQL (docs/scale-out.md)."""


def close_all(wait: float) -> None:
    """End what kinds keep between jobs (a tournament's local referee and bots)."""
    close_session(wait)


NEEDS_STRONG = {ANALYSIS}
"""The kinds only a worker with the strong extra (endplay) can do."""

FIRST_VERSION: dict[str, str] = {ANALYSIS: ANALYSIS_FIRST_VERSION, TOURNAMENT_SET: "0.1.0"}
"""The first oddtrick whose workers do each kind: the version such work requires by default."""

WORKER_VERSION = __version__
