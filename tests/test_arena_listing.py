"""ListMatches and GetMatchLog for matches that did not simply finish: sealed and aborted.

The SQLite file is prepared as an earlier run would have left it (a crash
mid-match leaves a match 'running' and a partial log), then a real referee
is started on it and asked over a real socket.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from referee_support import GUARD_S, RawBot, connect_and_play, in_thread, referee_running

from oddtrick.rules import GameConfig, Seat
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, game_pb2, referee_pb2
from oddtrick_referee.play.matchlog import LOG_FORMAT, MatchLogWriter
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import DataDirInUse, MatchSpec
from oddtrick_referee.storage.match_index import MatchStore

PLAYERS = {"N": "ann", "E": "bo", "S": "ann", "W": "bo"}


def leave_behind(data_dir: Path, match_id: str, status: str, sealed: bool, started_at: int) -> None:
    """A match as a referee leaves it: its row, and a log of its first lines."""
    log_path = data_dir / "logs" / f"{match_id}.jsonl"
    writer = MatchLogWriter(log_path)
    writer.write({"type": "match_start", "format": LOG_FORMAT, "match_id": match_id})
    writer.close()
    store = MatchStore(data_dir / "oddtrick.sqlite3")
    details = {
        "table_id": f"table-{match_id}",
        "rules": {"deadline_ms": 2000, "grace_ms": 1000, "open": False},
        "seed_commitment": "c0ffee",
        "sealed": sealed,
    }
    store.match_started(match_id, started_at, GameConfig.contract().to_dict(), PLAYERS, log_path, details)
    if status != "running":
        result = {"winner": "NS", "totals": [12, 3], "games_won": [1, 0], "hands": 4, "reason": "NS won"}
        store.match_ended(match_id, started_at + 1000, status, result)


def ask(address: str) -> dict[str, Any]:
    with grpc.insecure_channel(address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        listing = arena.ListMatches(arena_pb2.ListMatchesRequest(), timeout=5)
        sealed_only = arena.ListMatches(
            arena_pb2.ListMatchesRequest(statuses=[arena_pb2.MATCH_STATUS_SEALED]), timeout=5
        )
        logs: dict[str, Any] = {}
        for match in listing.matches:
            try:
                logs[match.match_id] = arena.GetMatchLog(
                    arena_pb2.GetMatchLogRequest(match_id=match.match_id), timeout=5
                )
            except grpc.RpcError as error:
                logs[match.match_id] = error.code()
    return {"listing": listing, "sealed_only": sealed_only, "logs": logs}


async def test_sealed_and_aborted_matches_are_listed_for_what_they_are(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    leave_behind(data_dir, "crashed", "running", sealed=False, started_at=1000)
    leave_behind(data_dir, "crashed-twin", "running", sealed=True, started_at=2000)
    leave_behind(data_dir, "twin", "sealed", sealed=True, started_at=3000)
    leave_behind(data_dir, "done", "finished", sealed=False, started_at=4000)
    leave_behind(data_dir, "legacy", "running", sealed=False, started_at=500)
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:  # as a referee before the column left it
        db.execute("UPDATE matches SET details = NULL WHERE match_id = 'legacy'")

    async with referee_running(tmp_path, ["ann", "bo"]) as referee:
        answers = await in_thread(ask, referee.address)

    listed = {m.match_id: m for m in answers["listing"].matches}
    assert list(listed) == ["done", "twin", "crashed-twin", "crashed", "legacy"]  # newest first
    # A match an earlier run left running was stopped with it: aborted, never in progress again.
    for match_id in ("crashed", "crashed-twin"):
        assert listed[match_id].status == arena_pb2.MATCH_STATUS_FINISHED
        assert listed[match_id].result.outcome == game_pb2.MATCH_OUTCOME_ABORTED
    assert listed["crashed"].table_id == "table-crashed"
    assert listed["crashed"].rules.decision_deadline_ms == 2000
    # A sealed play shows no result until its twin is over.
    assert listed["twin"].status == arena_pb2.MATCH_STATUS_SEALED
    assert not listed["twin"].HasField("result")
    assert [m.match_id for m in answers["sealed_only"].matches] == ["twin"]
    assert listed["done"].result.winner == 1  # SIDE_NORTH_SOUTH
    # Logs: a finished or aborted match's log is served; a sealed one's never, aborted or not.
    logs = answers["logs"]
    assert json.loads(logs["done"].lines[0])["match_id"] == "done"
    assert json.loads(logs["crashed"].lines[0])["match_id"] == "crashed"
    assert logs["twin"] is grpc.StatusCode.FAILED_PRECONDITION
    assert logs["crashed-twin"] is grpc.StatusCode.FAILED_PRECONDITION
    # Not knowing whether an old aborted match was sealed, the referee withholds its log.
    assert listed["legacy"].result.outcome == game_pb2.MATCH_OUTCOME_ABORTED
    assert logs["legacy"] is grpc.StatusCode.FAILED_PRECONDITION


def test_a_file_from_before_the_details_column_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "oddtrick.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE matches (match_id TEXT PRIMARY KEY, status TEXT NOT NULL, started_at INTEGER "
            "NOT NULL, finished_at INTEGER, config TEXT NOT NULL, players TEXT NOT NULL, result TEXT, "
            "log_path TEXT NOT NULL)"
        )
        db.execute(
            "INSERT INTO matches VALUES ('old', 'finished', 1, 2, ?, ?, NULL, 'x.jsonl')",
            (json.dumps(GameConfig.classic().to_dict()), json.dumps(PLAYERS)),
        )
    store = MatchStore(path)
    (row,) = store.list_matches()
    assert row["match_id"] == "old"
    assert row["details"] == {}


async def test_a_second_referee_on_the_same_data_directory_is_refused(tmp_path: Path) -> None:
    async with referee_running(tmp_path, ["ann"]):
        with pytest.raises(DataDirInUse, match="--data-dir"):
            async with referee_running(tmp_path, ["ann"]):
                pass  # pragma: no cover - never entered


async def test_a_match_stopped_mid_play_is_listed_aborted_and_its_log_kept(tmp_path: Path) -> None:
    names = {seat: f"stopped-{seat.name.lower()}" for seat in Seat}
    asked, release = threading.Event(), threading.Event()

    def hold(bot: RawBot, request: referee_pb2.DecisionRequest) -> Any:
        asked.set()
        release.wait(GUARD_S)
        return request.legal_actions[0]

    async with referee_running(tmp_path, names.values()) as referee, trio.open_nursery() as bots:
        for seat in Seat:  # abandoned at the end: their match never finishes
            bots.start_soon(in_thread, connect_and_play, referee.address, names[seat], hold)
        with trio.move_on_after(GUARD_S) as stopped:
            async with trio.open_nursery() as match:
                match.start_soon(
                    referee.play_match, MatchSpec(GameConfig.contract(), names, TableRules()), 20.0
                )
                await in_thread(asked.wait, GUARD_S)
                stopped.cancel()
        release.set()
        answers = await in_thread(ask, referee.address)
        bots.cancel_scope.cancel()

    (summary,) = answers["listing"].matches
    assert summary.status == arena_pb2.MATCH_STATUS_FINISHED
    assert summary.result.outcome == game_pb2.MATCH_OUTCOME_ABORTED
    lines = answers["logs"][summary.match_id].lines
    assert json.loads(lines[0])["type"] == "match_start"
    assert all(json.loads(line)["type"] != "match_end" for line in lines)
