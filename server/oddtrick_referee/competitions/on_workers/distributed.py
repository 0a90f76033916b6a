"""Tournaments and sequential tests as work for workers: what is submitted, and what it means.

A distributed tournament is the single-process one cut at its duplicate sets:
the plan (:func:`~.tournament_plan.plan_runs`, from the run's master seed) is
made once, at submission, and each set's two table runs become one job, so
both plays of a deal are on one worker and sealing stays local. A sequential
test's jobs are batches of deal pairs (:func:`~.sequential.pair_runs`). A
worker plays a job's runs exactly as the single-process tournament plays
them (:mod:`oddtrick_referee.workers.tournament_job`), so the same seed gives
the same deals and, with deterministic bots, the same standings. A job's payload is a
:class:`~.job_payloads.SetPayload`, written and read in that one place.

Bots are named by file or command and must be the same on every worker: each
entry carries the SHA-256 of its bot file (for ``cmd:``, of its first word's
file) taken at submission, and a worker whose copy differs gives the job back.
So must oddtrick be: a run records the version that submitted it
(:data:`RUN_VERSION`), and only workers of that version lease its sets.
"""

from __future__ import annotations

import dataclasses
import math

from oddtrick import __version__
from oddtrick_referee.competitions.on_workers.job_payloads import EntryRecord, SetPayload
from oddtrick_referee.competitions.tournaments.sequential import SequentialTest, pair_runs
from oddtrick_referee.competitions.tournaments.tournament_plan import TableRun, TournamentSettings, plan_runs
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


def tournament_jobs(settings: TournamentSettings, master_seed: str) -> list[SetPayload]:
    """One job per duplicate set: both its table runs, planned as the single-process tournament plans."""
    sets: dict[tuple[str, int], list[TableRun]] = {}
    for run in plan_runs(settings, master_seed):
        sets.setdefault((run.match_key, run.set_number), []).append(run)
    common = _common(settings)
    return [
        dataclasses.replace(common, index=index, runs=tuple(pair)) for index, pair in enumerate(sets.values())
    ]


def sprt_jobs(test: SequentialTest, batch: int = SPRT_BATCH) -> list[SetPayload]:
    """One job per ``batch`` deal pairs, in the order of their seeds."""
    common = _common(test.settings())
    jobs = []
    for index in range(math.ceil(test.max_pairs / batch)):
        numbers = range(index * batch, min((index + 1) * batch, test.max_pairs))
        runs = tuple(run for number in numbers for run in pair_runs(test, number))
        jobs.append(dataclasses.replace(common, index=index, runs=runs))
    return jobs


def _common(settings: TournamentSettings) -> SetPayload:
    """What every job of the run carries (each bot file hashed once), with no runs yet."""
    return SetPayload(
        tournament=settings.tournament_id,
        entries=tuple(EntryRecord.of(entry) for entry in settings.entries),
        config=settings.config,
        rules=settings.rules,
        index=0,
        runs=(),
    )
