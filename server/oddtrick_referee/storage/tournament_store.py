"""Tournament results in SQLite, written as each table finishes.

The store persists and loads values (:class:`~.results.TableResult`, its seats'
:class:`~.results.SeatResult`, :class:`~.results.DealResult`); what they add up to
(faults, times, points per entry) is the standings' to compute, not SQL's.

One transaction per finished table run writes its deals and faults, so a
killed tournament loses at most the tables in progress; re-running the same
tournament reads what is here and plays only what is missing.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from oddtrick._options import shown
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.storage.results import DealResult, Forfeit, TableResult, seats_of
from oddtrick_referee.storage.sqlite import Store

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tournaments (
    tournament_id TEXT PRIMARY KEY,
    created_at    INTEGER NOT NULL,
    settings      TEXT NOT NULL,
    master_seed   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS table_runs (
    tournament_id TEXT NOT NULL REFERENCES tournaments,
    match_key     TEXT NOT NULL,
    set_number    INTEGER NOT NULL,
    table_no      INTEGER NOT NULL,
    ns_entry      TEXT NOT NULL,
    ew_entry      TEXT NOT NULL,
    match_id      TEXT NOT NULL,
    seats         TEXT NOT NULL,
    finished_at   INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, match_key, set_number, table_no)
);
CREATE TABLE IF NOT EXISTS deal_results (
    tournament_id TEXT NOT NULL,
    match_key     TEXT NOT NULL,
    set_number    INTEGER NOT NULL,
    table_no      INTEGER NOT NULL,
    deal_number   INTEGER NOT NULL,
    ns_points     INTEGER NOT NULL,
    ew_points     INTEGER NOT NULL,
    PRIMARY KEY (tournament_id, match_key, set_number, table_no, deal_number)
);
CREATE TABLE IF NOT EXISTS forfeits (
    tournament_id TEXT NOT NULL,
    match_key     TEXT NOT NULL,
    absent        TEXT NOT NULL,
    present       TEXT NOT NULL,
    PRIMARY KEY (tournament_id, match_key)
);
"""


@dataclasses.dataclass(frozen=True)
class StoredTournament:
    """A tournament as stored: its settings (``TournamentSettings.describe()``) and its
    finished tables, so a new run can say which others are left unfinished."""

    tournament_id: str
    created_ms: int
    settings: dict[str, Any]
    played: set[tuple[str, int, int]]
    """The (match, set, table) of every finished table run."""
    forfeited: set[str]
    """Matches forfeited (never played)."""


