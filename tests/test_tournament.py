"""Tournaments end to end: a real referee on a socket, bots as separate processes."""

from __future__ import annotations

import io
import json
import os
import shlex
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from process_support import stop

from oddtrick.rules import GameConfig, GameState
from oddtrick_referee import check_log, read_log
from oddtrick_referee.competitions.tournaments.tournament import (
    Entry,
    TournamentSettings,
    parse_entry,
    plan_runs,
    remote_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.match_index import MatchStore, log_withheld
from oddtrick_referee.storage.tournament_store import TournamentStore

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def local(name: str) -> Entry:
    return parse_entry(f"{name}={RANDOM_BOT}")


def settings(entries: tuple[Entry, ...], **overrides: object) -> TournamentSettings:
    values: dict[str, object] = {
        "entries": entries,
        "config": GameConfig.contract(),
        "deals": 2,
        "set_size": 1,
        "tables": 4,
        "rules": TableRules(deadline_s=5.0, grace_s=2.0),
        "remote_wait_s": 30.0,
        "seed": "tournament-test",
    }
    values.update(overrides)
    return TournamentSettings(**values)  # type: ignore[arg-type]


def remote_bot_process(address: str, name: str, token: str, seats: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot"]
    command += ["--server", address, "--name", name, "--token", token, "--seats", str(seats)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def test_round_robin_with_a_remote_entry_completes_and_its_standings_add_up(tmp_path: Path) -> None:
    remote = remote_entry("visitor=visitor-token-0,visitor-token-1", duplicate=True)
    plan = settings((local("alpha"), local("beta"), remote))
    processes: list[subprocess.Popen[bytes]] = []

    def listening(address: str) -> None:
        for name, token in remote.identities(duplicate=True).items():
            processes.append(remote_bot_process(address, name, token, 2 * plan.tables))

    try:
        standings = await run_tournament(
            plan, tmp_path, on_listening=listening, progress_stream=io.StringIO()
        )
    finally:
        for process in processes:
            stop(process)

    # Three pairings, two deals each, every deal played twice.
    store = TournamentStore(tmp_path / "oddtrick.sqlite3")
    deals = store.deal_results(plan.tournament_id)
    assert len(deals) == 3 * 2 * 2
    plays = Counter((d.match, d.set_number, d.deal_number) for d in deals)
    assert set(plays.values()) == {2}
    rows = {row.entry: row for row in standings.rows}
    assert set(rows) == {"alpha", "beta", "visitor"}
    for row in rows.values():
        assert row.deals == 2 * 2  # two opponents, two deals each
        assert row.matches_won + row.matches_drawn + row.matches_lost == 2
    assert sum(row.total_points for row in rows.values()) == pytest.approx(0)
    for first in rows:
        for second in rows:
            if first != second:
                cell, mirror = standings.crosstable[first][second], standings.crosstable[second][first]
                assert cell.deals == mirror.deals == 2
                assert cell.points_per_deal == pytest.approx(-mirror.points_per_deal)
    summary = standings.to_json()
    assert json.loads(json.dumps(summary))["duplicate"] is True
    # Every entry, the remote one too, played each table of a set under its own identity.
    seated = set()
    for path in (tmp_path / "logs").glob("*.jsonl"):
        names = [player["name"] for player in next(read_log(path))["players"].values()]
        assert len({name.split("~")[1] for name in names}) == 1, names  # one play's identities only
        seated.update(names)
    assert {"visitor~0", "visitor~1"} <= seated
    assert "visitor" not in seated


async def test_the_two_plays_of_a_duplicate_deal_get_the_same_hands_with_partnerships_swapped(
    tmp_path: Path,
) -> None:
    plan = settings((local("north"), local("south")), deals=1, tables=2, config=GameConfig.classic())
    await run_tournament(plan, tmp_path, progress_stream=io.StringIO())
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 2
    starts, ends = [], []
    for path in logs:
        records = list(read_log(path))
        starts.append(records[0])
        ends.append(records[-1])
        assert check_log(path).ok
    assert starts[0]["seed_commitment"] == starts[1]["seed_commitment"]
    deals = [
        GameState(GameConfig.from_dict(s["config"]), e["seed"]).deal
        for s, e in zip(starts, ends, strict=True)
    ]
    assert deals[0] == deals[1]
    seats = [{seat: player["name"].split("~")[0] for seat, player in s["players"].items()} for s in starts]
    assert seats[0]["N"] == seats[1]["E"]
    assert seats[0]["E"] == seats[1]["N"]
    # Each play ran in the entry's own process for that play (name~0, name~1).
    assert {s["players"]["N"]["name"][-2:] for s in starts} == {"~0", "~1"}


async def test_an_absent_remote_entry_forfeits_and_the_rest_of_the_tournament_completes(
    tmp_path: Path,
) -> None:
    absent = Entry("ghost", "never-connects")
    plan = settings((local("alpha"), local("beta"), absent), remote_wait_s=2.0, tables=2)
    standings = await run_tournament(plan, tmp_path, progress_stream=io.StringIO())
    rows = {row.entry: row for row in standings.rows}
    assert (rows["ghost"].matches_lost, rows["ghost"].deals) == (2, 0)
    assert rows["ghost"].faults.forfeits == 2
    assert rows["alpha"].matches_won >= 1
    assert rows["beta"].matches_won >= 1
    assert rows["alpha"].deals == rows["beta"].deals == 2
    store = TournamentStore(tmp_path / "oddtrick.sqlite3")
    assert {f.absent for f in store.forfeited_matches(plan.tournament_id)} == {"ghost"}


def test_a_killed_tournament_resumes_without_replaying_or_losing_a_finished_table(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "4",
        "--set-size", "1", "--tables", "1", "--seed", "resume-test", "--data-dir", str(tmp_path),
        "--bot", f"one={RANDOM_BOT}", "--bot", f"two={RANDOM_BOT}", "--json",
    ]  # fmt: skip
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as first:
        assert first.stderr is not None
        # Kill once three tables are stored: set 2's first play is stored (and sealed), its
        # second not yet, so only a durable sealing state can ever release set 2.
        for line in first.stderr:
            if line.startswith("[3/8 tables"):
                break
        else:
            pytest.fail("the tournament ended before two tables were played")
        os.killpg(first.pid, signal.SIGKILL)
    store = TournamentStore(tmp_path / "oddtrick.sqlite3")
    tournament_id = next(iter(_tournament_ids(tmp_path)))
    before = _runs(tmp_path, tournament_id)
    assert len(before) >= 3

    second = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    assert "resuming" in second.stderr
    after = _runs(tmp_path, tournament_id)
    assert len(after) == 8  # every table of 4 deals x 2 plays, each stored once
    for key, match_id in before.items():
        assert after[key] == match_id  # not replayed
    standings = json.loads(second.stdout)
    assert sum(entry["deals"] for entry in standings["entries"]) == 2 * 4
    assert len(store.deal_results(tournament_id)) == 8
    # Every set is decided: no play is left sealed, and every log (an aborted play's too) is served.
    matches = MatchStore(tmp_path / "oddtrick.sqlite3")
    rows = [matches.get(row["match_id"]) for row in matches.list_matches(limit=1000)]
    assert {row["status"] for row in rows if row} <= {"finished", "aborted"}
    assert not [row["match_id"] for row in rows if row and log_withheld(row)]


def test_a_rerun_with_an_option_changed_says_which_tournament_it_is_and_how_to_resume_the_other(
    tmp_path: Path,
) -> None:
    def command(deals: int) -> list[str]:
        return [
            sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", str(deals),
            "--set-size", "1", "--tables", "1", "--seed", "rerun", "--data-dir", str(tmp_path),
            "--bot", f"one={RANDOM_BOT}", "--bot", f"two={RANDOM_BOT}", "--json",
        ]  # fmt: skip

    with subprocess.Popen(
        command(4), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True
    ) as first:
        assert first.stderr is not None
        said = []
        for line in first.stderr:
            said.append(line)
            if line.startswith("[1/8 tables"):
                break
        else:
            pytest.fail("the tournament ended before a table was played")
        os.killpg(first.pid, signal.SIGKILL)
    (old_id,) = _tournament_ids(tmp_path)
    assert said[0].startswith(f"tournament {old_id} (new; data in {tmp_path})")

    second = subprocess.run(command(2), capture_output=True, text=True, timeout=300, check=True)
    lines = second.stderr.splitlines()
    new_id = next(i for i in _tournament_ids(tmp_path) if i != old_id)
    assert lines[0] == f"tournament {new_id} (new; data in {tmp_path})"
    (other,) = [line for line in lines if "another tournament here is unfinished" in line]
    assert f"unfinished: {old_id}, " in other
    assert "of 8 tables played" in other
    assert "differs in --deals 4 (this run: --deals 2)" in other
    resume = shlex.split(other.split("To resume it: ", 1)[1])
    assert resume[:2] == ["oddtrick", "tournament"]

    # The command it gives resumes the other tournament, and finishes it.
    resumed = subprocess.run(
        [sys.executable, "-m", "oddtrick", *resume[1:]], capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stderr.startswith(f"tournament {old_id} (resumed; data in {tmp_path})")
    assert "resuming" in resumed.stderr
    assert "another tournament" not in resumed.stderr  # the other one is finished
    assert len(_runs(tmp_path, old_id)) == 8
    assert len(_tournament_ids(tmp_path)) == 2


def test_a_tournament_is_its_time_control_too_and_one_stored_before_it_was_resumes_as_before(
    tmp_path: Path,
) -> None:
    """The same bots at 1 s a decision are another tournament than at 5 s: rerun with
    --deadline changed, it must not resume the other and print the wrong time control."""
    from oddtrick_referee.competitions.tournaments.resume import differences, options
    from oddtrick_referee.play.clock import ClockRule

    entries = (parse_entry(f"one={RANDOM_BOT}"), parse_entry(f"two={RANDOM_BOT}"))

    def settings(rules: TableRules, name: str | None = None) -> TournamentSettings:
        return TournamentSettings(entries=entries, config=GameConfig.classic(), rules=rules, name=name)

    default = settings(TableRules())
    fast = settings(TableRules(deadline_s=1.0))
    banked = settings(TableRules(deadline_s=1.0, clock=ClockRule.parse("60+0.5")))
    assert "time_control" not in default.describe()  # ids of tournaments at the default stay as they were
    assert len({default.tournament_id, fast.tournament_id, banked.tournament_id}) == 3
    assert settings(TableRules(grace_s=5.0)).tournament_id == default.tournament_id  # grace is no handicap
    assert options(banked.describe())[-4:] == ["--deadline", "1", "--clock", "60+0.5"]
    assert "--deadline 1" in differences(default.describe(), fast.describe())

    store = TournamentStore(tmp_path / "oddtrick.sqlite3")
    before = {
        k: v for k, v in settings(TableRules(deadline_s=1.0), "cup").describe().items() if k != "time_control"
    }
    store.open_tournament("cup", before, "seed", 1)  # as a version before time controls stored it
    assert (
        store.open_tournament("cup", settings(TableRules(deadline_s=1.0), "cup").describe(), "x", 2)[0]
        == "seed"
    )
    store.open_tournament("quick", fast.describe() | {"entries": []}, "seed", 3)
    with pytest.raises(ValueError, match="other settings"):
        store.open_tournament("quick", default.describe() | {"entries": []}, "seed", 4)


CLUMSY_BOT = """
import oddtrick


class ClumsyBot(oddtrick.Bot):
    \"\"\"Raises on its first card of every hand; plays the lowest legal action otherwise.\"\"\"

    def choose_call(self, view):
        return view.legal_actions[0]

    def choose_card(self, view):
        if len(view.hand) == 13:
            raise RuntimeError("clumsy bot slipped")
        return view.legal_actions[0]
"""


def test_bot_errors_in_the_standings_say_once_where_the_tracebacks_are(tmp_path: Path) -> None:
    bot = tmp_path / "clumsy_bot.py"
    bot.write_text(CLUMSY_BOT)
    data = tmp_path / "data"
    command = [
        sys.executable, "-m", "oddtrick", "tournament", "--deals", "1", "--set-size", "1",
        "--tables", "1", "--seed", "clumsy", "--data-dir", str(data),
        "--bot", f"clumsy={bot}", "--bot", f"steady={RANDOM_BOT}",
    ]  # fmt: skip
    plain = subprocess.run(command, capture_output=True, text=True, timeout=300, check=True)
    row = next(line for line in plain.stdout.splitlines() if " clumsy " in line)
    assert row.endswith(" E4")  # once per hand at each of its two seats, at both tables
    notes = [line for line in plain.stdout.splitlines() if "traceback" in line]
    output = data / "bot-output"
    assert notes == [
        "E (bot errors): the bot's own code raised and played a fallback; tracebacks in "
        f"{output / 'clumsy~0.log'}, {output / 'clumsy~1.log'}"
    ]
    for name in ("clumsy~0", "clumsy~1"):
        logged = (output / f"{name}.log").read_text()
        assert "Traceback" in logged
        assert "RuntimeError: clumsy bot slipped" in logged
    again = subprocess.run([*command, "--json"], capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(again.stdout)["notes"] == notes


def _tournament_ids(data_dir: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        return [row[0] for row in db.execute("SELECT tournament_id FROM tournaments")]


def _runs(data_dir: Path, tournament_id: str) -> dict[tuple[str, int, int], str]:
    import sqlite3

    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        rows = db.execute(
            "SELECT match_key, set_number, table_no, match_id FROM table_runs WHERE tournament_id = ?",
            (tournament_id,),
        ).fetchall()
    return {(row[0], row[1], row[2]): row[3] for row in rows}


def test_the_plan_pairs_every_entry_once_and_keeps_both_plays_of_a_set_together() -> None:
    entries = (local("a"), local("b"), local("c"))
    runs = plan_runs(settings(entries, deals=3, set_size=2), "seed")
    assert Counter(run.match_key for run in runs) == {"a|b": 4, "a|c": 4, "b|c": 4}
    for first, second in zip(runs[::2], runs[1::2], strict=True):
        assert (first.match_key, first.set_number, first.seed) == (
            second.match_key,
            second.set_number,
            second.seed,
        )
        assert (first.ns_entry, first.ew_entry) == (second.ew_entry, second.ns_entry)
    assert [run.deals for run in runs if run.match_key == "a|b"] == [2, 2, 1, 1]
    gauntlet = plan_runs(settings(entries, gauntlet=True), "seed")
    assert {run.match_key for run in gauntlet} == {"a|b", "a|c"}


async def test_a_play_finished_but_not_recorded_is_recorded_not_played_again(tmp_path: Path) -> None:
    plan = settings((local("one"), local("two")), deals=1, tables=1)
    await run_tournament(plan, tmp_path, progress_stream=io.StringIO())
    runs = _runs(tmp_path, plan.tournament_id)
    assert len(runs) == 2
    # What a stop between the index's "sealed" and the tournament's record leaves: the second
    # play ended and sealed in the index, not in the tournament's results, the set not released.
    import sqlite3

    key = max(runs)
    with sqlite3.connect(tmp_path / "oddtrick.sqlite3") as db:
        db.execute("UPDATE matches SET status = 'sealed', details = json_remove(details, '$.released')")
        for table in ("table_runs", "deal_results"):
            db.execute(f"DELETE FROM {table} WHERE match_key = ? AND set_number = ? AND table_no = ?", key)
    logs_before = sorted(path.name for path in (tmp_path / "logs").glob("*.jsonl"))

    standings = await run_tournament(plan, tmp_path, progress_stream=io.StringIO())

    assert sorted(path.name for path in (tmp_path / "logs").glob("*.jsonl")) == logs_before
    assert _runs(tmp_path, plan.tournament_id) == runs
    assert sum(row.deals for row in standings.rows) == 2
    matches = MatchStore(tmp_path / "oddtrick.sqlite3")
    for match_id in runs.values():
        row = matches.get(match_id)
        assert row is not None
        assert row["status"] == "finished"
        assert not log_withheld(row)


async def test_an_entry_added_to_a_finished_round_robin_plays_only_the_new_pairs(tmp_path: Path) -> None:
    first = settings((local("alpha"), local("beta")), deals=1, tables=2)
    await run_tournament(first, tmp_path, progress_stream=io.StringIO())
    before = _runs(tmp_path, first.tournament_id)
    assert {key[0] for key in before} == {"alpha|beta"}

    grown = settings((local("gamma"), local("beta"), local("alpha")), deals=1, tables=2)
    assert grown.tournament_id == first.tournament_id
    progress = io.StringIO()
    standings = await run_tournament(grown, tmp_path, progress_stream=progress)
    after = _runs(tmp_path, first.tournament_id)
    assert {key[0] for key in after} == {"alpha|beta", "alpha|gamma", "beta|gamma"}
    for key, match_id in before.items():
        assert after[key] == match_id  # the pair already played is not played again
    assert len(after) == 3 * 2
    assert {row.entry: row.deals for row in standings.rows} == {"alpha": 2, "beta": 2, "gamma": 2}

    with pytest.raises(
        ValueError, match=r"also has gamma: .* give --name NEW .* to start a separate tournament"
    ):
        await run_tournament(first, tmp_path, progress_stream=io.StringIO())


def test_an_entry_name_the_referee_would_refuse_stops_the_command_before_anything_is_written(
    tmp_path: Path,
) -> None:
    """A name becomes file names (each play's bot output) and the names its bots connect under:
    one that breaks the referee's rule is refused at once, and nothing is kept of the attempt."""
    data_dir = tmp_path / "deep" / "data"
    for options in (
        ["--bot", f"../../trav/pwned={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        ["--bot", f"my bot={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        ["--bot", f"é={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        ["--bot", f"{'x' * 63}={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        ["--remote", "r/1", "--bot", f"b={RANDOM_BOT}", "--web", "0"],
        ["--remote", f"{'r' * 65}", "--bot", f"b={RANDOM_BOT}", "--no-duplicate"],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "oddtrick", "tournament", "--deals", "1", "--name", "cup",
             "--data-dir", str(data_dir), *options],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert run.returncode == 2, (options, run.stderr)
        (line,) = run.stderr.splitlines()
        assert line.startswith("oddtrick tournament: "), line
        assert "cannot name an entry" in line
        assert "the referee's rule for bot names is 1-64 ASCII letters, digits, '.', '_', '-' or '~'" in line
        assert "Traceback" not in run.stderr
        assert not (tmp_path / "deep").exists(), options
        assert not (tmp_path / "trav").exists()
    # The same name, fixed, is a tournament of its own: nothing of the refused one blocks it.
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "tournament", "--deals", "1", "--name", "cup", "--tables", "1",
         "--data-dir", str(data_dir), "--bot", f"pwned={RANDOM_BOT}", f"--bot=-b={RANDOM_BOT}", "--json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    # (a name the rule allows plays, even one that begins with "-")
    assert sorted(entry["entry"] for entry in json.loads(run.stdout)["entries"]) == ["-b", "pwned"]


def test_entry_names_follow_the_referees_rule_with_room_for_the_plays() -> None:
    from oddtrick._names import entry_name_problem, valid_bot_name

    for name in ("a", "Heuristic-2.1_b", "x" * 62):
        assert entry_name_problem(name) is None
        assert valid_bot_name(f"{name}~0")
        assert valid_bot_name(f"{name}~1")
    assert entry_name_problem("x" * 63) is not None  # x…x~0 would be 65 characters
    assert entry_name_problem("x" * 64, duplicate=False) is None
    for name in ("", "a~0", "a/b", "..\\b", "a b", "é", "a|b", "a,b", "x" * 65):
        assert entry_name_problem(name, duplicate=False) is not None, name
    with pytest.raises(ValueError, match="cannot name an entry"):
        settings((local("a"), local("../b")))


def test_sprt_refuses_a_name_the_referee_would_refuse(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "sprt", "--referee", "--data-dir", str(tmp_path / "data"),
         "--bot", f"new bot={RANDOM_BOT}", "--bot", f"old={RANDOM_BOT}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 2
    assert not (tmp_path / "data").exists()
    assert run.stderr.splitlines() == [
        "oddtrick sprt: 'new bot' cannot name an entry (it plays as new bot~0 and new bot~1): an entry's "
        "name is the bot name it plays under, and the referee's rule for bot names is 1-64 ASCII letters, "
        "digits, '.', '_', '-' or '~'; an entry's name takes 1-62 ASCII letters, digits, '.', '_' or '-' "
        "('~' is kept for the plays of a duplicate set)"
    ]
