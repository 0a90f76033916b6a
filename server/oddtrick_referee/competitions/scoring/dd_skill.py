"""Double-dummy skill per tournament entry: the tricks its cards lose per deal against
perfect play, from ``oddtrick analyze``'s figures (docs/standings.md).

Points per deal say who won; they carry the noise of everything that happened
at the table, the opponent's play included. The double-dummy loss looks at
the entry's own decisions only: for each card it played, the tricks its side
could still take with every hand known, before the card and after it
(:func:`oddtrick.analysis.analyze_logs`); the difference is what the card
cost against the best card. An entry's loss on a deal is the sum over the
cards of the seats it held at that table (a tournament entry holds a
partnership, so both its seats' cards); under duplicate its two plays of the
same deal (partnerships swapped) are averaged into one sample, as the
standings average their points, so a deal is the unit and the interval is
a t interval over deals.

What it does not see: the auction of Contract Whist (no card is played), and
the difference between a bad card and an unlucky guess (double-dummy play
knows every hand; read the figure in totals over many deals). Lower is
better; a perfect double-dummy player loses 0.

Pure computation on the analysis's plain data: no I/O (the logs are read and
solved by :mod:`oddtrick_referee.competitions.scoring.dd_skill_logs`).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Any

from oddtrick_referee.competitions.scoring.intervals import t_quantile

__all__ = ["DdSkill", "dd_samples", "dd_skill", "summarise"]

METHOD = (
    "DD lost/deal = mean over deals of the tricks the entry's cards lost against the best card "
    "with all hands known (both its seats' cards at a table; a duplicate deal's two plays "
    "averaged); 95% CI = mean +/- t(0.975, n-1)*s/sqrt(n) over those deals; lower is better"
)


@dataclass(frozen=True)
class DdSkill:
    """One entry's double-dummy loss: ``lost_per_deal`` is None without a played deal, the
    interval None with fewer than two."""

    entry: str
    deals: int
    lost_per_deal: float | None
    ci_low: float | None
    ci_high: float | None

    def to_json(self) -> dict[str, Any]:
        return {
            "deals": self.deals,
            "lost_per_deal": self.lost_per_deal,
            "ci95": None if self.ci_low is None or self.ci_high is None else [self.ci_low, self.ci_high],
        }


def dd_samples(
    analysis: Mapping[str, Any],
    entry_of: Callable[[str], str | None],
    deal_of: Callable[[str | None, int], Hashable],
) -> dict[str, dict[Hashable, float]]:
    """Per entry, per deal: the tricks its cards lost on that deal (its plays averaged).

    ``analysis`` is :func:`oddtrick.analysis.analyze_logs`'s result. ``entry_of`` names the
    entry behind a player name (None: not counted); ``deal_of(match_id, hand)`` names the
    deal a log's hand was, the same for the two tables of a duplicate deal."""
    plays: dict[str, dict[Hashable, list[int]]] = {}
    for log in analysis["logs"]:
        players: Mapping[str, str] = log["players"]
        for hand in log["hands"]:
            deal = deal_of(log.get("match_id"), int(hand["hand"]))
            held: dict[str, int] = {}
            for letter, lost in hand["lost"].items():
                entry = entry_of(players.get(letter, "?"))
                if entry is not None:
                    held[entry] = held.get(entry, 0) + int(lost)
            for entry, lost in held.items():
                plays.setdefault(entry, {}).setdefault(deal, []).append(lost)
    return {
        entry: {deal: statistics.fmean(values) for deal, values in deals.items()}
        for entry, deals in plays.items()
    }


def summarise(entry: str, samples: list[float]) -> DdSkill:
    """Mean and 95% t interval of one entry's per-deal losses."""
    n = len(samples)
    if n == 0:
        return DdSkill(entry, 0, None, None, None)
    mean = statistics.fmean(samples)
    if n < 2:
        return DdSkill(entry, 1, mean, None, None)
    half = t_quantile(0.975, n - 1) * statistics.stdev(samples) / math.sqrt(n)
    return DdSkill(entry, n, mean, mean - half, mean + half)


def dd_skill(
    entries: list[str],
    analysis: Mapping[str, Any],
    entry_of: Callable[[str], str | None],
    deal_of: Callable[[str | None, int], Hashable],
) -> dict[str, DdSkill]:
    """Every entry's :class:`DdSkill` (one without a played hand has no figure)."""
    samples = dd_samples(analysis, entry_of, deal_of)
    return {name: summarise(name, list(samples.get(name, {}).values())) for name in entries}
