"""What a worker does once it has recorded a job of a distributed sequential test:
if the test has now decided (or reached its cap), cancel the jobs still waiting or leased.

Any worker may be the one whose result completes the decision, so each checks
after its own; a job being played elsewhere when the test decides is cancelled
too: its worker's lease no longer holds and its result is refused, so no batch
is played to its end after the verdict.
"""

from __future__ import annotations

from oddtrick_referee.competitions.on_workers.distributed_results import ResultCheck, sprt_progress
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import Lease, WorkQueue

_CHECK = ResultCheck()
"""The results this worker has read off their logs, kept between its jobs: each is replayed once."""


def after_batch(queue: WorkQueue, lease: Lease) -> str | None:
    """Cancel the rest of a decided test; the line to print (None: nothing to say)."""
    name = lease.payload.get("run")
    if not isinstance(name, str):
        return None
    runs = RunStore(queue)
    run = runs.get(name)
    if run is None or run.kind != "sprt":
        return None
    progress = sprt_progress(run, _CHECK.jobs(runs, run))
    if not progress.over:
        return None
    cancelled = queue.cancel_run(name)
    if not cancelled:
        return None
    return (
        f"{name}: the test is over after {progress.state.count} deal pairs "
        f"({progress.state.verdict}); {cancelled} waiting or leased job(s) cancelled"
    )
