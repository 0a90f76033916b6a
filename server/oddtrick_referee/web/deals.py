"""A tournament's deals as the pages show them: each deal's two tables side by side (the
traveller of duplicate bridge), and the list of every deal with its two results.

The difference shown for a deal is the one the standings add up:
:func:`~oddtrick_referee.competitions.scoring.standings.deal_score_halves` computes both. A deal
is shown only once every play of its set may be seen (the rule of
:func:`~oddtrick_referee.replay.sources.log_visibility`): the twin of a play still running
shows cards the other table has yet to see.
"""

from __future__ import annotations

import dataclasses

from oddtrick.rules import Seat, Suit
from oddtrick_referee._exceptions import NoSuchMatch, NotVisible, ReplayError
from oddtrick_referee.competitions.scoring.standings import DealResult, deal_score_halves
from oddtrick_referee.replay.model import HandReplay, MatchReplay, holding_text
from oddtrick_referee.replay.sources import log_visibility
from oddtrick_referee.replay.terminal import trumps_line
from oddtrick_referee.storage.results import TableResult
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.data import WebData
from oddtrick_referee.web.deal_table import DealTable, deal_table


@dataclasses.dataclass(frozen=True)
class TablePlay:
    """One table's play of a deal."""

    table: int
    match_id: str
    ns: str
    ew: str
    ns_points: int
    ew_points: int
    contract: str = ""
    """The contract (Contract Whist) or the trumps and how they were chosen (classic), in words."""
    tricks: tuple[int, int] | None = None
    lead: tuple[str, str] | None = None
    """The opening lead: its seat's letter and the card (``"W"``, ``"SA"``); ``None``: no play."""


@dataclasses.dataclass(frozen=True)
class DealLine:
    """A deal of a tournament match, with its plays (two under duplicate, table 0 first)."""

    match_key: str
    first: str
    second: str
    set_number: int
    deal_number: int
    tables: tuple[TablePlay, ...]
    difference: float | None
    """The match's first entry's deal score as the standings count it (``None``: the other
    table of a duplicate deal is missing, and the standings leave the deal out)."""

    @property
    def difference_text(self) -> str:
        if self.difference is None:
            return "n/a"
        return f"{self.first} {self.difference:+g}"


@dataclasses.dataclass(frozen=True)
class TournamentDeals:
    tournament_id: str
    duplicate: bool
    deals: tuple[DealLine, ...]
    withheld_sets: int
    """Sets some play of which may not be seen yet: their deals are not listed."""


def _visible(data: WebData, match_ids: list[str]) -> bool:
    """Whether a spectator may see every one of these matches."""
    rows = data.store.get_many(match_ids)
    return all(match_id in rows and not log_visibility(rows[match_id]) for match_id in match_ids)


def tournament_deals(data: WebData, tournament_id: str) -> TournamentDeals | None:
    """Every deal of the tournament whose set may be seen, with its two results."""

    chosen = next((t for t in data.tournaments() if t["id"] == tournament_id), None)
    if chosen is None:
        return None
    duplicate = bool(chosen["duplicate"])
    store = TournamentStore(data.index_path)
    runs = store.table_runs(tournament_id)
    sets: dict[tuple[str, int], list[TableResult]] = {}
    for run in runs:
        sets.setdefault((run.match_key, run.set_number), []).append(run)
    rows = data.store.get_many([run.match_id for run in runs])
    shown = {
        key
        for key, plays in sets.items()
        if all(p.match_id in rows and not log_visibility(rows[p.match_id]) for p in plays)
    }
    match_of = {run.key: run.match_id for run in runs}
    by_deal: dict[tuple[str, int, int], list[DealResult]] = {}
    for result in store.deal_results(tournament_id):
        if (result.match, result.set_number) in shown:
            by_deal.setdefault((result.match, result.set_number, result.deal_number), []).append(result)
    lines = []
    for (match_key, set_number, deal_number), plays in sorted(by_deal.items()):
        plays.sort(key=lambda p: p.table)
        tables = tuple(
            TablePlay(
                p.table,
                match_of[(p.match, p.set_number, p.table)],
                p.ns_entry,
                p.ew_entry,
                p.ns_points,
                p.ew_points,
            )
            for p in plays
        )
        if not duplicate:
            difference: float | None = deal_score_halves(plays[0]) / 2
        elif len(plays) == 2:
            difference = deal_score_halves(plays[0], plays[1]) / 2
        else:
            difference = None
        first = plays[0]
        lines.append(
            DealLine(match_key, first.first, first.second, set_number, deal_number, tables, difference)
        )
    return TournamentDeals(tournament_id, duplicate, tuple(lines), len(sets) - len(shown))


