"""Records of what happened: contracts, tricks, and hand, game and match results."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from oddtrick.rules._calls import Call, Denomination
from oddtrick.rules._cards import Card, Deal, Suit
from oddtrick.rules._seats import SEATS, Seat, Side
from oddtrick.rules._words import contract_text

_SIDES = (Side.NORTH_SOUTH, Side.EAST_WEST)


class Phase(enum.Enum):
    """What a match is waiting for: calls, cards, the next hand, or nothing more.

    Classic Whist has no auction: its hands start in :attr:`PLAY`.
    """

    AUCTION = "auction"
    """Contract Whist's auction: the seat to act makes a call."""
    PLAY = "play"
    """The seat to act plays a card."""
    HAND_OVER = "hand_over"
    """The hand is scored and the match goes on: call ``start_next_hand()``."""
    MATCH_OVER = "match_over"
    """The last hand of the match is scored; nothing more can happen."""


@dataclasses.dataclass(frozen=True, slots=True)
class Contract:
    """What Contract Whist's auction settled: the last bid, the seat that made it
    (the declarer, whose side must take ``level`` of the 13 tricks) and whether it
    was doubled. ``str()`` reads ``8H doubled by North``."""

    level: int
    denomination: Denomination
    declarer: Seat
    doubled: bool = False

    @property
    def side(self) -> Side:
        """The declaring side: the declarer and partner, who must make the contract."""
        return _SIDES[self.declarer & 1]  # a table: Seat.side calls Side(...), which is slow

    @property
    def trumps(self) -> Suit | None:
        """The trump suit the contract names, or ``None`` at no trumps."""
        return self.denomination.suit

    @property
    def bid(self) -> Call:
        """The winning bid as a :class:`Call` (without the double), to compare with the auction's calls."""
        return Call.bid(self.level, self.denomination)

    def __str__(self) -> str:
        doubled = " doubled" if self.doubled else ""
        return f"{self.level}{self.denomination.letters}{doubled} by {self.declarer.name.title()}"


@dataclasses.dataclass(frozen=True, slots=True)
class Trick:
    """A completed trick: who led, the four cards in the order played, who won."""

    number: int
    leader: Seat
    cards: tuple[Card, Card, Card, Card]
    winner: Seat

    @property
    def plays(self) -> tuple[tuple[Seat, Card], ...]:
        """Each card with the seat that played it, leader first: ``cards`` alone leaves
        the seats to be counted round from ``leader``."""
        leader = self.leader
        return tuple((SEATS[(leader + i) % 4], card) for i, card in enumerate(self.cards))


class Outcome(enum.Enum):
    """Why a hand scored as it did."""

    ODD_TRICKS = "odd_tricks"
    """Classic Whist: the side with more than six tricks scores the excess."""
    MADE = "made"
    """Contract Whist: the declaring side took at least its contract."""
    FAILED = "failed"
    """Contract Whist: the declaring side fell short and scores nothing."""
    THROWN_IN = "thrown_in"
    """Contract Whist: four passes, no play, no score."""


