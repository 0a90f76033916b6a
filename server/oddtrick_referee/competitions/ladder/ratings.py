"""Ladder ratings: each entrant's strength as a mean ``mu`` and an uncertainty ``sigma``.

A ladder match is a teams match (see docs/ladder.md): four entrants against
four, or, in the trusted format, one against one, playing the same deals at
two tables, so a deal's duplicate score (team A's net points over both
tables) is what the two teams' play made of the same cards.

Two ways to rate it (``RatingSettings.method``):

* ``margin`` (the default): every deal's duplicate score is read as a
  measurement, in points, of the difference between the two teams' summed
  strengths, plus noise of ``deal_noise`` points. ``mu`` is then 25 plus the
  points per deal an entrant adds at one seat, and each deal moves the eight
  ratings as a Gaussian (Kalman) update would: by how far the score was from
  the one expected, weighted by each entrant's share of the uncertainty. A
  deal won by eight points says more than one won by one; the ``outcome``
  method counts both alike, and the margin places entrants in about half
  the deals (docs/ladder.md has the simulation).
* ``outcome``: Weng-Lin (openskill's Plackett-Luce model), each deal rated
  as one game won, drawn or lost by the team, as bridge's board-a-match
  scoring counts boards. Kept to compare with (``benchmarks/ladder_simulation.py``).

Every match first adds a little uncertainty (``tau``), so ratings keep
moving as bots are improved. The leaderboard ranks by the conservative
estimate ``mu - z * sigma`` among rated entrants; a provisional one (``sigma``
above ``provisional_sigma``) is listed apart, below them (leaderboard.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from openskill.models import PlackettLuce

METHODS = ("margin", "outcome")
"""How a deal is rated: by its duplicate score (``margin``) or by who won it (``outcome``)."""


@dataclasses.dataclass(frozen=True)
class RatingSettings:
    method: str = "margin"
    """``margin`` or ``outcome`` (see the module's docstring)."""
    mu: float = 25.0
    sigma: float = 25.0 / 3
    beta: float = 25.0 / 3
    """``outcome`` only: how much one game's result varies around the skills: twice
    openskill's default, because a game here is one deal, far noisier than a whole game
    (the ladder simulation in benchmarks/ladder_simulation.py ranks entrants soonest with it)."""
    deal_noise: float = 14.0
    """``margin`` only: the standard deviation, in points, assumed for a deal's duplicate
    score around the one the teams' strengths predict. The play's noise is about 5 points
    per table and deal between sample bots (docs/ladder.md), so about 7 for the two tables
    of a duplicate deal; twice that is assumed because the ratings keep each entrant's
    uncertainty apart (not how sure they are of teammates' sum against their difference)
    and so would otherwise be too sure too soon. The ladder simulation
    (benchmarks/ladder_simulation.py) ranks entrants soonest with about 14, for entrants
    1 or 2 points per deal apart."""
    outlier: float = 3.0
    """``margin`` only: a deal's surprise (score minus expected) counts at most this many
    of its standard deviations, so one freak deal cannot throw a rating far."""
    tau: float = 25.0 / 300
    """Uncertainty added to every rated entrant at every match."""
    z: float = 3.0
    """The conservative estimate is mu - z * sigma."""
    provisional_sigma: float = 1.25
    """Above this uncertainty an entrant is provisional: listed apart, below every rated
    entrant. With the ``margin`` method about its first 20 matches of eight deals, when
    its rating is known to within about 4 points per deal (3 sigma: the gap between the
    random and the heuristic sample bots); the ``outcome`` method's scale wanted 3.0
    (about 30 matches)."""
    draw_margin: float = 0.0
    """A deal whose duplicate score is within this of zero is drawn."""
    inactive_after_s: float = 7 * 24 * 3600.0
    """Not played for this long: listed as inactive, and its uncertainty grows."""
    inactive_sigma_per_day: float = 0.25
    """How much uncertainty an inactive entrant gains per day past ``inactive_after_s``."""


@dataclasses.dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float


class Rater:
    """Turns a match's outcome into new ratings."""

    def __init__(self, settings: RatingSettings) -> None:
        if settings.method not in METHODS:  # set in code, never from an option: a bug if it happens
            raise ValueError(f"unknown rating method {settings.method!r}: one of {', '.join(METHODS)}")
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
            if self.settings.method == "margin":
                new_a, new_b = self.rate_margin(new_a, new_b, score)
            else:
                new_a, new_b = self.rate(new_a, new_b, self.outcome(score))
        return new_a, new_b

    def lost_deal(self) -> int:
        """The duplicate score a forfeiting team is rated with on every deal: a loss by one
        deal's typical margin under ``margin`` (any loss under ``outcome``)."""
        return -max(1, round(self.settings.deal_noise)) if self.settings.method == "margin" else -1

    def rate_margin(
        self, team_a: Sequence[Rating], team_b: Sequence[Rating], score_a: float
    ) -> tuple[list[Rating], list[Rating]]:
        """One deal's duplicate score as a noisy measurement of the teams' difference.

        Each entrant holds ``4 / len(team)`` seats of its team (one in the teams format,
        four in the trusted one), and each seat adds the entrant's strength; the update
        is the Gaussian one with every entrant's uncertainty kept apart (correlations
        between teammates are not stored)."""
        seats = 4 / len(team_a)
        expected = seats * (sum(r.mu for r in team_a) - sum(r.mu for r in team_b))
        variance = seats**2 * sum(r.sigma**2 for r in (*team_a, *team_b)) + self.settings.deal_noise**2
        spread = math.sqrt(variance)
        cap = self.settings.outlier * spread
        surprise = max(-cap, min(cap, score_a - expected))

        def moved(rating: Rating, sign: float) -> Rating:
            share = seats * rating.sigma**2 / variance
            return Rating(
                rating.mu + sign * share * surprise,
                rating.sigma * math.sqrt(max(1e-12, 1 - seats * share)),
            )

        return [moved(r, 1.0) for r in team_a], [moved(r, -1.0) for r in team_b]

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
