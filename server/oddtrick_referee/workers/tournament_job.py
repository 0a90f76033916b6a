"""A worker's share of a distributed tournament or test: play one job's table runs.

The job's runs (both plays of a duplicate set, or a batch of SPRT deal pairs)
are played by a single-process tournament inside the worker
(:func:`~oddtrick_referee.competitions.tournaments.tournament.run_tournament`, kept running
between jobs of the same run by :mod:`.table_session`): a local referee on a
loopback port, the entries started as local processes, sealed sets released
once both plays are stored, every match logged. Nothing of that is rewritten
here, so a set plays on a worker exactly as on one machine. The tables'
records and their logs (gzip, base64) are the job's result.

Before anything starts, each entry's bot file is hashed: a copy that differs
from the one submitted gives the job back (:class:`HandBack`), as does an
entry that dies before it connects, with its last words as the reason.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from oddtrick_referee._exceptions import BadJob, EntrantExited, EntryFailed, HandBack
from oddtrick_referee.command_runner import interrupted, sole_error
from oddtrick_referee.competitions.on_workers.distributed_results import pack_log
from oddtrick_referee.competitions.on_workers.job_payloads import EntryRecord, SetPayload
from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings
from oddtrick_referee.competitions.tournaments.tournament_plan import TableRun
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.workers.table_session import session_for


def _settings(payload: SetPayload, tables: int) -> TournamentSettings:
    for record in own_entries(payload):
        if problem := record.hash_problem():
            raise HandBack(problem, not_here=True)
    try:
        entries = tuple(record.entry() for record in payload.entries)
    except (KeyError, TypeError, ValueError) as error:
        raise BadJob(f"a tournament job's entries cannot be started: {error}") from error
    size = max(run.deals for run in payload.runs)
    return TournamentSettings(
        entries=entries,
        config=payload.config,
        deals=size * math.ceil(len(payload.runs) / 2),
        duplicate=True,
        set_size=size,
        tables=max(1, min(tables, len(payload.runs))),
        rules=payload.rules,
        name=payload.tournament,
        seed=payload.tournament,
    )


def own_entries(payload: SetPayload) -> list[EntryRecord]:
    """The entries that sit at the job's tables: only their bots need be right on this
    worker (a bot of the run that plays no table here does not make the job not for it)."""
    seated = {name for run in payload.runs for name in (run.ns_entry, run.ew_entry)}
    return [record for record in payload.entries if record.name in seated]


def play_job(payload: SetPayload, tables: int, metrics: Metrics | None = None) -> dict[str, Any]:
    """Play the job's runs here (in the session of its run, :mod:`.table_session`);
    return the tables' records and their logs."""
    settings = _settings(payload, tables)
    runs = list(payload.runs)
    described = payload.to_dict()
    key = json.dumps(
        [*(described[field] for field in ("tournament", "entries", "config", "rules")), settings.tables],
        sort_keys=True,
    )
    session = session_for(key, settings, runs, metrics)
    try:
        session.play(runs)
    except BaseException as error:
        if interrupted(error) and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt from error  # the worker's stop: it hands the job back
        leaf = sole_error(error)
        if isinstance(leaf, EntrantExited | EntryFailed):
            raise HandBack(str(leaf).split("\n")[0]) from leaf
        raise
    return _result(settings, session.data_dir, runs)


def _result(settings: TournamentSettings, data_dir: Path, runs: list[TableRun]) -> dict[str, Any]:
    """The job's tables (:meth:`TableResult.to_dict`) and their logs, packed."""
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    wanted = {run.key for run in runs}
    tables = [table for table in store.table_runs(settings.tournament_id) if table.key in wanted]
    logs = {}
    for table in tables:
        log = data_dir / "logs" / f"{table.match_id}.jsonl"
        logs[table.match_id] = pack_log(log)
        log.unlink()  # carried in the result now; the session's folder stays small
    missing = wanted - {table.key for table in tables}
    if missing:
        raise HandBack(f"{len(missing)} of the job's tables were not played to their end")
    return {"tables": [table.to_dict() for table in tables], "logs": logs}


def describe(payload: Any) -> str:
    """A few words for the worker's line on leasing the job (a malformed payload says so:
    the job fails with the reason once it is tried)."""
    try:
        return SetPayload.from_dict(payload).describe()
    except BadJob:
        run = payload.get("run") if isinstance(payload, dict) else None
        return f"{run if isinstance(run, str) else '?'}: a payload that cannot be read"
