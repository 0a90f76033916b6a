"""A distributed run's answers from the database: its standings and its SPRT line.

A worker records each table's figures and its match log; only the log counts.
:class:`ResultCheck` reads every table of a done job off its log
(:func:`~.scored.scored_table`: the rules engine replays it), checks that the log
is of the table the run planned (its seed, its seats, its deals) and that the
figures recorded beside it say the same; a result that fails is refused (said in
the log of this process, and in the job's error) and its set goes back to be
played again (:meth:`RunStore.refuse`). The tables that pass, as
:class:`~oddtrick_referee.storage.results.TableResult` values, go to the very
function the single-process tournament computes its standings with
(:func:`~.counted.table_standings`), so the two cannot disagree on how faults,
times or deal scores add up.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import gzip
import io
import logging
import shutil
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from oddtrick._logfile import LogFileError, unpacked
from oddtrick.rules import Seat
from oddtrick.sprt import SprtState
from oddtrick_referee._exceptions import DatabaseError, LogUnreadable, ResultRefused
from oddtrick_referee.competitions.on_workers.job_payloads import run_from_dict
from oddtrick_referee.competitions.on_workers.operator_view import eta, set_rows, worker_rows
from oddtrick_referee.competitions.scoring.counted import deal_results, table_result, table_standings
from oddtrick_referee.competitions.scoring.scored import PlayedTable, disagreement, scored_table
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.tournaments.sequential import pair_scores
from oddtrick_referee.competitions.tournaments.tournament_plan import SLOT_MARK, TableRun
from oddtrick_referee.play.clock import ClockRule, time_control
from oddtrick_referee.storage.results import TableResult
from oddtrick_referee.storage.run_store import Run, RunStore, SetJob

log = logging.getLogger("oddtrick.workers")


def entry_names(run: Run) -> list[str]:
    return [record["name"] for record in run.settings["entries"]]


def standings(run: Run, jobs: Sequence[SetJob]) -> Standings:
    """The standings of every table recorded, as :meth:`Tournament.standings` computes them
    (:func:`~.counted.table_standings`, fed the tables read off the jobs' logs)."""
    tables = [table for job in jobs for table in job.tables]
    result = table_standings(entry_names(run), tables, [], True)
    rules = run.settings["rules"]
    clock = ClockRule.from_record(rules["clock"]) if rules.get("clock") else None
    options = {
        record["name"]: record["options"] for record in run.settings["entries"] if record.get("options")
    }
    return dataclasses.replace(
        result, time_control=time_control(rules["deadline_ms"] / 1000, clock), options=options or None
    )


@dataclasses.dataclass
class SprtProgress:
    """The test as far as the recorded pairs go: its state fed in seed order up to the
    first pair not yet recorded (so the verdict is the one-machine test's), and whether
    it is over (decided, or at its cap)."""

    state: SprtState
    scores: list[float]
    over: bool


def sprt_progress(run: Run, jobs: Sequence[SetJob]) -> SprtProgress:
    test = run.settings["sprt"]
    state = SprtState(test["h0"], test["h1"], test["alpha"], test["beta"])
    scores = pair_scores(deal_results(table for job in jobs for table in job.tables), entry_names(run)[0])
    fed: list[float] = []
    for number in range(1, test["max_pairs"] + 1):
        if number not in scores or state.verdict != "undecided":
            break
        state.add(scores[number])
        fed.append(scores[number])
    over = state.verdict != "undecided" or state.count >= test["max_pairs"]
    return SprtProgress(state, fed, over)


RESULT_LOG_BYTES = 16 * 1024 * 1024
"""The most a table's log in a worker's result may unpack to: a set's table writes a few
kilobytes a deal, and a result is anyone's (a gzip bomb is refused at this size)."""


def _log_text(logs: Any, match_id: str) -> str:
    """A table's match log's text from a job's result (as :func:`pack_log` packed it)."""
    packed = logs.get(match_id) if isinstance(logs, dict) else None
    if not isinstance(packed, str):
        raise ResultRefused(f"table {match_id}: the result carries no log of it")
    try:
        with unpacked(io.BytesIO(base64.b64decode(packed, validate=True)), RESULT_LOG_BYTES) as source:
            return source.read().decode("utf-8")
    except LogFileError as error:
        raise ResultRefused(f"table {match_id}: its log cannot be unpacked: {error}") from error
    except (binascii.Error, OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        raise ResultRefused(f"table {match_id}: its log is not gzip and base64: {error}") from error


def _planned(run: TableRun, table: PlayedTable) -> str | None:
    """What the log shows otherwise than the run planned for this table: its seed, its
    deals, the bots in its seats (each entry under its name for the table's play)."""
    if table.seed != run.seed:
        return "its log was dealt from another seed than the run planned for it"
    if len(table.deals) != run.deals:
        return f"its log has {len(table.deals)} deals, the run planned {run.deals}"
    sides = {
        Seat.NORTH: run.ns_entry,
        Seat.SOUTH: run.ns_entry,
        Seat.EAST: run.ew_entry,
        Seat.WEST: run.ew_entry,
    }
    for seat, entry in sides.items():
        planned = f"{entry}{SLOT_MARK}{run.table_no}"
        if table.seats[seat].bot_name != planned:
            return f"its log seats {table.seats[seat].bot_name} at {seat}, the run planned {planned}"
    return None


def _reported(result: Any) -> tuple[list[Any], Any]:
    """The tables a result reports (each a JSON object, its figures compared field by field
    later) and its logs; :class:`ResultRefused` when it is not of that shape."""
    tables = result.get("tables") if isinstance(result, dict) else None
    if not isinstance(tables, list) or not all(isinstance(table, dict) for table in tables):
        raise ResultRefused("the result cannot be read: it has no list of tables")
    logs = result.get("logs")
    if not isinstance(logs, dict):
        raise ResultRefused("the result cannot be read: it has no logs")
    return tables, logs


def scored_result(job: SetJob, result: Any) -> list[TableResult]:
    """The tables a done job counts for, each read off its log; :class:`ResultRefused` when
    a log fails the rules' check, is not of the table the run planned, or the figures the
    worker recorded beside it say otherwise."""
    try:
        planned = {run.key: run for run in (run_from_dict(record) for record in job.runs)}
    except ValueError as error:  # the job's own payload: a worker would have refused it
        raise ResultRefused(f"the job's planned runs cannot be read: {error}") from error
    tables, logs = _reported(result)
    try:
        keys = [(table["match_key"], table["set_number"], table["table_no"]) for table in tables]
        same = sorted(keys) == sorted(planned)
    except (KeyError, TypeError) as error:
        raise ResultRefused(f"the result cannot be read: {type(error).__name__}: {error}") from error
    if not same:
        raise ResultRefused(f"the result has the tables {sorted(keys)}, the job planned {sorted(planned)}")
    counted = []
    for key, table in zip(keys, tables, strict=True):
        match_id, run = str(table.get("match_id")), planned[key]
        played = scored_table(_log_text(logs, match_id), match_id)
        differs = _planned(run, played) if played.match_id == match_id else f"its log is of {played.match_id}"
        differs = differs or disagreement(
            played, table.get("deals", []), table.get("seats", {}), "the worker"
        )
        if differs:
            raise ResultRefused(f"table {match_id}: {differs}")
        counted.append(table_result(run, played))
    return counted


class ResultCheck:
    """The jobs of a run, each done job's tables read off its logs (:func:`scored_result`);
    a result refused goes back to be played again, with the reason as the job's error.

    A job's tables are kept by the job's id, the lease it was done under and its result's
    digest, so a reader that follows a run (the submitting command, a worker's check after
    its job, the web page) replays each result once, and again only if it changed."""

    def __init__(self) -> None:
        self._scored: dict[tuple[int, int, str], list[TableResult]] = {}

    def jobs(self, store: RunStore, run: Run) -> list[SetJob]:
        """Every job of ``run``; the done ones with the tables they count for, those whose
        result is refused now waiting (or failed) again, with :attr:`SetJob.refused`."""
        return [
            self._checked(store, run, job) if job.status == "done" else job for job in store.jobs(run.name)
        ]

    def _checked(self, store: RunStore, run: Run, job: SetJob) -> SetJob:
        known = self._scored.get((job.id, job.token, job.digest or ""))
        if known is not None:
            return dataclasses.replace(job, tables=known)
        found = store.result(job.id, job.token)
        if found is None:  # no longer done under that token since it was listed: read it next time
            return dataclasses.replace(job, status="waiting")
        result, digest = found
        try:
            tables = scored_result(job, result)
        except ResultRefused as refused:
            return self._refuse(store, run, job, str(refused))
        self._scored[(job.id, job.token, digest)] = tables
        return dataclasses.replace(job, tables=tables, digest=digest)

    def _refuse(self, store: RunStore, run: Run, job: SetJob, why: str) -> SetJob:
        reason = f"result of {job.done_by or 'a worker'} refused, not counted: {why}"
        log.warning(
            "run %s, set %d (job %d): %s; the set is played again", run.name, job.index + 1, job.id, reason
        )
        try:
            status = store.refuse(job.id, job.token, reason) or "waiting"
        except DatabaseError as error:  # a reader without the right to write: not counted all the same
            log.warning("run %s, job %d: its refusal could not be recorded: %s", run.name, job.id, error)
            status = "waiting"
        return dataclasses.replace(job, status=status, error=reason, tables=[], refused=reason)


def write_logs(logs: dict[str, str], folder: Path) -> list[Path]:
    """Write the run's match logs (as recorded: gzip, base64) to ``folder`` as LOG.jsonl files."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for match_id, packed in sorted(logs.items()):
        path = folder / f"{Path(match_id).name}.jsonl"
        _unpack_log(match_id, packed, path)
        written.append(path)
    return written


def _unpack_log(match_id: str, packed: str, path: Path) -> None:
    """Write one log of a run's results, unpacked as a stream and bounded as every log read
    is (a worker's result is not to be trusted to unpack to a log's size: a gzip bomb).

    Raises :class:`LogUnreadable`, the partial file removed, for a log that does not unpack.
    """
    try:
        with (
            unpacked(io.BytesIO(base64.b64decode(packed, validate=True))) as source,
            path.open("wb") as target,
        ):
            shutil.copyfileobj(source, target, 1 << 20)
    except (LogFileError, binascii.Error, TypeError) as error:
        path.unlink(missing_ok=True)
        raise LogUnreadable(
            f"match {match_id}'s log in the run's results cannot be unpacked: {error}"
        ) from None


def pack_log(path: Path) -> str:
    """A match log as a job's result carries it: gzip, then base64 (JSON holds text)."""
    return base64.b64encode(gzip.compress(path.read_bytes(), 6)).decode("ascii")


def describe_run(run: Run) -> dict[str, Any]:
    return {"name": run.name, "kind": run.kind, "created": run.created.isoformat(), **run.settings}


def status_report(
    store: RunStore, run: Run, jobs: list[SetJob], every_worker: bool = False
) -> dict[str, Any]:
    """What ``tournament status --json`` prints and the web page's run page shows: one
    function, so the two cannot disagree. ``jobs`` are :meth:`ResultCheck.jobs`' (only
    tables read off their logs count). ``over`` says no job is waiting or leased (or,
    for an SPRT, that the test is decided or at its cap): the page stops following it.
    ``workers`` are the run's (:func:`~.operator_view.worker_rows`; ``every_worker``: the
    database's others too), ``played`` who played each set, ``eta`` when it should end."""
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job.status] = counts.get(job.status, 0) + 1
    report: dict[str, Any] = {
        "run": describe_run(run),
        "sets": counts,
        "failed": [
            {"set": job.index + 1, "job": job.id, "error": job.error}
            for job in jobs
            if job.status == "failed"
        ],
        "given_back": [
            {"set": job.index + 1, "job": job.id, "reason": job.error}
            for job in jobs
            if job.status in ("waiting", "leased") and job.error and not job.refused
        ],
        "refused": [
            {"set": job.index + 1, "job": job.id, "status": job.status, "reason": job.refused}
            for job in jobs
            if job.refused
        ],
        "standings": standings(run, jobs).to_json(),
    }
    leases = store.leases(run.name)
    report["workers"] = worker_rows(run, jobs, leases, store.workers(), every_worker)
    report["played"] = set_rows(jobs, leases)
    elapsed = store.seconds_since(min(lease.leased for lease in leases)) if leases else None
    report["eta"] = eta(run, jobs, elapsed)
    report["over"] = not any(job.status in ("waiting", "leased") for job in jobs)
    if run.kind == "sprt":
        progress = sprt_progress(run, jobs)
        report["sprt"] = {
            "pairs": progress.state.count,
            "mean": progress.state.mean,
            "llr": progress.state.llr,
            "lower": progress.state.lower,
            "upper": progress.state.upper,
            "verdict": progress.state.verdict,
            "over": progress.over,
        }
        report["over"] = report["over"] or progress.over
    return report
