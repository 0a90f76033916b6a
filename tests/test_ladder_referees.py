"""A ladder on several referees: two ``ladder serve`` processes on one PostgreSQL database,
bots as real processes given both addresses, one referee killed with SIGKILL mid-run."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import queue
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from ladder_support import LADDER_BOTS, Serving, free_port, ladder_settings, rating_history_breaks, register

from oddtrick_referee.competitions.ladder.service import open_store
from oddtrick_referee.storage.ladder_store import LadderStore
from oddtrick_referee.storage.match_index import MatchStore, log_withheld

ENTRANTS = [f"e{number}" for number in range(1, 9)]
PATIENCE_S = 120.0


class BotWatch:
    """An ``oddtrick bot`` process whose every line is kept with the moment it came."""

    def __init__(self, servers: str, name: str, token: str) -> None:
        command = [sys.executable, "-m", "oddtrick", "bot", f"{LADDER_BOTS}:Heuristic", "--server", servers]
        command += ["--name", name, f"--token={token}", "--seats", "1"]
        self.name = name
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.said: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put((time.monotonic(), line))
        self.lines.put((time.monotonic(), ""))

    def wait_for(self, text: str) -> float:
        """When the bot next says ``text``."""
        while True:
            try:
                at, line = self.lines.get(timeout=PATIENCE_S)
            except queue.Empty:
                raise AssertionError(f"{self.name} never said {text!r}:\n{''.join(self.said)}") from None
            self.said.append(line)
            assert line, f"{self.name} exited ({self.process.poll()}) before {text!r}:\n{''.join(self.said)}"
            if text in line:
                return at

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()


def _matches(store: LadderStore) -> list[dict[str, object]]:
    with store.db.transaction() as cursor:
        return cursor.rows(
            "SELECT m.match_id, m.status, m.claimed_by, m.created_ms, m.ended_ms, m.tables, m.cause, e.name"
            " FROM ladder_matches m JOIN ladder_match_entrants e ON e.match_id = m.match_id"
        )


def _in_play_at(store: LadderStore, referee_id: str) -> set[str]:
    """The matches that referee has running, once it has one (the database is asked until
    then: nothing there can be waited on)."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        rows = _matches(store)
        found = {
            str(row["match_id"])
            for row in rows
            if (row["status"], row["claimed_by"]) == ("running", referee_id)
        }
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"no match in play at {referee_id} within {PATIENCE_S:.0f} s")


def _most_at_once(spans: list[tuple[int, int]]) -> int:
    """How many of these [start, end] spans overlap at most."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    most = now = 0
    for _, step in events:
        now += step
        most = max(most, now)
    return most


@pytest.mark.slow
def test_two_referees_share_one_ladder_and_its_bots_play_on_at_one_when_the_other_is_killed(
    tmp_path: Path, postgres_url: str
) -> None:
    from postgres_support import fresh_database

    database = fresh_database(postgres_url, "ladder_two_referees")
    tokens = register(ladder_settings(tmp_path / "register", database=database), *ENTRANTS)
    ports = {"a": free_port(), "b": free_port()}
    address = {key: f"127.0.0.1:{port}" for key, port in ports.items()}
    options = ("--database", database, "--house-bots", "0", "--match-deals", "2", "--grace", "5")

    def serving(key: str) -> Serving:
        return Serving(tmp_path / key, ports[key], options=options)

    ladders = {key: serving(key) for key in ports}
    for ladder in ladders.values():
        ladder.wait_for("ladder listening")
    # Every entrant holds one stream at each referee: a process that tries A first, and one
    # that tries B first. Both referees rate the same eight entrants at once.
    first_a = [BotWatch(f"{address['a']},{address['b']}", name, tokens[name]) for name in ENTRANTS]
    first_b = [BotWatch(f"{address['b']},{address['a']}", name, tokens[name]) for name in ENTRANTS]
    store = open_store(ladder_settings(tmp_path / "register", database=database))
    try:
        for bot in first_a:
            bot.wait_for(f"connected to {address['a']}")
        ladders["a"].wait_for("ladder match", count=3)
        ladders["b"].wait_for("ladder match", count=3)

        a_id = (tmp_path / "a" / "ladder-referee-id").read_text().strip()
        _in_play_at(store, a_id)  # mid-match, not in the moment between two of its matches
        ladders["a"].kill()
        killed_at = time.monotonic()
        running = _in_play_at(store, a_id)
        moved = []
        for bot in first_a:
            bot.wait_for(f"connected to {address['b']}")
            moved.append(bot.wait_for("seated at match") - killed_at)
        print(
            f"all 8 bots of the killed referee seated at the other {max(moved):.2f} s after the kill "
            f"(first {min(moved):.2f} s)"
        )
        for bot in first_a:
            bot.wait_for("over at this table")  # a match at the other referee played to its end
        ladders["b"].wait_for("ladder match", count=2)

        # The killed referee's match is aborted by the other's takeover or at its restart,
        # whichever comes first; its restart releases its logs.
        ladders["a"] = serving("a")
        ladders["a"].wait_for("ladder listening")
        for bot in first_a + first_b:
            bot.stop()
        ladders["b"].process.terminate()
        ladders["b"].reap()
        ladders["a"].process.terminate()
        ladders["a"].reap()
    finally:
        for bot in first_a + first_b:
            if bot.process.poll() is None:
                bot.stop()
        for ladder in ladders.values():
            if ladder.process.poll() is None:
                ladder.kill()

    try:  # closed whatever fails: a connection left open warns in whichever test collects it
        rows = _matches(store)
        status = {row["match_id"]: row["status"] for row in rows}
        assert running, "the killed referee had a match in play"
        assert all(status[match_id] == "aborted" for match_id in running)
        assert not {"running", "planned"} & set(status.values())
        assert rating_history_breaks(store) == []
        finished = [match_id for match_id, state in status.items() if state == "finished"]
        assert sum(entrant.matches for entrant in store.entrants()) == 8 * len(finished)
        _check_each_match_at_one_referee(tmp_path, rows, running)
        _check_no_entrant_beyond_its_streams(tmp_path)
    finally:
        store.db.close()


def _check_each_match_at_one_referee(
    tmp_path: Path, rows: list[dict[str, object]], running: set[str]
) -> None:
    """Every match's tables are in the index of the referee that claimed it, and only there,
    with their logs published; an aborted match's too, if it got as far as its tables (the
    killed referee's interrupted match: at its restart)."""
    ids = {key: (tmp_path / key / "ladder-referee-id").read_text().strip() for key in ("a", "b")}
    indexes = {ids[key]: MatchStore(tmp_path / key / "oddtrick.sqlite3") for key in ("a", "b")}
    for row in {str(row["match_id"]): row for row in rows}.values():
        claimer = str(row["claimed_by"])
        assert claimer in indexes, f"{row['match_id']} claimed by {claimer}"
        for referee_id, index in indexes.items():
            for table_id in json.loads(str(row["tables"])):
                found = index.get(table_id)
                said = f"{table_id} ({row['status']}{', interrupted' if row['match_id'] in running else ''})"
                if referee_id != claimer:
                    assert found is None, f"{said} played at both referees"
                elif row["status"] != "aborted":
                    assert found is not None, f"{said} missing from its referee's index"
                if found is not None:
                    assert not log_withheld(found), f"{said} still sealed"


