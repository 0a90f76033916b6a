"""Who plays whom next: the ladder's pairing policy, as a pure function.

The policy (docs/ladder.md says why):

1. Only an entrant with a free seat can be chosen, and every match holds at
   least one entrant that is not a house bot (house bots fill seats; they do
   not play each other for nothing).
2. The *anchor* is the waiting entrant that has played least, then longest
   ago: new and rarely-played entrants come first, and since everyone's
   "longest ago" comes round, the leader is never starved.
3. The others are the entrants nearest the anchor in rating, except that
   with probability ``explore`` a seat goes to any waiting entrant, so ratings
   stay connected across the whole ladder. Entrants fill seats before house
   bots do.
4. A line-up identical to one of the last few is changed while another
   entrant is waiting who could take a place in it.
5. Teams are balanced: the split is drawn at random from the half of all
   35 ways of dividing the eight into two teams of four whose summed ratings
   are closest. Always the single most balanced split would put the same
   entrants together again and again, and team results cannot then tell
   teammates apart. Which pair sits at which table is drawn at random too.

In the standard (untrusted) format a match is two tables and eight different
entrants, one seat each; in the trusted format it is two entrants, each
holding a partnership at one table and the other partnership at the twin.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Sequence

from oddtrick.rules import Seat

UNTRUSTED_SIZE = 8
TRUSTED_SIZE = 2


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    free_seats: int
    mu: float
    matches: int
    last_played_ms: int | None
    house: bool


@dataclasses.dataclass(frozen=True)
class Lineup:
    """Two tables of the same deals; team A is NS at table 1 and EW at table 2."""

    tables: tuple[dict[Seat, str], dict[Seat, str]]
    team_a: tuple[str, ...]
    team_b: tuple[str, ...]

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.team_a) | frozenset(self.team_b)

    def seats_needed(self) -> dict[str, int]:
        needs: dict[str, int] = {}
        for table in self.tables:
            for name in table.values():
                needs[name] = needs.get(name, 0) + 1
        return needs

    def to_record(self) -> dict[str, object]:
        return {
            "tables": [{str(seat): name for seat, name in table.items()} for table in self.tables],
            "teams": [list(self.team_a), list(self.team_b)],
        }


def seats_per_entrant(trusted: bool) -> int:
    return 4 if trusted else 1


def choose_lineup(
    candidates: Sequence[Candidate],
    rng: random.Random,
    trusted: bool = False,
    explore: float = 0.25,
    recent: Sequence[frozenset[str]] = (),
) -> Lineup | None:
    """The next match among the waiting entrants, or None if none can be made now."""
    size = TRUSTED_SIZE if trusted else UNTRUSTED_SIZE
    need = seats_per_entrant(trusted)
    pool = [c for c in candidates if c.free_seats >= need]
    entrants = [c for c in pool if not c.house]
    if len(pool) < size or not entrants:
        return None
    anchor = min(entrants, key=lambda c: (c.matches, c.last_played_ms or 0, rng.random()))
    chosen = [anchor]
    others = [c for c in entrants if c is not anchor]
    houses = [c for c in pool if c.house]
    for group in (others, houses):
        while group and len(chosen) < size:
            pick = _pick(group, anchor.mu, rng, explore)
            group.remove(pick)
            chosen.append(pick)
    names = frozenset(c.name for c in chosen)
    if names in recent:
        chosen = _vary(chosen, [c for c in pool if c.name not in names], anchor, rng)
    return _seat(chosen, rng, trusted)


def _pick(group: list[Candidate], mu: float, rng: random.Random, explore: float) -> Candidate:
    if rng.random() < explore:
        return rng.choice(group)
    return min(group, key=lambda c: (abs(c.mu - mu), rng.random()))


def _vary(
    chosen: list[Candidate], waiting: list[Candidate], anchor: Candidate, rng: random.Random
) -> list[Candidate]:
    """Swap one non-anchor place for a waiting entrant (an entrant before a house bot)."""
    if not waiting:
        return chosen
    newcomers = [c for c in waiting if not c.house] or waiting
    incoming = rng.choice(newcomers)
    replaceable = [c for c in chosen if c is not anchor and (c.house or not incoming.house)]
    if not replaceable:
        return chosen
    outgoing = max(replaceable, key=lambda c: (c.house, abs(c.mu - anchor.mu)))
    return [incoming if c is outgoing else c for c in chosen]


def _seat(chosen: list[Candidate], rng: random.Random, trusted: bool) -> Lineup:
    ranked = sorted(chosen, key=lambda c: (-c.mu, c.name))
    if trusted:
        a, b = ranked[0].name, ranked[1].name
        if rng.random() < 0.5:
            a, b = b, a
        one = {Seat.NORTH: a, Seat.SOUTH: a, Seat.EAST: b, Seat.WEST: b}
        two = {Seat.NORTH: b, Seat.SOUTH: b, Seat.EAST: a, Seat.WEST: a}
        return Lineup((one, two), (a,), (b,))
    team_a, team_b = _balanced_split(ranked, rng)
    rng.shuffle(team_a)
    rng.shuffle(team_b)
    one = {Seat.NORTH: team_a[0], Seat.SOUTH: team_a[1], Seat.EAST: team_b[0], Seat.WEST: team_b[1]}
    two = {Seat.NORTH: team_b[2], Seat.SOUTH: team_b[3], Seat.EAST: team_a[2], Seat.WEST: team_a[3]}
    return Lineup((one, two), tuple(team_a), tuple(team_b))


def _balanced_split(ranked: list[Candidate], rng: random.Random) -> tuple[list[str], list[str]]:
    everyone = frozenset(range(len(ranked)))
    splits = [frozenset(c) for c in itertools.combinations(range(len(ranked)), len(ranked) // 2) if 0 in c]

    def imbalance(side: frozenset[int]) -> float:
        return abs(sum(ranked[i].mu for i in side) - sum(ranked[i].mu for i in everyone - side))

    splits.sort(key=lambda side: (imbalance(side), sorted(side)))
    side = rng.choice(splits[: max(1, (len(splits) + 1) // 2)])
    team_a = [ranked[i].name for i in sorted(side)]
    team_b = [ranked[i].name for i in sorted(everyone - side)]
    if rng.random() < 0.5:
        team_a, team_b = team_b, team_a
    return team_a, team_b
