"""A whole site for the page's browser tests: a Contract Whist and a classic Whist duplicate
tournament of the sample bots, played to their end, and a ladder whose rated matches are
those tables, so its rating chart links to replays that exist. Real processes, real logs."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import trio

from oddtrick.rules import GameConfig
from oddtrick_referee.storage.tournament_store import TournamentStore
from tests.test_web_pages import _plan

DAY_MS = 86_400_000
FIRST_MS = 1_780_000_000_000
"""When the ladder's first rated match ended (in 2026): its dates read as dates."""
RATINGS = ((25.0, 8.0), (27.0, 7.0), (26.0, 6.5), (29.5, 6.0))
"""The ladder's winners' (mu, sigma) after each rated match, in order."""


@dataclasses.dataclass(frozen=True)
class Site:
    data_dir: Path
    leaderboard: Any
    tournaments: dict[str, str]
    """Each game's tournament name."""
    matches: dict[str, list[str]]
    """Each game's tournament tables' match ids."""
    rated: list[str]
    """The ladder's rated matches, in order."""


def build_site(data_dir: Path) -> tuple[Site, Any]:
    """The site in ``data_dir``, and the ladder's database (to close)."""
    from oddtrick_referee.competitions.tournaments.tournament import run_tournament

    tournaments = {"contract": "phone cup", "classic": "classic phone cup"}
    matches: dict[str, list[str]] = {}
    for game, name in tournaments.items():
        plan = dataclasses.replace(
            _plan(name, f"{game}-phone", 2, 2), config=GameConfig.from_dict({"game": game})
        )
        trio.run(lambda plan=plan: run_tournament(plan, data_dir, progress_stream=io.StringIO()))
        store = TournamentStore(data_dir / "oddtrick.sqlite3")
        matches[game] = [run.match_id for run in store.table_runs(name)]
    rated = matches["contract"] + matches["classic"]
    source, database = rated_ladder(data_dir, rated)
    return Site(data_dir, source, tournaments, matches, rated), database


def rated_ladder(folder: Path, match_ids: list[str]) -> tuple[Any, Any]:
    """A ladder's store in ``folder`` with one rated match of a1..a4 against b1..b4 per id,
    a day apart: its leaderboard and the database to close."""
    from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings
    from oddtrick_referee.competitions.ladder.web_source import LadderLeaderboard
    from oddtrick_referee.storage.database import open_database
    from oddtrick_referee.storage.ladder_store import LadderStore, RatingChange

    settings = RatingSettings()
    database = open_database(None, folder, "ladder.sqlite3")
    store = LadderStore(database, settings.mu, settings.sigma)
    teams = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
    lineup = {
        "tables": [
            {"N": "a1", "S": "a2", "E": "b1", "W": "b2"},
            {"N": "b3", "S": "b4", "E": "a3", "W": "a4"},
        ],
        "teams": teams,
    }
    for name in teams[0] + teams[1]:
        store.register(name, now_ms=FIRST_MS - DAY_MS)
    for number, (match_id, (mu, sigma)) in enumerate(zip(match_ids, RATINGS, strict=False)):
        at = FIRST_MS + number * DAY_MS
        store.plan_match(match_id, f"c{number}", lineup, {"game": "contract"}, now_ms=at - 60_000)
        assert store.claim_match(match_id, "referee-1")

        def rate(current: dict[str, Any], mu: float = mu, sigma: float = sigma) -> list[RatingChange]:
            return [RatingChange(n, mu, sigma, "win") for n in teams[0]] + [
                RatingChange(n, 50.0 - mu, sigma, "loss") for n in teams[1]
            ]

        store.finish_match(match_id, "finished", "seed", 12, "a", [(1, 12)], rate, {}, now_ms=at)
    return LadderLeaderboard(store, Rater(settings), "Ladder"), database