def _check_no_entrant_beyond_its_streams(tmp_path: Path) -> None:
    """One stream at each referee: at most one table at once at A, at most two at B (one
    before the kill, two after, when its other stream moved there), and never more than two
    in all (the killed referee's interrupted tables never ended: they held no stream after
    the kill). Read from each referee's own index of the tables it played."""
    spans: dict[tuple[str, str], list[tuple[int, int]]] = collections.defaultdict(list)
    for key in ("a", "b"):
        with contextlib.closing(sqlite3.connect(tmp_path / key / "oddtrick.sqlite3")) as index:
            tables = index.execute(
                "SELECT started_at, finished_at, players FROM matches WHERE finished_at IS NOT NULL"
            ).fetchall()
        for started, finished, players in tables:
            for name in set(json.loads(players).values()):
                spans[(name, key)].append((started, finished))
                spans[(name, "both")].append((started, finished))
    assert {name for name, _ in spans} == set(ENTRANTS)
    for (name, where), found in spans.items():
        limit = {"a": 1, "b": 2, "both": 2}[where]
        assert _most_at_once(found) <= limit, f"{name} at more tables at once at {where} than its streams"


TAKEN_OVER = "its referee stopped answering"
BOUND_S = 30.0
"""A silent referee's match is recorded aborted by a live one within this (docs/ladder.md:
four missed 3 s beats, then at most one more beat of the live one)."""


