"""``--metrics``: the referee (``oddtrick serve``) and a worker (``oddtrick worker``) serve
Prometheus's text format at ``/metrics``, scraped over HTTP and read with Prometheus's own
parser; the figures are what the match logs say happened."""

from __future__ import annotations

import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from process_support import reap
from prometheus_client.parser import text_string_to_metric_families
from worker_support import DEADLINE, Worker, until

from oddtrick._log_records import read_log_dicts
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import open_queue

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = Path(__file__).with_name("seeded_random_bot.py")


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample at ``url``, by name and labels, as Prometheus's parser reads them."""
    with urllib.request.urlopen(url, timeout=DEADLINE) as response:
        text = response.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def logged(paths: list[Path]) -> tuple[int, dict[str, int]]:
    """The actions the logs record, and their faults by kind."""
    actions, faults = 0, dict[str, int]()
    for path in paths:
        for record in read_log_dicts(path):
            if record["type"] == "action":
                actions += 1
                if record.get("fault"):
                    faults[record["fault"]] = faults.get(record["fault"], 0) + 1
    return actions, faults


def faults_of(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float]) -> dict[str, int]:
    return {
        dict(labels)["kind"]: int(v)
        for (name, labels), v in samples.items()
        if name == "oddtrick_faults_total"
    }


def test_the_referee_s_metrics_count_the_decisions_and_faults_its_log_records(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--game", "classic", "--deals", "2", "--deadline", "0.05", "--forever", "--metrics", "0",
               "--data-dir", str(tmp_path)]  # fmt: skip
    serve = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    bots: list[subprocess.Popen[str]] = []
    try:
        assert serve.stdout is not None
        url = serve.stdout.readline().split("metrics on ", 1)[1].strip()
        assert scrape(url)[("oddtrick_decisions_total", ())] == 0
        address = serve.stdout.readline().split()[3].rstrip(";")
        # The random bot at a 50 ms deadline: some of its decisions come too late (faults).
        bots = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "oddtrick",
                    "bot",
                    str(RANDOM_BOT),
                    "--server",
                    address,
                    "--name",
                    name,
                    "--seats",
                    "2",  # a partnership of one bot: a seat each for North and South
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for name in ("a", "b")
        ]
        for line in serve.stdout:
            if re.match(r"match \S+ over", line):
                break
        samples = scrape(url)
    finally:
        for process in [serve, *bots]:
            reap(process)
        if serve.stdout is not None:
            serve.stdout.close()
    actions, faults = logged(sorted((tmp_path / "logs").rglob("*.jsonl*")))
    assert actions > 0
    assert samples[("oddtrick_decisions_total", ())] == actions
    assert faults_of(samples) == faults
    assert samples[("oddtrick_tables_in_play", ())] == 0


@pytest.fixture
def url(postgres_url: str) -> str:
    from postgres_support import fresh_database

    return fresh_database(postgres_url, "metrics_worker")


def test_a_worker_s_metrics_count_its_sets_decisions_lease_waits_and_queue(url: str, tmp_path: Path) -> None:
    words = ["tournament", "--game", "contract", "--deals", "4", "--set-size", "2", "--seed", "m",
             "--name", "metered", "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}"]  # fmt: skip
    command = [sys.executable, "-m", "oddtrick", *words, "--database", url, "--workers", "--detach"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    worker = Worker(url, "metered", "--metrics", "0")
    try:
        metrics_url = worker.wait_for(r"metrics on (\S+)").group(1)
        store = RunStore(open_queue(url))
        try:
            until("both sets done", lambda: store.counts("metered") == {"done": 2})
        finally:
            store.queue.close()
        until("the worker looked at the queue after its last set",
              lambda: scrape(metrics_url)[("oddtrick_lease_wait_seconds_count", ())] == 2)  # fmt: skip
        samples = scrape(metrics_url)
    finally:
        worker.stop()
    shown = subprocess.run([sys.executable, "-m", "oddtrick", "tournament", "status", "--database", url,
                            "metered", "--logs", str(tmp_path)], capture_output=True, text=True)  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    actions, faults = logged(sorted(tmp_path.glob("*.jsonl")))
    assert actions > 0
    assert samples[("oddtrick_decisions_total", ())] == actions
    assert faults_of(samples) == faults
    assert samples[("oddtrick_tables_in_play", ())] == 0
    assert samples[("oddtrick_queue_depth", ())] == 0


def test_the_ladder_s_metrics_count_its_matches_decisions_and_seat_waits(tmp_path: Path) -> None:
    """``ladder serve --metrics``: once a match is over, its decisions are counted, the
    match waited for its bots once at least, and every fault counted is one of the logs'."""
    from ladder_support import Serving, free_port, ladder_settings, register

    data = tmp_path / "data"
    token = register(ladder_settings(data), "alice")["alice"]
    options = ("--metrics", "0", "--house-bots", "7", "--house-seats", "1", "--match-deals", "2")
    serving = Serving(data, free_port(), options=options)
    bot: subprocess.Popen[bytes] | None = None
    try:
        metrics_url = serving.wait_for("metrics on ")[0].split("metrics on ", 1)[1].strip()
        address = serving.wait_for("ladder listening on ")[0].split("listening on ", 1)[1].split(":")[:2]
        command = [sys.executable, "-m", "oddtrick", "bot", str(HEURISTIC), "--server", ":".join(address),
                   "--name", "alice", f"--token={token}"]  # fmt: skip
        bot = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        [over] = serving.wait_for(" over 2 deals")
        samples = scrape(metrics_url)
    finally:
        if bot is not None:
            reap(bot)
        serving.kill()
    match_id = over.split("ladder match ", 1)[1].split()[0]
    actions, faults = logged(sorted((data / "logs").rglob(f"*{match_id}*.jsonl*")))
    assert actions > 0
    assert samples[("oddtrick_decisions_total", ())] >= actions
    assert samples[("oddtrick_lease_wait_seconds_count", ())] >= 1
    assert 0 <= samples[("oddtrick_tables_in_play", ())] <= 2
    assert set(faults_of(samples)) >= set(faults)
