"""``oddtrick ladder serve --analyse``: each released table's log becomes an analysis job in
the PostgreSQL work queue, and what a worker records for it is ``oddtrick analyze --json``'s."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ladder_support import Serving, bot_process, free_port, ladder_settings, register
from worker_support import DEADLINE

from oddtrick_referee.storage.work_queue import open_queue


def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=DEADLINE
    )


def test_analyse_is_refused_without_a_postgresql_database(tmp_path: Path) -> None:
    refused = oddtrick("ladder", "serve", "--data-dir", str(tmp_path), "--port", "0", "--analyse")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "oddtrick ladder serve: --analyse needs a PostgreSQL --database: the work queue lives there"
    ]


def _named(analysis: dict[str, Any], name: str) -> dict[str, Any]:
    """The analysis with each log's path as its file name (the queue knows no folder)."""
    for log in analysis.get("logs", []):
        log["path"] = name
    return analysis


@pytest.mark.slow
def test_a_ladder_match_s_logs_are_analysed_by_a_worker_as_analyze_json_does(
    tmp_path: Path, postgres_url: str
) -> None:
    pytest.importorskip("endplay")
    from postgres_support import fresh_database

    url = fresh_database(postgres_url, "ladder_analyse")
    token = register(ladder_settings(tmp_path, database=url), "alice")["alice"]
    port = free_port()
    serving = Serving(tmp_path, port, options=("--database", url, "--analyse", "--match-deals", "2"))
    alice = None
    try:
        serving.wait_for("ladder listening")
        alice = bot_process(f"127.0.0.1:{port}", "Heuristic", "alice", token, seats=1)
        [line] = serving.wait_for("submitted for analysis")
        assert re.search(r"ladder match \S+: 2 log\(s\) submitted for analysis \(job \d+, \d+\)", line), line
        serving.process.terminate()
        serving.reap()
    finally:
        if alice is not None:
            alice.terminate()
            alice.wait(timeout=30)
        if serving.process.poll() is None:
            serving.kill()
    worked = oddtrick("worker", "--once", "--database", url, "--name", "solver", "--kinds", "analysis")
    assert worked.returncode == 0, worked.stdout + worked.stderr
    queue = open_queue(url)
    try:
        done = [job for job in queue.jobs("analysis") if job.status == "done"]
    finally:
        queue.close()
    assert len(done) == 1
    name = done[0].payload["log_name"]
    log = tmp_path / "logs" / name
    assert log.exists(), sorted(path.name for path in (tmp_path / "logs").iterdir())
    here = oddtrick("analyze", "--json", str(log))
    assert here.returncode == 0, here.stderr
    assert done[0].result == _named(json.loads(here.stdout), name)
    assert done[0].result["logs"]
