"""What the leaderboard shows: one function from stored records to ranked rows.

The CLI, the Arena RPCs and the web page all read the ladder through here,
so they rank and mark entrants the same way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
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

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def leaderboard(
    entrants: Sequence[EntrantRecord], rater: Rater, now_ms: int, connected: Collection[str] = ()
) -> list[LeaderRow]:
    """Active entrants, best conservative rating first (ties: more matches, then name)."""
    rows = []
    for entrant in entrants:
        if entrant.retired_ms is not None:
            continue
        rating = rater.with_inactivity(Rating(entrant.mu, entrant.sigma), entrant.last_played_ms, now_ms)
        rows.append((entrant, rating))
    rows.sort(key=lambda pair: (-rater.conservative(pair[1]), -pair[0].matches, pair[0].name))
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
            connected=entrant.name in connected,
        )
        for rank, (entrant, rating) in enumerate(rows, start=1)
    ]
