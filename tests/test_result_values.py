"""The values at a competition's edges: what a store keeps of a table, what a job carries.

Each is written by its ``to_dict`` and read by its ``from_dict`` alone: the two must
give back the same value, read what earlier code wrote (a database of an older
referee), and refuse a record that is not of their form with a message naming the
field, so that a worker or a store says what is wrong rather than crashing on it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from oddtrick._timing import DecisionTimes
from oddtrick.rules import GameConfig, GameKind
from oddtrick_referee._exceptions import BadJob, ResultRefused
from oddtrick_referee.competitions.on_workers.distributed import sprt_jobs, tournament_jobs
from oddtrick_referee.competitions.on_workers.distributed_results import scored_result
from oddtrick_referee.competitions.on_workers.job_payloads import (
    EntryRecord,
    SetPayload,
    run_from_dict,
    run_to_dict,
)
from oddtrick_referee.competitions.scoring.counted import table_standings
from oddtrick_referee.competitions.tournaments.sequential import SequentialTest
from oddtrick_referee.competitions.tournaments.tournament_plan import TournamentSettings, parse_entry
from oddtrick_referee.play.clock import ClockRule
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.analysis_jobs import AnalysisPayload
from oddtrick_referee.storage.json_checks import RecordInvalid
from oddtrick_referee.storage.results import SeatResult, TableResult
from oddtrick_referee.storage.run_store import SetJob
from oddtrick_referee.storage.tournament_store import TournamentStore

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = Path(__file__).with_name("seeded_random_bot.py")


def seat(bot: str, timeouts: int = 0) -> SeatResult:
    times = DecisionTimes()
    for think in (12, 40, 40):
        times.add(think, think - 3)
    return SeatResult(
        bot, {"timeout": timeouts} if timeouts else {}, refusals=1, decisions=9, think_ms_total=92,
        think_ms_max=40, times=times,
    )  # fmt: skip


def table(table_no: int = 0) -> TableResult:
    ns, ew = ("a", "b") if table_no == 0 else ("b", "a")
    return TableResult(
        "a|b", 1, table_no, ns, ew, f"m{table_no}",
        {"N": seat(f"{ns}~{table_no}", 2), "S": seat(f"{ns}~{table_no}"),
         "E": seat(f"{ew}~{table_no}"), "W": seat(f"{ew}~{table_no}")},
        ((1, 120, 0), (2, 0, 90)) if table_no == 0 else ((1, 100, 0), (2, 0, 60)),
    )  # fmt: skip


def settings(name: str = "values cup") -> TournamentSettings:
    return TournamentSettings(
        entries=(
            parse_entry(f"heuristic={HEURISTIC}"),
            parse_entry(f"seeded={SEEDED}", options={"samples": 40, "careful": True}),
        ),
        config=GameConfig(game=GameKind.CONTRACT),
        deals=4,
        set_size=2,
        rules=TableRules(deadline_s=2.5, grace_s=10.0, clock=ClockRule.parse("60+1")),
        seed="values-seed",
        name=name,
    )


def through_json(data: dict[str, Any]) -> Any:
    """As the database gives it back: JSON text, read again."""
    return json.loads(json.dumps(data))


def test_every_value_reads_back_equal_to_what_it_wrote() -> None:
    for written in (seat("a~0", 3), SeatResult("old"), table(0), table(1)):
        assert type(written).from_dict(through_json(written.to_dict())) == written
    jobs = tournament_jobs(settings(), "master")
    assert len(jobs) == 2
    entries = settings().entries
    test = SequentialTest(
        entries[0], entries[1], GameConfig(game=GameKind.CONTRACT), "sprt-seed", max_pairs=3
    )
    for job in [*jobs, *sprt_jobs(test, batch=2)]:
        named = SetPayload.from_dict(through_json({**job.to_dict(), "run": "values cup"}))
        assert named.run == "values cup"
        assert SetPayload.from_dict(through_json(named.to_dict())) == named
        assert named.entries[1].options == {"samples": 40, "careful": True}
        for run in job.runs:
            assert run_from_dict(through_json(run_to_dict(run))) == run
    for entry in jobs[0].entries:
        assert EntryRecord.from_dict(through_json(entry.to_dict())) == entry
        assert entry.hash_problem() is None
    analysis = AnalysisPayload("match.jsonl", '{"type": "match_start"}\n', par=False)
    assert AnalysisPayload.from_dict(through_json(analysis.to_dict())) == analysis


def test_a_payload_not_of_its_form_is_refused_with_the_field_that_is_wrong() -> None:
    good = tournament_jobs(settings(), "master")[0].to_dict()
    cases: list[tuple[Any, str]] = [
        ([1, 2], "a tournament-set job's payload is list, not a JSON object"),
        ({**good, "runs": "both"}, "'runs' is 'both', not list"),
        ({**good, "runs": []}, "has no table runs"),
        ({**good, "runs": [{**good["runs"][0], "deals": "2"}]}, "run 0's 'deals' is '2', not int"),
        ({**good, "entries": [{"name": "x"}]}, "entry 0 has no 'source'"),
        ({**good, "config": {"game": "chess"}}, "chess"),
        ({**good, "rules": {"grace_ms": 1}}, "deadline_ms"),
        ({**good, "index": True}, "'index' is True, not int"),
        ({**good, "run": 7}, "'run' is 7, not str"),
    ]
    for payload, message in cases:
        with pytest.raises(BadJob, match="cannot be read") as refused:
            SetPayload.from_dict(payload)
        assert message in str(refused.value)
        assert "submit the run again" in str(refused.value)
    with pytest.raises(BadJob, match="'log_text'"):
        AnalysisPayload.from_dict({"log_name": "x.jsonl"})
    with pytest.raises(BadJob, match="'par' is 'yes', not bool"):
        AnalysisPayload.from_dict({"log_text": "", "par": "yes"})


def test_a_seat_record_of_an_older_referee_still_loads_and_counts() -> None:
    older = {"bot": "a~0", "faults": {"timeout": 1}, "refusals": 0, "forfeited": False}
    read = SeatResult.from_dict(older)
    assert (read.times, read.decisions, read.fault("timeout"), read.fault("illegal")) == (None, 0, 1, 0)
    assert read.to_dict() == {**older, "decisions": 0, "think_ms_total": 0, "think_ms_max": 0}
    for broken, message in (
        ({**older, "faults": {"timeout": "1"}}, "not an object of counts"),
        ({**older, "refusals": None}, "'refusals' is None, not int"),
        ({k: v for k, v in older.items() if k != "bot"}, "has no 'bot'"),
    ):
        with pytest.raises(RecordInvalid, match=message):
            SeatResult.from_dict(broken)


def test_a_store_written_before_seat_times_loads_and_gives_the_standings(tmp_path: Path) -> None:
    path = tmp_path / "oddtrick.sqlite3"
    store = TournamentStore(path)
    store.open_tournament("cup", {"entries": [["a", "a.py"], ["b", "b.py"]]}, "seed", 0)
    store.record_run("cup", table(0), 1)
    old_seats = {s: {"bot": r.bot, "faults": dict(r.faults), "refusals": 0, "forfeited": False}
                 for s, r in table(1).seats.items()}  # fmt: skip
    with sqlite3.connect(path) as db:  # a row as an older referee wrote it, by hand
        db.execute(
            "INSERT INTO table_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("cup", "a|b", 1, 1, "b", "a", "m1", json.dumps(old_seats), 2),
        )
        db.executemany(
            "INSERT INTO deal_results VALUES (?, ?, ?, ?, ?, ?, ?)",
            [("cup", "a|b", 1, 1, deal, ns, ew) for deal, ns, ew in table(1).deals],
        )
    loaded = store.table_runs("cup")
    assert loaded[0] == table(0)
    assert (loaded[1].deals, loaded[1].seats["N"].times) == (table(1).deals, None)
    standings = table_standings(["a", "b"], loaded, [], True)
    by_entry = {row.entry: row for row in standings.rows}
    assert (by_entry["a"].deals, by_entry["b"].deals) == (2, 2)
    assert (by_entry["a"].faults.timeouts, by_entry["b"].faults.timeouts) == (2, 2)
    assert (by_entry["a"].faults.refusals, by_entry["b"].faults.refusals) == (2, 2)  # table 0's alone
    assert by_entry["a"].points_per_deal == -by_entry["b"].points_per_deal != 0


def test_a_result_not_of_its_form_is_refused_not_crashed_on() -> None:
    job = SetJob(
        1, 0, "done", 1, None, "w", runs=[run_to_dict(r) for r in tournament_jobs(settings(), "m")[0].runs]
    )
    for result, message in (
        ([], "it has no list of tables"),
        ({"tables": [1], "logs": {}}, "it has no list of tables"),
        ({"tables": [], "logs": []}, "it has no logs"),
        (
            {"tables": [{"match_key": "a|b", "set_number": n, "table_no": 0} for n in ([1], 1)], "logs": {}},
            "TypeError",
        ),
        ({"tables": [{"match_key": "heuristic|seeded"}], "logs": {}}, "KeyError"),
    ):
        with pytest.raises(ResultRefused, match="cannot be read") as refused:
            scored_result(job, result)
        assert message in str(refused.value)
