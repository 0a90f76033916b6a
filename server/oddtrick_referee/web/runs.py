"""The pages of runs on workers (``oddtrick web --database URL``): ``/runs`` and ``/runs/{name}``.

A run's page shows what ``oddtrick tournament status`` prints, from the same
function (:func:`~.distributed_results.status_report`), and its standings in
the same table as a local tournament's page: the jobs by status with why any
failed or was given back, its ETA, the standings or the SPRT line, the run's workers
(alive or dead, version, sets, rate, errors, what each holds; ``?workers=all``
adds the database's others) and who played which set. While the run is not over the page follows
it by itself (static/follow.js: a polite poll, paused while the tab is hidden).
"""

from __future__ import annotations

import threading
from typing import Any

from oddtrick_referee.competitions.on_workers.distributed_results import ResultCheck, status_report
from oddtrick_referee.competitions.on_workers.status_text import eta_line
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.workers.kinds import ANALYSIS

FOLLOW_SECONDS = 5
"""How often an open run page asks again while the run goes on (one page, a few small queries)."""

STATUSES = ("waiting", "leased", "done", "failed", "cancelled")


class RunPages:
    """The runs of one workers' database, read for the page (one connection, one query at a time)."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._check = ResultCheck()
        """Each result read off its logs once while the page runs (and again if it changes)."""

    def runs(self) -> list[dict[str, Any]]:
        """Every run, oldest first, with how many of its jobs are in each status."""
        with self._lock:
            rows = []
            for name in self.store.names():
                run = self.store.get(name)
                if run is not None:
                    rows.append({"name": name, "kind": run.kind, "created": run.created,
                                 "counts": self.store.counts(name)})  # fmt: skip
            return rows

    def run(self, name: str, every_worker: bool = False) -> dict[str, Any] | None:
        """The run's report, as ``tournament status --json`` prints it (``every_worker``: as
        with ``--all-workers``, the page's ``?workers=all``)."""
        with self._lock:
            run = self.store.get(name)
            if run is None:
                return None
            jobs = self._check.jobs(self.store, run)
            report = status_report(self.store, run, jobs, every_worker)
        report["every_worker"] = every_worker
        report["eta_text"] = eta_line(report["eta"]).removeprefix("ETA: ")
        report["counts"] = [(status, report["sets"].get(status, 0)) for status in STATUSES]
        report["follow"] = None if report["over"] else FOLLOW_SECONDS
        return report

    def analysis(self, match_id: str) -> Any | None:
        """``oddtrick analyze --json``'s result for the match's log, if a worker recorded one
        (an ``analysis`` job named after its log: ``oddtrick analyze --submit``)."""
        with self._lock:
            return self.store.queue.latest_result(ANALYSIS, [f"{match_id}.jsonl", f"{match_id}.jsonl.gz"])

    def close(self) -> None:
        self.store.queue.close()
