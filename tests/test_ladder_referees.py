"""A ladder on several referees: two ``ladder serve`` processes on one PostgreSQL database,
bots as real processes given both addresses, one referee killed with SIGKILL mid-run."""

from __future__ import annotations

import collections
import contextlib
import json
import queue
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

        # The killed referee's match is aborted when it starts again, as a single ladder's is.
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
