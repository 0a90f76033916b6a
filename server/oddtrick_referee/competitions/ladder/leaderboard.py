"""What the leaderboard shows: one function from stored records to ranked rows.

The CLI, the Arena RPCs and the web page all read the ladder through here,
so they rank and mark entrants the same way.

Rated entrants come first, ranked by the conservative estimate; provisional
ones (uncertainty still above the ladder's threshold: too few matches)
follow, apart, ranked among themselves by their mean, so a newcomer is
never listed above an entrant the ladder has placed, however its first
matches went. Every row but the last says how likely it is that its entrant
is stronger than the next one's (their means compared, both uncertainties
counted): two neighbours whose order is a coin toss are shown as one.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from oddtrick_referee.competitions.ladder.ratings import Rater, Rating
from oddtrick_referee.storage.ladder_store import EntrantRecord


@dataclasses.dataclass(frozen=True)
class LeaderRow:
    rank: int
    name: str
    rating: float
    """The conservative estimate the table is ranked by."""
    mu: float
    sigma: float
    matches: int
    wins: int
    draws: int
    losses: int
    forfeits: int
    faults: int
    last_played_ms: int | None
    provisional: bool
    inactive: bool
    house: bool
    connected: bool
    draining: bool
    """Connected, and every session it has said Leave: it finishes its matches, takes no new one."""
    stronger_than_next: float | None = None
    """The probability that this entrant is stronger than the one on the next row
    (None on the last row)."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def leaderboard(
    entrants: Sequence[EntrantRecord], rater: Rater, now_ms: int, presence: Mapping[str, bool] | None = None
) -> list[LeaderRow]:
    """Active entrants: the rated ones by conservative rating (ties: more matches, then
    name), then the provisional ones by mean (ties: more matches, then name). ``presence``
    (from the running ladder: who is connected, and whether draining) marks the rows."""
    presence = presence or {}
    rows = []
    for entrant in entrants:
        if entrant.retired_ms is not None:
            continue
        rating = rater.with_inactivity(Rating(entrant.mu, entrant.sigma), entrant.last_played_ms, now_ms)
        rows.append((entrant, rating))
    rows.sort(
        key=lambda pair: (
            rater.provisional(pair[1]),
            -(pair[1].mu if rater.provisional(pair[1]) else rater.conservative(pair[1])),
            -pair[0].matches,
            pair[0].name,
        )
    )
    ratings = [rating for _, rating in rows]
    return [
        LeaderRow(
            rank=rank,
            name=entrant.name,
            rating=rater.conservative(rating),
            mu=rating.mu,
            sigma=rating.sigma,
            matches=entrant.matches,
            wins=entrant.wins,
            draws=entrant.draws,
            losses=entrant.losses,
            forfeits=entrant.forfeits,
            faults=entrant.faults,
            last_played_ms=entrant.last_played_ms,
            provisional=rater.provisional(rating),
            inactive=rater.inactive(entrant.last_played_ms, now_ms),
            house=entrant.house,
            connected=entrant.name in presence,
            draining=presence.get(entrant.name, False),
            stronger_than_next=(stronger_probability(rating, ratings[rank]) if rank < len(ratings) else None),
        )
        for rank, (entrant, rating) in enumerate(rows, start=1)
    ]


def stronger_probability(first: Rating, second: Rating) -> float:
    """P(first's true strength > second's), both strengths taken as independent Gaussians."""
    spread = math.hypot(first.sigma, second.sigma)
    if spread == 0:
        return 0.5 if first.mu == second.mu else float(first.mu > second.mu)
    return 0.5 * math.erfc((second.mu - first.mu) / (spread * math.sqrt(2)))
