"""The ladder as the web page's leaderboard reads it (see ``competitions.page``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

from oddtrick_referee.competitions.ladder.leaderboard import leaderboard
from oddtrick_referee.competitions.ladder.ratings import Rater
from oddtrick_referee.competitions.page import Leaderboard, LeaderboardRow
from oddtrick_referee.storage.ladder_store import LadderStore


class LadderLeaderboard:
    """Reads the ladder's store at every page view (a worker thread)."""

    def __init__(
        self, store: LadderStore, rater: Rater, title: str, connected: Callable[[], Collection[str]] = tuple
    ) -> None:
        self.store = store
        self.rater = rater
        self.title = title
        self.connected = connected

    def leaderboard(self) -> Leaderboard:
        z = self.rater.settings.z
        now_ms = int(time.time() * 1000)
        rows = [
            LeaderboardRow(
                rank=row.rank,
                bot=row.name,
                rating=row.rating,
                uncertainty=row.sigma,
                matches=row.matches,
                last_played_ms=row.last_played_ms,
                provisional=row.provisional,
                inactive=row.inactive,
                house=row.house,
                faults=row.faults,
            )
            for row in leaderboard(self.store.entrants(), self.rater, now_ms, self.connected())
        ]
        note = (
            f"Rating = μ − {z:g}σ (Weng-Lin, teams of four, each deal rated as won, drawn or lost); "
            f"provisional while σ > {self.rater.settings.provisional_sigma:g}. See docs/ladder.md."
        )
        return Leaderboard(self.title, rows, note)
