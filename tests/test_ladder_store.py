"""The ladder's storage on SQLite and on a real PostgreSQL server, the same tests on both."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from ladder_support import rating_history_breaks

from oddtrick_referee.storage.database import (
    Cursor,
    Database,
    PostgresDatabase,
    SQLiteDatabase,
    open_database,
)
from oddtrick_referee.storage.ladder_store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    EntrantRecord,
    HouseBotTaken,
    LadderError,
    LadderStore,
    RatingChange,
)
from oddtrick_referee.token_scheme import new_token

LINEUP = {
    "tables": [
        {"N": "a1", "S": "a2", "E": "b1", "W": "b2"},
        {"N": "b3", "S": "b4", "E": "a3", "W": "a4"},
    ],
    "teams": [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]],
}

RACE = Path(__file__).with_name("ladder_rating_race.py")
RACE_NAMES = ("a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ladder.sqlite3'}"
    from postgres_support import fresh_database

    url: str = request.getfixturevalue("postgres_url")
    return fresh_database(url, f"ladder_{request.node.name.split('[')[0][-40:]}".lower())


@pytest.fixture
def store(database_url: str, tmp_path: Path) -> Iterator[LadderStore]:
    database = open_database(database_url, tmp_path, "unused.sqlite3")
    yield LadderStore(database, 25.0, 25.0 / 3)
    database.close()


def test_a_token_is_shown_once_stored_only_as_a_hash_and_checked_exactly(store: LadderStore) -> None:
    token = store.register("alice", now_ms=1)
    assert store.verify("alice", token)
    assert not store.verify("alice", token + "x")
    assert not store.verify("alice", "")
    assert not store.verify("bob", token)
    with store.db.transaction() as cursor:
        stored = cursor.rows("SELECT * FROM ladder_entrants WHERE name = 'alice'")[0]
    assert token not in {str(value) for value in stored.values()}


class CountingDatabase:
    """The store's real database, counting its transactions."""

    def __init__(self, database: Database) -> None:
        self.inner = database
        self.url = database.url
        self.dialect = database.dialect
        self.transactions = 0

    def transaction(self) -> contextlib.AbstractContextManager[Cursor]:
        self.transactions += 1
        return self.inner.transaction()

    def close(self) -> None:
        self.inner.close()


class ReadDuringVerify(CountingDatabase):
    """Runs ``during`` right after the next transaction, as another thread's read of the
    entrants (the ladder's refresh) may overlap a Hello's verify."""

    during: Callable[[], object] | None = None

    def transaction(self) -> contextlib.AbstractContextManager[Cursor]:
        inner = super().transaction()
        during, self.during = self.during, None

        @contextlib.contextmanager
        def then() -> Iterator[Cursor]:
            with inner as cursor:
                yield cursor
            if during is not None:
                during()

        return then()


def test_a_token_verified_while_the_entrants_are_read_is_remembered_if_the_read_vouches_for_it(
    database_url: str, tmp_path: Path
) -> None:
    """The ladder reads its entrants every few seconds; a Hello verified meanwhile must
    still be known from memory next time (else a known entrant's next Hello goes back to
    the database, and counts against the budget of bad Hellos), unless the token changed."""
    database = ReadDuringVerify(open_database(database_url, tmp_path, "x.sqlite3"))
    store = LadderStore(database, 25.0, 8.0)
    elsewhere = LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0)  # the CLI
    alice, bob = store.register("alice", now_ms=1), store.register("bob", now_ms=1)
    store.entrants()
    database.during = store.entrants  # the same tokens: the read vouches for alice's
    assert store.verify("alice", alice)
    assert store.verified("alice", alice), "a token verified during a read was forgotten"

    def rotated_then_read() -> None:
        elsewhere.rotate_token("bob")
        store.entrants()

    database.during = rotated_then_read  # bob's token replaced while it was being verified
    assert store.verify("bob", bob)  # what the database said when it was read
    assert store.verified("bob", bob) is None
    elsewhere.db.close()
    store.db.close()


