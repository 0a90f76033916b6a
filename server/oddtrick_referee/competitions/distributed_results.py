"""A distributed run's answers from the database: its standings and its SPRT line.

The tables the workers recorded are put, as they are, into a tournament store
of the single-process kind (a throw-away SQLite file) and read back by the
very functions the single-process tournament reads its own with, so the two
cannot disagree on how faults, times or deal scores add up.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import gzip
import io
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from oddtrick._logfile import LogFileError, unpacked
from oddtrick.sprt import SprtState
from oddtrick_referee._exceptions import LogUnreadable
from oddtrick_referee.competitions.sequential import pair_scores
from oddtrick_referee.competitions.standings import Standings, compute_standings
from oddtrick_referee.competitions.tournament_plan import SLOT_MARK
from oddtrick_referee.play.clock import ClockRule, time_control
from oddtrick_referee.storage.results import DealResult
from oddtrick_referee.storage.run_store import Run, RunStore, SetJob
from oddtrick_referee.storage.tournament_store import TournamentStore


def entry_names(run: Run) -> list[str]:
    return [record["name"] for record in run.settings["entries"]]


@contextlib.contextmanager
def _stored(run: Run, jobs: Sequence[SetJob]) -> Iterator[TournamentStore]:
    with tempfile.TemporaryDirectory(prefix="oddtrick-standings-") as folder:
        store = TournamentStore(Path(folder) / "standings.sqlite3")
        store.open_tournament(run.name, {"entries": []}, run.master_seed, 0)
        for job in jobs:
            for table in job.tables:
                store.record_run(
                    run.name,
                    (table["match_key"], table["set_number"], table["table_no"]),
                    table["ns_entry"],
                    table["ew_entry"],
                    table["match_id"],
                    table["seats"],
                    [tuple(deal) for deal in table["deals"]],
                    0,
                )
        yield store


def standings(run: Run, jobs: Sequence[SetJob]) -> Standings:
    """The standings of every table recorded, as :meth:`Tournament.standings` computes them."""
    names = entry_names(run)
    entry_of = {name: name for name in names}
    for name in names:
        for slot in (0, 1):
            entry_of[f"{name}{SLOT_MARK}{slot}"] = name
    with _stored(run, jobs) as store:
        result = compute_standings(
            names,
            store.deal_results(run.name),
            store.faults(run.name, entry_of),
            [],
            True,
            store.times(run.name, entry_of),
        )
    rules = run.settings["rules"]
    clock = ClockRule.from_record(rules["clock"]) if rules.get("clock") else None
    return dataclasses.replace(result, time_control=time_control(rules["deadline_ms"] / 1000, clock))


def deal_results(jobs: Sequence[SetJob]) -> list[DealResult]:
    results = []
    for job in jobs:
        for table in job.tables:
            first, second = table["match_key"].split("|", 1)
            for deal, ns_points, ew_points in table["deals"]:
                results.append(
                    DealResult(
                        table["match_key"], first, second, table["set_number"], deal, table["table_no"],
                        table["ns_entry"], table["ew_entry"], ns_points, ew_points,
                    )
                )  # fmt: skip
    return results


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
    scores = pair_scores(deal_results(jobs), entry_names(run)[0])
    fed: list[float] = []
    for number in range(1, test["max_pairs"] + 1):
        if number not in scores or state.verdict != "undecided":
            break
        state.add(scores[number])
        fed.append(scores[number])
    over = state.verdict != "undecided" or state.count >= test["max_pairs"]
    return SprtProgress(state, fed, over)


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


def status_report(store: RunStore, run: Run, jobs: list[SetJob]) -> dict[str, Any]:
    """What ``tournament status --json`` prints and the web page's run page shows: one
    function, so the two cannot disagree. ``over`` says no job is waiting or leased (or,
    for an SPRT, that the test is decided or at its cap): the page stops following it."""
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
            if job.status in ("waiting", "leased") and job.error
        ],
        "standings": standings(run, jobs).to_json(),
        "workers": [
            {
                "name": w.name,
                "version": w.version,
                "last_beat": w.last_beat.isoformat(),
                "seconds_ago": round(w.seconds_ago, 1),
                "job": w.job_id,
            }
            for w in store.workers()
        ],
    }
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
