"""The ``oddtrick ladder`` management commands, run as a user would, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from oddtrick.rules import GameConfig
from oddtrick_referee.competitions.ladder.service import LadderSettings, open_store


def ladder(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", "ladder", *args], capture_output=True, text=True, check=check
    )


def create_ladder(where: list[str]) -> None:
    """What `oddtrick ladder serve` does first: open (and so create) the ladder's store."""
    option, value = where
    data_dir, database = (Path(value), None) if option == "--data-dir" else (Path("unused"), value)
    store = open_store(LadderSettings(config=GameConfig.contract(), data_dir=data_dir, database=database))
    store.db.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> list[str]:
    """Where a ladder could be, with none there yet."""
    if request.param == "sqlite":
        return ["--data-dir", str(tmp_path / "data")]
    from postgres_support import fresh_database

    return ["--database", fresh_database(request.getfixturevalue("postgres_url"), "ladder_cli")]


@pytest.fixture
def where(empty: list[str]) -> list[str]:
    """A ladder, as `ladder serve` leaves it, with no entrant yet."""
    create_ladder(empty)
    return empty


def test_no_management_command_creates_a_ladder(empty: list[str]) -> None:
    for command in (["register", "bob"], ["retire", "bob"], ["rotate-token", "bob"], ["standings"]):
        refused = ladder(*command, *empty, check=False)
        assert refused.returncode == 2, refused
        assert refused.stdout == ""
        (line,) = refused.stderr.splitlines()
        assert "no ladder in" in line
        assert "`oddtrick ladder serve` creates a ladder" in line
        if empty[0] == "--data-dir":
            assert str(Path(empty[1]).resolve()) in line
            assert not Path(empty[1]).exists()
        else:
            assert empty[1].rsplit("/", 1)[-1] in line
    if empty[0] == "--database":  # nothing was created in the database either
        psycopg = pytest.importorskip("psycopg")
        with psycopg.connect(empty[1]) as connection:
            tables = connection.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            ).fetchall()
        assert tables == []
    create_ladder(empty)
    assert ladder("register", "bob", *empty).returncode == 0


def test_register_rotate_retire_and_read_the_standings(where: list[str]) -> None:
    registered = ladder("register", "alice", *where)
    token = registered.stdout.split("keep it secret): ")[1].split()[0]
    assert len(token) >= 40
    assert "alice" in registered.stdout
    ladder("register", "bob", *where)

    again = ladder("register", "alice", *where, check=False)
    assert again.returncode == 2
    assert "already registered" in again.stderr

    rotated = ladder("rotate-token", "alice", *where)
    assert token not in rotated.stdout
    assert "old one no longer works" in rotated.stdout

    rows = json.loads(ladder("standings", "--json", *where).stdout)
    assert [row["name"] for row in rows] == ["alice", "bob"]
    assert all(row["provisional"] and row["matches"] == 0 for row in rows)
    table = ladder("standings", *where).stdout
    assert "alice" in table
    assert "mu - 3 sigma" in table

    ladder("retire", "bob", *where)
    assert [row["name"] for row in json.loads(ladder("standings", "--json", *where).stdout)] == ["alice"]
    retired = ladder("rotate-token", "bob", *where, check=False)
    assert retired.returncode == 2
    assert "no active entrant 'bob'" in retired.stderr

    history = json.loads(ladder("history", "alice", "--json", *where).stdout)
    assert history == {"bot": "alice", "matches": []}
    missing = ladder("history", "carol", *where, check=False)
    assert missing.returncode == 2
    assert "no entrant 'carol'" in missing.stderr