def test_a_verified_token_is_remembered_until_it_is_rotated_or_retired(
    database_url: str, tmp_path: Path
) -> None:
    counting = CountingDatabase(open_database(database_url, tmp_path, "x.sqlite3"))
    store = LadderStore(counting, 25.0, 8.0)
    elsewhere = LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0)  # the CLI
    alice, bob = store.register("alice", now_ms=1), store.register("bob", now_ms=1)
    assert store.verified("alice", alice) is None
    before = counting.transactions
    token_id = store.verify("alice", alice)
    assert token_id
    assert store.verify("alice", alice) == store.verified("alice", alice) == token_id
    assert counting.transactions == before + 1, "a known token cost a second transaction"
    for _ in range(3):  # a wrong token is never remembered
        assert store.verify("alice", alice + "x") is None
    assert store.verified("alice", alice + "x") is None
    assert counting.transactions == before + 4

    # Rotated by this store: forgotten at once.
    new = store.rotate_token("alice")
    assert store.verified("alice", alice) is None
    assert store.verify("alice", alice) is None
    # Rotated or retired by another process: forgotten at the next read of the entrants.
    assert store.verify("alice", new)
    assert store.verify("bob", bob)
    newer = elsewhere.rotate_token("alice")
    elsewhere.retire("bob", now_ms=2)
    store.entrants()
    assert store.verified("alice", new) is None
    assert store.verified("bob", bob) is None
    assert store.verify("alice", new) is None
    assert store.verify("bob", bob) is None
    assert store.verify("alice", newer)
    store.retire("alice", now_ms=3)
    assert store.verify("alice", newer) is None
    elsewhere.db.close()
    store.db.close()


def test_rotating_a_token_refuses_the_old_one_and_retiring_refuses_both(store: LadderStore) -> None:
    old = store.register("alice", now_ms=1)
    new = store.rotate_token("alice")
    assert not store.verify("alice", old)
    assert store.verify("alice", new)
    store.retire("alice", now_ms=2)
    assert not store.verify("alice", new)
    with pytest.raises(LadderError, match="no active entrant"):
        store.rotate_token("alice")
    with pytest.raises(LadderError, match="retired"):
        store.register("alice", now_ms=3)
    assert [e.name for e in store.entrants()] == []
    assert [e.name for e in store.entrants(include_retired=True)] == ["alice"]


def test_a_name_a_bot_could_not_say_in_its_hello_is_refused(store: LadderStore) -> None:
    for bad in ("", "a b", "x" * 65, "bob<script>", "slot~0", "ünï"):
        with pytest.raises(LadderError, match="cannot be a bot name"):
            store.register(bad, now_ms=1)
    assert store.entrants() == []


def test_names_differing_only_in_case_and_house_names_are_refused(store: LadderStore) -> None:
    store.register("alice", now_ms=1)
    with pytest.raises(LadderError, match="only in case"):
        store.register("Alice", now_ms=2)
    with pytest.raises(LadderError, match="the ladder's own bots"):
        store.register("house-heuristic-9", now_ms=2)
    assert [e.name for e in store.entrants()] == ["alice"]


def test_no_token_starts_with_a_dash_which_a_command_line_would_take_for_an_option() -> None:
    """One URL-safe token in 64 used to start with '-': `oddtrick bot … --token -x…` then
    stopped at once with a usage error (the ladder tests' rare failure)."""
    tokens = [new_token() for _ in range(2000)]
    assert not [token for token in tokens if token.startswith("-")]
    assert len(set(tokens)) == len(tokens)
    assert all(len(token) == 43 for token in tokens)


def test_registering_a_name_twice_is_refused_and_changes_nothing(store: LadderStore) -> None:
    token = store.register("alice", now_ms=1)
    with pytest.raises(LadderError, match="already registered"):
        store.register("alice", now_ms=2)
    assert store.verify("alice", token)


