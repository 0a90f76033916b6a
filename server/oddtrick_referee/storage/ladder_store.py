"""The ladder's records: entrants and their credentials, matches, ratings over time.

It runs on SQLite (the embedded default) or PostgreSQL through
:mod:`oddtrick_referee.storage.database`. The schema carries a version and is
migrated forward when a store opens it, so a database made by an older
oddtrick opens in a newer one. Tokens are never stored: only a salted SHA-256
of each, made and compared in constant time by token_scheme.py.

Matches move ``planned → running → finished | forfeit | aborted``; the step to
``running`` is a conditional update (:meth:`LadderStore.claim_match`), so two
referees sharing one database can never both start the same match, and so is the
step out of it, so no match is recorded or rated twice (nor once a live referee recorded
it aborted because its own referee stopped beating: :meth:`LadderStore.abort_abandoned`).
Rating reads the entrants' rows locked (PostgreSQL's ``FOR UPDATE``, in name order so
that two referees never wait on each other; SQLite has one writer at a time), so no
referee's update is lost.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Callable, Collection, Sequence
from typing import Any

from oddtrick_referee._exceptions import HouseBotTaken, LadderError
from oddtrick_referee.storage.database import Cursor, Database, Row
from oddtrick_referee.token_scheme import fingerprint, new_salt, new_token, salted_digest, verify_salted

Step = str | Callable[[Cursor], None]
"""One step of a migration: a statement, or a function run in the migration's transaction."""


def _index_match_entrants(cursor: Cursor) -> None:
    """Migration 3's backfill: who played each match already stored, read from its lineup."""
    for row in cursor.rows("SELECT match_id, lineup FROM ladder_matches"):
        _insert_entrants(cursor, row["match_id"], json.loads(row["lineup"]))


