"""A ladder table as the match page and its traveller show it: the ladder match it is one
of two tables of, its twin (the same deals, partnerships swapped), the team result, and
each deal's two plays side by side.

A table is a ladder's when the page's leaderboard is a ladder that knows it
(:class:`LadderTables`). Nothing is said of a twin a spectator may not see (the rule of
:func:`~oddtrick_referee.replay.sources.log_visibility`, as for a tournament's tables):
while either table is sealed, the page names neither the twin nor the deal.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

from oddtrick_referee.storage.ladder_store import MatchRow
from oddtrick_referee.web.data import WebData
from oddtrick_referee.web.deals import DealLine, TablePlay, Traveller, _visible, with_plays


@runtime_checkable
class LadderTables(Protocol):
    """A leaderboard that knows which ladder match each of the referee's tables belongs to."""

    def match_of_table(self, table_id: str) -> MatchRow | None: ...


@dataclasses.dataclass(frozen=True)
class LadderPlay:
    """A ladder table's place in its match."""

    ladder_match: str
    table: int
    twin: str | None
    """The other table (``None``: it may not be seen, or there is none)."""
    teams: tuple[str, str]
    """Team A's and team B's entrants, in words."""
    result: str
    """The team result in words (empty while the match is not over)."""


def _teams(row: MatchRow) -> tuple[str, str]:
    teams = row.lineup.get("teams", [[], []])
    return " + ".join(teams[0]), " + ".join(teams[1])


def _result(row: MatchRow) -> str:
    if row.status != "finished" or row.score_a is None:
        return {"forfeit": "forfeited", "aborted": "aborted"}.get(row.status, "")
    deals = len(row.deals)
    won = {"a": "won by team A", "b": "won by team B"}.get(row.outcome or "", "drawn")
    deals_word = "deal" if deals == 1 else "deals"
    return f"team A {row.score_a:+d} over {deals} {deals_word} played at both tables: {won}"


def ladder_play(data: WebData, source: object, match_id: str) -> LadderPlay | None:
    """The ladder match of table ``match_id``, or ``None`` (no ladder here, not a ladder table,
    or the table may not be seen)."""
    if not isinstance(source, LadderTables) or not _visible(data, [match_id]):
        return None
    row = source.match_of_table(match_id)
    if row is None:
        return None
    table = row.tables.index(match_id)
    others = [t for t in row.tables if t != match_id]
    twin = others[0] if others and _visible(data, others) else None
    return LadderPlay(row.match_id, table, twin, _teams(row), _result(row))


def ladder_traveller(data: WebData, source: object, match_id: str, hand: int) -> Traveller | None:
    """Deal ``hand`` of a ladder table at both tables of its match, or ``None`` (not a ladder
    table here, or no such deal); a deal whose twin may not be seen yet is withheld."""
    if not isinstance(source, LadderTables):
        return None
    row = source.match_of_table(match_id)
    if row is None:
        return None
    if not _visible(data, list(row.tables)):
        return Traveller(row.match_id, None, match_id, None, competition="ladder")
    names = row.lineup.get("tables", [])
    plays = tuple(
        TablePlay(
            number,
            table_id,
            " + ".join(names[number][s] for s in "NS") if number < len(names) else "",
            " + ".join(names[number][s] for s in "EW") if number < len(names) else "",
            0,
            0,
        )
        for number, table_id in enumerate(row.tables)
    )
    net = {int(pair[0]): int(pair[1]) for pair in row.deals}
    team_a, team_b = _teams(row)
    line = DealLine(row.match_id, f"team A ({team_a})", f"team B ({team_b})", 1, hand, plays, None)
    twin = next((t for t in row.tables if t != match_id), None)
    shown = with_plays(data, Traveller(row.match_id, line, match_id, twin, competition="ladder"), hand)
    if shown is None or shown.deal is None:
        return shown
    difference = float(net[hand]) if hand in net else None
    return dataclasses.replace(shown, deal=dataclasses.replace(shown.deal, difference=difference))


__all__ = ["LadderPlay", "LadderTables", "ladder_play", "ladder_traveller"]
