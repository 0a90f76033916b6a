"""A finished table is counted from its match log, replayed by the rules engine, and from
nothing else: a log that fails the check, or that says otherwise than the figures reported
beside it, is refused. Real tables: the old logs of tests/data/match_logs, and real
tournaments and a ladder whose referee has one table's log (or its record of the table)
changed after the play, as other code or a hand on the disk would change it."""

from __future__ import annotations

import dataclasses
import io
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
from ladder_support import ladder_serving, ladder_settings, play_until_closed, register
from referee_support import PATIENCE_S, RawBot

from oddtrick._log_records import log_text as read_log_text
from oddtrick.rules import GameConfig, Seat
from oddtrick_referee._exceptions import ResultRefused
from oddtrick_referee.competitions.scoring.scored import disagreement, scored_table
from oddtrick_referee.competitions.tournaments.tournament import (
    Tournament,
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play.records import Fault
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord
from oddtrick_referee.storage.tournament_store import TournamentStore

ROOT = Path(__file__).resolve().parents[1]
OLD_LOGS = sorted((ROOT / "tests" / "data" / "match_logs").glob("*.jsonl"))
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = ROOT / "tests" / "seeded_random_bot.py"


def changed_lines(text: str, kind: str, change: Callable[[dict[str, Any]], None]) -> str:
    """The log's text with its first record of ``kind`` changed."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        record = json.loads(line)
        if record["type"] == kind:
            change(record)
            lines[number] = json.dumps(record, separators=(",", ":"))
            break
    return "\n".join(lines) + "\n"


def more_points(record: dict[str, Any]) -> None:
    record["points"] = [record["points"][0] + 50, record["points"][1]]
    record["scores"] = [record["scores"][0] + 50, record["scores"][1]]


@pytest.mark.parametrize("path", OLD_LOGS, ids=[path.stem for path in OLD_LOGS])
def test_a_table_is_read_off_its_log_as_the_referee_recorded_it(path: Path) -> None:
    text = read_log_text(path)
    end = json.loads(text.splitlines()[-1])
    played = scored_table(text)
    assert played.seat_dicts().keys() == end["seats"].keys()
    for seat, logged in end["seats"].items():
        assert {field: played.seat_dicts()[seat][field] for field in logged} == logged
    assert sum(ns for _, ns, _ in played.deals) == end["result"]["totals"][0]
    assert disagreement(played, played.deals, end["seats"]) is None
    forged = [[deal, ns + 999, ew] for deal, ns, ew in played.deals]
    assert disagreement(played, forged, end["seats"]) == (
        f"the result reports deal {forged[0]} where the log gives {list(played.deals[0])}"
    )


def test_a_log_whose_play_does_not_give_its_logged_scores_is_refused() -> None:
    text = changed_lines(read_log_text(OLD_LOGS[0]), "hand_result", more_points)
    with pytest.raises(ResultRefused, match=r"table t1: its log fails the rules' check: hand 1: the logged"):
        scored_table(text, "t1")


def test_a_log_whose_last_line_hides_a_fault_its_lines_show_is_refused() -> None:
    timeout = next(path for path in OLD_LOGS if path.stem == "timeout")

    def no_faults(record: dict[str, Any]) -> None:
        for seat in record["seats"].values():
            seat["faults"] = {}

    text = changed_lines(read_log_text(timeout), "match_end", no_faults)
    with pytest.raises(ResultRefused, match=r"seat S's faults is \{\} in its last line, \{'timeout': 2\}"):
        scored_table(text, "t")


class Changing:
    """The referee's front door, but the first table played comes back changed (``change``)
    after its play: its log rewritten on the disk, or the referee's record of it."""

    def __init__(self, door: Any, change: Callable[[MatchRecord], None]) -> None:
        self._door = door
        self._change = change
        self.changed: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._door, name)

    async def play_match(self, *args: Any, **options: Any) -> MatchRecord:
        return self._first(await self._door.play_match(*args, **options))

    async def play_seated(self, *args: Any, **options: Any) -> MatchRecord:
        return self._first(await self._door.play_seated(*args, **options))

    def _first(self, record: MatchRecord) -> MatchRecord:
        if not self.changed:
            self.changed.append(record.match_id)
            self._change(record)
        return record


def log_changed(record: MatchRecord) -> None:
    """NS scored 50 more on the first hand, says the log on the disk (its play says otherwise)."""
    record.log_path.write_text(changed_lines(read_log_text(record.log_path), "hand_result", more_points))


def record_changed(record: MatchRecord) -> None:
    """A time-out North never had, in the referee's record (its log shows none)."""
    record.seats[Seat.NORTH].add_fault(Fault.TIMEOUT)


@pytest.mark.parametrize(
    ("change", "why"),
    [(log_changed, "its log fails the rules' check"), (record_changed, "in the referee's record")],
    ids=["log-changed", "record-changed"],
)
def test_a_tournament_table_whose_log_and_record_disagree_is_refused_and_played_again(
    tmp_path: Path, change: Callable[[MatchRecord], None], why: str
) -> None:
    settings = TournamentSettings(
        entries=(parse_entry(f"heuristic={HEURISTIC}"), parse_entry(f"seeded={SEEDED}")),
        config=GameConfig.contract(),
        deals=2,
        set_size=2,
        tables=1,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed="scored",
        name="scored",
    )
    changing: list[Changing] = []

    async def play(tournament: Tournament, progress: Any, master_seed: str) -> Any:
        changing.append(Changing(tournament.referee, change))
        tournament.referee = changing[0]
        return await Tournament.run(tournament, progress, master_seed)

    said = io.StringIO()
    standings = trio.run(lambda: run_tournament(settings, tmp_path, progress_stream=said, play=play))
    (refused,) = [line for line in said.getvalue().splitlines() if "result refused" in line]
    assert f"result refused, not counted: table {changing[0].changed[0]}: " in refused
    assert why in refused
    recorded = TournamentStore(tmp_path / "oddtrick.sqlite3").table_runs(settings.tournament_id)
    assert len(recorded) == 2
    assert changing[0].changed[0] not in {row.match_id for row in recorded}
    assert [row.deals for row in standings.rows] == [2, 2]
    assert all(not any(dataclasses.astuple(row.faults)) for row in standings.rows)


async def test_a_ladder_match_whose_table_log_fails_the_check_is_aborted_and_not_rated(
    tmp_path: Path,
) -> None:
    settings = ladder_settings(tmp_path, trusted=True)
    tokens = register(settings, "alice", "bob")
    stop = threading.Event()
    async with ladder_serving(settings) as ladder:
        changing = Changing(ladder.referee, log_changed)
        ladder.referee = changing
        bots = [RawBot(changing.address, name, tokens[name]) for name in ("alice", "bob") for _ in range(4)]
        async with trio.open_nursery() as players:
            for bot in bots:
                players.start_soon(trio.to_thread.run_sync, play_until_closed, bot, stop)
            with trio.fail_after(PATIENCE_S):
                [outcome, *_] = await ladder.wait_outcomes(1)
            stop.set()
            changing.finish()
        [match] = [m for m in ladder.store.matches() if m.match_id == outcome.match_id]
        board = {row.name: row.matches for row in ladder.leaderboard()}
    assert (outcome.status, match.status) == ("aborted", "aborted")
    assert outcome.cause.startswith(f"its result was refused, not rated: table {changing.changed[0]}: ")
    assert "its log fails the rules' check" in outcome.cause
    assert board == {"alice": 0, "bob": 0}
