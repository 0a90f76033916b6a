"""When a competition's deals may be shown to anyone: the one rule.

A table's log, replay, analysis, PBN, traveller and ``Arena.GetMatchLog`` all read the
match index's seal (a sealed match is withheld from every one of them, by the index and
the Arena alike): so what a competition decides here is the one thing that matters, when
to release a set. The rule: a set is released only when every table of it is over and no
table of the competition still to be played has any of its deals. A deal is known by what
deals it: its set's seed (the twins of a duplicate set share it, and nothing else does),
or its index in a fixed deal file (``--deals-from``), which later pairings of a round
robin play again when the file is shorter than the tournament.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from oddtrick.deal_sets import MatchDeals


def deal_keys(set_id: str, deals: MatchDeals | None) -> frozenset[str]:
    """What a table deals from: its set's seed, or the indices of a deal file's deals."""
    if deals is None:
        return frozenset({f"seed of {set_id}"})
    return frozenset(f"deal {index} of {deals.deal_set.sha256}" for index in deals.indices)


@dataclasses.dataclass(frozen=True)
class PlannedTable:
    """One table a competition plans: its set, the deals it plays, and whether it is over
    (played and stored, or never to be played: a forfeited match)."""

    set_id: str
    deals: frozenset[str]
    over: bool


def publishable(tables: Iterable[PlannedTable]) -> list[str]:
    """The sets that may be released now: all their tables over, and none of their deals
    still to be dealt at a table that is not."""
    tables = list(tables)
    pending: set[str] = set()
    for table in tables:
        if not table.over:
            pending |= table.deals
    by_set: dict[str, list[PlannedTable]] = {}
    for table in tables:
        by_set.setdefault(table.set_id, []).append(table)
    return sorted(
        set_id
        for set_id, of_set in by_set.items()
        if all(table.over for table in of_set) and not any(table.deals & pending for table in of_set)
    )