def test_a_finished_match_moves_ratings_records_and_history_in_one_transaction(store: LadderStore) -> None:
    for name in ("a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"):
        store.register(name, now_ms=1)
    store.plan_match("m1", "c1", LINEUP, {"game": "contract"}, now_ms=10)
    assert store.claim_match("m1", "referee-1")
    seen: dict[str, EntrantRecord] = {}

    def rate(current: dict[str, EntrantRecord]) -> list[RatingChange]:
        seen.update(current)
        return [RatingChange(n, 30.0, 7.0, "win", 1) for n in ("a1", "a2", "a3", "a4")] + [
            RatingChange(n, 20.0, 7.0, "loss") for n in ("b1", "b2", "b3", "b4")
        ]

    store.finish_match("m1", "finished", "seed", 12, "a", [(1, 12)], rate, {}, now_ms=20)
    assert sorted(seen) == sorted(LINEUP["teams"][0] + LINEUP["teams"][1])
    a1 = store.entrant("a1")
    assert a1 is not None
    assert (a1.mu, a1.matches, a1.wins, a1.faults, a1.last_played_ms) == (30.0, 1, 1, 1, 20)
    b1 = store.entrant("b1")
    assert b1 is not None
    assert (b1.mu, b1.losses) == (20.0, 1)
    [match] = store.matches("a1")
    assert (match.status, match.score_a, match.seed, match.deals) == ("finished", 12, "seed", [[1, 12]])
    assert store.matches("nobody") == []
    assert [point["mu"] for point in store.rating_history("b4")] == [20.0]


def test_a_failing_rating_leaves_the_match_and_every_entrant_as_they_were(store: LadderStore) -> None:
    for name in ("a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"):
        store.register(name, now_ms=1)
    store.plan_match("m1", "c1", LINEUP, {}, now_ms=10)
    store.claim_match("m1", "r")

    def broken(current: dict[str, EntrantRecord]) -> list[RatingChange]:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.finish_match("m1", "finished", "seed", 1, "a", [(1, 1)], broken, {"a1": 3}, now_ms=20)
    [match] = store.matches()
    assert match.status == "running"
    assert all(e.matches == 0 and e.faults == 0 for e in store.entrants())


def test_unfinished_matches_are_aborted_at_start_and_never_rated(store: LadderStore) -> None:
    store.plan_match("m1", "c1", LINEUP, {}, now_ms=10)
    store.claim_match("m1", "r")
    store.plan_match("m2", "c2", LINEUP, {}, now_ms=11)
    assert sorted(store.abort_unfinished("the ladder stopped", now_ms=12)) == ["m1", "m2"]
    assert {(m.status, m.cause) for m in store.matches()} == {("aborted", "the ladder stopped")}
    assert not store.claim_match("m2", "r")


def test_a_restarting_referee_aborts_only_its_own_unfinished_matches(store: LadderStore) -> None:
    """Two referees share the database: one restarting leaves the other's match running."""
    store.open_match("mine", "c1", LINEUP, {}, ["mine-t1", "mine-t2"], "referee-a", now_ms=10)
    store.open_match("theirs", "c2", LINEUP, {}, ["theirs-t1", "theirs-t2"], "referee-b", now_ms=11)
    assert store.abort_unfinished("restarted", now_ms=12, referee_id="referee-a") == ["mine"]
    assert {m.match_id: m.status for m in store.matches()} == {"mine": "aborted", "theirs": "running"}
    [theirs] = store.matches(statuses=("running",))
    assert theirs.tables == ["theirs-t1", "theirs-t2"]


def test_the_name_filter_is_exact_and_pages_after_filtering(store: LadderStore) -> None:
    """``_`` and ``%`` are no wildcards, case counts, and a page holds only the entrant's
    matches however many others were played in between."""

    def lineup(*names: str) -> dict[str, object]:
        table = dict(zip("NSEW", names, strict=True))
        return {"tables": [table, table], "teams": [list(names[:2]), list(names[2:])]}

    number = 0
    for players in (["a%c", "x1", "x2", "x3"], ["ab-c", "x1", "x2", "x3"], ["abxc", "AB-C", "x2", "x3"]):
        for _ in range(4):
            number += 1
            store.plan_match(f"m{number:02}", f"c{number}", lineup(*players), {}, now_ms=number)
    for _ in range(5):  # played after the rest, by others only
        number += 1
        store.plan_match(f"m{number:02}", f"c{number}", lineup("y1", "y2", "y3", "y4"), {}, now_ms=number)

    assert store.matches("ab_c") == []
    assert store.matches("ab%") == []
    assert store.matches("%") == []
    assert [m.match_id for m in store.matches("ab-c", limit=3)] == ["m08", "m07", "m06"]
    assert [m.match_id for m in store.matches("ab-c", limit=3, offset=3)] == ["m05"]
    assert [m.match_id for m in store.matches("AB-C")] == ["m12", "m11", "m10", "m09"]
    assert [m.match_id for m in store.matches("a%c", limit=2)] == ["m04", "m03"]
    assert [m.match_id for m in store.matches("x1", limit=2, offset=6)] == ["m02", "m01"]