class TournamentStore(Store):
    schema = _SCHEMA

    def open_tournament(
        self, tournament_id: str, settings: dict[str, Any], seed: str, now_ms: int
    ) -> tuple[str, list[str]]:
        """Create the tournament, or find it; returns its master seed (the stored one on
        resume) and its entry names in the order they joined.

        Entries may be added to an existing tournament (then only the new pairs are
        played); every entry already in it must still be named, with the same bot.
        """
        # Each entry is [name, source], with its bot's options third when it has some.
        entries = [(item[0], _described(item)) for item in json.loads(json.dumps(settings["entries"]))]
        with self._lock, self._connect() as db:
            row = db.execute(
                "SELECT master_seed, settings FROM tournaments WHERE tournament_id = ?", (tournament_id,)
            ).fetchone()
            if row is None:
                db.execute(
                    "INSERT INTO tournaments VALUES (?, ?, ?, ?)",
                    (tournament_id, now_ms, json.dumps(settings, sort_keys=True), seed),
                )
                return seed, [name for name, _ in entries]
            stored = json.loads(row[1])
            given = json.loads(json.dumps(settings))
            # A tournament stored before its time control was part of it is resumed as before.
            left_out = {"entries"} if "time_control" in stored else {"entries", "time_control"}
            if {k: v for k, v in stored.items() if k not in left_out} != {
                k: v for k, v in given.items() if k not in left_out
            }:
                raise OptionError(
                    f"tournament {tournament_id!r} already exists with other settings; "
                    "use another --name to start a new one"
                )
            joined = [(item[0], _described(item)) for item in stored["entries"]]
            sources = dict(entries)
            missing = [name for name, _ in joined if name not in sources]
            if missing:
                raise OptionError(
                    f"tournament {tournament_id!r} here also has {', '.join(missing)}: to add entries "
                    "to it, name every entry already in it too; to play other bots on their own, "
                    "give --name NEW (or another --data-dir) to start a separate tournament"
                )
            for name, source in joined:
                if sources[name] != source:
                    raise OptionError(
                        f"entry {name!r} of tournament {tournament_id!r} is {_entry_text(source)}, not "
                        f"{_entry_text(sources[name])}; use another --name to start a new tournament"
                    )
            known = {name for name, _ in joined}
            added = [(name, source) for name, source in entries if name not in known]
            if added:
                stored["entries"] = [[name, *json.loads(source)] for name, source in joined + added]
                db.execute(
                    "UPDATE tournaments SET settings = ? WHERE tournament_id = ?",
                    (json.dumps(stored, sort_keys=True), tournament_id),
                )
            return str(row[0]), [name for name, _ in joined + added]

    def tournaments(self) -> list[StoredTournament]:
        """Every tournament here, oldest first, with what it has played so far."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT tournament_id, created_at, settings FROM tournaments "
                "ORDER BY created_at, tournament_id"
            ).fetchall()
            runs = db.execute(
                "SELECT tournament_id, match_key, set_number, table_no FROM table_runs"
            ).fetchall()
            forfeits = db.execute("SELECT tournament_id, match_key FROM forfeits").fetchall()
        played: dict[str, set[tuple[str, int, int]]] = {}
        for tournament_id, *key in runs:
            played.setdefault(tournament_id, set()).add((key[0], key[1], key[2]))
        forfeited: dict[str, set[str]] = {}
        for tournament_id, match_key in forfeits:
            forfeited.setdefault(tournament_id, set()).add(match_key)
        return [
            StoredTournament(
                row[0], row[1], json.loads(row[2]), played.get(row[0], set()), forfeited.get(row[0], set())
            )
            for row in rows
        ]

    def has_tournament(self, tournament_id: str) -> bool:
        with self._connect() as db:
            row = db.execute("SELECT 1 FROM tournaments WHERE tournament_id = ?", (tournament_id,)).fetchone()
        return row is not None

    def finished_runs(self, tournament_id: str) -> set[tuple[str, int, int]]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT match_key, set_number, table_no FROM table_runs WHERE tournament_id = ?",
                (tournament_id,),
            ).fetchall()
        return {(row[0], row[1], row[2]) for row in rows}

    def table_matches(self, tournament_id: str) -> list[tuple[str, str, int]]:
        """(match id, match key, set number) of every table the tournament has stored, in
        play order within each set (table 0, then 1)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT match_id, match_key, set_number FROM table_runs WHERE tournament_id = ? "
                "ORDER BY match_key, set_number, table_no",
                (tournament_id,),
            ).fetchall()
        return [(row[0], row[1], int(row[2])) for row in rows]

    def table_runs(self, tournament_id: str) -> list[TableResult]:
        """Every stored table of the tournament with its deals, in play order within each set
        (table 0, then 1). The two tables of a duplicate set share (match_key, set_number)."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT match_key, set_number, table_no, ns_entry, ew_entry, match_id, seats FROM table_runs "
                "WHERE tournament_id = ? ORDER BY match_key, set_number, table_no",
                (tournament_id,),
            ).fetchall()
            points = db.execute(
                "SELECT match_key, set_number, table_no, deal_number, ns_points, ew_points FROM deal_results "
                "WHERE tournament_id = ? ORDER BY deal_number",
                (tournament_id,),
            ).fetchall()
        deals: dict[tuple[str, int, int], list[tuple[int, int, int]]] = {}
        for match_key, set_number, table_no, deal, ns_points, ew_points in points:
            deals.setdefault((match_key, set_number, table_no), []).append((deal, ns_points, ew_points))
        return [
            TableResult(
                match_key=row[0],
                set_number=int(row[1]),
                table_no=int(row[2]),
                ns_entry=row[3],
                ew_entry=row[4],
                match_id=row[5],
                seats=seats_of(json.loads(row[6]), f"table {row[5]} of {tournament_id!r}"),
                deals=tuple(deals.get((row[0], row[1], row[2]), ())),
            )
            for row in rows
        ]

    def run_of_match(self, match_id: str) -> tuple[str, str, int, int] | None:
        """(tournament, match key, set, table) of the table run a match played, if it played one."""
        with self._connect() as db:
            row = db.execute(
                "SELECT tournament_id, match_key, set_number, table_no FROM table_runs WHERE match_id = ?",
                (match_id,),
            ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]), int(row[2]), int(row[3]))

    def record_run(self, tournament_id: str, table: TableResult, now_ms: int) -> None:
        """Store one finished table and its deals, all or nothing."""
        with self._lock, self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO table_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        tournament_id, *table.key, table.ns_entry, table.ew_entry,
                        table.match_id, json.dumps(table.seats_dict()), now_ms,
                    ),
                )  # fmt: skip
                db.executemany(
                    "INSERT INTO deal_results VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(tournament_id, *table.key, deal, ns, ew) for deal, ns, ew in table.deals],
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def record_forfeit(self, tournament_id: str, match_key: str, absent: str, present: str) -> None:
        with self._lock, self._connect() as db:
            db.execute(
                "INSERT OR IGNORE INTO forfeits VALUES (?, ?, ?, ?)",
                (tournament_id, match_key, absent, present),
            )

    def forfeited_matches(self, tournament_id: str) -> list[Forfeit]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT match_key, absent, present FROM forfeits WHERE tournament_id = ?", (tournament_id,)
            ).fetchall()
        return [Forfeit(row[0], row[1], row[2]) for row in rows]

    def deal_results(self, tournament_id: str) -> list[DealResult]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT d.match_key, d.set_number, d.deal_number, d.table_no, r.ns_entry, r.ew_entry, "
                "d.ns_points, d.ew_points FROM deal_results d JOIN table_runs r USING "
                "(tournament_id, match_key, set_number, table_no) WHERE d.tournament_id = ? "
                "ORDER BY d.match_key, d.set_number, d.deal_number, d.table_no",
                (tournament_id,),
            ).fetchall()
        results = []
        for key, set_number, deal, table, ns, ew, ns_points, ew_points in rows:
            first, second = key.split("|", 1)
            results.append(
                DealResult(key, first, second, set_number, deal, table, ns, ew, ns_points, ew_points)
            )
        return results


def _described(entry: list[Any]) -> str:
    """What an entry is, apart from its name, as one comparable text: its source and options."""
    return json.dumps(entry[1:], sort_keys=True)


def _entry_text(described: str) -> str:
    """An entry's source and options (``bot.py option.samples=40``) from its stored form."""
    source, *rest = json.loads(described)
    options = rest[0] if rest else {}
    return " ".join([str(source), *(f"option.{name}={shown(value)}" for name, value in options.items())])