def _played(where: list[str], tmp_path: Path) -> None:
    """Finished matches straight into the ladder's database, as a ladder would leave them:
    sy1 and sy2 meet in three of their four matches each."""
    from oddtrick_referee.storage.database import open_database
    from oddtrick_referee.storage.ladder_store import LadderStore

    url = where[1] if where[0] == "--database" else f"sqlite:///{Path(where[1]) / 'ladder.sqlite3'}"
    store = LadderStore(open_database(url, tmp_path, "unused.sqlite3"), 25.0, 8.0)
    for name in ("sy1", "sy2", "h1", "h2", "h3", "h4", "h5", "h6"):
        store.register(name, now_ms=1)
    store.ensure_house("house-h-1", 1, "referee")
    house = "house-h-1"
    played = [
        (["sy1", "sy2", "h1", "h2"], ["h3", "h4", "h5", "h6"], 30),
        (["sy1", "h1", "sy2", "h3"], ["h2", "h4", "h5", "h6"], 20),
        (["sy1", "h1", "h2", "h3"], ["sy2", "h4", "h5", "h6"], -10),
        (["sy1", "h1", "h2", "h3"], ["h4", "h5", "h6", house], -5),
        (["sy2", "h4", "h5", "h6"], ["h1", "h2", "h3", house], 5),
    ]
    for number, (a, b, score) in enumerate(played, start=1):
        tables = [{"N": a[0], "S": a[1], "E": b[0], "W": b[1]}, {"N": b[2], "S": b[3], "E": a[2], "W": a[3]}]
        lineup = {"tables": tables, "teams": [a, b]}
        match_id = f"m{number}"
        store.open_match(match_id, f"c{number}", lineup, {}, [], "referee", now_ms=number)
        store.finish_match(
            match_id, "finished", "s", score, "a", [(1, score)], lambda _: [], {}, now_ms=number
        )
    store.open_match("m6", "c6", {"tables": [], "teams": [["sy1", "sy2"], []]}, {}, [], "referee", now_ms=9)
    store.db.close()


def test_the_pairs_report_shows_who_keeps_meeting_and_how_they_score_together(
    where: list[str], tmp_path: Path
) -> None:
    ladder("register", "first", *where)
    _played(where, tmp_path)
    records = json.loads(ladder("pairs", "--json", *where).stdout)
    by_pair = {(r["first"], r["second"]): r for r in records}
    assert by_pair[("sy1", "sy2")] == {
        "first": "sy1",
        "second": "sy2",
        "together": 3,  # the running match m6 does not count
        "teammates": 2,
        "opponents": 1,
        "share": 0.75,
        "team_score": 25.0,
        "first_vs_second": -10.0,
        "first_apart": -5.0,
        "second_apart": 5.0,
    }
    assert not any("house-h-1" in pair for pair in by_pair)
    assert ("first", "sy1") not in by_pair  # never played
    shares = [r["share"] for r in records]
    assert shares == sorted(shares, reverse=True)
    with_house = json.loads(ladder("pairs", "--json", "--include-house", *where).stdout)
    assert any(r["second"] == "house-h-1" for r in with_house)
    often = json.loads(ladder("pairs", "--json", "--min-together", "5", *where).stdout)
    honest = [f"h{number}" for number in range(1, 7)]
    assert {(r["first"], r["second"]) for r in often} == set(itertools.combinations(honest, 2))
    text = ladder("pairs", "--limit", "2", *where).stdout
    assert "together" in text
    assert len([line for line in text.splitlines() if line.startswith(("h", "sy"))]) == 2
    bad = ladder("pairs", "--min-together", "0", *where, check=False)
    assert bad.returncode == 2
    assert "at least 1" in bad.stderr


def test_every_ladder_command_explains_itself() -> None:
    for command in ("serve", "register", "retire", "rotate-token", "standings", "history", "pairs"):
        helped = ladder(command, "--help")
        assert "usage: oddtrick ladder " + command in helped.stdout
    serve = ladder("serve", "--help").stdout
    for option in ("--database", "--trusted-pairs", "--house-bots", "--match-deals", "--web", "--game"):
        assert option in serve
    assert "TRUSTED" in serve


def test_a_bad_database_url_and_a_bad_name_say_what_to_do(tmp_path: Path) -> None:
    bad = ladder("standings", "--database", "mysql://x", check=False)
    assert bad.returncode == 2
    assert "--database must be postgresql://" in bad.stderr
    unreachable = ladder("standings", "--database", "postgresql://nobody@127.0.0.1:1/x", check=False)
    assert unreachable.returncode == 2
    assert "cannot connect to PostgreSQL" in unreachable.stderr
    create_ladder(["--data-dir", str(tmp_path)])
    named = ladder("register", "two words", "--data-dir", str(tmp_path), check=False)
    assert named.returncode == 2
    assert "cannot be a bot name" in named.stderr


def test_a_mistyped_data_folder_and_options_a_ladder_ignores_are_errors(tmp_path: Path) -> None:
    missing = ladder("standings", "--data-dir", str(tmp_path / "typo"), check=False)
    assert missing.returncode == 2
    assert "no ladder in" in missing.stderr
    assert not (tmp_path / "typo").exists()
    ignored = ladder("serve", "--data-dir", str(tmp_path), "--deals", "5", "--format", "rubber", check=False)
    assert ignored.returncode == 2
    assert "--format, --deals" in ignored.stderr
    assert "--match-deals" in ignored.stderr


