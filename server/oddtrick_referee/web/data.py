"""What the pages read: the data folder's index, its logs and its tournaments.

Two rules hold for every page:

- a log is read only when a spectator may see it (the Arena's rule: not while
  the match is in progress, not while it is one sealed play of a duplicate
  pair): :func:`~oddtrick_referee.replay.sources.log_visibility`;
- a log is found through the index by match id, never by building a path from
  the id, and only a path inside the data folder's ``logs`` is read: a match id
  that is not a plain name (letters, digits, ``-``, ``_``, ``.``) is not even
  looked up.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oddtrick._log_records import log_text as written_log_text
from oddtrick._log_records import records_from_text
from oddtrick.rules import GameConfig, GameKind
from oddtrick_referee._exceptions import NoSuchMatch, NotVisible, ReplayError
from oddtrick_referee.competitions.scoring.counted import table_standings
from oddtrick_referee.replay.model import MatchReplay, replay_records
from oddtrick_referee.replay.sources import log_visibility, missing_log, safe_log_path
from oddtrick_referee.storage.match_index import MatchStore, bot_name
from oddtrick_referee.storage.sqlite import read_only
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.progress import Progress, table_progress

MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""What a match id looks like: anything else is not looked up at all."""
PAGE_SIZE = 50


@dataclasses.dataclass(frozen=True)
class MatchRow:
    """A match as the pages list it."""

    match_id: str
    category: str
    """in_progress, sealed or finished (aborted ones are finished, with status aborted)."""
    status: str
    started_at_ms: int
    finished_at_ms: int | None
    game: str
    config: GameConfig
    players: dict[str, str]
    result: dict[str, Any] | None
    table_id: str
    progress: str = ""
    """How far a table being played is (``hand 3 · trick 5``), else empty."""

    @property
    def ns(self) -> str:
        """The bots' names (not their play identities) of North and South."""
        return " & ".join(dict.fromkeys(bot_name(self.players.get(s, "?")) for s in ("N", "S")))

    @property
    def ew(self) -> str:
        return " & ".join(dict.fromkeys(bot_name(self.players.get(s, "?")) for s in ("E", "W")))

    @property
    def ns_bots(self) -> list[str]:
        """North-South's bots' names, each once (a bot page link each)."""
        return list(dict.fromkeys(bot_name(self.players.get(s, "?")) for s in ("N", "S")))

    @property
    def ew_bots(self) -> list[str]:
        return list(dict.fromkeys(bot_name(self.players.get(s, "?")) for s in ("E", "W")))

    @property
    def bots(self) -> dict[str, str]:
        """The bot's name at each seat (``heuristic`` for its play ``heuristic~0``)."""
        return {seat: bot_name(name) for seat, name in self.players.items()}

    @property
    def identities(self) -> str:
        """Who connected at each seat, as the referee knew them (``N heuristic~0 · E …``), for
        a tournament's plays, whose identities are more than the bots' names; else empty."""
        if self.bots == self.players:
            return ""
        return " · ".join(f"{seat} {self.players[seat]}" for seat in "NESW" if seat in self.players)

    @property
    def playing(self) -> bool:
        """Being played now (sealed or not)."""
        return self.status == "running"

    @property
    def status_text(self) -> str:
        if self.status == "aborted":
            return "aborted"
        if self.category == "sealed" and self.playing:
            return "sealed, playing"
        return {"in_progress": "in progress", "sealed": "sealed", "finished": "finished"}[self.category]

    @property
    def result_text(self) -> str:
        if self.category != "finished" or not self.result or self.status == "aborted":
            return ""
        totals = self.result.get("totals", [0, 0])
        winner = self.result.get("winner")
        return f"{winner + ' won' if winner else 'drawn'}, NS {totals[0]} – EW {totals[1]}"


def _row(raw: dict[str, Any], progress: Progress | None = None) -> MatchRow:
    """A listed match; a table being played says how far it is."""
    config = GameConfig.from_dict(raw["config"])
    return MatchRow(
        match_id=raw["match_id"],
        category=raw.get("category", ""),
        status=raw["status"],
        started_at_ms=raw["started_at"],
        finished_at_ms=raw["finished_at"],
        game=config.game.value,
        config=config,
        players=raw["players"],
        result=raw["result"] if raw.get("category") == "finished" else None,
        table_id=raw["details"].get("table_id", ""),
        progress=progress.text if progress is not None else "",
    )


