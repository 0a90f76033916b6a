"""Tournaments and sequential tests as work for workers: what is submitted, and what it means.

A distributed tournament is the single-process one cut at its duplicate sets:
the plan (:func:`~.tournament_plan.plan_runs`, from the run's master seed) is
made once, at submission, and each set's two table runs become one job, so
both plays of a deal are on one worker and sealing stays local. A sequential
test's jobs are batches of deal pairs (:func:`~.sequential.pair_runs`). A
worker plays a job's runs exactly as the single-process tournament plays
them (:mod:`oddtrick_referee.workers.tournament_job`), so the same seed gives
the same deals and, with deterministic bots, the same standings.

Bots are named by file or command and must be the same on every worker: each
entry carries the SHA-256 of its bot file (for ``cmd:``, of its first word's
file) taken at submission, and a worker whose copy differs gives the job back.
So must oddtrick be: a run records the version that submitted it
(:data:`RUN_VERSION`), and only workers of that version lease its sets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
from pathlib import Path
from typing import Any

from oddtrick import __version__
from oddtrick.rules import GameConfig
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.competitions.tournaments.sequential import SequentialTest, pair_runs
from oddtrick_referee.competitions.tournaments.tournament_plan import (
    Entry,
    TableRun,
    TournamentSettings,
    parse_entry,
    plan_runs,
)
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.work_queue import parse_version, version_text

TOURNAMENT_SET = "tournament-set"
"""The kind of work one duplicate set of a tournament is, or one batch of an SPRT's deal pairs."""

RUN_VERSION = version_text(parse_version(__version__))
"""The oddtrick version a run submitted here records, and the only one whose workers may
play its sets: a worker of other code could deal, play or score otherwise, and the run's
results must all come from the code it was submitted with."""

SPRT_BATCH = 10
"""Deal pairs per job of a distributed sequential test: a job of a few seconds, so the
test stops within a few seconds of deciding and a death loses little."""


def bot_file(entry: Entry) -> Path:
    """The file whose content names the bot: the bot file, or a ``cmd:``'s first word's file."""
    assert entry.command is not None
    if entry.sdk:
        target = entry.command[-1]  # the resolved FILE.py[:Class] that ``oddtrick bot`` is given
        path_text, colon, attribute = target.rpartition(":")
        return Path(path_text if colon and attribute.isidentifier() else target)
    first = entry.command[0]
    if "/" in first:
        return (entry.cwd or Path.cwd()) / first
    found = shutil.which(first)
    return Path(found) if found else Path(first)


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes (OptionError with what to do when it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise OptionError(f"cannot read {path} to take its hash: {error.strerror or error}") from error


def entry_record(entry: Entry) -> dict[str, Any]:
    """What a job says of an entry: how to start it on a worker and the hash it must have."""
    if not entry.local:
        raise OptionError(
            f"entry {entry.name!r} is remote: workers start their entries themselves, so every entry "
            "of a distributed run is a bot file or a cmd: program installed on every worker"
        )
    assert entry.command is not None
    path = bot_file(entry)
    return {
        "name": entry.name,
        "source": entry.source,
        "target": entry.command[-1] if entry.sdk else entry.source,
        "cwd": str(entry.cwd),
        "file": str(path),
        "sha256": file_hash(path),
        # Only when the bot has options, so a run submitted before them is still the same run.
        **({"options": dict(entry.options)} if entry.options else {}),
    }


def entry_of_record(record: dict[str, Any]) -> Entry:
    """The entry a worker starts for a record (its file here is checked by :func:`hash_problem`)."""
    entry = parse_entry(f"{record['name']}={record['target']}", options=record.get("options"))
    cwd = Path(record["cwd"])
    if not entry.sdk and cwd.is_dir():
        entry = dataclasses.replace(entry, cwd=cwd)
    return dataclasses.replace(entry, source=record["source"])


def hash_problem(record: dict[str, Any]) -> str | None:
    """Why this machine's copy of an entry's bot is not the one submitted (None: it is)."""
    path = Path(record["file"])
    try:
        found = file_hash(path)
    except OptionError as error:
        return f"bot {record['name']!r}: {error}; install the submitted bot at the same path"
    if found != record["sha256"]:
        return (
            f"bot {record['name']!r}: {path} here has sha256 {found[:12]}…, the run was submitted "
            f"with {record['sha256'][:12]}…: install the same bot on this worker"
        )
    return None


def run_record(run: TableRun) -> dict[str, Any]:
    return dataclasses.asdict(run)


def run_of_record(record: dict[str, Any]) -> TableRun:
    return TableRun(**record)


def distributable_problem(settings: TournamentSettings) -> str | None:
    """Why these settings cannot be played by workers (None: they can)."""
    if not settings.duplicate:
        return "workers play duplicate sets: --no-duplicate is for one machine"
    if settings.deal_set is not None:
        return "--deals-from is for one machine: workers deal from the run's seed"
    in_process = [entry.name for entry in settings.entries if entry.in_process]
    if in_process:
        return f"workers start every entry as a process: {', '.join(in_process)} plays in the referee's own"
    remote = [entry.name for entry in settings.entries if entry.remote]
    if remote:
        return (
            f"workers start every entry themselves: {', '.join(remote)} is remote (give a bot file or cmd:)"
        )
    return None


def common_payload(
    entries: tuple[Entry, ...], config: GameConfig, rules: TableRules, name: str
) -> dict[str, Any]:
    return {
        "tournament": name,
        "entries": [entry_record(entry) for entry in entries],
        "config": config.to_dict(),
        "rules": rules.to_record(),
    }


def tournament_jobs(settings: TournamentSettings, master_seed: str) -> list[dict[str, Any]]:
    """One job per duplicate set: both its table runs, planned as the single-process tournament plans."""
    common = common_payload(settings.entries, settings.config, settings.rules, settings.tournament_id)
    runs = plan_runs(settings, master_seed)
    sets: dict[tuple[str, int], list[TableRun]] = {}
    for run in runs:
        sets.setdefault((run.match_key, run.set_number), []).append(run)
    return [
        {**common, "index": index, "runs": [run_record(run) for run in pair]}
        for index, pair in enumerate(sets.values())
    ]


def sprt_jobs(test: SequentialTest, batch: int = SPRT_BATCH) -> list[dict[str, Any]]:
    """One job per ``batch`` deal pairs, in the order of their seeds."""
    settings = test.settings()
    common = common_payload(settings.entries, settings.config, settings.rules, settings.tournament_id)
    jobs = []
    for index in range(math.ceil(test.max_pairs / batch)):
        numbers = range(index * batch, min((index + 1) * batch, test.max_pairs))
        runs = [run for number in numbers for run in pair_runs(test, number)]
        jobs.append({**common, "index": index, "runs": [run_record(run) for run in runs]})
    return jobs
