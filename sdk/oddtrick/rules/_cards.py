"""Suits, ranks, cards, hands and deals, each with a text round trip.

Cards are interned: there are exactly 52 :class:`Card` objects, so identity,
equality and hashing are all the fast built-in ones and a card can be used as
a dict key or compared with ``is``.

Inside the engine a set of cards is often an ``int`` with bit ``card.index``
set for each card (a *mask*): comparing two different cards with ``==`` (so
``in`` on a tuple, ``list.remove``) goes through Python-level comparison
because :class:`Card` defines ``__lt__``, and costs far more than a bit test.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from oddtrick.rules._errors import ParseError
from oddtrick.rules._seats import SEATS, Seat


class Suit(enum.IntEnum):
    """The four suits, in the order Contract Whist's auction ranks them."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        """``C``, ``D``, ``H`` or ``S``: how cards (``QH``), deals (PBN) and logs write the suit."""
        return "CDHS"[self]

    @property
    def symbol(self) -> str:
        """``♣``, ``♦``, ``♥`` or ``♠``: for people to read (:attr:`Card.pretty`)."""
        return "♣♦♥♠"[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        """Accept a letter (``H``), a symbol (``♥``) or a name (``hearts``)."""
        key = text.strip()
        for suit in SUITS:
            if key.upper() in (suit.letter, suit.name, suit.name[:-1]) or key == suit.symbol:
                return suit
        raise ParseError(f"not a suit: {text!r} (expected C, D, H, S or ♣ ♦ ♥ ♠)")

    def __str__(self) -> str:
        return self.letter

    def __bool__(self) -> bool:
        # Clubs (value 0) is a suit, not "no suit": ``trumps and trumps.symbol`` must work.
        return True


SUITS: Final = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES)
"""The four suits in the auction's order, clubs first (a tuple, to index and iterate cheaply)."""