def test_a_house_bot_belongs_to_the_referee_that_first_runs_it(store: LadderStore) -> None:
    first = store.ensure_house("house-h-1", 1, "referee-a")
    restarted = store.ensure_house("house-h-1", 2, "referee-a")  # its own restart: a new token
    assert store.verify("house-h-1", restarted)
    assert not store.verify("house-h-1", first)
    with pytest.raises(HouseBotTaken, match="'referee-a'"):
        store.ensure_house("house-h-1", 3, "referee-b")
    assert store.verify("house-h-1", restarted), "another referee's start replaced the token"
    store.register("alice", now_ms=1)
    with pytest.raises(LadderError, match="not a house bot"):
        store.ensure_house("alice", 4, "referee-a")
    with pytest.raises(LadderError, match="not a house bot"):
        store.ensure_house("HOUSE-H-1", 4, "referee-c")
    # A house bot from before referees were recorded goes to the next referee that asks.
    with store.db.transaction() as cursor:
        cursor.execute("UPDATE ladder_entrants SET house_owner = NULL WHERE name = 'house-h-1'")
    taken = store.ensure_house("house-h-1", 5, "referee-b")
    with pytest.raises(HouseBotTaken, match="'referee-b'"):
        store.ensure_house("house-h-1", 6, "referee-a")
    assert store.verify("house-h-1", taken)
    assert [(e.name, e.house) for e in store.entrants()] == [("alice", False), ("house-h-1", True)]


def test_a_seed_commitment_is_never_used_twice(store: LadderStore) -> None:
    store.plan_match("m1", "same", LINEUP, {}, now_ms=10)
    with pytest.raises(Exception, match=r"(?i)unique"):
        store.plan_match("m2", "same", LINEUP, {}, now_ms=11)


