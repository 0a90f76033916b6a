"""How long analysis on workers takes from submission to the stored result. A benchmark, not a test.

    python benchmarks/workers.py                 # plays a small tournament for its logs
    python benchmarks/workers.py LOG.jsonl ...   # or submits these logs
    python benchmarks/workers.py --tournaments [--quick]   # tournaments on workers (workers_tournament.py)

A throw-away PostgreSQL server (as the tests start one), ``--workers`` real
``oddtrick worker`` processes, and two ways of submitting the logs' analyses
(without Contract Whist's par unless ``--par``):

* ``paced``: one job at a time, the next once the last is stored: the delay is
  the wake-up on NOTIFY, the lease, the analysis and the write of the result.
* ``burst``: ``--jobs`` jobs at once: the delay adds the wait in the queue, which
  a second worker shortens (on a machine with a core free for it).

Delays are the database's own times (``finished - created``), so they include
everything but the submitter's connection. Prints ``name: value`` lines.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from oddtrick_referee.storage.work_queue import WorkQueue, open_queue  # noqa: E402
from oddtrick_referee.workers.kinds import analysis_payload  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
import workers_tournament  # noqa: E402


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def tournament_logs(directory: Path) -> list[Path]:
    progress("playing a contract tournament of 2 duplicate deals for its logs…")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--game",
            "contract",
            "--deals",
            "2",
            "--bot",
            f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--bot",
            f"heuristic={ROOT / 'sample_bots' / 'heuristic_bot.py'}",
            "--data-dir",
            str(directory),
        ],
        check=True,
        capture_output=True,
    )
    return sorted((directory / "logs").glob("*.jsonl"))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def delays(queue: WorkQueue, ids: list[int]) -> list[float]:
    """Seconds from submission to the stored result of each job, once all are done."""
    end = time.monotonic() + 600
    while True:
        jobs = queue.jobs(ids=ids)
        if all(job.status in ("done", "failed") for job in jobs):
            break
        if time.monotonic() > end:
            raise SystemExit("the workers did not finish within 600 s")
        time.sleep(0.02)
    failed = [job.error for job in jobs if job.status == "failed"]
    if failed:
        raise SystemExit(f"jobs failed: {failed}")
    return [(job.finished - job.created).total_seconds() for job in jobs if job.finished is not None]


@contextlib.contextmanager
def workers(url: str, count: int) -> Iterator[None]:
    """``count`` worker processes, each waiting for work before this returns."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "oddtrick", "worker", "--database", url, "--name", f"bench-{n}"],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            line = process.stdout.readline()
            if "waiting for" not in line:
                raise SystemExit(f"a worker did not start: {line!r}")
        yield
    finally:
        for process in processes:
            process.terminate()
            process.communicate(timeout=60)


def report(label: str, values: list[float]) -> None:
    print(f"{label}_p50_ms: {1000 * statistics.median(values):.0f}")
    print(f"{label}_p95_ms: {1000 * percentile(values, 0.95):.0f}")


def main(args: argparse.Namespace) -> None:
    from postgres_support import fresh_database, postgres_server

    with tempfile.TemporaryDirectory() as folder:
        logs = args.logs or tournament_logs(Path(folder))
        payloads = [analysis_payload(path, args.par).to_dict() for path in logs]
        with postgres_server() as server:
            for count in range(1, args.workers + 1):
                url = fresh_database(server, f"bench_{count}")
                queue = open_queue(url)
                with workers(url, count):
                    progress(f"{count} worker(s): {args.paced} paced jobs, then a burst of {args.jobs}")
                    paced: list[float] = []
                    for n in range(args.paced):
                        paced += delays(queue, queue.submit("analysis", [payloads[n % len(payloads)]]))
                    burst = [payloads[n % len(payloads)] for n in range(args.jobs)]
                    bursted = delays(queue, queue.submit("analysis", burst))
                queue.close()
                report(f"workers_{count}_paced", paced)
                report(f"workers_{count}_burst", bursted)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("logs", nargs="*", type=Path, metavar="LOG.jsonl")
    parser.add_argument("--workers", type=int, default=2, help="measure with 1 … N workers (default 2)")
    parser.add_argument("--paced", type=int, default=8, help="jobs submitted one at a time (default 8)")
    parser.add_argument("--jobs", type=int, default=12, help="jobs in the burst (default 12)")
    parser.add_argument("--par", action="store_true", help="analyse with Contract Whist's par (slower jobs)")
    parser.add_argument(
        "--tournaments",
        action="store_true",
        help="measure tournaments on workers instead: overhead per set, throughput, lease rate, deaths",
    )
    workers_tournament.add_options(parser)
    arguments = parser.parse_args()
    if arguments.tournaments:
        workers_tournament.main(arguments)
    else:
        main(arguments)