class Rank(enum.IntEnum):
    """Card ranks; the value is the pip count (jack 11 … ace 14), so higher wins."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def letter(self) -> str:
        """One character: ``2``–``9``, ``T``, ``J``, ``Q``, ``K``, ``A``."""
        return "23456789TJQKA"[self - 2]

    @property
    def label(self) -> str:
        """How a person writes it: ``10`` rather than ``T``."""
        return "10" if self is Rank.TEN else self.letter

    @classmethod
    def parse(cls, text: str) -> Rank:
        """Read ``2``-``9``, ``10`` or ``T``, ``J``, ``Q``, ``K``, ``A`` (either case);
        anything else is a :class:`ParseError`."""
        key = text.strip().upper()
        if key == "10":
            return Rank.TEN
        if len(key) == 1 and key in _RANK_LETTERS:
            return RANKS[_RANK_LETTERS.index(key)]
        raise ParseError(f"not a rank: {text!r} (expected 2-9, 10 or T, J, Q, K, A)")

    def __str__(self) -> str:
        return self.letter


_RANK_LETTERS: Final = "23456789TJQKA"
RANKS: Final = tuple(Rank)
"""The thirteen ranks, two first, ace last."""


class Card:
    """One of the 52 cards; ``Card(Suit.HEARTS, Rank.QUEEN)`` is ``Card.parse("QH")``.

    ``str(card)`` is the canonical two-character form (rank then suit, ``T`` for
    ten), the same letters a deal in PBN uses; :attr:`pretty` is for people.
    ``index`` numbers the pack clubs 2 … clubs ace, diamonds, hearts, spades
    (``suit * 13 + rank - 2``): it is the order the dealing algorithm shuffles.
    """

    __slots__ = ("_bit", "_suit_bits", "index", "rank", "suit")

    suit: Suit
    rank: Rank
    index: int
    _bit: int
    """``1 << index``: the card in a mask (private, for the engine's speed)."""
    _suit_bits: int
    """The mask of all 13 cards of this card's suit (private)."""

    def __new__(cls, suit: Suit, rank: Rank) -> Card:
        return _PACK[suit * 13 + rank - 2]

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card whose :attr:`index` is ``index`` (0 for the two of clubs to 51 for the ace
        of spades): how the dealing algorithm and compact encodings name cards."""
        if not 0 <= index < 52:
            raise ParseError(f"not a card index: {index!r} (expected 0-51)")
        return _PACK[index]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse ``QH``, ``10H``, ``TH``, ``qh`` or ``Q♥``."""
        key = text.strip()
        if len(key) < 2:
            raise ParseError(f"not a card: {text!r} (expected rank then suit, e.g. QH or 10H)")
        try:
            return Card(Suit.parse(key[-1]), Rank.parse(key[:-1]))
        except ParseError:
            raise ParseError(f"not a card: {text!r} (expected rank then suit, e.g. QH or 10H)") from None

    @property
    def pretty(self) -> str:
        """``Q♥``, ``10♠``: how a person reads a card."""
        return self.rank.label + self.suit.symbol

    def __str__(self) -> str:
        return self.rank.letter + self.suit.letter

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __lt__(self, other: Card) -> bool:
        return self.index < other.index

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("cards are immutable")

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return (Card.from_index, (self.index,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


def _make_pack() -> tuple[Card, ...]:
    pack = []
    for suit in SUITS:
        for rank in RANKS:
            card = object.__new__(Card)
            object.__setattr__(card, "suit", suit)
            object.__setattr__(card, "rank", rank)
            object.__setattr__(card, "index", suit * 13 + rank - 2)
            object.__setattr__(card, "_bit", 1 << card.index)
            object.__setattr__(card, "_suit_bits", 0x1FFF << 13 * suit)
            pack.append(card)
    return tuple(pack)


_PACK: Final = _make_pack()
PACK: Final = _PACK
"""All 52 cards, in :attr:`Card.index` order."""

SUIT_BITS: Final = tuple(0x1FFF << 13 * suit for suit in SUITS)
"""The mask of each suit's 13 cards, clubs first."""


SUIT_CARDS: Final[dict[int, tuple[Card, ...]]] = {0: ()}
"""Cache: a mask of cards of at most one suit -> those cards, in index order.

Filled by :func:`suit_cards` on a miss, at most 4 * 8192 entries (every subset
of every suit). A plain dict, read with ``[]`` and ``except KeyError``: a dict
subclass with ``__missing__`` would make every hit go through a slow slot.
"""


def suit_cards(mask: int) -> tuple[Card, ...]:
    """The cards of a mask of at most one suit, in index order (cached)."""
    try:
        return SUIT_CARDS[mask]
    except KeyError:
        lowest = mask & -mask
        cards = (_PACK[lowest.bit_length() - 1], *suit_cards(mask ^ lowest))
        SUIT_CARDS[mask] = cards
        return cards


def cards_of_mask(mask: int) -> tuple[Card, ...]:
    """The cards of a mask (any suits), in index order: the sorted hand."""
    cache = SUIT_CARDS
    try:
        return (
            cache[mask & 0x1FFF]
            + cache[mask & 0x3FFE000]
            + cache[mask & 0x7FFC000000]
            + cache[mask & 0xFFF8000000000]
        )
    except KeyError:
        return (
            suit_cards(mask & 0x1FFF)
            + suit_cards(mask & 0x3FFE000)
            + suit_cards(mask & 0x7FFC000000)
            + suit_cards(mask & 0xFFF8000000000)
        )


def mask_of(cards: Iterable[Card]) -> int:
    """The mask of some distinct cards."""
    return sum(card._bit for card in cards)


def sort_cards(cards: Iterable[Card]) -> tuple[Card, ...]:
    """Cards in the order used everywhere: by suit (clubs first), then by rank."""
    return tuple(sorted(cards, key=_index))


def _index(card: Card) -> int:
    return card.index


def format_hand(cards: Iterable[Card]) -> str:
    """A hand in PBN order, spades first, suits separated by dots: ``AKQ.JT9.8765.432``."""
    by_suit: list[list[str]] = [[], [], [], []]
    for card in sorted(cards, key=_index, reverse=True):
        by_suit[3 - card.suit].append(card.rank.letter)
    return ".".join("".join(ranks) for ranks in by_suit)


def pretty_hand(cards: Iterable[Card]) -> str:
    """A hand for people, spades first: ``♠ A K 4  ♥ Q J 9  ♦ 10 8  ♣ —`` (``—`` for a void)."""
    by_suit: list[list[str]] = [[], [], [], []]
    for card in sorted(cards, key=_index, reverse=True):
        by_suit[3 - card.suit].append(card.rank.label)
    return "  ".join(
        f"{suit.symbol} {' '.join(ranks) if ranks else '—'}"
        for suit, ranks in zip(reversed(Suit), by_suit, strict=True)
    )


def parse_hand(text: str) -> tuple[Card, ...]:
    """Parse the :func:`format_hand` form; ``10`` is accepted for ``T``."""
    parts = text.strip().split(".")
    if len(parts) != 4:
        raise ParseError(f"not a hand: {text!r} (expected four suits, spades first, separated by dots)")
    cards: list[Card] = []
    for suit, part in zip((Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS), parts, strict=False):
        letters = part.upper().replace("10", "T")
        for letter in letters:
            if letter not in _RANK_LETTERS:
                raise ParseError(f"not a hand: {text!r} ({letter!r} is not a rank)")
            card = Card(suit, Rank.parse(letter))
            if card in cards:
                raise ParseError(f"not a hand: {text!r} ({card} appears twice)")
            cards.append(card)
    return sort_cards(cards)


class Deal(Mapping[Seat, tuple[Card, ...]]):
    """Four hands of 13 cards that together make the pack.

    The text form is PBN's: ``N:AKQ.… hand hand hand``, the first hand's seat
    then the others clockwise.
    """

    __slots__ = ("_hands", "_masks")

    _hands: tuple[tuple[Card, ...], ...]
    """The four sorted hands, North first."""
    _masks: tuple[int, ...]
    """The same hands as masks (private, for the engine)."""

    if not TYPE_CHECKING:  # (to mypy, a __getattr__ would make any attribute exist)

        def __getattr__(self, name: str) -> Any:
            # Reached only when a slot is unset. A deal has its hands, its masks
            # or both; either is worked out from the other on first use. The
            # engine deals masks only (fast_deal): sorting hands nobody reads
            # would cost every random playout.
            if name == "_hands":
                masks = object.__getattribute__(self, "_masks")
                self._hands = hands = tuple(cards_of_mask(mask) for mask in masks)
                return hands
            if name == "_masks":
                hands = object.__getattribute__(self, "_hands")
                self._masks = masks = tuple(mask_of(hand) for hand in hands)
                return masks
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self
            )

    def __init__(self, hands: Mapping[Seat, Iterable[Card]]) -> None:
        sorted_hands = tuple(sort_cards(hands.get(seat, ())) for seat in SEATS)
        seen: set[Card] = set()
        for seat, hand in zip(SEATS, sorted_hands, strict=False):
            if len(hand) != 13:
                raise ParseError(f"not a deal: {seat.name.title()} has {len(hand)} cards, not 13")
            seen.update(hand)
        if len(seen) != 52:
            raise ParseError("not a deal: some card is in two hands")
        self._hands = sorted_hands

    @classmethod
    def parse(cls, text: str) -> Deal:
        """Parse ``N:hand hand hand hand`` (the first seat may be any of N, E, S, W)."""
        head, colon, rest = text.strip().partition(":")
        if not colon:
            raise ParseError(f"not a deal: {text!r} (expected e.g. 'N:AKQ.JT9.8765.432 ...')")
        first = Seat.parse(head)
        parts = rest.split()
        if len(parts) != 4:
            raise ParseError(f"not a deal: {text!r} (expected four hands after the colon)")
        hands = {Seat((first + i) % 4): parse_hand(part) for i, part in enumerate(parts)}
        return cls(hands)

    def __getitem__(self, seat: Seat) -> tuple[Card, ...]:
        return self._hands[seat]

    def __iter__(self) -> Iterator[Seat]:
        return iter(SEATS)

    def __len__(self) -> int:
        return 4

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deal) and self._hands == other._hands

    def __hash__(self) -> int:
        return hash(self._hands)

    def __str__(self) -> str:
        return "N:" + " ".join(format_hand(hand) for hand in self._hands)

    def __repr__(self) -> str:
        return f"Deal.parse({str(self)!r})"


def fast_deal(masks: tuple[int, ...]) -> Deal:
    """A deal from four masks (North first) that partition the pack; no checks
    (the dealing hot path). Its sorted hands are made when first read."""
    deal = object.__new__(Deal)
    deal._masks = masks
    return deal


def deal_masks(deal: Deal) -> tuple[int, ...]:
    """Each seat's cards as a mask, North first."""
    return deal._masks