def test_two_referee_processes_rating_the_same_entrants_at_once_lose_no_update(
    database_url: str, tmp_path: Path, store: LadderStore
) -> None:
    """Two processes, as two referees on one database, each finish 15 matches of the same
    eight entrants, each match moving every rating one point up from what it read: unless
    every read-modify-write waited for the other's, some points are lost."""
    for name in RACE_NAMES:
        store.register(name, now_ms=1)
    racers = [
        subprocess.Popen(
            [sys.executable, str(RACE), database_url, f"referee-{index}", "15"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]
    for racer in racers:
        out, err = racer.communicate(timeout=300)
        assert racer.returncode == 0, err
        assert out.strip() == "done"
    assert rating_history_breaks(store) == []
    for entrant in store.entrants():
        assert (entrant.mu, entrant.matches) == (25.0 + 30, 30), entrant.name
    assert len(store.finished_matches()) == 30


def test_a_match_is_recorded_once_and_one_aborted_meanwhile_is_never_rated(store: LadderStore) -> None:
    for name in RACE_NAMES:
        store.register(name, now_ms=1)

    def rate(current: dict[str, EntrantRecord]) -> list[RatingChange]:
        return [RatingChange(name, 26.0, 8.0, "draw") for name in current]

    store.open_match("m1", "c1", LINEUP, {}, [], "referee-a", now_ms=2)
    store.finish_match("m1", "finished", "s", 0, "draw", [(1, 0)], rate, {}, now_ms=3)
    with pytest.raises(LadderError, match="m1 is not running"):
        store.finish_match("m1", "finished", "s", 0, "draw", [(1, 0)], rate, {}, now_ms=4)
    store.open_match("m2", "c2", LINEUP, {}, [], "referee-a", now_ms=5)
    store.abort_match("m2", "the referee stopped", now_ms=6)
    with pytest.raises(LadderError, match="m2 is not running"):
        store.finish_match("m2", "finished", "s", 0, "draw", [(1, 0)], rate, {}, now_ms=7)
    assert rating_history_breaks(store) == []
    assert all(entrant.matches == 1 for entrant in store.entrants())


def _silence(store: LadderStore, referee_id: str, for_ms: int) -> None:
    """Move a referee's last heartbeat back, as if it had not beaten for ``for_ms``."""
    with store.db.transaction() as cursor:
        cursor.execute(
            "UPDATE ladder_referees SET seen_ms = seen_ms - ? WHERE referee = ?", (for_ms, referee_id)
        )


def test_a_silent_referees_running_match_is_aborted_by_a_live_one_and_its_late_result_refused(
    store: LadderStore,
) -> None:
    for name in RACE_NAMES:
        store.register(name, now_ms=1)

    def rate(current: dict[str, EntrantRecord]) -> list[RatingChange]:
        return [RatingChange(name, 26.0, 8.0, "draw") for name in current]

    store.beat("referee-a", "run-a", "host-a", 1)
    store.beat("referee-b", "run-b", "host-b", 2)
    store.open_match("mine", "c1", LINEUP, {}, [], "referee-a", now_ms=2)
    store.open_match("theirs", "c2", LINEUP, {}, [], "referee-b", now_ms=3)
    store.open_match("older", "c3", LINEUP, {}, [], "an-older-oddtrick", now_ms=4)
    assert store.abort_abandoned("referee-a", 60_000, "its referee stopped answering", now_ms=5) == []
    assert {row["referee"]: row["silent_ms"] < 60_000 for row in store.referees()} == {
        "referee-a": True,
        "referee-b": True,
    }

    _silence(store, "referee-b", 120_000)
    _silence(store, "referee-a", 120_000)  # its own matches are never its to take over
    found = store.abort_abandoned("referee-a", 60_000, "its referee stopped answering", now_ms=6)
    assert found == [("theirs", "referee-b")]
    assert store.abort_abandoned("referee-a", 60_000, "its referee stopped answering", now_ms=7) == []
    status = {m.match_id: (m.status, m.cause, m.ended_ms) for m in store.matches()}
    assert status == {
        "mine": ("running", None, None),
        "theirs": ("aborted", "its referee stopped answering", 6),
        "older": ("running", None, None),  # a referee that never beat may be alive
    }
    # The silent referee comes back: its match stays aborted and its result is refused.
    store.beat("referee-b", "run-b", "host-b", 2)
    with pytest.raises(LadderError, match="theirs is not running"):
        store.finish_match("theirs", "finished", "s", 0, "draw", [(1, 0)], rate, {}, now_ms=8)
    assert store.over(["theirs", "mine"]) == {"theirs"}
    assert store.rating_history("a1") == []
    assert all(entrant.matches == 0 for entrant in store.entrants())


def test_two_live_referees_racing_to_take_over_a_silent_ones_matches_record_each_once(
    database_url: str, tmp_path: Path
) -> None:
    """Each racer has its own connection, as two referee processes would."""
    silent = LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0)
    silent.beat("referee-dead", "run", "host", 1)
    taken = [f"m{number}" for number in range(6)]
    for number, match_id in enumerate(taken):
        silent.open_match(match_id, f"c{number}", LINEUP, {}, [], "referee-dead", now_ms=number)
    _silence(silent, "referee-dead", 120_000)
    racers = [LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0) for _ in range(2)]
    start = threading.Barrier(len(racers))
    recorded: list[list[tuple[str, str]]] = [[] for _ in racers]

    def race(index: int) -> None:
        start.wait(timeout=60)
        recorded[index] = racers[index].abort_abandoned(f"referee-{index}", 60_000, "silent", now_ms=99)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [match_id for found in recorded for match_id, _ in found]
    assert sorted(every) == taken  # each once, by one racer or the other
    assert {(m.status, m.cause) for m in silent.matches()} == {("aborted", "silent")}
    for racer in [silent, *racers]:
        racer.db.close()


