"""A bot that sees every hand: the strong bot whose one sampled deal is the true one.

Never a player, and never offered as one: it is benchmarks/ceiling.py's yardstick, how
far above the heuristic bot a pair of the strong bot's method could get with nothing
hidden from it. It reads the deals the tournament plays from ``deals.pbn`` beside this
file (the file the benchmark hands the referee with ``--deals-from``), finds the deal
holding its own thirteen cards, and solves that layout double-dummy for every call and
card, with nothing taken off the tricks it finds (its tricks are no estimate).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import oddtrick
from oddtrick.anytime import Budget
from oddtrick.bots.pimc_bot import PimcBot
from oddtrick.deal_sets import read_deal_set
from oddtrick.double_dummy import Hands
from oddtrick.rules import Seat

DEALS = read_deal_set(Path(__file__).with_name("deals.pbn")).deals


class OmniscientBot(PimcBot):
    """The strong bot with the true deal as its only sample."""

    samples: ClassVar[int] = 1
    call_samples: ClassVar[int] = 1
    prior_samples: ClassVar[float] = 0.0
    optimism: ClassVar[float] = 0.0

    def _samples(self, view: oddtrick.BotView, limit: Budget, count: int) -> Iterator[Hands]:
        yield self.true_layout(view)

    @staticmethod
    def true_layout(view: oddtrick.BotView) -> Hands:
        """The cards each seat still holds, read from the deal that dealt this seat's hand."""
        assert view.seat is not None
        played = set(view.played_cards)
        plays = [play for trick in view.tricks for play in trick.plays] + list(view.current_trick)
        mine = set(view.hand) | {card for seat, card in plays if seat is view.seat}
        deal = next(fixed.deal for fixed in DEALS if set(fixed.deal[view.seat]) == mine)
        north, east, south, west = (
            tuple(card for card in deal[seat] if card not in played)
            for seat in (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST)
        )
        return north, east, south, west
