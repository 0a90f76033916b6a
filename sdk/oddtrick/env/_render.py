"""The environments' ``render()``: the table in a few lines, as a spectator sees it.

Built from the spectator's view (``state.view(None)``), so a rendering shows no hand:
whoever watches a learning run sees what a spectator of a closed table sees.
"""

from __future__ import annotations

from oddtrick.rules import Phase, SeatView


def table_text(view: SeatView) -> str:
    """The deal in progress: its number, the dealer, the trumps or the auction, the trick
    on the table, the tricks won and the scores; and whose turn it is."""
    lines = [f"deal {view.hand_number}, dealt by {view.dealer.name.title()}, {_denomination(view)}"]
    if view.auction:
        lines.append("auction: " + " ".join(f"{seat}:{call}" for seat, call in view.auction))
    if view.contract is not None:
        lines.append(f"contract: {view.contract}")
    if view.turned_card is not None:
        lines.append(f"turned: {view.turned_card}")
    if view.current_trick:
        lines.append("trick: " + " ".join(f"{seat}:{card}" for seat, card in view.current_trick))
    ns, ew = view.tricks_won
    lines.append(f"tricks: NS {ns}, EW {ew}; scores: NS {view.totals[0]}, EW {view.totals[1]}")
    if view.to_act is not None:
        lines.append(f"to act: {view.to_act.name.title()}")
    elif view.phase is Phase.MATCH_OVER and view.match_result is not None:
        lines.append(f"over: {view.match_result.reason}")
    return "\n".join(lines) + "\n"


def _denomination(view: SeatView) -> str:
    if view.phase is Phase.AUCTION:
        return "in the auction"
    denomination = view.denomination
    if denomination is None:
        return "thrown in"
    return "no trumps" if denomination.suit is None else f"{denomination.suit.name.lower()} trumps"
