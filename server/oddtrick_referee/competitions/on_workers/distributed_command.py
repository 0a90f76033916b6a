"""``oddtrick tournament --database URL --workers``, ``oddtrick sprt --database URL --workers``
and ``oddtrick tournament status``: submit a run to the workers, follow it, read it back.

Submitting is the same command line as playing on one machine, plus where the
workers are: the run and all its jobs are written in one transaction, then the
command follows the run (a line as sets finish, the standings or the verdict
at the end). Ctrl-C stops the following, not the run: the workers go on, and
``oddtrick tournament status`` shows it from any machine.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from oddtrick.sprt import SprtState
from oddtrick_referee._exceptions import DatabaseError
from oddtrick_referee.competitions.on_workers.distributed import (
    RUN_VERSION,
    TOURNAMENT_SET,
    distributable_problem,
    sprt_jobs,
    tournament_jobs,
)
from oddtrick_referee.competitions.on_workers.distributed_results import (
    ResultCheck,
    sprt_progress,
    standings,
    status_report,
    write_logs,
)
from oddtrick_referee.competitions.on_workers.job_payloads import EntryRecord
from oddtrick_referee.competitions.on_workers.status_text import eta_line, print_played, print_workers
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.scoring.standings_table import print_standings
from oddtrick_referee.competitions.tournaments.sequential import SequentialTest
from oddtrick_referee.competitions.tournaments.tournament_plan import TournamentSettings
from oddtrick_referee.storage.run_store import Run, RunStore, SetJob
from oddtrick_referee.storage.work_queue import open_queue

POLL_SECONDS = 0.25
"""How often a following command looks at the run (one small query)."""


def _run_settings(settings: TournamentSettings, extra: dict[str, Any]) -> dict[str, Any]:
    """What identifies a run: the tournament's settings, its entries with their hashes, and
    the oddtrick version whose workers alone may play it."""
    return {
        **settings.describe(),
        "entries": [EntryRecord.of(entry).to_dict() for entry in settings.entries],
        "rules": settings.rules.to_record(),
        "oddtrick": RUN_VERSION,
        **extra,
    }


def _open(url: str) -> RunStore:
    return RunStore(open_queue(url))


def _hint(url: str, name: str) -> str:
    return (
        f"workers: oddtrick worker --database {url}; "
        f"the run: oddtrick tournament status --database {url} {name}"
    )


def submit_tournament(settings: TournamentSettings, url: str, detach: bool, as_json: bool) -> int:
    """Create the run's sets in the database (or find them), then follow it unless ``detach``."""
    problem = distributable_problem(settings)
    if problem:
        print(f"oddtrick tournament: {problem}", file=sys.stderr)
        return 2
    master_seed = settings.seed or secrets.token_hex(16)
    try:
        jobs = tournament_jobs(settings, master_seed)
        run_settings = _run_settings(settings, {"sets": len(jobs)})
        store = _open(url)
    except (ValueError, DatabaseError) as error:
        print(f"oddtrick tournament: {error}; nothing submitted", file=sys.stderr)
        return 2
    try:
        run, new = store.create(
            settings.tournament_id, "tournament", run_settings, master_seed, TOURNAMENT_SET,
            [job.to_dict() for job in jobs],
            only_version=RUN_VERSION,
        )  # fmt: skip
        said = f"{len(jobs)} duplicate sets submitted" if new else "already submitted: following it"
        print(f"run {run.name}: {said}; {_hint(store.queue.database.url, run.name)}", file=sys.stderr)
        if detach:
            return 0
        return _follow_tournament(store, run, as_json)
    except DatabaseError as error:
        print(f"oddtrick tournament: {error}", file=sys.stderr)
        return 1
    finally:
        store.queue.close()


def _follow_tournament(store: RunStore, run: Run, as_json: bool) -> int:
    total = int(run.settings["sets"])
    last: tuple[int, int] | None = None
    started = time.monotonic()
    check = ResultCheck()
    try:
        while True:
            counts = store.counts(run.name)
            done, failed = counts.get("done", 0), counts.get("failed", 0)
            if (done, failed) != last:
                last = (done, failed)
                print(
                    f"[{done}/{total} sets, {time.monotonic() - started:5.1f} s] "
                    f"{counts.get('leased', 0)} being played, {failed} failed",
                    file=sys.stderr,
                    flush=True,
                )
            # Every set over: their results are read off their logs, and a refused one
            # goes back to be played again, so the run is followed until none is refused.
            if done + failed + counts.get("cancelled", 0) >= total and not _refused(check.jobs(store, run)):
                break
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        print(
            f"stopped following run {run.name}: the workers go on; "
            f"oddtrick tournament status --database {store.queue.database.url} {run.name}",
            file=sys.stderr,
        )
        return 130
    jobs = check.jobs(store, run)
    _show_standings(standings(run, jobs), as_json, sys.stdout)
    return _say_failures(jobs, sys.stderr)


def _refused(jobs: list[SetJob]) -> bool:
    """Say each result refused now; whether any was (its set is to be played again)."""
    for job in jobs:
        if job.refused:
            print(f"set {job.index + 1} (job {job.id}): {job.refused}; played again", file=sys.stderr)
    return any(job.refused for job in jobs)


def _say_failures(jobs: list[SetJob], stream: TextIO) -> int:
    failed = [job for job in jobs if job.status == "failed"]
    for job in failed:
        print(
            f"set {job.index + 1} (job {job.id}) failed after {job.attempts} attempts: {job.error}",
            file=stream,
        )
    return 1 if failed else 0


