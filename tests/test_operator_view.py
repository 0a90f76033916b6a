"""What an operator sees of a run on workers (``oddtrick tournament status``): the run's
workers alive or dead by their beat, their version, sets, rate and errors; who played which
set; an ETA. All real: a throw-away PostgreSQL, ``oddtrick worker`` processes, one killed
with SIGKILL mid-set, the status command run as a user runs it."""

from __future__ import annotations

import datetime
import json
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from process_support import reap
from worker_support import DEADLINE, Worker, until

from oddtrick import __version__
from oddtrick_referee.competitions.on_workers.operator_view import eta
from oddtrick_referee.storage.run_store import Run, RunStore, SetJob
from oddtrick_referee.storage.work_queue import SCHEMA_VERSION, open_queue

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = Path(__file__).with_name("seeded_random_bot.py")
FAST = ("--lease", "2", "--beat", "0.5")


def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=DEADLINE
    )


def submit(url: str, name: str, deals: int) -> None:
    words = ["tournament", "--game", "contract", "--deals", str(deals), "--set-size", "2", "--seed", "s"]
    words += ["--name", name, "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}"]
    done = oddtrick(*words, "--database", url, "--workers", "--detach")
    assert done.returncode == 0, done.stderr


def status(url: str, name: str, *more: str) -> dict[str, Any]:
    shown = oddtrick("tournament", "status", "--database", url, name, "--json", *more)
    assert shown.returncode == 0, shown.stderr
    report: dict[str, Any] = json.loads(shown.stdout)
    return report


def all_done(url: str, name: str) -> bool:
    store = RunStore(open_queue(url))
    try:
        return store.counts(name) == {"done": len(store.jobs(name))}
    finally:
        store.queue.close()


@pytest.fixture
def url(postgres_url: str, request: pytest.FixtureRequest) -> str:
    from postgres_support import fresh_database

    return fresh_database(postgres_url, re.sub(r"\W", "_", request.node.name)[:60].lower())


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.send_signal(signal.SIGCONT)
            reap(worker.process)


def test_status_shows_the_run_s_workers_alive_or_dead_who_played_which_set_and_its_eta(
    url: str, workers: list[Worker]
) -> None:
    submit(url, "view", 4)  # two sets of two deals, each played at two tables
    waiting = status(url, "view")
    assert waiting["eta"]["sets_left"] == 2
    assert waiting["eta"]["seconds_left"] is None
    assert waiting["workers"] == []
    bystander = Worker(url, "bystander", version="9.9.9")  # leases none of this run's sets
    workers.append(bystander)
    bystander.wait_for("waiting for")
    doomed = Worker(url, "doomed", *FAST, "--tables", "1")
    workers.append(doomed)
    job_id = int(doomed.wait_for(r"leased job (\d+) ").group(1))
    reap(doomed.process)  # SIGKILL mid-set: its lease expires, its set goes to the heir
    workers.append(Worker(url, "heir", *FAST, "--tables", "1"))
    until("every set done", lambda: all_done(url, "view"))

    report = status(url, "view")
    shown = {row["name"]: row for row in report["workers"]}
    assert list(shown) == ["heir", "doomed"]  # the alive first; the bystander is no worker of the run
    heir, dead = shown["heir"], shown["doomed"]
    assert (heir["state"], heir["version"], heir["sets_played"], heir["deals_played"]) == (
        "alive", __version__, 2, 8
    )  # fmt: skip
    assert heir["deals_per_minute"] > 0
    assert heir["errors"] == 0
    assert (dead["state"], dead["sets_played"], dead["errors"]) == ("dead", 0, 1)
    assert dead["last_error"].startswith("expired: its lease expired")
    played = {row["job"]: row for row in report["played"]}
    assert [row["worker"] for row in report["played"]] == ["heir", "heir"]
    assert [lease["worker"] for lease in played[job_id]["before"]] == ["doomed"]
    assert played[job_id]["before"][0]["outcome"] == "expired"
    assert report["eta"]["sets_left"] == 0
    assert report["eta"]["seconds_left"] == 0

    every = {row["name"]: row for row in status(url, "view", "--all-workers")["workers"]}
    assert every["bystander"]["in_run"] is False
    assert every["bystander"]["version"] == "9.9.9"
    assert every["bystander"]["state"] == "alive"

    text = oddtrick("tournament", "status", "--database", url, "view")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert "ETA: none: no set is left (2 done)" in lines
    assert re.search(r"^  heir\s+alive\s+\S+\s+[\d.]+ s ago\s+2\s+[\d.]+\s+0\s+-$", text.stdout, re.M), (
        text.stdout
    )
    assert re.search(r"^  doomed\s+dead\s+\S+\s+[\d.]+ s ago\s+0\s+-\s+1\s+-$", text.stdout, re.M), (
        text.stdout
    )
    assert "bystander" not in text.stdout


def test_a_database_of_before_leases_were_kept_loads_and_shows_who_did_each_set(
    url: str, workers: list[Worker]
) -> None:
    submit(url, "old", 2)
    workers.append(Worker(url, "veteran", "--once"))
    until("the set done", lambda: all_done(url, "old"))
    queue = open_queue(url)
    try:  # the schema as the version before this one left it
        with queue.database.transaction() as cursor:
            cursor.execute("DROP TABLE work_leases")
            cursor.execute("ALTER TABLE workers DROP COLUMN dead_after, DROP COLUMN stopped")
            cursor.execute("UPDATE work_schema SET version = 3")
    finally:
        queue.close()
    report = status(url, "old")
    (veteran,) = report["workers"]
    assert (veteran["name"], veteran["sets_played"], veteran["deals_played"]) == ("veteran", 1, 4)
    assert veteran["deals_per_minute"] is None  # its lease's times were not kept
    assert [row["worker"] for row in report["played"]] == ["veteran"]
    queue = open_queue(url)
    try:
        with queue.database.transaction() as cursor:
            (row,) = cursor.rows("SELECT version FROM work_schema")
    finally:
        queue.close()
    assert row["version"] == SCHEMA_VERSION == 4


def _run(kind: str) -> Run:
    return Run("r", kind, {}, "seed", datetime.datetime.now(datetime.UTC))


def _jobs(*statuses: str) -> list[SetJob]:
    return [SetJob(i, i, status, 1, None, None) for i, status in enumerate(statuses)]


def test_the_eta_is_the_sets_left_at_the_pace_of_those_done() -> None:
    jobs = _jobs("done", "done", "leased", "waiting", "waiting", "failed")
    assert eta(_run("tournament"), jobs, 60.0)["seconds_left"] == 90.0  # 3 left, 30 s a set
    assert eta(_run("sprt"), jobs, 60.0)["at_most"] is True
    assert eta(_run("tournament"), _jobs("waiting", "leased"), 60.0)["seconds_left"] is None
    assert eta(_run("tournament"), _jobs("done", "cancelled"), 60.0)["seconds_left"] == 0.0
