"""Ladder ratings: Weng-Lin (openskill's Plackett-Luce model), rated as teams.

A ladder match is a teams match (see docs/ladder.md): four entrants against
four, or, in the trusted format, one against one. openskill rates teams
natively and keeps a mean ``mu`` and an uncertainty ``sigma`` per entrant.
Each deal of a match is rated as one game won, drawn or lost by the team, as
bridge's board-a-match scoring counts boards: a match of eight deals carries
eight outcomes rather than one, which ranks entrants in far fewer matches
(docs/ladder.md has the simulation). Every match first adds a little
uncertainty (``tau``), so ratings keep moving as bots are improved.

The leaderboard ranks by the conservative estimate ``mu - z * sigma``: an
entrant is placed where it is very likely at least as good as shown, so a
lucky newcomer does not top the table after one match.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from openskill.models import PlackettLuce


@dataclasses.dataclass(frozen=True)
class RatingSettings:
    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 3
    """How much one game's result varies around the skills: twice openskill's default,
    because a game here is one deal, far noisier than a whole game (the ladder
    simulation in benchmarks/ladder_simulation.py ranks entrants soonest with it)."""
    tau: float = 25.0 / 300
    """Uncertainty added to every rated entrant at every match."""
    z: float = 3.0
    """The conservative estimate is mu - z * sigma."""
    provisional_sigma: float = 3.0
    """Above this uncertainty an entrant is marked provisional."""
    draw_margin: float = 0.0
    """A deal whose duplicate score is within this of zero is drawn."""
    inactive_after_s: float = 7 * 24 * 3600.0
    """Not played for this long: listed as inactive, and its uncertainty grows."""
    inactive_sigma_per_day: float = 0.5
    """How much uncertainty an inactive entrant gains per day past ``inactive_after_s``."""


@dataclasses.dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float


class Rater:
    """Turns a match's outcome into new ratings."""

    def __init__(self, settings: RatingSettings) -> None:
        self.settings = settings
        # tau is added once per match by rate_match, not at every deal.
        self._model = PlackettLuce(mu=settings.mu, sigma=settings.sigma, beta=settings.beta, tau=0.0)

    def conservative(self, rating: Rating) -> float:
        return rating.mu - self.settings.z * rating.sigma

    def outcome(self, score_a: float) -> str:
        """``a``, ``b`` or ``draw`` for team A's duplicate score on a deal (or per deal of a match)."""
        if abs(score_a) <= self.settings.draw_margin:
            return "draw"
        return "a" if score_a > 0 else "b"

    def rate_match(
        self, team_a: Sequence[Rating], team_b: Sequence[Rating], deal_scores: Sequence[int]
    ) -> tuple[list[Rating], list[Rating]]:
        """New ratings after a match: tau added once, then each deal rated in turn."""
        tau = self.settings.tau
        new_a = [Rating(r.mu, math.hypot(r.sigma, tau)) for r in team_a]
        new_b = [Rating(r.mu, math.hypot(r.sigma, tau)) for r in team_b]
        for score in deal_scores:
            new_a, new_b = self.rate(new_a, new_b, self.outcome(score))
        return new_a, new_b

    def rate(
        self, team_a: Sequence[Rating], team_b: Sequence[Rating], outcome: str
    ) -> tuple[list[Rating], list[Rating]]:
        ranks: list[float] = {"a": [0.0, 1.0], "b": [1.0, 0.0], "draw": [0.0, 0.0]}[outcome]
        teams = [
            [self._model.rating(mu=r.mu, sigma=r.sigma) for r in team_a],
            [self._model.rating(mu=r.mu, sigma=r.sigma) for r in team_b],
        ]
        new_a, new_b = self._model.rate(teams, ranks=ranks)
        return (
            [Rating(float(p.mu), float(p.sigma)) for p in new_a],
            [Rating(float(p.mu), float(p.sigma)) for p in new_b],
        )

    def with_inactivity(self, rating: Rating, last_played_ms: int | None, now_ms: int) -> Rating:
        """The uncertainty an entrant has after a long absence (never above the initial one)."""
        idle_days = self.idle_days(last_played_ms, now_ms)
        if idle_days <= 0:
            return rating
        grown = math.sqrt(rating.sigma**2 + (self.settings.inactive_sigma_per_day**2) * idle_days)
        return Rating(rating.mu, min(grown, max(self.settings.sigma, rating.sigma)))

    def idle_days(self, last_played_ms: int | None, now_ms: int) -> float:
        """Days past the inactivity threshold (0 while active or never played)."""
        if last_played_ms is None:
            return 0.0
        idle_s = (now_ms - last_played_ms) / 1000 - self.settings.inactive_after_s
        return max(0.0, idle_s / 86400)

    def inactive(self, last_played_ms: int | None, now_ms: int) -> bool:
        if last_played_ms is None:
            return False
        return (now_ms - last_played_ms) / 1000 > self.settings.inactive_after_s

    def provisional(self, rating: Rating) -> bool:
        return rating.sigma > self.settings.provisional_sigma
