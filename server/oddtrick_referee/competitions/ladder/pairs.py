"""Which entrants keep meeting, and how they score when they do: the operator's Sybil check.

One party registering several names cannot be stopped by the referee (who
registers is the operator's business), and two such names in one match can
pool what they see: a name at one table has seen cards that a seat at the
twin table holds too. Every seat of a match is a different entrant, but the
ladder cannot know that two entrants are one party. This report is for
the operator who wants to look: for every pair of entrants that shared
matches, how many, on the same team or against each other, and how the pair
scored then beside how each scores without the other. A pair that meets more
often than its rivals, or scores far better together than apart, is worth a
look at the logs (``oddtrick ladder history``, the replay viewer).
"""

from __future__ import annotations

import dataclasses
import itertools
import statistics
from collections import defaultdict
from collections.abc import Collection, Iterable

from oddtrick_referee.storage.ladder_store import MatchRow


@dataclasses.dataclass(frozen=True)
class PairRecord:
    """Two entrants (``first`` < ``second``) over the finished matches they both played."""

    first: str
    second: str
    together: int
    """Finished matches with both in the line-up."""
    teammates: int
    opponents: int
    share: float
    """``together`` over the matches of whichever of the two played fewer: 1.0 means it
    never played without the other."""
    team_score: float | None
    """Their team's mean duplicate score per match when they were teammates."""
    first_vs_second: float | None
    """The first's team's mean duplicate score per match against the second's."""
    first_apart: float | None
    """The first's mean duplicate score per match in matches without the second."""
    second_apart: float | None

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _mean(values: list[int]) -> float | None:
    return statistics.fmean(values) if values else None


def pair_report(
    matches: Iterable[MatchRow], leave_out: Collection[str] = (), min_together: int = 1
) -> list[PairRecord]:
    """Every pair of entrants (not in ``leave_out``, the house bots say) that shared at
    least ``min_together`` finished matches, the most suspicious first: by ``share``, then
    by how many matches they shared."""
    scores: dict[str, dict[str, int]] = defaultdict(dict)
    """entrant → match id → its team's duplicate score in that match."""
    teams: dict[str, dict[str, int]] = defaultdict(dict)
    for match in matches:
        if match.status != "finished" or match.score_a is None:
            continue
        for team_number, team in enumerate(match.lineup.get("teams", [])):
            for name in set(team) - set(leave_out):
                scores[name][match.match_id] = match.score_a if team_number == 0 else -match.score_a
                teams[name][match.match_id] = team_number
    records = []
    for first, second in itertools.combinations(sorted(scores), 2):
        shared = scores[first].keys() & scores[second].keys()
        if len(shared) < max(1, min_together):
            continue
        together = [m for m in shared if teams[first][m] == teams[second][m]]
        against = [m for m in shared if teams[first][m] != teams[second][m]]
        fewest = min(len(scores[first]), len(scores[second]))
        records.append(
            PairRecord(
                first=first,
                second=second,
                together=len(shared),
                teammates=len(together),
                opponents=len(against),
                share=len(shared) / fewest,
                team_score=_mean([scores[first][m] for m in together]),
                first_vs_second=_mean([scores[first][m] for m in against]),
                first_apart=_mean([s for m, s in scores[first].items() if m not in shared]),
                second_apart=_mean([s for m, s in scores[second].items() if m not in shared]),
            )
        )
    records.sort(key=lambda r: (-r.share, -r.together, r.first, r.second))
    return records


def format_pairs(records: list[PairRecord]) -> str:
    if not records:
        return "no two entrants have finished a match together yet"

    def shown(value: float | None) -> str:
        return "-" if value is None else f"{value:+.1f}"

    header = (
        f"{'first':<20} {'second':<20} {'together':>8} {'share':>6} {'team':>5} {'vs':>4} "
        f"{'team score':>10} {'1st vs 2nd':>10} {'1st apart':>9} {'2nd apart':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in records:
        lines.append(
            f"{r.first:<20} {r.second:<20} {r.together:>8} {r.share:>6.0%} {r.teammates:>5} "
            f"{r.opponents:>4} {shown(r.team_score):>10} {shown(r.first_vs_second):>10} "
            f"{shown(r.first_apart):>9} {shown(r.second_apart):>9}"
        )
    lines.append(
        "scores: mean duplicate points per match (team: theirs as teammates; 1st vs 2nd: the first's "
        "team against the second's; apart: each without the other); share: matches together over "
        "the matches of whichever played fewer"
    )
    return "\n".join(lines)
