"""The scoring formulas of both games, as pure functions of a finished hand."""

from __future__ import annotations

from oddtrick.rules._cards import Deal, Rank, Suit
from oddtrick.rules._results import Contract, Outcome
from oddtrick.rules._seats import Seat

BOOK = 6
"""Tricks a side must take before the odd tricks count in classic Whist."""

HONOUR_RANKS = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK)


def odd_tricks(tricks: int) -> int:
    """Classic Whist: one point for each trick above six (7 → 1 … 13 → 7)."""
    return tricks - BOOK if tricks > BOOK else 0


def classic_trick_points(tricks: tuple[int, int]) -> tuple[tuple[int, int], int]:
    """Points per side for tricks, and the odd tricks scored. Exactly one side scores,
    since thirteen tricks cannot split six-six."""
    ns, ew = odd_tricks(tricks[0]), odd_tricks(tricks[1])
    return (ns, ew), ns or ew


def honours_held(deal: Deal, trumps: Suit | None) -> tuple[int, int]:
    """How many of the trump A, K, Q, J each side was dealt (none at no trumps)."""
    if trumps is None:
        return (0, 0)
    held = [0, 0]
    for seat in Seat:
        for card in deal[seat]:
            if card.suit is trumps and card.rank in HONOUR_RANKS:
                held[seat.side] += 1
    return (held[0], held[1])


def honours_points(held: tuple[int, int]) -> tuple[int, int]:
    """Four honours in one partnership score 4, three score 2, otherwise nothing."""
    table = {4: 4, 3: 2}
    return (table.get(held[0], 0), table.get(held[1], 0))


def contract_points(
    contract: Contract, tricks: tuple[int, int]
) -> tuple[tuple[int, int], Outcome, int]:
    """Contract Whist: the declarers score their tricks if they made the contract,
    else nothing; defenders always score theirs; doubling doubles both.

    Returns the points per side, the outcome and its margin (overtricks if made,
    the shortfall if failed).
    """
    declarers = contract.side
    taken = tricks[declarers]
    made = taken >= contract.level
    factor = 2 if contract.doubled else 1
    points = [0, 0]
    points[declarers] = taken * factor if made else 0
    points[declarers.other] = tricks[declarers.other] * factor
    outcome = Outcome.MADE if made else Outcome.FAILED
    margin = taken - contract.level if made else contract.level - taken
    return (points[0], points[1]), outcome, margin
