"""What a table plays by and what it keeps of each seat: its rules, faults and records.

Values only, read by the table, the referee's index, the standings and the
conformance kit alike.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Collection
from typing import Any

from oddtrick._codec import seat_record_to_wire, table_rules_to_wire
from oddtrick._timing import DecisionTimes
from oddtrick.rules import MatchResult, Seat
from oddtrick.v1 import game_pb2
from oddtrick_referee.play.clock import ClockRule
from oddtrick_referee.storage.results import SeatResult


class Fault(enum.Enum):
    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    DISCONNECTED = "disconnected"
    FORFEITED = "forfeited"
    BOT_ERROR = "bot_error"
    """The bot's own code failed; it answered with its SDK's fallback (Decision.bot_error)."""
    CLOCK = "clock"
    """The seat's time bank ran out before its deadline (see :mod:`.clock`)."""


@dataclasses.dataclass(frozen=True)
class TableRules:
    """The arena's rules for one match (docs/rules.md, "Illegal actions and time")."""

    deadline_s: float = 5.0
    grace_s: float = 30.0
    open: bool = False
    clock: ClockRule | None = None
    """The match clock (a time bank per seat, :mod:`.clock`), if any."""

    def to_record(self) -> dict[str, Any]:
        """The rules as the SQLite index keeps them (see :meth:`from_record`)."""
        record: dict[str, Any] = {
            "deadline_ms": round(self.deadline_s * 1000),
            "grace_ms": round(self.grace_s * 1000),
            "open": self.open,
        }
        if self.clock is not None:
            record["clock"] = self.clock.to_record()
        return record

    def log_record(self, untimed: Collection[Seat]) -> dict[str, Any]:
        """The rules as the match log's first line has them (``untimed``: a person's seats)."""
        record: dict[str, Any] = {
            "deadline_ms": round(self.deadline_s * 1000),
            "grace_ms": round(self.grace_s * 1000),
        }
        if self.clock is not None:
            record["clock"] = self.clock.to_record()
        if untimed:
            record["untimed_seats"] = sorted(map(str, untimed))
        return record

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> TableRules:
        clock = ClockRule.from_record(record["clock"]) if record.get("clock") else None
        return cls(record["deadline_ms"] / 1000, record["grace_ms"] / 1000, record.get("open", False), clock)

    def to_wire(self) -> game_pb2.TableRules:
        clock = self.clock
        return table_rules_to_wire(
            self.deadline_s,
            self.grace_s,
            self.open,
            clock.initial_ms if clock is not None else None,
            clock.increment_ms if clock is not None else None,
        )


@dataclasses.dataclass
class SeatRecord:
    """What a seat did in a match, for the log, the result and the standings."""

    bot_name: str
    faults: dict[Fault, int] = dataclasses.field(default_factory=dict)
    refusals: int = 0
    forfeited: bool = False
    decisions: int = 0
    think_ms_total: int = 0
    think_ms_max: int = 0
    times: DecisionTimes = dataclasses.field(default_factory=DecisionTimes)
    """Think time and lag apart, for the standings' percentiles."""

    def add_fault(self, fault: Fault) -> None:
        self.faults[fault] = self.faults.get(fault, 0) + 1

    def result(self) -> SeatResult:
        """The record as a finished table's value (a copy: this one may still change)."""
        return SeatResult(
            bot=self.bot_name,
            faults={fault.value: count for fault, count in self.faults.items()},
            refusals=self.refusals,
            forfeited=self.forfeited,
            decisions=self.decisions,
            think_ms_total=self.think_ms_total,
            think_ms_max=self.think_ms_max,
            times=DecisionTimes.merged([self.times]),
        )

    def to_dict(self) -> dict[str, Any]:
        """As the log's last line and the stores keep it (:meth:`SeatResult.to_dict`)."""
        return self.result().to_dict()

    def to_wire(self, seat: Seat) -> game_pb2.SeatRecord:
        return seat_record_to_wire(
            seat,
            [(fault.value, count) for fault, count in self.faults.items()],
            self.refusals,
            self.forfeited,
            self.decisions,
            self.think_ms_total,
            self.think_ms_max,
        )


def result_record(result: MatchResult) -> dict[str, Any]:
    """A match result as the log and the SQLite index store it."""
    return {
        "winner": result.winner.short if result.winner is not None else None,
        "totals": list(result.totals),
        "games_won": list(result.games_won),
        "hands": result.hands_played,
        "reason": result.reason,
    }