class WebData:
    """Read-only access to one data folder, for the pages (called from worker threads)."""

    def __init__(self, data_dir: Path, page_size: int = PAGE_SIZE, cache_size: int = 32) -> None:
        self.data_dir = data_dir
        self.page_size = page_size
        self.index_path = data_dir / "oddtrick.sqlite3"
        self._cache: OrderedDict[tuple[str, int], MatchReplay] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.live_progress: Callable[[str], Progress | None] | None = None
        """How far a table of the referee beside the page is (``web_beside`` sets it)."""

    def _row(self, raw: dict[str, Any]) -> MatchRow:
        """A match as listed; a table being played with how far it is: from the referee's own
        table beside the page (exact), else from the lines its log has flushed."""
        progress = None
        if raw["status"] == "running":
            if self.live_progress is not None:
                progress = self.live_progress(raw["match_id"])
            if progress is None and raw.get("log_path"):
                contract = raw["config"].get("game") == GameKind.CONTRACT.value
                progress = table_progress(self.data_dir, raw["log_path"], contract)
        return _row(raw, progress)

    @functools.cached_property
    def store(self) -> MatchStore:
        return MatchStore(self.index_path)

    def list_matches(
        self, category: str = "", bot: str = "", game: str = "", page: int = 1
    ) -> tuple[list[MatchRow], bool]:
        """A page of matches, newest first, and whether there is a next page."""
        if not self.index_path.exists():
            return [], False
        # "In progress" is every table being played, sealed ones too (without their players).
        playing = category == "in_progress"
        categories = [category] if category and not playing else []
        size = self.page_size
        raw = self.store.list_matches(
            categories, size + 1, (page - 1) * size, bot, game, as_typed=True, playing=playing
        )
        rows = [self._row(item) for item in raw[:size]]
        return rows, len(raw) > size

    def match(self, match_id: str) -> MatchRow | None:
        if not MATCH_ID.fullmatch(match_id) or not self.index_path.exists():
            return None
        found = self.store.get(match_id)
        if found is None:
            return None
        raw = dict(found)
        raw["config"] = json.loads(raw["config"])
        raw["players"] = json.loads(raw["players"])
        raw["result"] = json.loads(raw["result"]) if raw["result"] else None
        raw["details"] = json.loads(raw["details"]) if raw["details"] else {}
        sealed = raw["status"] == "sealed" or bool(raw["details"].get("sealed"))
        if raw["status"] in ("finished", "aborted"):
            raw["category"] = "finished"
        else:
            raw["category"] = "sealed" if sealed else "in_progress"
        if raw["category"] == "sealed":
            raw["players"] = {}  # who sits where is shown once the set is released
        return self._row(raw)

    def log_text(self, match_id: str) -> str:
        """The match's log as written, if a spectator may see it.

        Raises :class:`NoSuchMatch` for no such match, :class:`NotVisible` otherwise.
        """
        if not MATCH_ID.fullmatch(match_id) or not self.index_path.exists():
            raise NoSuchMatch(match_id)
        row = self.store.get(match_id)
        if row is None:
            raise NoSuchMatch(match_id)
        problem = log_visibility(row)
        if problem:
            raise NotVisible(problem)
        path = safe_log_path(self.data_dir, row["log_path"])
        if path is None:
            raise NotVisible(f"match {match_id}'s log is not in this server's data folder")
        if not path.exists():  # named relative to the data folder: the server's own paths stay its own
            raise NotVisible(missing_log(match_id, Path("logs") / path.name))
        try:
            return written_log_text(path)
        except (OSError, EOFError):
            raise NotVisible(f"match {match_id}'s log cannot be read") from None

    def replay(self, match_id: str) -> MatchReplay:
        """The match re-created from its log (cached by the log's size: a log only grows).

        Raises :class:`NoSuchMatch`, :class:`NotVisible` or :class:`ReplayError`.
        """
        text = self.log_text(match_id)
        key = (match_id, len(text))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        match = replay_records(records_from_text(text), f"match {match_id}")
        with self._lock:
            self._cache[key] = match
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return match

    # ------------------------------------------------------------ tournaments

    def tournaments(self) -> list[dict[str, Any]]:
        """The data folder's tournaments, newest first (read-only: the folder may be a running referee's)."""
        if not self.index_path.exists():
            return []
        with read_only(self.index_path) as db:
            known = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tournaments'")
            if known.fetchone() is None:
                return []
            rows = db.execute(
                "SELECT tournament_id, created_at, settings FROM tournaments ORDER BY created_at DESC"
            ).fetchall()
        out = []
        for tournament_id, created_at, settings in rows:
            described = json.loads(settings)
            out.append(
                {
                    "id": tournament_id,
                    "created_at_ms": created_at,
                    "entries": [entry[0] for entry in described.get("entries", [])],
                    "game": GameConfig.from_dict(described["config"]).describe(),
                    "deals": described.get("deals"),
                    "duplicate": described.get("duplicate", True),
                }
            )
        return out

    def playing_tables(self, tournament_id: str) -> list[MatchRow]:
        """The tournament's tables being played now, each with how far it is (a sealed one
        without its players)."""
        if not self.index_path.exists():
            return []
        raw = self.store.list_matches([], 1000, 0, playing=True)
        prefix = tournament_id + "/"
        return [self._row(item) for item in raw if str(item["details"].get("set_id", "")).startswith(prefix)]

    def table_match_ids(self, tournament_id: str) -> list[str] | None:
        """The match of every table the tournament has stored, in play order; ``None`` if
        there is no such tournament."""

        if not any(t["id"] == tournament_id for t in self.tournaments()):
            return None
        return [match_id for match_id, _, _ in TournamentStore(self.index_path).table_matches(tournament_id)]

    def standings(self, tournament_id: str) -> dict[str, Any] | None:
        """The tournament's standings now (as ``Standings.to_json``), or ``None`` if there is none."""

        chosen = next((t for t in self.tournaments() if t["id"] == tournament_id), None)
        if chosen is None:
            return None
        store = TournamentStore(self.index_path)
        standings = table_standings(
            chosen["entries"],
            store.table_runs(tournament_id),
            store.forfeited_matches(tournament_id),
            chosen["duplicate"],
        )
        return {**chosen, "standings": standings.to_json()}


__all__ = ["PAGE_SIZE", "MatchRow", "NotVisible", "ReplayError", "WebData"]