MIGRATIONS: tuple[tuple[Step, ...], ...] = (
    # 1: entrants, matches, rating history.
    (
        """CREATE TABLE IF NOT EXISTS ladder_entrants (
            name            TEXT PRIMARY KEY,
            token_salt      TEXT NOT NULL,
            token_hash      TEXT NOT NULL,
            house           INTEGER NOT NULL DEFAULT 0,
            registered_ms   BIGINT NOT NULL,
            retired_ms      BIGINT,
            mu              DOUBLE PRECISION NOT NULL,
            sigma           DOUBLE PRECISION NOT NULL,
            matches         INTEGER NOT NULL DEFAULT 0,
            wins            INTEGER NOT NULL DEFAULT 0,
            draws           INTEGER NOT NULL DEFAULT 0,
            losses          INTEGER NOT NULL DEFAULT 0,
            last_played_ms  BIGINT
        )""",
        """CREATE TABLE IF NOT EXISTS ladder_matches (
            match_id        TEXT PRIMARY KEY,
            status          TEXT NOT NULL,
            claimed_by      TEXT,
            created_ms      BIGINT NOT NULL,
            ended_ms        BIGINT,
            seed_commitment TEXT NOT NULL UNIQUE,
            seed            TEXT,
            lineup          TEXT NOT NULL,
            config          TEXT NOT NULL,
            tables          TEXT NOT NULL DEFAULT '[]',
            score_a         INTEGER,
            outcome         TEXT,
            cause           TEXT
        )""",
        """CREATE TABLE IF NOT EXISTS ladder_ratings (
            name        TEXT NOT NULL,
            match_id    TEXT NOT NULL,
            at_ms       BIGINT NOT NULL,
            mu          DOUBLE PRECISION NOT NULL,
            sigma       DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (name, match_id)
        )""",
    ),
    # 2: faults and forfeits on the leaderboard; the deals each match played.
    (
        "ALTER TABLE ladder_entrants ADD COLUMN faults INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE ladder_entrants ADD COLUMN forfeits INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE ladder_matches ADD COLUMN deals TEXT NOT NULL DEFAULT '[]'",
        "CREATE INDEX IF NOT EXISTS ladder_matches_by_end ON ladder_matches (ended_ms)",
    ),
    # 3: who played in each match, one row per entrant, so that a name filter is an exact
    # match in SQL (never a LIKE on the lineup's JSON) and runs before LIMIT/OFFSET.
    (
        """CREATE TABLE IF NOT EXISTS ladder_match_entrants (
            match_id    TEXT NOT NULL,
            name        TEXT NOT NULL,
            PRIMARY KEY (match_id, name)
        )""",
        "CREATE INDEX IF NOT EXISTS ladder_match_entrants_by_name ON ladder_match_entrants (name, match_id)",
        _index_match_entrants,
        # Which referee runs each house bot (see LadderStore.ensure_house); NULL: none yet.
        "ALTER TABLE ladder_entrants ADD COLUMN house_owner TEXT",
    ),
    # 4: each rating change says which of the entrant's rated matches it was and what it
    # moved from, so that the history shows every update applied once, in order, none lost
    # (several referees rate the same entrants at once); a number is never used twice.
    (
        "ALTER TABLE ladder_ratings ADD COLUMN number INTEGER",
        "ALTER TABLE ladder_ratings ADD COLUMN before_mu DOUBLE PRECISION",
        "ALTER TABLE ladder_ratings ADD COLUMN before_sigma DOUBLE PRECISION",
        "CREATE UNIQUE INDEX IF NOT EXISTS ladder_ratings_by_number ON ladder_ratings (name, number)",
    ),
    # 5: each referee's heartbeat (the database's clock), so that a live referee records
    # aborted the running matches of one that stopped beating (LadderStore.abort_abandoned).
    (
        """CREATE TABLE IF NOT EXISTS ladder_referees (
            referee     TEXT PRIMARY KEY,
            run         TEXT NOT NULL,
            host        TEXT NOT NULL,
            pid         INTEGER NOT NULL,
            started_ms  BIGINT NOT NULL,
            seen_ms     BIGINT NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS ladder_matches_by_status ON ladder_matches (status, claimed_by)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
DATABASE_NOW_MS = {
    "sqlite": "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)",
    "postgresql": "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
}
"""The database's clock in milliseconds since 1970, per dialect: heartbeats are written and
judged by one clock, so referees on hosts whose clocks disagree never misjudge each other."""
ENTRANT_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""What a bot may be called on the ladder (the lobby's rule, without the tournaments' '~')."""


@dataclasses.dataclass(frozen=True)
class EntrantRecord:
    name: str
    house: bool
    registered_ms: int
    retired_ms: int | None
    mu: float
    sigma: float
    matches: int
    wins: int
    draws: int
    losses: int
    forfeits: int
    faults: int
    last_played_ms: int | None
    token_id: str = ""
    """Which token admits it now (its salt, not secret): changes when it is rotated."""

    @classmethod
    def from_row(cls, row: Row) -> EntrantRecord:
        return cls(
            name=row["name"],
            house=bool(row["house"]),
            registered_ms=int(row["registered_ms"]),
            retired_ms=row["retired_ms"],
            mu=float(row["mu"]),
            sigma=float(row["sigma"]),
            matches=int(row["matches"]),
            wins=int(row["wins"]),
            draws=int(row["draws"]),
            losses=int(row["losses"]),
            forfeits=int(row["forfeits"]),
            faults=int(row["faults"]),
            last_played_ms=row["last_played_ms"],
            token_id=row.get("token_salt") or "",
        )


@dataclasses.dataclass(frozen=True)
class MatchRow:
    """A ladder match as stored: ``lineup`` is ``{"tables": [{seat: name}…], "teams": [[…], […]]}``."""

    match_id: str
    status: str
    created_ms: int
    ended_ms: int | None
    seed_commitment: str
    seed: str | None
    lineup: dict[str, Any]
    config: dict[str, Any]
    tables: list[str]
    score_a: int | None
    outcome: str | None
    cause: str | None
    deals: list[list[int]]

    @classmethod
    def from_row(cls, row: Row) -> MatchRow:
        return cls(
            match_id=row["match_id"],
            status=row["status"],
            created_ms=int(row["created_ms"]),
            ended_ms=row["ended_ms"],
            seed_commitment=row["seed_commitment"],
            seed=row["seed"],
            lineup=json.loads(row["lineup"]),
            config=json.loads(row["config"]),
            tables=json.loads(row["tables"]),
            score_a=row["score_a"],
            outcome=row["outcome"],
            cause=row["cause"],
            deals=json.loads(row["deals"]),
        )


@dataclasses.dataclass(frozen=True)
class RatingChange:
    """One entrant's rating after a rated match, and how its record moves."""

    name: str
    mu: float
    sigma: float
    result: str
    """``win``, ``draw``, ``loss`` or ``forfeit`` (a loss by absence)."""
    faults: int = 0


VERIFIED_CACHE_SIZE = 4096
"""Tokens :meth:`LadderStore.verify` remembers as good (name and token hash → token id)."""


class LadderStore:
    """Every read and write of the ladder, each one transaction; call from a worker thread
    (except :meth:`verified`, which only reads memory).

    Tokens that :meth:`verify` admitted are remembered (their SHA-256, never the token),
    so a bot reconnecting costs no transaction. Rotating or retiring through this store
    forgets the name's at once; a rotation or retirement made by another process (the
    ``oddtrick ladder`` commands) is seen at the next :meth:`entrants` read, which the
    running ladder makes every few seconds and which also revokes the sessions the old
    token opened.
    """

    def __init__(self, database: Database, initial_mu: float, initial_sigma: float) -> None:
        self.db = database
        self.initial_mu = initial_mu
        self.initial_sigma = initial_sigma
        self.migrated_from = migrate(database)
        self._verified: dict[tuple[str, str], str] = {}
        self._verified_lock = threading.Lock()
        self._forgotten = 0
        """Counts forgettings: a verify that overlapped one does not remember its answer,
        unless :attr:`_read_salts` vouches for it."""
        self._read_salts: dict[str, str] = {}
        """Each entrant's token id as the last :meth:`entrants` read it (a rotation here drops it)."""

    # ------------------------------------------------------------ entrants

    def register(self, name: str, now_ms: int, house: bool = False) -> str:
        """Add an entrant; return its token (shown once: only its hash is kept)."""
        if not ENTRANT_NAME.fullmatch(name):
            raise LadderError(
                f"{name!r} cannot be a bot name: use 1-64 ASCII letters, digits, '.', '_' or '-' "
                "(the name a bot says in its Hello)"
            )
        token = new_token()
        salt = new_salt()
        rating = (self.initial_mu, self.initial_sigma)
        values = (name, salt, salted_digest(token, salt), int(house), now_ms, *rating)
        if not house and name.lower().startswith("house-"):
            raise LadderError(f"{name!r}: names starting 'house-' are the ladder's own bots; choose another")
        with self.db.transaction() as cursor:
            existing = cursor.rows(
                "SELECT name, retired_ms FROM ladder_entrants WHERE LOWER(name) = ?", (name.lower(),)
            )
            if existing:
                taken = existing[0]["name"]
                if existing[0]["retired_ms"] is not None:
                    raise LadderError(f"{taken!r} is retired, and names are never reused: choose another")
                if taken != name:
                    raise LadderError(f"{taken!r} is registered: a name may not differ from it only in case")
                raise LadderError(
                    f"{name!r} is already registered; `oddtrick ladder rotate-token` gives it a new token"
                )
            cursor.execute(
                "INSERT INTO ladder_entrants (name, token_salt, token_hash, house, registered_ms, mu, sigma)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                values,
            )
        return token

    def rotate_token(self, name: str) -> str:
        """A new token for an entrant; the old one stops working at once."""
        token = new_token()
        salt = new_salt()
        with self.db.transaction() as cursor:
            changed = cursor.execute(
                "UPDATE ladder_entrants SET token_salt = ?, token_hash = ?"
                " WHERE name = ? AND retired_ms IS NULL",
                (salt, salted_digest(token, salt), name),
            )
        self._forget(name)
        if not changed:
            raise LadderError(f"no active entrant {name!r} (`oddtrick ladder standings` lists them)")
        return token

    def retire(self, name: str, now_ms: int) -> None:
        """Stop an entrant for good: its token is refused; its record stays on the history."""
        with self.db.transaction() as cursor:
            changed = cursor.execute(
                "UPDATE ladder_entrants SET retired_ms = ? WHERE name = ? AND retired_ms IS NULL",
                (now_ms, name),
            )
        self._forget(name)
        if not changed:
            raise LadderError(f"no active entrant {name!r} (`oddtrick ladder standings` lists them)")

    def ensure_house(self, name: str, now_ms: int, referee_id: str) -> str:
        """A house bot's entrant for this referee: registered on first use, a fresh token at
        every start of the referee that runs it.

        A house bot belongs to one referee (``referee_id``, stable across its restarts): the
        first to ask for the name takes it, and a second referee sharing the database is
        refused it (:class:`HouseBotTaken`) rather than replacing the token the first one's
        bot is playing with. One made before referees were recorded belongs to the next
        referee that asks. Claiming and the new token are one conditional update, so two
        referees starting at once cannot both take a name.
        """
        token = new_token()
        salt = new_salt()
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                "SELECT name, house, house_owner FROM ladder_entrants WHERE LOWER(name) = ?", (name.lower(),)
            )
            if not rows:
                if not ENTRANT_NAME.fullmatch(name):
                    raise LadderError(f"{name!r} cannot be a house bot's name: use {ENTRANT_NAME.pattern}")
                cursor.execute(
                    "INSERT INTO ladder_entrants (name, token_salt, token_hash, house, house_owner,"
                    " registered_ms, mu, sigma) VALUES (?, ?, ?, 1, ?, ?, ?, ?)",
                    (
                        name,
                        salt,
                        salted_digest(token, salt),
                        referee_id,
                        now_ms,
                        self.initial_mu,
                        self.initial_sigma,
                    ),
                )
                return token
            [row] = rows
            if row["name"] != name or not row["house"]:
                raise LadderError(
                    f"{row['name']!r} is a registered entrant, not a house bot: "
                    "give the house bot another name"
                )
            changed = cursor.execute(
                "UPDATE ladder_entrants SET token_salt = ?, token_hash = ?, house_owner = ?,"
                " retired_ms = NULL WHERE name = ? AND (house_owner IS NULL OR house_owner = ?)",
                (salt, salted_digest(token, salt), referee_id, name, referee_id),
            )
            if not changed:
                raise HouseBotTaken(name, str(row["house_owner"]))
        self._forget(name)
        return token

    def verify(self, name: str, token: str) -> str | None:
        """The id of the token that admits this entrant (its salt: it changes when the token
        is rotated), or None."""
        known = self.verified(name, token)
        if known is not None:
            return known
        forgotten = self._forgotten
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                "SELECT token_salt, token_hash FROM ladder_entrants WHERE name = ? AND retired_ms IS NULL",
                (name,),
            )
        salt, expected = (rows[0]["token_salt"], rows[0]["token_hash"]) if rows else (None, None)
        if not verify_salted(token, salt, expected):
            return None
        with self._verified_lock:
            if self._forgotten != forgotten and self._read_salts.get(name) != str(salt):
                # Rotated or retired meanwhile, or the entrants read since cannot vouch for
                # this token: not remembered. (A read that found the same token can: the
                # ladder reads its entrants every few seconds, and forgetting every token
                # verified meanwhile would send a known entrant back to the database, and
                # so to the budget of bad Hellos, on its next Hello.)
                return str(salt)
            while len(self._verified) >= VERIFIED_CACHE_SIZE:
                del self._verified[next(iter(self._verified))]
            self._verified[(name, fingerprint(token))] = str(salt)
        return str(salt)

    def verified(self, name: str, token: str) -> str | None:
        """The token id :meth:`verify` found for this name and token before, if it is still
        remembered (memory only: safe on any thread, never blocks on the database)."""
        with self._verified_lock:
            return self._verified.get((name, fingerprint(token)))

    def _forget(self, name: str) -> None:
        with self._verified_lock:
            self._forgotten += 1
            self._read_salts.pop(name, None)
            for key in [key for key in self._verified if key[0] == name]:
                del self._verified[key]

    def entrants(self, include_retired: bool = False) -> list[EntrantRecord]:
        """The entrants, by name; remembered tokens that no longer admit theirs are forgotten."""
        where = "" if include_retired else " WHERE retired_ms IS NULL"
        with self.db.transaction() as cursor:
            rows = cursor.rows(f"SELECT * FROM ladder_entrants{where} ORDER BY name")
        found = [EntrantRecord.from_row(row) for row in rows]
        current = {e.name: e.token_id for e in found if e.retired_ms is None}
        with self._verified_lock:
            self._forgotten += 1
            self._read_salts = current
            stale = [key for key, salt in self._verified.items() if current.get(key[0]) != salt]
            for key in stale:
                del self._verified[key]
        return found

    def entrant(self, name: str) -> EntrantRecord | None:
        with self.db.transaction() as cursor:
            rows = cursor.rows("SELECT * FROM ladder_entrants WHERE name = ?", (name,))
        return EntrantRecord.from_row(rows[0]) if rows else None

    # ------------------------------------------------------------- matches

    def plan_match(
        self,
        match_id: str,
        seed_commitment: str,
        lineup: dict[str, Any],
        config: dict[str, Any],
        now_ms: int,
    ) -> None:
        with self.db.transaction() as cursor:
            cursor.execute(
                "INSERT INTO ladder_matches (match_id, status, created_ms, seed_commitment, lineup, config)"
                " VALUES (?, 'planned', ?, ?, ?, ?)",
                (match_id, now_ms, seed_commitment, json.dumps(lineup), json.dumps(config)),
            )
            _insert_entrants(cursor, match_id, lineup)

    def claim_match(self, match_id: str, referee_id: str) -> bool:
        """Move a planned match to running for this referee; False if another got it first."""
        with self.db.transaction() as cursor:
            return _claim(cursor, match_id, referee_id)

    def open_match(
        self,
        match_id: str,
        seed_commitment: str,
        lineup: dict[str, Any],
        config: dict[str, Any],
        table_ids: Sequence[str],
        referee_id: str,
        now_ms: int,
    ) -> bool:
        """Plan a match and claim it for this referee in one transaction (one commit on
        the way to the first request); False if it could not be claimed."""
        tables = json.dumps(list(table_ids))
        with self.db.transaction() as cursor:
            cursor.execute(
                "INSERT INTO ladder_matches"
                " (match_id, status, created_ms, seed_commitment, lineup, config, tables)"
                " VALUES (?, 'planned', ?, ?, ?, ?, ?)",
                (match_id, now_ms, seed_commitment, json.dumps(lineup), json.dumps(config), tables),
            )
            _insert_entrants(cursor, match_id, lineup)
            return _claim(cursor, match_id, referee_id)

    def finish_match(
        self,
        match_id: str,
        status: str,
        seed: str,
        score_a: int,
        outcome: str,
        deals: Sequence[Sequence[int]],
        rate: Callable[[dict[str, EntrantRecord]], Sequence[RatingChange]],
        unrated_faults: dict[str, int],
        now_ms: int,
        cause: str | None = None,
    ) -> list[RatingChange]:
        """Record a played match and every rating it moves, in one transaction.

        ``rate`` gets the entrants' records as they are inside the transaction
        (rows locked on PostgreSQL, in name order), so matches finishing at once, here
        or at another referee, never rate from a stale copy. Only a running match is
        finished (LadderError otherwise, and nothing changes): one already recorded, or
        aborted meanwhile, is never rated again.
        """
        deal_text = json.dumps([list(d) for d in deals])
        with self.db.transaction() as cursor:
            changed = cursor.execute(
                "UPDATE ladder_matches SET status = ?, ended_ms = ?, seed = ?, score_a = ?, outcome = ?,"
                " deals = ?, cause = ? WHERE match_id = ? AND status = 'running'",
                (status, now_ms, seed, score_a, outcome, deal_text, cause, match_id),
            )
            if not changed:
                raise LadderError(f"ladder match {match_id} is not running: it is not recorded again")
            names = sorted(_names_in(self._lineup(cursor, match_id)))
            lock = " FOR UPDATE" if self.db.dialect == "postgresql" else ""
            rows = cursor.rows(
                f"SELECT * FROM ladder_entrants WHERE name IN ({', '.join('?' for _ in names)})"
                f" ORDER BY name{lock}",
                names,
            )
            before = {row["name"]: EntrantRecord.from_row(row) for row in rows}
            changes = list(rate(before))
            for change in changes:
                _apply_change(cursor, change, match_id, now_ms, before[change.name])
            for name, faults in unrated_faults.items():
                cursor.execute(
                    "UPDATE ladder_entrants SET faults = faults + ?, last_played_ms = ? WHERE name = ?",
                    (faults, now_ms, name),
                )
        return changes

    @staticmethod
    def _lineup(cursor: Cursor, match_id: str) -> dict[str, Any]:
        rows = cursor.rows("SELECT lineup FROM ladder_matches WHERE match_id = ?", (match_id,))
        lineup: dict[str, Any] = json.loads(rows[0]["lineup"])
        return lineup

    def abort_match(self, match_id: str, cause: str, now_ms: int, seed: str | None = None) -> None:
        """A match that could not finish: recorded with its cause and never rated."""
        with self.db.transaction() as cursor:
            cursor.execute(
                "UPDATE ladder_matches SET status = 'aborted', ended_ms = ?, cause = ?, seed = ? "
                "WHERE match_id = ? AND status IN ('planned', 'running')",
                (now_ms, cause, seed, match_id),
            )

    def abort_unfinished(self, cause: str, now_ms: int, referee_id: str | None = None) -> list[str]:
        """Matches an earlier run left planned or running (of one referee, or all): aborted.
        Returns their ids."""
        mine = "" if referee_id is None else " AND (claimed_by = ? OR claimed_by IS NULL)"
        mine_params = () if referee_id is None else (referee_id,)
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                f"SELECT match_id FROM ladder_matches WHERE status IN ('planned', 'running'){mine}",
                mine_params,
            )
            cursor.execute(
                "UPDATE ladder_matches SET status = 'aborted', ended_ms = ?, cause = ? "
                f"WHERE status IN ('planned', 'running'){mine}",
                (now_ms, cause, *mine_params),
            )
        return [row["match_id"] for row in rows]

    # ---------------------------------------------------------- referees

    def beat(self, referee_id: str, run: str, host: str, pid: int) -> None:
        """This referee is alive: its heartbeat row, seen now by the database's clock
        (``run``, ``host`` and ``pid`` say which process it is, for the operator)."""
        clock = DATABASE_NOW_MS[self.db.dialect]
        with self.db.transaction() as cursor:
            cursor.execute(
                "INSERT INTO ladder_referees (referee, run, host, pid, started_ms, seen_ms)"
                f" VALUES (?, ?, ?, ?, {clock}, {clock}) ON CONFLICT (referee) DO UPDATE SET"
                " seen_ms = excluded.seen_ms, host = excluded.host, pid = excluded.pid,"
                " started_ms = CASE WHEN ladder_referees.run = excluded.run"
                " THEN ladder_referees.started_ms ELSE excluded.started_ms END, run = excluded.run",
                (referee_id, run, host, pid),
            )

    def referees(self) -> list[Row]:
        """Every referee that has beaten, with how long ago by the database's clock (``silent_ms``)."""
        clock = DATABASE_NOW_MS[self.db.dialect]
        with self.db.transaction() as cursor:
            return cursor.rows(
                f"SELECT referee, run, host, pid, started_ms, seen_ms, {clock} - seen_ms AS silent_ms"
                " FROM ladder_referees ORDER BY referee"
            )

    def abort_abandoned(
        self, referee_id: str, expiry_ms: int, cause: str, now_ms: int
    ) -> list[tuple[str, str]]:
        """Record aborted, as a restart does (:meth:`abort_unfinished`), every running match
        of another referee whose heartbeat is older than ``expiry_ms``; return (match id,
        its referee) for those this call recorded.

        Each is one conditional update that checks again that the match is running, that
        referee's and still silent, so of two live referees racing only one records it; a
        referee heard from meanwhile keeps its match; and the silent one's result, if it
        ever comes, is refused by :meth:`finish_match` (the match is no longer running).
        A match of a referee that never beat (an older oddtrick) is left alone.
        """
        silent = f"SELECT referee FROM ladder_referees WHERE seen_ms < {DATABASE_NOW_MS[self.db.dialect]} - ?"
        with self.db.transaction() as cursor:
            found = cursor.rows(
                "SELECT match_id, claimed_by FROM ladder_matches WHERE status = 'running'"
                f" AND claimed_by <> ? AND claimed_by IN ({silent}) ORDER BY match_id",
                (referee_id, expiry_ms),
            )
        aborted = []
        for row in found:
            with self.db.transaction() as cursor:
                changed = cursor.execute(
                    "UPDATE ladder_matches SET status = 'aborted', ended_ms = ?, cause = ?"
                    " WHERE match_id = ? AND status = 'running'"
                    f" AND claimed_by = ? AND claimed_by IN ({silent})",
                    (now_ms, cause, row["match_id"], row["claimed_by"], expiry_ms),
                )
            if changed == 1:
                aborted.append((str(row["match_id"]), str(row["claimed_by"])))
        return aborted

    def over(self, match_ids: Collection[str]) -> set[str]:
        """Which of these matches are over (finished, forfeit or aborted): their deals are
        never dealt again, so their tables' logs may be published."""
        ids = sorted(match_ids)
        if not ids:
            return set()
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                f"SELECT match_id FROM ladder_matches WHERE match_id IN ({', '.join('?' for _ in ids)})"
                " AND status IN ('finished', 'forfeit', 'aborted')",
                ids,
            )
        return {row["match_id"] for row in rows}

    def matches(
        self, name: str | None = None, limit: int = 50, offset: int = 0, statuses: Sequence[str] = ()
    ) -> list[MatchRow]:
        """Newest first; ``name`` keeps the matches that entrant played in (exactly that name:
        no wildcards, case counts), filtered before the page is cut."""
        clauses: list[str] = []
        params: list[Any] = []
        if statuses:
            clauses.append(f"status IN ({', '.join('?' for _ in statuses)})")
            params.extend(statuses)
        if name:
            clauses.append("match_id IN (SELECT match_id FROM ladder_match_entrants WHERE name = ?)")
            params.append(name)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                f"SELECT * FROM ladder_matches{where}"
                " ORDER BY created_ms DESC, match_id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            )
        return [MatchRow.from_row(row) for row in rows]

    def match_of_table(self, table_id: str) -> MatchRow | None:
        """The ladder match one of whose tables is ``table_id`` (``None``: no such table)."""
        needle = json.dumps(table_id)
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                "SELECT * FROM ladder_matches WHERE instr(tables, ?) > 0 ORDER BY created_ms", (needle,)
            )
        found = [MatchRow.from_row(row) for row in rows]
        return next((row for row in found if table_id in row.tables), None)

    def finished_matches(self) -> list[MatchRow]:
        """Every match played to the end and rated, oldest first (the operator's reports)."""
        with self.db.transaction() as cursor:
            rows = cursor.rows(
                "SELECT * FROM ladder_matches WHERE status = 'finished' ORDER BY created_ms, match_id"
            )
        return [MatchRow.from_row(row) for row in rows]

    def rating_history(self, name: str) -> list[Row]:
        with self.db.transaction() as cursor:
            return cursor.rows(
                "SELECT match_id, at_ms, mu, sigma FROM ladder_ratings"
                " WHERE name = ? ORDER BY at_ms, match_id",
                (name,),
            )