class TwoReferees:
    """Two ``ladder serve`` processes on one fresh PostgreSQL database, with eight entrants
    each holding one stream at both (one bot process listing A first, one B first)."""

    def __init__(self, tmp_path: Path, postgres_url: str, name: str) -> None:
        from postgres_support import fresh_database

        self.tmp_path = tmp_path
        database = fresh_database(postgres_url, name)
        tokens = register(ladder_settings(tmp_path / "register", database=database), *ENTRANTS)
        self.ports = {"a": free_port(), "b": free_port()}
        self.address = {key: f"127.0.0.1:{port}" for key, port in self.ports.items()}
        self.options = ("--database", database, "--house-bots", "0", "--match-deals", "2", "--grace", "5")
        self.ladders = {
            key: Serving(tmp_path / key, self.ports[key], options=self.options) for key in self.ports
        }
        for ladder in self.ladders.values():
            ladder.wait_for("ladder listening")
        both = {key: f"{self.address[key]},{self.address['b' if key == 'a' else 'a']}" for key in self.ports}
        self.first_a = [BotWatch(both["a"], name, tokens[name]) for name in ENTRANTS]
        self.first_b = [BotWatch(both["b"], name, tokens[name]) for name in ENTRANTS]
        self.store = open_store(ladder_settings(tmp_path / "register", database=database))
        self.a_id = (tmp_path / "a" / "ladder-referee-id").read_text().strip()

    def a_mid_match(self) -> set[str]:
        """Once every bot is connected and both referees play, A's match in play."""
        for bot in self.first_a:
            bot.wait_for(f"connected to {self.address['a']}")
        self.ladders["a"].wait_for("ladder match", count=2)
        self.ladders["b"].wait_for("ladder match", count=2)
        return _in_play_at(self.store, self.a_id)

    def taken_over_by_b(self, silent_since: float) -> float:
        """Seconds from ``silent_since`` until B says it recorded A's match aborted (B says
        other things meanwhile: the wait has a deadline of its own, twice the bound)."""
        b = self.ladders["b"]
        deadline = silent_since + 2 * BOUND_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = b.lines.get(timeout=left)
            except queue.Empty:
                break
            b.said.append(line)
            assert line, f"the other referee exited (status {b.process.poll()}):\n{''.join(b.said)}"
            if TAKEN_OVER in line:
                return time.monotonic() - silent_since
        raise AssertionError(f"the other referee did not take over within {2 * BOUND_S:.0f} s")

    def close(self) -> None:
        for bot in self.first_a + self.first_b:
            if bot.process.poll() is None:
                bot.stop()
        for ladder in self.ladders.values():
            if ladder.process.poll() is None:
                os.killpg(ladder.process.pid, signal.SIGCONT)
                ladder.process.terminate()
                ladder.reap()

    def check_unrated(self, match_ids: set[str]) -> None:
        """These matches are recorded aborted by the heartbeat's takeover and moved no rating;
        every other rating change is whole; no match is left running."""
        rows = _matches(self.store)
        status = {row["match_id"]: (row["status"], row["cause"]) for row in rows}
        assert all(status[match_id] == ("aborted", TAKEN_OVER) for match_id in match_ids), status
        assert not {"running", "planned"} & {state for state, _ in status.values()}
        with self.store.db.transaction() as cursor:
            marks = ", ".join("?" for _ in match_ids)
            moved = cursor.rows(
                f"SELECT match_id FROM ladder_ratings WHERE match_id IN ({marks})", sorted(match_ids)
            )
        assert moved == []
        assert rating_history_breaks(self.store) == []
        finished = [match_id for match_id, (state, _) in status.items() if state == "finished"]
        assert sum(entrant.matches for entrant in self.store.entrants()) == 8 * len(finished)


@pytest.mark.slow
def test_a_referee_killed_for_good_has_its_match_aborted_by_the_other_and_its_bots_play_on(
    tmp_path: Path, postgres_url: str
) -> None:
    """SIGKILL and its data folder deleted: it never comes back to abort its own match."""
    two = TwoReferees(tmp_path, postgres_url, "ladder_killed_for_good")
    try:
        running = two.a_mid_match()
        two.ladders["a"].kill()
        killed_at = time.monotonic()
        shutil.rmtree(tmp_path / "a")
        took = two.taken_over_by_b(killed_at)
        print(f"the killed referee's match was recorded aborted by the other {took:.2f} s after the kill")
        assert took < BOUND_S
        assert {str(row["match_id"]) for row in _matches(two.store) if row["status"] == "running"}.isdisjoint(
            running
        )
        for bot in two.first_a:
            bot.wait_for(f"connected to {two.address['b']}")
            bot.wait_for("over at this table")  # a match at the other referee played to its end
        two.ladders["b"].wait_for("over 2 deals")  # B records matches after the takeover
        two.close()
        two.check_unrated(running)
    finally:
        two.close()
        two.store.db.close()


@pytest.mark.slow
def test_a_referee_stopped_past_its_expiry_finds_its_match_aborted_and_its_late_result_refused(
    tmp_path: Path, postgres_url: str
) -> None:
    """SIGSTOP until the other referee has recorded A's match aborted, then SIGCONT: A's
    result for it is refused, never rated, and its tables' logs are released."""
    two = TwoReferees(tmp_path, postgres_url, "ladder_stopped_referee")
    try:
        [match_id] = two.a_mid_match()
        os.killpg(two.ladders["a"].process.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        took = two.taken_over_by_b(stopped_at)
        print(f"the stopped referee's match was recorded aborted by the other {took:.2f} s after SIGSTOP")
        os.killpg(two.ladders["a"].process.pid, signal.SIGCONT)
        said = two.ladders["a"].wait_for(f"ladder match {match_id}")[0]
        assert "its result was refused, not rated" in said, said
        two.close()
        two.check_unrated({match_id})
        index = MatchStore(tmp_path / "a" / "oddtrick.sqlite3")
        for number in (1, 2):
            found = index.get(f"{match_id}-t{number}")
            assert found is not None, f"{match_id}-t{number} missing from the stopped referee's index"
            assert not log_withheld(found), f"{match_id}-t{number} still sealed"
    finally:
        two.close()
        two.store.db.close()
