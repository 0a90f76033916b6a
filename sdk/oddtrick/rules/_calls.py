"""Contract Whist's calls: the 35 bids of the ladder, pass and double.

Like cards, calls are interned (37 objects), so they compare by identity.
"""

from __future__ import annotations

import enum
from typing import Any, Final, TypeAlias

from oddtrick.rules._cards import Card, Suit
from oddtrick.rules._errors import ParseError


class Denomination(enum.IntEnum):
    """What a bid names: a trump suit or no trumps, in ladder order."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3
    NO_TRUMPS = 4

    @property
    def suit(self) -> Suit | None:
        """The trump suit it makes, or ``None`` at no trumps."""
        return _DENOMINATION_SUITS[self]  # a table: calling Suit(...) is slow

    @property
    def letters(self) -> str:
        """``C``, ``D``, ``H``, ``S`` or ``NT``: how a bid is written (``7NT``), as :meth:`parse` reads it."""
        return ("C", "D", "H", "S", "NT")[self]

    @property
    def symbol(self) -> str:
        """``♣``, ``♦``, ``♥``, ``♠`` or ``NT``: for people to read (:attr:`Call.pretty`)."""
        return ("♣", "♦", "♥", "♠", "NT")[self]

    @classmethod
    def parse(cls, text: str) -> Denomination:
        """Read a suit as :meth:`Suit.parse` does (``C``, ``♣``, ``clubs``) or no trumps
        (``NT``, ``N``, ``notrumps``); anything else is a :class:`ParseError`."""
        key = text.strip().upper()
        if key in ("NT", "N", "NOTRUMP", "NOTRUMPS", "NO_TRUMPS"):
            return Denomination.NO_TRUMPS
        try:
            return Denomination(Suit.parse(key))
        except ParseError:
            raise ParseError(f"not a denomination: {text!r} (expected C, D, H, S or NT)") from None

    def __str__(self) -> str:
        return self.letters

    def __bool__(self) -> bool:
        # Clubs (value 0) is a denomination like any other.
        return True


_DENOMINATION_SUITS: Final = (Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES, None)


class CallKind(enum.Enum):
    """The three sorts of call: a bid (with a level and a denomination), pass, or double."""

    BID = "bid"
    PASS = "pass"
    DOUBLE = "double"


MIN_LEVEL: Final = 7
MAX_LEVEL: Final = 13


class Call:
    """A call in the auction. Build one with :meth:`bid`, :data:`PASS`, :data:`DOUBLE`
    or :meth:`parse`.

    ``str()`` gives ``7C`` … ``13NT``, ``pass`` or ``double``. Bids compare by
    their place on the ladder (:attr:`step`, 0 for 7♣ to 34 for 13NT).
    """

    __slots__ = ("_bit", "denomination", "kind", "level", "step")

    kind: CallKind
    level: int
    denomination: Denomination | None
    step: int
    _bit: int
    """The call's own bit, above the 52 cards' (private: the engine checks a call
    is legal with one AND, see ``_cards``)."""

    def __new__(cls, kind: CallKind, level: int = 0, denomination: Denomination | None = None) -> Call:
        if kind is CallKind.PASS:
            return _PASS
        if kind is CallKind.DOUBLE:
            return _DOUBLE
        return cls.bid(level, denomination if denomination is not None else Denomination.CLUBS)

    @classmethod
    def bid(cls, level: int, denomination: Denomination) -> Call:
        """The bid of ``level`` (7 to 13: the tricks to take, all of them counted) in
        ``denomination``: ``Call.bid(7, Denomination.HEARTS)`` is ``7H``. A level
        outside 7-13 is a :class:`ParseError`. Bids are interned, so this returns the
        one object for that bid, which compares by identity."""
        if not MIN_LEVEL <= level <= MAX_LEVEL:
            raise ParseError(f"not a bid: level {level} (levels go from 7 to 13)")
        return _BIDS[(level - MIN_LEVEL) * 5 + denomination]

    @classmethod
    def parse(cls, text: str) -> Call:
        """Parse ``7C``, ``13NT``, ``10♠``, ``pass`` (or ``p``), ``double`` (or ``x``)."""
        key = text.strip().lower()
        if key in ("pass", "p"):
            return _PASS
        if key in ("double", "dbl", "x"):
            return _DOUBLE
        digits = len(key) - len(key.lstrip("0123456789"))
        if digits:
            try:
                return cls.bid(int(key[:digits]), Denomination.parse(key[digits:]))
            except ParseError:
                pass
        raise ParseError(f"not a call: {text!r} (expected e.g. 7C, 13NT, pass or double)")

    @property
    def is_bid(self) -> bool:
        """Whether this is a bid rather than pass or double: only bids have a
        :attr:`level`, a :attr:`denomination` and a place on the ladder."""
        return self.kind is CallKind.BID

    @property
    def pretty(self) -> str:
        """The call with a suit symbol (``7♥``, ``13NT``, ``pass``), for people; ``str()``
        gives the letters (``7H``) that logs and :meth:`parse` use."""
        if self.denomination is None:
            return self.kind.value
        return f"{self.level}{self.denomination.symbol}"

    def __str__(self) -> str:
        if self.denomination is None:
            return self.kind.value
        return f"{self.level}{self.denomination.letters}"

    def __repr__(self) -> str:
        return f"Call.parse({str(self)!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("calls are immutable")

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Call.parse, (str(self),))

    def __copy__(self) -> Call:
        return self

    def __deepcopy__(self, memo: object) -> Call:
        return self


def _make(kind: CallKind, level: int, denomination: Denomination | None, step: int, bit: int) -> Call:
    call = object.__new__(Call)
    object.__setattr__(call, "kind", kind)
    object.__setattr__(call, "level", level)
    object.__setattr__(call, "denomination", denomination)
    object.__setattr__(call, "step", step)
    object.__setattr__(call, "_bit", 1 << bit)
    return call


# Bits 0-51 are the cards', 52 pass, 53 double, 54-88 the bids.
_PASS: Final = _make(CallKind.PASS, 0, None, -1, 52)
_DOUBLE: Final = _make(CallKind.DOUBLE, 0, None, -1, 53)
_BIDS: Final = tuple(
    _make(
        CallKind.BID,
        level,
        denomination,
        (level - MIN_LEVEL) * 5 + denomination,
        54 + (level - MIN_LEVEL) * 5 + denomination,
    )
    for level in range(MIN_LEVEL, MAX_LEVEL + 1)
    for denomination in Denomination
)
PASS: Final = _PASS
"""The call ``pass``: legal at every turn of the auction."""
DOUBLE: Final = _DOUBLE
"""The call ``double``: legal only in a game that allows doubling (``GameConfig.doubling``,
off by default), against the other side's highest bid, once; a new bid cancels it."""
BIDS: Final = _BIDS
"""The 35 bids, lowest (7♣) first."""


Action: TypeAlias = Card | Call
"""Whatever a seat may do on its turn: play a card, or make a call in the auction."""