def _claim(cursor: Cursor, match_id: str, referee_id: str) -> bool:
    changed = cursor.execute(
        "UPDATE ladder_matches SET status = 'running', claimed_by = ?"
        " WHERE match_id = ? AND status = 'planned'",
        (referee_id, match_id),
    )
    return changed == 1


def _apply_change(
    cursor: Cursor, change: RatingChange, match_id: str, now_ms: int, before: EntrantRecord
) -> None:
    """One entrant's new rating, and its history row: the entrant's ``number``-th rated
    match, moved from ``before`` (read, locked, in this transaction)."""
    column = {"win": "wins", "draw": "draws", "loss": "losses", "forfeit": "forfeits"}[change.result]
    cursor.execute(
        f"UPDATE ladder_entrants SET mu = ?, sigma = ?, matches = matches + 1, {column} = {column} + 1,"
        " faults = faults + ?, last_played_ms = ? WHERE name = ?",
        (change.mu, change.sigma, change.faults, now_ms, change.name),
    )
    cursor.execute(
        "INSERT INTO ladder_ratings (name, match_id, at_ms, mu, sigma, number, before_mu, before_sigma)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (change.name, match_id, now_ms, change.mu, change.sigma, before.matches + 1, before.mu, before.sigma),
    )


def _insert_entrants(cursor: Cursor, match_id: str, lineup: dict[str, Any]) -> None:
    for name in sorted(_names_in(lineup)):
        cursor.execute("INSERT INTO ladder_match_entrants (match_id, name) VALUES (?, ?)", (match_id, name))


