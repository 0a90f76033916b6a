"""The referee's SQLite file: an index of every match and where its log is.

SQLite is the embedded default: one file, no server. Writes happen when a
match starts and when it ends, in a worker thread so the tables never wait
on the disk. Each call opens its own connection, so the gRPC thread can read
while trio writes.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Any

from oddtrick_referee.storage.sqlite import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    match_id     TEXT PRIMARY KEY,
    status       TEXT NOT NULL CHECK (status IN ('running', 'sealed', 'finished', 'aborted')),
    started_at   INTEGER NOT NULL,
    finished_at  INTEGER,
    config       TEXT NOT NULL,
    players      TEXT NOT NULL,
    result       TEXT,
    log_path     TEXT NOT NULL,
    details      TEXT
);
CREATE INDEX IF NOT EXISTS matches_by_start ON matches (started_at);
"""


_PLAY_SUFFIX = re.compile(r"~[0-9]+")


def bot_name(identity: str) -> str:
    """The bot's name in a play identity: a tournament entry plays the two tables of a
    duplicate set as ``NAME~0`` and ``NAME~1`` (one token each), which is the name a person
    knows it by with the table's number added; any other identity is the bot's name itself."""
    stem, mark, number = identity.rpartition("~")
    if mark and stem and _PLAY_SUFFIX.fullmatch(mark + number):
        return stem
    return identity


_PLAYED_BY = """EXISTS (SELECT 1 FROM json_each(matches.players) AS p WHERE lower(p.value) = lower(?)
    OR (length(p.value) > length(?) + 1 AND substr(lower(p.value), 1, length(?) + 1) = lower(?) || '~'
        AND substr(p.value, length(?) + 2) NOT GLOB '*[^0-9]*'))"""
"""A match one of whose players is the bot (the parameter, five times), in any case, under its
own name or as one of its tournament plays (``NAME~0``): SQL's form of :func:`bot_name`."""


_CATEGORY = """CASE
    WHEN status IN ('finished', 'aborted') THEN 'finished'
    WHEN status = 'sealed' OR COALESCE(json_extract(details, '$.sealed'), 0) THEN 'sealed'
    ELSE 'in_progress' END"""
"""What listings call a match, from its row: a sealed play is sealed from its start."""


def stored_log_path(data_dir: Path, log_path: Path) -> str:
    """How the index names a log: relative to the data folder it lies in (``logs/ID.jsonl``),
    so that the folder reads the same from any directory, and still does once moved; a log
    outside it (none is written there) by its absolute path."""
    try:
        return log_path.resolve().relative_to(data_dir.resolve()).as_posix()
    except ValueError:
        return str(log_path.resolve())


def log_file(data_dir: Path, stored: str) -> Path:
    """The file of a log as the index names it: relative to the data folder.

    An index written by an older referee named its logs relative to the directory that
    referee ran in (``oddtrick-data/logs/ID.jsonl``), or absolutely; a log not found there
    is looked for by its file name in the data folder's ``logs``, where every log is
    written. When neither exists, that is the file returned: where the log belongs.
    """
    path = Path(stored)
    given = path if path.is_absolute() else data_dir / path
    if given.exists():
        return given
    return data_dir / "logs" / path.name