def test_standings_list_provisional_entrants_apart_below_the_rated_ones(
    where: list[str], tmp_path: Path
) -> None:
    """A rated bot whose conservative rating is below zero still stands above two newcomers
    (whose mu - 3 sigma is 0): they are listed apart, as provisional, with the chance that each
    row is stronger than the next."""
    from oddtrick_referee.storage.database import open_database
    from oddtrick_referee.storage.ladder_store import LadderStore, RatingChange

    url = where[1] if where[0] == "--database" else f"sqlite:///{Path(where[1]) / 'ladder.sqlite3'}"
    store = LadderStore(open_database(url, tmp_path, "unused.sqlite3"), 25.0, 25.0 / 3)
    names = ["placed", "mate1", "mate2", "mate3", "rival1", "rival2", "rival3", "rival4"]
    for name in [*names, "new1", "new2"]:
        store.register(name, now_ms=1)
    a, b = names[:4], names[4:]
    tables = [{"N": a[0], "S": a[1], "E": b[0], "W": b[1]}, {"N": b[2], "S": b[3], "E": a[2], "W": a[3]}]
    now = int(time.time() * 1000)  # played just now: not inactive
    store.open_match("m1", "c1", {"tables": tables, "teams": [a, b]}, {}, [], "referee", now_ms=now)
    changes = [RatingChange("placed", 2.0, 1.0, "loss")] + [
        RatingChange(name, 25.0, 3.0, "win" if name in b else "loss") for name in names[1:]
    ]
    store.finish_match("m1", "finished", "s", -8, "b", [(1, -8)], lambda _: changes, {}, now_ms=now)
    store.db.close()

    rows = json.loads(ladder("standings", "--json", *where).stdout)
    assert rows[0]["name"] == "placed"
    assert rows[0]["rating"] < 0
    assert rows[0]["provisional"] is False
    assert all(row["provisional"] for row in rows[1:])
    assert [row["rank"] for row in rows] == list(range(1, len(rows) + 1))
    assert 0 < rows[0]["stronger_than_next"] < 0.01  # mu 2 against mu 25
    assert rows[-1]["stronger_than_next"] is None
    assert {rows[-1]["name"], rows[-2]["name"]} == {"new1", "new2"}
    assert rows[-2]["stronger_than_next"] == 0.5
    text = ladder("standings", *where).stdout.splitlines()
    heading = next(n for n, line in enumerate(text) if line.strip().startswith("provisional"))
    placed = next(n for n, line in enumerate(text) if " placed " in line)
    newcomer = next(n for n, line in enumerate(text) if " new1 " in line)
    assert placed < heading < newcomer
    assert "> next" in text[0]
    assert "50%" in text[newcomer] or "50%" in text[newcomer - 1]


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_the_commands_the_banner_prints_work_as_printed(
    storage: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """``ladder serve`` prints how to register a bot and read the standings: run as printed
    (``oddtrick`` being this Python's), they find the ladder it serves, on PostgreSQL too."""
    from ladder_support import Serving, free_port

    options: tuple[str, ...] = ("--house-bots", "0")
    if storage == "postgresql":
        from postgres_support import fresh_database

        url = fresh_database(request.getfixturevalue("postgres_url"), "ladder_banner")
        options += ("--database", url)
    serving = Serving(tmp_path / "data", free_port(), options=options)
    try:
        register = serving.wait_for("register a bot:")[0].split(":", 1)[1]
        standings = serving.wait_for("see the standings:")[0].split(":", 1)[1]
    finally:
        serving.kill()
    if storage == "postgresql":
        assert "--database" in register
    words = shlex.split(register.replace("NAME", "carol"))
    assert words[:3] == ["oddtrick", "ladder", "register"]
    registered = subprocess.run([sys.executable, "-m", *words], capture_output=True, text=True)
    assert registered.returncode == 0, registered.stderr
    assert "registered carol" in registered.stdout
    read = subprocess.run([sys.executable, "-m", *shlex.split(standings)], capture_output=True, text=True)
    assert read.returncode == 0, read.stderr
    assert "carol" in read.stdout
