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

from oddtrick.rules import GameConfig
from oddtrick_referee._exceptions import BadJob, EntrantExited, EntryFailed, HandBack
from oddtrick_referee.command_runner import interrupted, sole_error
from oddtrick_referee.competitions.on_workers.distributed import entry_of_record, hash_problem, run_of_record
from oddtrick_referee.competitions.on_workers.distributed_results import pack_log
from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings
from oddtrick_referee.competitions.tournaments.tournament_plan import TableRun
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.workers.table_session import session_for


def _settings(payload: dict[str, Any], runs: list[TableRun], tables: int) -> TournamentSettings:
    for record in payload["entries"]:
        if problem := hash_problem(record):
            raise HandBack(problem, not_here=True)
    try:
        entries = tuple(entry_of_record(record) for record in payload["entries"])
        config = GameConfig.from_dict(payload["config"])
        rules = TableRules.from_record(payload["rules"])
    except (KeyError, TypeError, ValueError) as error:
        raise BadJob(f"a tournament job's entries, game or rules cannot be read: {error}") from error
    size = max(run.deals for run in runs)
    return TournamentSettings(
        entries=entries,
        config=config,
        deals=size * math.ceil(len(runs) / 2),
        duplicate=True,
        set_size=size,
        tables=max(1, min(tables, len(runs))),
        rules=rules,
        name=payload["tournament"],
        seed=payload["tournament"],
    )


def play_job(payload: dict[str, Any], tables: int) -> dict[str, Any]:
    """Play the job's runs here (in the session of its run, :mod:`.table_session`);
    return the tables' records and their logs."""
    try:
        runs = [run_of_record(record) for record in payload["runs"]]
    except (KeyError, TypeError) as error:
        raise BadJob(f"a tournament job's runs cannot be read: {error}") from error
    settings = _settings(payload, runs, tables)
    key = json.dumps(
        [payload["tournament"], payload["entries"], payload["config"], payload["rules"], settings.tables],
        sort_keys=True,
    )
    session = session_for(key, settings, runs)
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
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    wanted = {run.key for run in runs}
    deals: dict[tuple[str, int, int], list[list[int]]] = {}
    for deal in store.deal_results(settings.tournament_id):
        key = (deal.match, deal.set_number, deal.table)
        deals.setdefault(key, []).append([deal.deal_number, deal.ns_points, deal.ew_points])
    tables = []
    logs = {}
    for row in store.table_runs(settings.tournament_id):
        key = (row["match_key"], row["set_number"], row["table_no"])
        if key not in wanted:
            continue
        tables.append({**row, "deals": deals.get(key, [])})
        log = data_dir / "logs" / f"{row['match_id']}.jsonl"
        logs[row["match_id"]] = pack_log(log)
        log.unlink()  # carried in the result now; the session's folder stays small
    missing = wanted - {(t["match_key"], t["set_number"], t["table_no"]) for t in tables}
    if missing:
        raise HandBack(f"{len(missing)} of the job's tables were not played to their end")
    return {"tables": tables, "logs": logs}


def describe(payload: dict[str, Any]) -> str:
    runs = payload.get("runs", [])
    first = runs[0] if runs else {}
    what = f"{first.get('match_key', '?').replace('|', ' v ')} set {first.get('set_number', '?')}"
    if len(runs) > 2:
        what = f"{len(runs) // 2} deal pairs from {what}"
    return f"{payload.get('run', '?')}: {what}"
