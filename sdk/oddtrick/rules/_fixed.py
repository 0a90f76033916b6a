"""A deal given rather than drawn from the seed: what a fixed deal set supplies.

A match normally deals every hand from its seed (docs/dealing.md). A match
played from a deal set (``--deals-from FILE.pbn``, oddtrick.deal_sets) is handed
its deals instead: each with its dealer, the card turned up in classic Whist
(one of the dealer's cards) and the card a cut would draw, all decided before
the match starts, so the rules engine still deals nothing by chance.
"""

from __future__ import annotations

import dataclasses

from oddtrick.rules._cards import Card, Deal
from oddtrick.rules._errors import PositionError
from oddtrick.rules._seats import Seat


@dataclasses.dataclass(frozen=True, slots=True)
class FixedDeal:
    """One hand's cards, dealer, turned card and cut card."""

    deal: Deal
    dealer: Seat
    turned: Card
    """Turned up in classic Whist when trumps are turned: always one of the dealer's cards."""
    cut: Card
    """Drawn from a second pack when trumps are cut: any card."""

    def __post_init__(self) -> None:
        if self.turned not in self.deal[self.dealer]:
            raise PositionError(
                f"the turned card {self.turned} is not the dealer's ({self.dealer.name.title()}'s)"
            )

    def to_record(self) -> dict[str, str]:
        """As a match log writes it (docs/match-log.md): every field as text."""
        return {
            "deal": str(self.deal),
            "dealer": str(self.dealer),
            "turned": str(self.turned),
            "cut": str(self.cut),
        }

    @classmethod
    def from_record(cls, record: dict[str, str]) -> FixedDeal:
        """Read back what :meth:`to_record` wrote; a field that does not parse is a
        :class:`ParseError`, a turned card the dealer does not hold a :class:`PositionError`."""
        return cls(
            Deal.parse(record["deal"]),
            Seat.parse(record["dealer"]),
            Card.parse(record["turned"]),
            Card.parse(record["cut"]),
        )
