"""The match clock: a time bank per seat with an increment per decision (``--clock 60+0.5``).

The rule (docs/rules.md, "Time"; TableRules.clock_initial_ms in game.proto):

- each seat starts the match with ``initial`` in its bank;
- when the referee sends the seat a decision request it first adds the
  ``increment`` (a Fischer increment: what a decision leaves unused carries
  over), so even an empty bank gives each decision the increment;
- the decision may take at most the smaller of the decision deadline and the
  bank: the deadline still caps every decision, however full the bank;
- an accepted answer's time on the referee's clock (the ``think_ms`` the log
  and the seat's events show) is taken from the bank;
- when the bank bounds the decision and runs out first, the referee makes
  the fallback action with the fault ``clock`` and the bank is 0; when the
  deadline passes first, it is a ``timeout`` and costs the whole deadline; a
  decision that ends refused or disconnected spends all it was allowed.

Everything is whole milliseconds, so that the bank after each decision,
which the match log writes, follows exactly from the log's own figures and
``oddtrick check`` can recompute it (:func:`replay_bank`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any

from oddtrick_referee._exceptions import OptionError

__all__ = ["ClockRule", "SeatClock", "TableClock", "replay_bank"]

_TEXT = re.compile(r"^\s*(?P<initial>\d+(?:\.\d*)?|\.\d+)\s*\+\s*(?P<increment>\d+(?:\.\d*)?|\.\d+)\s*$")
MAX_MS = 2**32 - 1
"""The protocol carries milliseconds as uint32: about 49 days."""
_RANGE = "a clock's times must be between 0 and 4294967 seconds"


@dataclasses.dataclass(frozen=True)
class ClockRule:
    """The clock's settings: each seat's bank at the start and the increment per decision."""

    initial_ms: int
    increment_ms: int = 0

    def __post_init__(self) -> None:
        if not (0 <= self.initial_ms <= MAX_MS and 0 <= self.increment_ms <= MAX_MS):
            raise OptionError(_RANGE)
        if self.initial_ms == 0 and self.increment_ms == 0:
            raise OptionError(
                "a clock of 0+0 leaves no time at all: give a bank or an increment, e.g. 60+0.5"
            )

    @classmethod
    def parse(cls, text: str) -> ClockRule:
        """``BANK+INCREMENT`` in seconds, ``60+0.5``: 60 s a seat a match and 0.5 s more a
        decision (as chess writes a Fischer time control). OptionError says what is wrong."""
        found = _TEXT.match(text)
        if found is None:
            raise OptionError(
                f"--clock expects BANK+INCREMENT in seconds, e.g. 60+0.5 (60 s a seat per match, "
                f"0.5 s more per decision), not {text!r}"
            )
        initial, increment = (float(found[name]) for name in ("initial", "increment"))
        if max(initial, increment) * 1000 > MAX_MS:  # also infinity, which cannot be rounded
            raise OptionError(_RANGE)
        return cls(round(initial * 1000), round(increment * 1000))

    def __str__(self) -> str:
        return f"{_seconds(self.initial_ms)}+{_seconds(self.increment_ms)}"

    def describe(self) -> str:
        """For people: ``clock 60+0.5 (a bank of 60 s a seat per match, +0.5 s a decision)``."""
        return (
            f"clock {self} (a bank of {_seconds(self.initial_ms)} s a seat per match, "
            f"+{_seconds(self.increment_ms)} s a decision)"
        )

    def to_record(self) -> dict[str, int]:
        """As the match log's header and the SQLite index keep it."""
        return {"initial_ms": self.initial_ms, "increment_ms": self.increment_ms}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ClockRule:
        return cls(int(record["initial_ms"]), int(record.get("increment_ms", 0)))


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g}"


CLOCK_HELP = (
    "a time bank as well as the deadline: BANK+INCREMENT seconds, e.g. 60+0.5 = 60 s a seat per "
    "match plus 0.5 s added at each of its decisions; a decision may take its deadline or what is "
    "in the bank, whichever is less, and what it takes comes out of the bank; a seat whose bank "
    "runs out gets the fallback action and a C (clock) fault, as at a time-out (default: no clock)"
)