def _names_in(lineup: dict[str, Any]) -> set[str]:
    return {name for table in lineup.get("tables", []) for name in table.values()}


def migrate(database: Database) -> int:
    """Bring the schema to :data:`SCHEMA_VERSION`; return the version found (0: a new database).

    Each step runs in one transaction with the version bump, so an interrupted
    migration leaves the previous version intact. A database newer than this
    code is refused rather than misread.
    """
    with database.transaction() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS ladder_schema (version INTEGER NOT NULL)")
        rows = cursor.rows("SELECT version FROM ladder_schema")
        if not rows:
            cursor.execute("INSERT INTO ladder_schema (version) VALUES (0)")
        found = int(rows[0]["version"]) if rows else 0
    if found > SCHEMA_VERSION:
        raise LadderError(
            f"the ladder database {database.url} has schema version {found}, newer than this "
            f"oddtrick understands ({SCHEMA_VERSION}): upgrade oddtrick"
        )
    for version in range(found + 1, SCHEMA_VERSION + 1):
        with database.transaction() as cursor:
            for step in MIGRATIONS[version - 1]:
                if isinstance(step, str):
                    cursor.execute(step)
                else:
                    step(cursor)
            cursor.execute("UPDATE ladder_schema SET version = ?", (version,))
    return found