@dataclasses.dataclass(frozen=True)
class Traveller:
    """A deal's page: the deal at each table, the twin play linked."""

    tournament_id: str
    deal: DealLine | None
    """``None``: its set may not be seen yet (``sealed``)."""
    match_id: str
    twin: str | None
    """The match that played the same deal at the other table (``None``: none, or not yet)."""
    diagram: tuple[tuple[str, tuple[tuple[str, bool, str], ...]], ...] = ()
    """The four hands as dealt, North first: each seat's letter and its suits, spades first,
    as (symbol, red, ranks high to low) (empty: no log could be read)."""
    dealer: str = ""
    table: DealTable | str | None = None
    """The deal's double-dummy table, or why there is none (:mod:`.deal_table`)."""
    competition: str = "tournament"
    """``tournament`` (``tournament_id`` names it) or ``ladder`` (it names the ladder match)."""


def traveller(data: WebData, match_id: str, hand: int) -> Traveller | None:
    """The deal ``hand`` of the tournament play ``match_id`` at both tables; ``None`` if the
    match played no tournament table or has no such deal."""

    if not data.tournaments():
        return None
    store = TournamentStore(data.index_path)
    found = store.run_of_match(match_id)
    if found is None:
        return None
    tournament_id, match_key, set_number, table_no = found
    twin_run = next(
        (
            run
            for run in store.table_runs(tournament_id)
            if run.match_key == match_key and run.set_number == set_number and run.table_no != table_no
        ),
        None,
    )
    twin = None if twin_run is None else twin_run.match_id
    if not _visible(data, [match_id] + ([twin] if twin else [])):
        # Nothing of the set is said, not even whether its other table has been played.
        return Traveller(tournament_id, None, match_id, None)
    deals = tournament_deals(data, tournament_id)
    assert deals is not None
    line = next(
        (
            d
            for d in deals.deals
            if d.match_key == match_key and d.set_number == set_number and d.deal_number == hand
        ),
        None,
    )
    if line is None:
        return None
    return with_plays(data, Traveller(tournament_id, line, match_id, twin), hand)


def with_plays(data: WebData, shown: Traveller, hand: int) -> Traveller | None:
    """The traveller with what each table's log says of the deal: its contract or trumps,
    opening lead and tricks (and, for a ladder, its points), the deal diagram and its
    double-dummy table; ``None`` when no table's log has the deal."""
    line = shown.deal
    assert line is not None
    ladder = shown.competition == "ladder"
    tables = []
    dealt: tuple[MatchReplay, HandReplay] | None = None
    for table in line.tables:
        try:
            replay = data.replay(table.match_id)
        except (NoSuchMatch, NotVisible, ReplayError):  # a log gone or unreadable: the points still stand
            tables.append(table)
            continue
        played = next((h for h in replay.hands if h.number == hand), None)
        if played is None or played.result is None:
            tables.append(table)
            continue
        dealt = dealt or (replay, played)
        first = played.plays[0] if played.plays else None
        result = played.result
        tables.append(
            dataclasses.replace(
                table,
                contract=trumps_line(replay, played),
                tricks=(result.tricks[0], result.tricks[1]),
                lead=None if first is None else (first.seat.name[0], str(first.card)),
                ns_points=result.points[0] + result.honours[0] if ladder else table.ns_points,
                ew_points=result.points[1] + result.honours[1] if ladder else table.ew_points,
            )
        )
    if dealt is None:
        return (
            None
            if ladder
            else dataclasses.replace(shown, deal=dataclasses.replace(line, tables=tuple(tables)))
        )
    replay, played = dealt
    return dataclasses.replace(
        shown,
        deal=dataclasses.replace(line, tables=tuple(tables)),
        diagram=diagram(played),
        dealer=played.dealer.name[0],
        table=deal_table(played.deal, replay.classic, played.trumps, played.dealer),
    )


def diagram(hand: HandReplay) -> tuple[tuple[str, tuple[tuple[str, bool, str], ...]], ...]:
    """The four hands as dealt, as a hand record lays them out."""
    return tuple(
        (
            seat.name[0],
            tuple(
                (
                    suit.symbol,
                    suit in (Suit.HEARTS, Suit.DIAMONDS),
                    " ".join(c.rank.label for c in held) or "—",
                )
                for suit, held in holding_text(hand.deal[seat])
            ),
        )
        for seat in Seat
    )


def tournament_play(data: WebData, match_id: str) -> tuple[str, str | None] | None:
    """(tournament, twin match) of a tournament play that may be seen; the twin is ``None``
    when there is none yet or it may not be seen. ``None`` for any other match."""

    if not data.tournaments():
        return None
    store = TournamentStore(data.index_path)
    found = store.run_of_match(match_id)
    if found is None or not _visible(data, [match_id]):
        return None
    tournament_id, match_key, set_number, table_no = found
    for run in store.table_runs(tournament_id):
        if run.match_key == match_key and run.set_number == set_number and run.table_no != table_no:
            twin = run.match_id
            return tournament_id, twin if _visible(data, [twin]) else None
    return tournament_id, None


__all__ = [
    "DealLine",
    "TablePlay",
    "TournamentDeals",
    "Traveller",
    "tournament_deals",
    "tournament_play",
    "traveller",
    "with_plays",
]
