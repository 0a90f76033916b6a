"""Seats and partnerships around the table."""

from __future__ import annotations

import enum

from oddtrick.rules._errors import ParseError


class Side(enum.IntEnum):
    """A partnership: North-South or East-West."""

    NORTH_SOUTH = 0
    EAST_WEST = 1

    @property
    def other(self) -> Side:
        """The opposing partnership."""
        return Side(1 - self)

    @property
    def seats(self) -> tuple[Seat, Seat]:
        """The partnership's two seats: (North, South) or (East, West)."""
        return (Seat(self), Seat(self + 2))

    @property
    def short(self) -> str:
        """``NS`` or ``EW``, as score sheets write it."""
        return "NS" if self is Side.NORTH_SOUTH else "EW"

    def __str__(self) -> str:
        return self.short

    def __bool__(self) -> bool:
        # An IntEnum is false when its value is 0: ``side and side.short`` would
        # silently skip North-South. A side is a value, never "nothing".
        return True


class Seat(enum.IntEnum):
    """A seat, numbered clockwise from North so that ``(seat + 1) % 4`` is its left."""

    NORTH = 0
    EAST = 1
    SOUTH = 2
    WEST = 3

    @property
    def left(self) -> Seat:
        """The next seat clockwise, who plays after this one."""
        return _SEATS[(self + 1) % 4]

    @property
    def next(self) -> Seat:
        """Alias of :attr:`left`: turn order is always clockwise."""
        return _SEATS[(self + 1) % 4]

    @property
    def right(self) -> Seat:
        """The previous seat clockwise, who played just before this one."""
        return _SEATS[(self + 3) % 4]

    @property
    def partner(self) -> Seat:
        """The seat opposite, whose tricks count with this seat's."""
        return _SEATS[(self + 2) % 4]

    @property
    def side(self) -> Side:
        """The partnership this seat plays for."""
        return Side(self % 2)

    @property
    def letter(self) -> str:
        """``N``, ``E``, ``S`` or ``W``, as deals (PBN), logs and ``str()`` write the seat."""
        return self.name[0]

    @classmethod
    def parse(cls, text: str) -> Seat:
        """Accept ``N``/``north``/``NORTH`` and the like."""
        key = text.strip().upper()
        for seat in _SEATS:
            if key in (seat.name, seat.letter):
                return seat
        raise ParseError(f"not a seat: {text!r} (expected one of N, E, S, W)")

    def __str__(self) -> str:
        return self.letter

    def __bool__(self) -> bool:
        # As for Side: North (value 0) is a seat, not "no seat".
        return True


_SEATS = (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST)
SEATS: tuple[Seat, ...] = _SEATS
"""The four seats in turn order, North first."""