class MatchStore(Store):
    """The index of matches. The rows it returns name each log by the file it is
    (:func:`log_file`), whatever directory the index is read from."""

    schema = _SCHEMA

    def __init__(self, path: Path, keep_connections: bool = False) -> None:
        super().__init__(path, keep_connections)
        self.data_dir = path.parent
        """The data folder: the index lies in it, beside ``logs``."""
        with self._lock, self._connect() as db:
            columns = {row["name"] for row in db.execute("PRAGMA table_info(matches)")}
            if "details" not in columns:  # a file from before the column was added
                db.execute("ALTER TABLE matches ADD COLUMN details TEXT")

    def abort_unfinished(self) -> int:
        """Mark the matches an earlier run left running (it stopped or crashed) as aborted.

        Only the one referee that owns the data directory may call this, at start.
        """
        with self._lock, self._connect() as db:
            return db.execute("UPDATE matches SET status = 'aborted' WHERE status = 'running'").rowcount

    def match_started(
        self,
        match_id: str,
        started_at_ms: int,
        config: dict[str, Any],
        players: dict[str, str],
        log_path: Path,
        details: dict[str, Any],
    ) -> None:
        """``details``: table_id, rules, seed_commitment, sealed (what listings show)."""
        with self._lock, self._connect() as db:
            db.execute(
                "INSERT INTO matches (match_id, status, started_at, config, players, log_path, details) "
                "VALUES (?, 'running', ?, ?, ?, ?, ?)",
                (
                    match_id,
                    started_at_ms,
                    json.dumps(config),
                    json.dumps(players),
                    stored_log_path(self.data_dir, log_path),
                    json.dumps(details),
                ),
            )

    def match_ended(self, match_id: str, finished_at_ms: int, status: str, result: dict[str, Any]) -> None:
        with self._lock, self._connect() as db:
            db.execute(
                "UPDATE matches SET status = ?, finished_at = ?, result = ? WHERE match_id = ?",
                (status, finished_at_ms, json.dumps(result), match_id),
            )

    def release_set(self, set_id: str) -> int:
        """Publish every play of a duplicate set once the whole set is decided: finished
        plays become 'finished', and the logs of plays an earlier run left aborted are
        served too (``details.released``). Idempotent; returns how many rows it touched.

        The sealing state lives here, in the file, so a set decided across a crash and a
        resume is released like any other.
        """
        with self._lock, self._connect() as db:
            return db.execute(
                "UPDATE matches SET status = CASE status WHEN 'sealed' THEN 'finished' ELSE status END, "
                "details = json_set(details, '$.released', json('true')) "
                "WHERE json_extract(details, '$.set_id') = ? AND status != 'running' "
                "AND NOT COALESCE(json_extract(details, '$.released'), 0)",
                (set_id,),
            ).rowcount

    def withheld_sets(self) -> set[str]:
        """The duplicate sets with a play whose log is still withheld (not yet released):
        what a competition checks at start against its own records, so that a set decided
        just before a crash (its release lost) is published then."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT DISTINCT json_extract(details, '$.set_id') AS set_id FROM matches "
                "WHERE status != 'running' AND json_extract(details, '$.set_id') IS NOT NULL "
                "AND NOT COALESCE(json_extract(details, '$.released'), 0)"
            ).fetchall()
        return {str(row["set_id"]) for row in rows}

    def played_run(self, run_id: str) -> dict[str, Any] | None:
        """The match that played ``run_id`` to its end (sealed or finished), if any: a play
        finished but not yet recorded by its tournament when the referee stopped."""
        with self._connect() as db:
            row = db.execute(
                "SELECT * FROM matches WHERE json_extract(details, '$.run_id') = ? "
                "AND status IN ('sealed', 'finished') ORDER BY started_at DESC LIMIT 1",
                (run_id,),
            ).fetchone()
        return None if row is None else self._located(row)

    def _located(self, row: sqlite3.Row) -> dict[str, Any]:
        """A row as a dict, its ``log_path`` the log's file (:func:`log_file`)."""
        found = {key: row[key] for key in row.keys()}  # noqa: SIM118 - sqlite3.Row
        found["log_path"] = str(log_file(self.data_dir, found["log_path"]))
        return found

    def list_matches(
        self,
        categories: Collection[str] = (),
        limit: int = 100,
        offset: int = 0,
        bot: str = "",
        game: str = "",
        as_typed: bool = False,
        playing: bool = False,
    ) -> list[dict[str, Any]]:
        """Newest first; filtered in SQL, so pages are full whatever the filters.

        ``playing``: only the tables being played now, sealed ones included (listed as
        sealed, without players, so a spectator sees how far they are and nothing more).

        ``categories``: any of "in_progress", "sealed", "finished" (all when empty); ``bot``:
        a player's name, exactly (the Arena's ``ListMatchesRequest.bot_name``), or with
        ``as_typed`` as a person types a bot's name (the web page's filter): in any case, and
        finding a tournament entry's plays (``NAME~0``, ``NAME~1``) by the entry's name.

        A sealed play is listed without its players, and never by ``bot``, until its
        set is released: where an entrant sits while the twin table still plays its deals
        is what colluding entrants would want to know (the ladder lists its matches the same way).
        """
        conditions: list[str] = []
        params: list[Any] = []
        if categories:
            conditions.append(f"category IN ({', '.join('?' * len(categories))})")
            params += sorted(categories)
        if bot and as_typed:
            conditions.append(_PLAYED_BY)
            params += [bot] * 5
        elif bot:
            conditions.append("EXISTS (SELECT 1 FROM json_each(matches.players) WHERE json_each.value = ?)")
            params.append(bot)
        if bot:
            conditions.append("category != 'sealed'")
        if playing:
            conditions.append("status = 'running'")
        if game:
            conditions.append("json_extract(config, '$.game') = ?")
            params.append(game)
        query = f"SELECT *, {_CATEGORY} AS category FROM matches"
        if conditions:
            query += " WHERE " + " AND ".join(conditions)
        query += " ORDER BY started_at DESC, match_id LIMIT ? OFFSET ?"
        params += [limit, offset]
        with self._connect() as db:
            rows = db.execute(query, params).fetchall()
        return [
            {
                "category": row["category"],
                "match_id": row["match_id"],
                "status": row["status"],
                "started_at": row["started_at"],
                "finished_at": row["finished_at"],
                "config": json.loads(row["config"]),
                "players": {} if row["category"] == "sealed" else json.loads(row["players"]),
                "result": json.loads(row["result"]) if row["result"] else None,
                "log_path": str(log_file(self.data_dir, row["log_path"])),
                "details": json.loads(row["details"]) if row["details"] else {},
            }
            for row in rows
        ]

    def count(self) -> int:
        """How many matches (tables) the index holds."""
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])

    def house_match_logs(self, house: Collection[str], ended_before_ms: int) -> list[tuple[str, str]]:
        """(match id, log path) of the public matches that ended before ``ended_before_ms``
        with at most one seated bot not among ``house`` (one entrant against house bots, or
        house bots alone), whose log is not yet marked deleted: what a retention policy may
        delete. A match two entrants or more played is never listed."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT match_id, players, log_path FROM matches WHERE finished_at < ? "
                "AND status IN ('finished', 'aborted') "
                "AND json_extract(details, '$.log_deleted') IS NULL ORDER BY finished_at",
                (ended_before_ms,),
            ).fetchall()
        names = set(house)
        return [
            (str(row["match_id"]), str(log_file(self.data_dir, row["log_path"])))
            for row in rows
            if len(set(json.loads(row["players"]).values()) - names) <= 1
        ]

    def mark_log_deleted(self, match_id: str, at_ms: int) -> None:
        """Record that a retention policy deleted this match's log (its result stays)."""
        with self._lock, self._connect() as db:
            db.execute(
                "UPDATE matches SET details = json_set(COALESCE(details, '{}'), '$.log_deleted', ?) "
                "WHERE match_id = ? AND json_extract(details, '$.log_deleted') IS NULL",
                (at_ms, match_id),
            )

    def get_many(self, match_ids: Collection[str]) -> dict[str, dict[str, Any]]:
        """The rows of these matches (the ones the index has), by match id: one read for a
        whole tournament's tables where :meth:`get` would open a connection for each."""
        wanted = sorted(set(match_ids))
        found: dict[str, dict[str, Any]] = {}
        with self._connect() as db:
            for start in range(0, len(wanted), 500):  # under SQLite's limit of bound parameters
                chunk = wanted[start : start + 500]
                query = f"SELECT * FROM matches WHERE match_id IN ({', '.join('?' * len(chunk))})"
                for row in db.execute(query, chunk).fetchall():
                    found[row["match_id"]] = self._located(row)
        return found

    def get(self, match_id: str) -> dict[str, Any] | None:
        with self._connect() as db:
            row = db.execute("SELECT * FROM matches WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else self._located(row)


def log_withheld(row: dict[str, Any]) -> bool:
    """Whether a match's log must not be served yet: a sealed play shows deals still to be
    played at the other table; so may an aborted one (and one from an older referee that
    did not record whether it was sealed), until its set is released."""
    details = json.loads(row["details"]) if row["details"] else None
    status = row["status"]
    if details is not None and details.get("released"):
        return False
    return status == "sealed" or (
        status in ("running", "aborted") and (details is None or details.get("sealed", True))
    )


def recorded_statuses(index: Path, match_ids: Collection[str]) -> dict[str, str]:
    """The status the index records for each of these matches it holds ("running", "sealed",
    "finished", "aborted"), read through a read-only connection: reading a data folder, even
    one a referee is writing, changes nothing in it. Raises ``sqlite3.Error`` if the file
    cannot be read as an index."""
    wanted = sorted(set(match_ids))
    found: dict[str, str] = {}
    uri = f"{index.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30)) as db:
        for start in range(0, len(wanted), 500):  # under SQLite's limit of bound parameters
            chunk = wanted[start : start + 500]
            query = f"SELECT match_id, status FROM matches WHERE match_id IN ({', '.join('?' * len(chunk))})"
            found.update((str(match_id), str(status)) for match_id, status in db.execute(query, chunk))
    return found