def _show_standings(result: Standings, as_json: bool, stream: TextIO) -> None:
    if as_json:
        print(json.dumps(result.to_json(), indent=2), file=stream)
    else:
        print_standings(result, stream)


def submit_sprt(
    test: SequentialTest,
    url: str,
    state: SprtState,
    report: Callable[[SprtState], None],
    sprt: dict[str, Any],
) -> tuple[int, Standings | None]:
    """Submit the test's batches of deal pairs, follow the recorded pairs in seed order,
    cancel the waiting and leased batches once it is over; the exit status and the standings."""
    settings = test.settings()
    try:
        jobs = sprt_jobs(test)
        run_settings = _run_settings(
            settings, {"sets": len(jobs), "sprt": {**sprt, "max_pairs": test.max_pairs}}
        )
        store = _open(url)
    except (ValueError, DatabaseError) as error:
        print(f"oddtrick sprt: {error}; nothing submitted", file=sys.stderr)
        return 2, None
    try:
        run, new = store.create(
            settings.tournament_id, "sprt", run_settings, test.seed, TOURNAMENT_SET,
            [job.to_dict() for job in jobs],
            only_version=RUN_VERSION,
        )  # fmt: skip
        said = f"{len(jobs)} batches of deal pairs submitted" if new else "already submitted: following it"
        print(f"run {run.name}: {said}; {_hint(store.queue.database.url, run.name)}", file=sys.stderr)
        return _follow_sprt(store, run, state, report)
    except DatabaseError as error:
        print(f"oddtrick sprt: {error}", file=sys.stderr)
        return 1, None
    finally:
        store.queue.close()


def _follow_sprt(
    store: RunStore, run: Run, state: SprtState, report: Callable[[SprtState], None]
) -> tuple[int, Standings | None]:
    seen: dict[str, int] | None = None
    check = ResultCheck()
    try:
        while True:
            counts = store.counts(run.name)
            if counts == seen:  # nothing recorded since the last look: the tables are not read again
                time.sleep(POLL_SECONDS)
                continue
            seen = counts
            jobs = check.jobs(store, run)
            if _refused(jobs):
                seen = None  # the counts changed with the refusal: look again
                continue
            progress = sprt_progress(run, jobs)
            for score in progress.scores[state.count :]:
                state.add(score)
                report(state)
            if progress.over:
                store.queue.cancel_run(run.name)
                return 0, standings(run, jobs)
            stuck = [job for job in jobs if job.status == "failed"]
            if stuck:
                _say_failures(stuck, sys.stderr)
                print(
                    f"no verdict after {state.count} deal pairs: a batch of the test failed", file=sys.stderr
                )
                return 1, standings(run, jobs)
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        print(
            f"stopped following run {run.name} after {state.count} deal pairs: the workers go on; "
            f"oddtrick tournament status --database {store.queue.database.url} {run.name}",
            file=sys.stderr,
        )
        return 130, None


def status(url: str, name: str | None, as_json: bool, logs: Path | None, every_worker: bool = False) -> int:
    """``oddtrick tournament status``: a run's sets, its standings or SPRT line, its workers
    (``every_worker``: the database's others too), who played which set, its ETA."""
    try:
        store = _open(url)
    except DatabaseError as error:
        print(f"oddtrick tournament status: {error}", file=sys.stderr)
        return 1
    try:
        if name is None:
            names = store.names()
            print("\n".join(names) if names else "no runs in this database yet")
            return 0
        run = store.get(name)
        if run is None:
            known = ", ".join(store.names()) or "none"
            print(f"oddtrick tournament status: no run {name!r} here (runs: {known})", file=sys.stderr)
            return 2
        jobs = ResultCheck().jobs(store, run)
        if logs is not None:
            try:
                written = write_logs(store.logs(name), logs)
            except OSError as error:
                print(f"oddtrick tournament status: {error}", file=sys.stderr)
                return 1
            print(f"{len(written)} match logs written to {logs}", file=sys.stderr)
        report = status_report(store, run, jobs, every_worker)
        if as_json:
            print(json.dumps(report, indent=2, default=str))
        else:
            _print_status(report, run, jobs, every_worker)
        return 0
    finally:
        store.queue.close()


def _print_status(report: dict[str, Any], run: Run, jobs: list[SetJob], every_worker: bool) -> None:
    counts = report["sets"]
    parts = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    when = f"{run.created:%Y-%m-%d %H:%M:%S %Z}"
    print(f"run {run.name} ({run.kind}, submitted {when}): {len(jobs)} jobs: {parts}")
    if "sprt" in report:
        line = report["sprt"]
        print(
            f"SPRT: {line['pairs']} deal pairs, mean {line['mean']:+.3f} per deal, LLR {line['llr']:+.3f} "
            f"[{line['lower']:.3f}, {line['upper']:.3f}]: {line['verdict']}"
        )
    for failure in report["failed"]:
        print(f"set {failure['set']} (job {failure['job']}) failed: {failure['error']}")
    for back in report["given_back"]:
        print(f"set {back['set']} (job {back['job']}) was given back: {back['reason']}")
    for refused in report["refused"]:
        print(f"set {refused['set']} (job {refused['job']}): {refused['reason']}; {refused['status']} again")
    print(eta_line(report["eta"]))
    print()
    print_standings(standings(run, jobs), sys.stdout)
    print()
    print_workers(report["workers"], every_worker, sys.stdout)
    print()
    print_played(report["played"], sys.stdout)
