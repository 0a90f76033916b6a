"""A deal's double-dummy table for its traveller, as BBO's hand records show it: for every
denomination and every declarer, the tricks the declarer's side takes with the declarer's
left leading, both sides playing perfectly with all 52 cards known.

In Contract Whist the table is the contracts each seat can make (a bid of N tricks makes
when the cell is at least N), and the par (:func:`oddtrick.analysis.contract_par`) is
given beside it; in classic Whist, where the trumps come with the deal and the dealer's
left leads, the row of the deal's trumps is marked and the dealer's cell is the result of
perfect play. The solver (the strong extra) runs in the page's worker thread, once per deal
(a few hundred milliseconds), and the tables are kept in memory.

Only a traveller that may be shown asks for a table (:func:`~.deals.traveller`): a deal of
a set still being played is never solved on the page's behalf.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping

from oddtrick.rules import Card, Denomination, Seat, Suit

ORDER = (
    Denomination.NO_TRUMPS,
    Denomination.SPADES,
    Denomination.HEARTS,
    Denomination.DIAMONDS,
    Denomination.CLUBS,
)
"""Rows as bridge hand records list them: no trumps first, then the suits high to low."""
SEATS = (Seat.NORTH, Seat.SOUTH, Seat.EAST, Seat.WEST)
"""Columns as BBO lists declarers: North-South, then East-West."""
UNAVAILABLE = "No double-dummy table: it needs the strong extra (pip install 'oddtrick[strong]')."


@dataclasses.dataclass(frozen=True)
class TableRow:
    denomination: str
    """``NT``, ``♠`` …: the row's label."""
    letters: str
    """``NT``, ``S`` …: for a data attribute."""
    red: bool
    tricks: tuple[int, ...]
    """Per declarer of :data:`SEATS`."""
    trumps: bool
    """The deal's trumps (classic Whist), marked."""


@dataclasses.dataclass(frozen=True)
class DealTable:
    rows: tuple[TableRow, ...]
    seats: tuple[str, ...]
    par: str | None
    """Contract Whist's par contract and score, in words; ``None`` in classic Whist."""
    result: str | None
    """Classic Whist: what perfect play gives the dealer's side from the opening lead."""


@functools.lru_cache(maxsize=512)
def _tables(hands: tuple[tuple[Card, ...], ...]) -> Mapping[tuple[Denomination, Seat], int]:
    from oddtrick.double_dummy import trick_tables

    return trick_tables([hands])[0]  # type: ignore[list-item]


def deal_table(
    deal: Mapping[Seat, tuple[Card, ...]], classic: bool, trumps: Suit | None, dealer: Seat
) -> DealTable | str:
    """The deal's table, or the one line that says why there is none."""
    try:
        from oddtrick.analysis import contract_par
    except ImportError:
        return UNAVAILABLE
    hands = tuple(tuple(sorted(deal[seat])) for seat in Seat)
    if any(len(hand) != 13 for hand in hands):
        return "No double-dummy table: the deal is not four hands of thirteen."
    table = _tables(hands)
    rows = tuple(
        TableRow(
            d.symbol,
            d.letters,
            d in (Denomination.HEARTS, Denomination.DIAMONDS),
            tuple(table[(d, seat)] for seat in SEATS),
            classic and d.suit == trumps,
        )
        for d in ORDER
    )
    if classic:
        denomination = next(d for d in Denomination if d.suit == trumps)
        taken = table[(denomination, dealer)]
        side = "NS" if dealer in (Seat.NORTH, Seat.SOUTH) else "EW"
        result = (
            f"With perfect play the dealer's side ({side}) takes {taken} tricks, the other side {13 - taken}."
        )
        return DealTable(rows, tuple(s.name[0] for s in SEATS), None, result)
    par = contract_par(table, dealer)
    par_text = (
        "Par: thrown in (0 each)."
        if par["contract"] is None
        else f"Par: {par['contract']}, {par['declarer_tricks']} tricks, "
        f"NS {par['points'][0]} EW {par['points'][1]}."
    )
    return DealTable(rows, tuple(s.name[0] for s in SEATS), par_text, None)


__all__ = ["UNAVAILABLE", "DealTable", "TableRow", "deal_table"]
