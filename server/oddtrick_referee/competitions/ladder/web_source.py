"""The ladder as the web page's leaderboard reads it (see ``competitions.page``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from oddtrick_referee.competitions.ladder.leaderboard import leaderboard
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating
from oddtrick_referee.competitions.tournaments.page import Leaderboard, LeaderboardRow, RatingPoint
from oddtrick_referee.storage.ladder_store import LadderStore, MatchRow

_METHOD = {
    "margin": "teams of four, each deal's duplicate score rated by its margin",
    "outcome": "Weng-Lin, teams of four, each deal rated as won, drawn or lost",
}


class LadderLeaderboard:
    """Reads the ladder's store at every page view (a worker thread)."""

    def __init__(
        self, store: LadderStore, rater: Rater, title: str, presence: Callable[[], Mapping[str, bool]] = dict
    ) -> None:
        self.store = store
        self.rater = rater
        self.title = title
        self.presence = presence
        """Who is connected now, and whether draining (see ``Ladder.presence``)."""

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
                stronger_than_next=row.stronger_than_next,
                draining=row.draining,
            )
            for row in leaderboard(self.store.entrants(), self.rater, now_ms, self.presence())
        ]
        note = (
            f"Rating = μ − {z:g}σ ({_METHOD[self.rater.settings.method]}); provisional while "
            f"σ > {self.rater.settings.provisional_sigma:g}, listed below every rated bot. "
            "> next: the chance a bot is stronger than the one below it. See docs/ladder.md."
        )
        return Leaderboard(self.title, rows, note)

    def match_of_table(self, table_id: str) -> MatchRow | None:
        """The ladder match a table of the referee's belongs to (the match page's links)."""
        return self.store.match_of_table(table_id)

    def rating_history(self, name: str) -> list[RatingPoint]:
        """The bot's rating after each of its rated matches, oldest first: the rating the
        leaderboard ranks by (μ − zσ, before any growth of σ for inactivity)."""
        return [
            RatingPoint(
                int(row["at_ms"]),
                str(row["match_id"]),
                self.rater.conservative(Rating(float(row["mu"]), float(row["sigma"]))),
            )
            for row in self.store.rating_history(name)
        ]