def test_two_referees_racing_to_claim_one_match_start_it_once(database_url: str, tmp_path: Path) -> None:
    """Each racer has its own connection, as two referee processes would."""
    first = LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0)
    first.plan_match("contested", "c", LINEUP, {}, now_ms=1)
    racers = [LadderStore(open_database(database_url, tmp_path, "x.sqlite3"), 25.0, 8.0) for _ in range(4)]
    start = threading.Barrier(len(racers))
    won: list[str] = []

    def race(index: int) -> None:
        start.wait(timeout=60)
        if racers[index].claim_match("contested", f"referee-{index}"):
            won.append(f"referee-{index}")

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1
    with first.db.transaction() as cursor:
        [row] = cursor.rows("SELECT status, claimed_by FROM ladder_matches")
    assert row == {"status": "running", "claimed_by": won[0]}
    for racer in [first, *racers]:
        racer.db.close()


def test_a_database_made_by_the_first_schema_version_opens_migrated_with_its_data(
    database_url: str, tmp_path: Path
) -> None:
    old = open_database(database_url, tmp_path, "x.sqlite3")
    with old.transaction() as cursor:
        cursor.execute("CREATE TABLE ladder_schema (version INTEGER NOT NULL)")
        cursor.execute("INSERT INTO ladder_schema (version) VALUES (1)")
        for statement in MIGRATIONS[0]:
            assert isinstance(statement, str)
            cursor.execute(statement)
        cursor.execute(
            "INSERT INTO ladder_entrants (name, token_salt, token_hash, registered_ms, mu, sigma, matches)"
            " VALUES ('veteran', 's', 'h', 1, 31.5, 2.5, 40)"
        )
        cursor.execute(
            "INSERT INTO ladder_matches (match_id, status, created_ms, seed_commitment, lineup, config)"
            " VALUES ('old', 'finished', 1, 'c', ?, '{}')",
            (json.dumps(LINEUP),),
        )
    old.close()
    database = open_database(database_url, tmp_path, "x.sqlite3")
    store = LadderStore(database, 25.0, 8.0)
    assert store.migrated_from == 1
    veteran = store.entrant("veteran")
    assert veteran is not None
    assert (veteran.mu, veteran.matches, veteran.faults, veteran.forfeits) == (31.5, 40, 0, 0)
    # The matches it already held are found by the name filter of the new schema.
    assert [m.match_id for m in store.matches("b3")] == ["old"]
    store.beat("referee-a", "run", "host", 1)  # and its referees beat
    assert [row["referee"] for row in store.referees()] == ["referee-a"]
    with database.transaction() as cursor:
        assert cursor.rows("SELECT version FROM ladder_schema") == [{"version": SCHEMA_VERSION}]
    database.close()


def test_a_database_newer_than_the_code_is_refused(database_url: str, tmp_path: Path) -> None:
    database = open_database(database_url, tmp_path, "x.sqlite3")
    LadderStore(database, 25.0, 8.0)
    with database.transaction() as cursor:
        cursor.execute("UPDATE ladder_schema SET version = ?", (SCHEMA_VERSION + 1,))
    with pytest.raises(LadderError, match="upgrade oddtrick"):
        LadderStore(database, 25.0, 8.0)
    database.close()


def test_the_database_url_picks_the_back_end_and_hides_the_password(tmp_path: Path) -> None:
    sqlite: Database = open_database(None, tmp_path, "ladder.sqlite3")
    assert isinstance(sqlite, SQLiteDatabase)
    assert sqlite.url.endswith("ladder.sqlite3")
    sqlite.close()
    with pytest.raises(Exception, match="--database must be"):
        open_database("mysql://x", tmp_path, "ladder.sqlite3")
    with pytest.raises(Exception, match=r"postgresql://u:\*\*\*@127.0.0.1:1/db") as failure:
        PostgresDatabase("postgresql://u:secret@127.0.0.1:1/db")
    assert "secret" not in str(failure.value)