@dataclasses.dataclass(frozen=True, slots=True)
class HandResult:
    """Everything a score sheet records about one hand.

    ``points`` are the trick points each side scored (after doubling) and only
    those: honours are apart, in ``honours``, the honour points actually added
    (zero when barred or when the game was already won by tricks). So the hand
    added ``points + honours`` to each side, and ``scores_after``, the game scores
    once this hand is counted, includes both. ``deal`` is ``None`` in a player's view of a thrown-in
    hand, whose cards were never shown. ``margin`` is the odd tricks, the overtricks of a made
    contract, or the number of tricks a failed contract fell short by.
    """

    hand_number: int
    dealer: Seat
    deal: Deal | None
    trumps: Suit | None
    turned_card: Card | None
    cut_card: Card | None
    contract: Contract | None
    tricks: tuple[int, int]
    points: tuple[int, int]
    honours: tuple[int, int]
    honours_barred: tuple[bool, bool]
    outcome: Outcome
    margin: int
    scores_after: tuple[int, int]
    game_won_by: Side | None

    @property
    def all_cards_played(self) -> bool:
        """Only then may the four hands be shown to the players."""
        return self.outcome is not Outcome.THROWN_IN

    def describe(self) -> str:
        """One line for people, e.g. ``8♥ by North made (+1): NS 9, EW 4``."""
        ns, ew = self.points[0] + self.honours[0], self.points[1] + self.honours[1]
        if self.outcome is Outcome.THROWN_IN:
            head = "thrown in (four passes)"
        elif self.outcome is Outcome.ODD_TRICKS:
            side = Side.NORTH_SOUTH if self.tricks[0] > 6 else Side.EAST_WEST
            head = f"{side} took {self.tricks[side]} tricks, {self.margin} odd"
        else:
            assert self.contract is not None
            contract = contract_text(self.contract)
            if self.outcome is Outcome.MADE:
                head = f"{contract} made" + (f" (+{self.margin})" if self.margin else "")
            else:
                head = f"{contract} failed by {self.margin}"
        honours = ""
        for side in Side:
            if self.honours[side]:
                honours += f", {side} {self.honours[side]} for honours"
        return f"{head}{honours}: NS {ns}, EW {ew}"


@dataclasses.dataclass(frozen=True, slots=True)
class GameResult:
    """The end of one game of a match: its number (from 1), the winning side, the
    final scores, how many hands it took, and whether honours rather than tricks
    brought the winner to the target (classic Whist only)."""

    game_number: int
    winner: Side
    scores: tuple[int, int]
    hands: int
    by_honours: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class MatchResult:
    """The end of a match. ``winner`` is ``None`` for a draw (level totals in a
    fixed number of deals, or a single hand)."""

    winner: Side | None
    totals: tuple[int, int]
    games_won: tuple[int, int]
    hands_played: int
    reason: str


# Fast construction for the engine's hot paths -------------------------------
#
# A frozen dataclass's __init__ sets each field through object.__setattr__,
# which is slow. A plain class with the same slots is laid out the same way:
# fill one in with ordinary attribute stores, then make it the real class by
# assigning __class__. The result is an ordinary, immutable instance.


class _HandResultFields:
    __slots__ = HandResult.__slots__


class _ContractFields:
    __slots__ = Contract.__slots__


def new_hand_result(
    hand_number: int,
    dealer: Seat,
    deal: Deal | None,
    trumps: Suit | None,
    turned_card: Card | None,
    cut_card: Card | None,
    contract: Contract | None,
    tricks: tuple[int, int],
    points: tuple[int, int],
    honours: tuple[int, int],
    honours_barred: tuple[bool, bool],
    outcome: Outcome,
    margin: int,
    scores_after: tuple[int, int],
    game_won_by: Side | None,
) -> HandResult:
    """``HandResult(...)``, the fields in the same order, made faster."""
    result: Any = _HandResultFields()
    result.hand_number = hand_number
    result.dealer = dealer
    result.deal = deal
    result.trumps = trumps
    result.turned_card = turned_card
    result.cut_card = cut_card
    result.contract = contract
    result.tricks = tricks
    result.points = points
    result.honours = honours
    result.honours_barred = honours_barred
    result.outcome = outcome
    result.margin = margin
    result.scores_after = scores_after
    result.game_won_by = game_won_by
    result.__class__ = HandResult
    return result  # type: ignore[no-any-return]


def new_contract(level: int, denomination: Denomination, declarer: Seat, doubled: bool) -> Contract:
    """``Contract(...)``, made faster."""
    contract: Any = _ContractFields()
    contract.level = level
    contract.denomination = denomination
    contract.declarer = declarer
    contract.doubled = doubled
    contract.__class__ = Contract
    return contract  # type: ignore[no-any-return]


def _same_fields(builder: Any, cls: type) -> bool:
    code = builder.__code__
    names: tuple[str, ...] = code.co_varnames[: code.co_argcount]
    return names == tuple(field.name for field in dataclasses.fields(cls))


# A field added to a class must be added to its builder too.
assert _same_fields(new_hand_result, HandResult)
assert _same_fields(new_contract, Contract)