def clock_argument(text: str) -> ClockRule:
    """``--clock``'s argparse type: the rule, or argparse's error with what is wrong."""
    import argparse

    try:
        return ClockRule.parse(text)
    except OptionError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def time_control(deadline_s: float, clock: ClockRule | None) -> str:
    """The time control for people: ``5 s a decision`` and the clock, if any."""
    text = f"{deadline_s:g} s a decision"
    return text if clock is None else f"{text}; {clock.describe()}"


class SeatClock:
    """One seat's bank over one match, in whole milliseconds."""

    def __init__(self, rule: ClockRule) -> None:
        self.rule = rule
        self.left_ms = rule.initial_ms
        self._allowed_ms = 0
        self._by_bank = False

    def begin(self, deadline_ms: int) -> int:
        """A decision request is about to be sent: add the increment and return the
        milliseconds this decision may take (the deadline, or the bank if less)."""
        self.left_ms = min(MAX_MS, self.left_ms + self.rule.increment_ms)
        self._by_bank = self.left_ms < deadline_ms
        self._allowed_ms = min(deadline_ms, self.left_ms)
        return self._allowed_ms

    @property
    def bank_bounds(self) -> bool:
        """Whether the bank, not the deadline, bounds the decision in progress."""
        return self._by_bank

    def answered(self, think_ms: int) -> None:
        """The answer was accepted after ``think_ms`` on the referee's clock."""
        self.left_ms = max(0, self.left_ms - think_ms)

    def expired(self) -> None:
        """No answer was accepted in the time allowed: all of it is spent."""
        self.left_ms = max(0, self.left_ms - self._allowed_ms)

    def cancel(self) -> None:
        """The decision ended without the seat (forfeited): as if it was never asked."""
        self.left_ms = max(0, self.left_ms - self.rule.increment_ms)


class TableClock:
    """Every timed seat's clock at one table; with no rule, a clock that changes nothing."""

    def __init__(self, rule: ClockRule | None, seats: Iterable[object]) -> None:
        self.rule = rule
        self._seats: dict[object, SeatClock] = (
            {seat: SeatClock(rule) for seat in seats} if rule is not None else {}
        )

    def begin(self, seat: object, deadline_s: float) -> float:
        """Seconds the seat's next decision may take (its deadline without a clock)."""
        clock = self._seats.get(seat)
        if clock is None:
            return deadline_s
        return clock.begin(min(MAX_MS, round(deadline_s * 1000))) / 1000

    def left_ms(self, seat: object) -> int | None:
        """The seat's bank now, or None when it has no clock."""
        clock = self._seats.get(seat)
        return None if clock is None else clock.left_ms

    def answered(self, seat: object, think_ms: int) -> None:
        clock = self._seats.get(seat)
        if clock is not None:
            clock.answered(think_ms)

    def expired(self, seat: object) -> bool:
        """The decision got no accepted answer in time; True when it was the bank, not
        the deadline, that ran out (the fault is then ``clock``, not ``timeout``)."""
        clock = self._seats.get(seat)
        if clock is None:
            return False
        clock.expired()
        return clock.bank_bounds

    def forfeited(self, seat: object) -> None:
        """The seat was forfeited during its decision: a forfeited seat's decisions use
        no time, that one included (its increment is taken back)."""
        clock = self._seats.get(seat)
        if clock is not None:
            clock.cancel()


def replay_bank(rule: ClockRule, deadline_ms: int, think_ms: int | None, fault: str | None, left: int) -> int:
    """The bank after one decision, from the bank ``left`` before it and what the log
    says of it (``think_ms`` of an accepted answer, or its fault): :class:`SeatClock`'s
    arithmetic, for ``oddtrick check``. A forfeited seat's decision uses no time."""
    if fault == "forfeited":
        return left
    clock = SeatClock(rule)
    clock.left_ms = left
    clock.begin(deadline_ms)
    if fault is None:
        clock.answered(think_ms or 0)
    else:
        clock.expired()
    return clock.left_ms
