"""``oddtrick worker``, and the queue side of ``oddtrick analyze`` (``--submit``, ``--results``)."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path

from oddtrick._argparse import positive_seconds
from oddtrick_referee._exceptions import BadJob, DatabaseError, MetricsUnavailable
from oddtrick_referee.metrics import add_metrics_option, start_metrics
from oddtrick_referee.storage.work_queue import (
    BEAT_SECONDS,
    LEASE_SECONDS,
    Job,
    WorkQueue,
    open_queue,
    parse_version,
    version_text,
)
from oddtrick_referee.workers.kinds import (
    ANALYSIS,
    FIRST_VERSION,
    KINDS,
    LEASE_AND_BEAT,
    WORKER_VERSION,
    analysis_payload,
)
from oddtrick_referee.workers.worker import WorkerSettings, run_worker


def _kinds(text: str) -> list[str]:
    kinds = [kind.strip() for kind in text.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in KINDS]
    if not kinds or unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the kinds of work are {', '.join(sorted(KINDS))} (comma-separated)"
        )
    return kinds


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = commands.add_parser(
        "worker",
        help="lease jobs from a PostgreSQL work queue and do them (tournament sets, SPRT pairs, analysis)",
        description=(
            "A worker on any machine that reaches the database: it leases one job at a time from "
            "the work queue, does it, records the result, and renews its lease while it works. A "
            "job whose worker dies goes back to the queue when its lease expires; a result that "
            "comes back after that is refused, so every job counts once. Submit work with "
            "`oddtrick analyze --submit --database URL LOG...`, a tournament with `oddtrick tournament "
            "--database URL --workers ...`, a test with `oddtrick sprt --database URL --workers ...`. "
            "Ctrl-C or SIGTERM hands the job held back and stops. docs/workers.md gives the rules, "
            "docs/scale-out.md how to run many."
        ),
        epilog="example: oddtrick worker --database postgresql://oddtrick@db.example/oddtrick --name box1",
    )
    worker.add_argument(
        "--database",
        required=True,
        metavar="postgresql://…",
        help="the PostgreSQL database holding the work queue (the same URL for every worker and submitter)",
    )
    worker.add_argument(
        "--kinds",
        type=_kinds,
        default=None,
        metavar="KIND[,KIND]",
        help=f"the kinds of work to take (default: all, which is {', '.join(sorted(KINDS))}; "
        "analysis only with the strong extra)",
    )
    worker.add_argument(
        "--tables",
        type=int,
        default=2,
        metavar="N",
        help="tables a tournament set or SPRT batch plays at once here (default 2: both plays of a "
        "set together; 1 on a one-core machine)",
    )
    worker.add_argument(
        "--name",
        default=None,
        help="the worker's name in the queue and its lines (default HOST-PID)",
    )
    worker.add_argument(
        "--lease",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="seconds a lease lasts without a beat; past it the job goes back to waiting "
        f"(default: {LEASE_SECONDS:g} for analysis, 10 for tournament sets)",
    )
    worker.add_argument(
        "--beat",
        type=positive_seconds,
        default=None,
        metavar="S",
        help=f"seconds between renewals of the lease while working (default: {BEAT_SECONDS:g} for "
        "analysis, 2 for tournament sets; below --lease)",
    )
    worker.add_argument("--once", action="store_true", help="do one job, then exit")
    add_metrics_option(worker, "this worker")
    worker.set_defaults(handler=_worker)


def _worker(args: argparse.Namespace) -> int:
    shortest = args.lease if args.lease is not None else min(lease for lease, _ in LEASE_AND_BEAT.values())
    if args.beat is not None and args.beat >= shortest:
        print(
            f"oddtrick worker: --beat ({args.beat:g} s) must be shorter than --lease ({shortest:g} s), "
            "or the lease expires between beats",
            file=sys.stderr,
        )
        return 2
    if args.tables < 1:
        print("oddtrick worker: --tables must be 1 or more", file=sys.stderr)
        return 2
    kinds = args.kinds or sorted(KINDS)
    if ANALYSIS in kinds:
        try:
            import endplay  # noqa: F401
        except ImportError:
            if args.kinds:
                print(
                    "oddtrick worker: analysis work needs the strong extra (pip install 'oddtrick[strong]')",
                    file=sys.stderr,
                )
                return 2
            kinds = [kind for kind in kinds if kind != ANALYSIS]
    name = args.name or f"{socket.gethostname()}-{os.getpid()}"
    try:
        metrics, metrics_server = start_metrics(args.metrics, "oddtrick worker")
    except MetricsUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    if metrics_server is not None:
        print(f"metrics on {metrics_server.url}", flush=True)
    settings = WorkerSettings(
        url=args.database,
        name=name,
        kinds=kinds,
        version=parse_version(WORKER_VERSION),
        lease_seconds=args.lease,
        beat_seconds=args.beat,
        once=args.once,
        tables=args.tables,
        metrics=metrics,
    )
    try:
        return run_worker(settings)
    except DatabaseError as error:
        print(f"oddtrick worker: {error}", file=sys.stderr)
        return 1
    finally:
        if metrics_server is not None:
            metrics_server.close()


def submit_analysis(url: str, logs: list[Path], par: bool, required: str | None) -> int:
    """``oddtrick analyze --submit``: one analysis job per log, all or none."""
    version = parse_version(required or FIRST_VERSION[ANALYSIS])
    try:
        payloads = [analysis_payload(path, par).to_dict() for path in logs]
    except (OSError, EOFError, BadJob) as error:
        print(f"oddtrick analyze: {error}; nothing submitted", file=sys.stderr)
        return 2
    queue = open_queue(url)
    try:
        ids = queue.submit(ANALYSIS, payloads, version)
    finally:
        queue.close()
    for job_id, path in zip(ids, logs, strict=True):
        print(f"job {job_id}: analysis of {path.name} submitted")
    print(
        f"{len(ids)} job(s) waiting for a worker of oddtrick {version_text(version)} or newer; "
        f"see them with: oddtrick analyze --results --database {queue.database.url}",
        file=sys.stderr,
    )
    return 0


def _status_line(job: Job) -> str:
    name = job.payload.get("log_name", "?")
    if job.status == "done" and job.finished is not None:
        seconds = (job.finished - job.created).total_seconds()
        return f"job {job.id}: {name} done by {job.done_by} {seconds:.1f} s after submission"
    if job.status == "failed":
        return f"job {job.id}: {name} failed: {job.error}"
    return f"job {job.id}: {name} {job.status} (attempts {job.attempts})"


def print_results(url: str, as_json: bool, cards: bool) -> int:
    """``oddtrick analyze --results``: every analysis job, its status, and the analyses done."""
    queue: WorkQueue = open_queue(url)
    try:
        jobs = queue.jobs(ANALYSIS, leave_out=["log_text"])
    finally:
        queue.close()
    if as_json:
        json.dump(
            [
                {
                    "id": job.id,
                    "log": job.payload.get("log_name"),
                    "status": job.status,
                    "attempts": job.attempts,
                    "done_by": job.done_by,
                    "error": job.error,
                    "submitted": job.created.isoformat(),
                    "finished": job.finished.isoformat() if job.finished else None,
                    "analysis": job.result,
                }
                for job in jobs
            ],
            sys.stdout,
            indent=1,
        )
        print()
        return 0
    try:
        from oddtrick.analysis import render
    except ImportError as error:  # the analyses are stored: --json shows them without the extra
        print(f"oddtrick analyze: {error}; --json prints the results without it", file=sys.stderr)
        return 2
    if not jobs:
        print("no analysis submitted to this queue yet")
    for job in jobs:
        print(_status_line(job))
        if job.status == "done":
            print(render(job.result, cards=cards))
            print()
    return 0
