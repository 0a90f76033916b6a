"""The page's double-dummy analyses wait in a bounded queue that one thread serves: asking
for the analysis of many matches at once costs the ``oddtrick web`` process neither a
thread nor a log's text per match, and a view past the queue's end is told, in words,
that the analyser is busy and to try later.

Real: a match played by SDK bots through a referee, copied under many match ids into the
data folder's index and logs, and ``oddtrick web`` as a process asked over HTTP."""

from __future__ import annotations

import concurrent.futures
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.storage.match_index import MatchStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.replay_support import play_logged
from tests.web_support import get

MATCHES = 200
WAITING = 8
"""The queue's length (``web.analysis.MAX_WAITING``)."""
PENDING = "Analysing every card double dummy…"
BUSY = "The analyser is busy with other matches: try again in a few minutes."
ASKERS = 8
"""Requests in flight at once: like a crowd of pages, not one thread per request of our own."""


def data_folder(folder: Path) -> list[str]:
    """A data folder holding one real finished match of six deals (seconds of solving)
    and copies of it under other ids; the ids, the original first."""

    async def main() -> str:
        async with running_referee(RefereeSettings(port=0, data_dir=folder)) as referee:
            config = GameConfig.from_dict({"game": "contract", "format": "deals", "deals": 6})
            logged = await play_logged(referee, config, "queue", "queue-0")
            referee.finish()
        return logged.match_id

    first = trio.run(main)
    store = MatchStore(folder / "oddtrick.sqlite3")
    row = store.get(first)
    assert row is not None
    assert row["status"] == "finished"
    original = folder / "logs" / f"{first}.jsonl"
    assert original.is_file()
    config, players, details, result = (
        json.loads(row[key]) for key in ("config", "players", "details", "result")
    )
    ids = [first]
    for number in range(1, MATCHES):
        match_id = f"queue-{number}"
        log = original.with_name(f"{match_id}.jsonl")
        shutil.copyfile(original, log)
        store.match_started(match_id, row["started_at"], config, players, log, details)
        store.match_ended(match_id, row["finished_at"], "finished", result)
        ids.append(match_id)
    return ids


def status_of(pid: int, field: str) -> str:
    """A line of the process's /proc status (its threads, its peak memory)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return line
    raise AssertionError(f"no {field} for process {pid}")


def threads_of(pid: int) -> int:
    return int(status_of(pid, "Threads:").split()[1])


def test_many_analyses_asked_at_once_queue_in_bounds_and_the_rest_are_told_busy(tmp_path: Path) -> None:
    if not Path("/proc/self/status").exists():
        pytest.skip("counts threads in /proc (Linux)")
    ids = data_folder(tmp_path / "data")
    command = [sys.executable, "-m", "oddtrick", "web", "--port", "0", "--data-dir", str(tmp_path / "data")]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split("web page on ")[1].split("/ ")[0]
            with concurrent.futures.ThreadPoolExecutor(ASKERS) as askers:
                answers = list(askers.map(lambda m: get(f"{url}/matches/{m}/analysis.json"), ids))
            threads_after = threads_of(server.pid)
            print("web process:", status_of(server.pid, "VmHWM:"), status_of(server.pid, "Threads:"))
            _, page, _ = get(f"{url}/matches/{ids[-1]}")
        finally:
            server.terminate()
    # One solver thread and the HTTP server's few, not one per match asked for.
    assert threads_after <= ASKERS + 10, f"{threads_after} threads after {MATCHES} matches were asked for"
    assert {status for status, _, _ in answers} == {200}
    found = [json.loads(body) for _, body, _ in answers]
    pending = [f for f in found if f["status"] == "pending"]
    busy = [f for f in found if f["status"] == "busy"]
    assert {f["status"] for f in found} <= {"pending", "busy", "ready"}
    assert all(f["message"] == PENDING for f in pending)
    assert all(f["message"] == BUSY for f in busy)
    assert len(pending) >= WAITING + 1  # the queue took as many as it holds, and the one solved
    assert busy, "six deals take seconds to solve: a burst of asks must find the queue full"
    assert "busy with other matches: try again" in page


async def test_the_solver_stops_with_the_page_and_solves_nothing_queued_after(tmp_path: Path) -> None:
    """The solver's thread is the page's: when the page stops serving, the matches still
    queued are dropped and the thread ends after the one it may be solving."""
    folder = tmp_path / "data"
    ids = await trio.to_thread.run_sync(data_folder, folder)
    app = create_app(folder)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, app, "127.0.0.1:0")
        for match_id in ids[:WAITING]:
            status, body, _ = await trio.to_thread.run_sync(get, f"{url}/matches/{match_id}/analysis.json")
            assert (status, json.loads(body)["status"]) == (200, "pending")
        [solver] = [thread for thread in threading.enumerate() if thread.name == "oddtrick-analysis"]
        nursery.cancel_scope.cancel()
    await trio.to_thread.run_sync(solver.join, 60)  # at most the one match it was solving
    assert not solver.is_alive()
    analyses = app.state.web.analyses
    last = ids[WAITING - 1]  # seven solves of seconds each behind the first: still queued at the stop
    assert analyses.cached(last) is None  # never solved: dropped from the queue
    assert analyses.status(last)["status"] == "busy"  # and nothing is queued any more
