"""The scoring formulas of both games, as pure functions of a finished hand."""

from __future__ import annotations

from typing import Final

from oddtrick.rules._cards import Card, Deal, Rank, Suit, deal_masks
from oddtrick.rules._results import Contract, Outcome
from oddtrick.rules._seats import SEATS

_MADE: Final = Outcome.MADE
_FAILED: Final = Outcome.FAILED

BOOK = 6
"""Tricks a side must take before the odd tricks count in classic Whist."""

HONOUR_RANKS = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK)

HONOUR_BITS: Final = tuple(sum(Card(suit, rank)._bit for rank in HONOUR_RANKS) for suit in Suit)
"""The mask of each suit's A, K, Q, J (see ``_cards`` for masks)."""

HONOUR_POINTS: Final = (0, 0, 0, 2, 4)
"""Points for holding 0 … 4 honours in one partnership."""


def odd_tricks(tricks: int) -> int:
    """Classic Whist: one point for each trick above six (7 → 1 … 13 → 7)."""
    return tricks - BOOK if tricks > BOOK else 0


def honours_held(deal: Deal, trumps: Suit | None) -> tuple[int, int]:
    """How many of the trump A, K, Q, J each side was dealt (none at no trumps)."""
    if trumps is None:
        return (0, 0)
    if not isinstance(deal, Deal):  # any other mapping of seats to cards: card by card
        held = [0, 0]
        for seat in SEATS:
            for card in deal[seat]:
                if card.suit is trumps and card.rank in HONOUR_RANKS:
                    held[seat & 1] += 1
        return (held[0], held[1])
    honours = HONOUR_BITS[trumps]
    north, east, south, west = deal_masks(deal)
    return (((north | south) & honours).bit_count(), ((east | west) & honours).bit_count())


def honours_points(held: tuple[int, int]) -> tuple[int, int]:
    """Four honours in one partnership score 4, three score 2, otherwise nothing."""
    table = {4: 4, 3: 2}
    return (table.get(held[0], 0), table.get(held[1], 0))


def contract_points(contract: Contract, tricks: tuple[int, int]) -> tuple[tuple[int, int], Outcome, int]:
    """Contract Whist: the declarers score their tricks if they made the contract,
    else nothing; defenders always score theirs; doubling doubles both.

    Returns the points per side, the outcome and its margin (overtricks if made,
    the shortfall if failed).
    """
    # Plain ints for the sides: Contract.side and Side.other build enums, which is slow.
    declarers = contract.declarer & 1
    level = contract.level
    taken = tricks[declarers]
    factor = 2 if contract.doubled else 1
    if taken >= level:
        ours, outcome, margin = taken * factor, _MADE, taken - level
    else:
        ours, outcome, margin = 0, _FAILED, level - taken
    theirs = tricks[1 - declarers] * factor
    return ((ours, theirs) if declarers == 0 else (theirs, ours)), outcome, margin
