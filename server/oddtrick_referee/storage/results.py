"""What a competition records of its matches: the values the stores keep and the standings read.

Plain values below both: the tournament's store writes and reads them, a worker's job
result carries them, and the standings (``competitions/scoring/counted.py``,
``competitions/scoring/standings.py``) compute from them, so storage never imports a competition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oddtrick._timing import DecisionTimes
from oddtrick_referee.storage.json_checks import RecordInvalid, checked, optional


@dataclass(frozen=True)
class DealResult:
    """One play of one deal at one table, as the tournament runner records it."""

    match: str  # key of the match (the pairing), e.g. "alice|bob"
    first: str  # the match's two entries, in the order the match key names them
    second: str
    set_number: int  # a match is played in sets of deals, each with its own seed
    deal_number: int  # deal within the set (1-based)
    table: int  # 0 or 1: the two plays of a duplicate deal (0 only when not duplicate)
    ns_entry: str  # who held North-South at this table
    ew_entry: str
    ns_points: int  # points scored on this deal at this table (incl. honours)
    ew_points: int


@dataclass(frozen=True)
class FaultCounts:
    """How often an entry's bot misbehaved; reported next to its score, never folded into it."""

    timeouts: int = 0
    illegal: int = 0  # fallback after refused actions until the deadline
    disconnected: int = 0
    forfeits: int = 0  # matches forfeited (absent) + seats forfeited (grace over)
    refusals: int = 0  # refused actions (each refusal, even if corrected)
    bot_errors: int = 0  # the bot's own code raised; it played its SDK's fallback
    clock: int = 0  # the seat's time bank ran out (a match with --clock): a time-out of the bank

    @property
    def out_of_time(self) -> int:
        """Decisions lost on time, to the deadline or to the time bank."""
        return self.timeouts + self.clock


@dataclass(frozen=True)
class Forfeit:
    """A match that was never played because one entry did not show up."""

    match: str
    absent: str  # the entry that did not show up: loses the match
    present: str


def _counts(data: Any, what: str) -> dict[str, int]:
    """A JSON object of whole counts (``{"timeout": 2}``), checked."""
    if not isinstance(data, Mapping) or not all(
        isinstance(key, str) and isinstance(n, int) and not isinstance(n, bool) for key, n in data.items()
    ):
        raise RecordInvalid(f"{what} is {data!r}, not an object of counts")
    return dict(data)


@dataclass(frozen=True)
class SeatResult:
    """What one seat did at a finished table, as a store keeps it and the standings count it.

    Made from the table's log (``PlayedTable``), stored as JSON by :meth:`to_dict` (the
    one place its form is written) and read back by :meth:`from_dict` (the one place it is
    read), so a tournament's store, a worker's result and the standings share one shape.
    """

    bot: str
    faults: Mapping[str, int] = field(default_factory=dict)
    """Fault counts by kind (``timeout``, ``illegal``, ``bot_error``, ...)."""
    refusals: int = 0
    forfeited: bool = False
    decisions: int = 0
    think_ms_total: int = 0
    think_ms_max: int = 0
    times: DecisionTimes | None = None
    """Think time and lag apart; None for a table stored before the referee kept them."""

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "bot": self.bot,
            "faults": dict(self.faults),
            "refusals": self.refusals,
            "forfeited": self.forfeited,
            "decisions": self.decisions,
            "think_ms_total": self.think_ms_total,
            "think_ms_max": self.think_ms_max,
        }
        if self.times is not None:
            record["times"] = self.times.to_dict()
        return record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], what: str = "a seat record") -> SeatResult:
        """The record as stored now or before: ``times``, ``decisions`` and the think
        figures are absent from tables stored by older referees. :class:`RecordInvalid` names
        the field that is missing or wrong."""
        figures = {
            name: optional(data, name, int, what, 0)
            for name in ("decisions", "think_ms_total", "think_ms_max")
        }
        times = optional(data, "times", Mapping, what, None)
        return cls(
            bot=checked(data, "bot", str, what),
            faults=_counts(checked(data, "faults", Mapping, what), f"{what}'s 'faults'"),
            refusals=checked(data, "refusals", int, what),
            forfeited=checked(data, "forfeited", bool, what),
            times=None if times is None else DecisionTimes.from_dict(times),
            **figures,
        )

    def fault(self, kind: str) -> int:
        return self.faults.get(kind, 0)


@dataclass(frozen=True)
class TableResult:
    """One finished table run of a tournament: where it sits in the plan, who held which
    side, the match that played it, its seats' records and its deals' points.

    The tournament's store keeps these (:meth:`TournamentStore.record_run`,
    :meth:`TournamentStore.table_runs`), a worker's job result carries them
    (:meth:`to_dict`), and the standings are computed from them.
    """

    match_key: str
    set_number: int
    table_no: int
    ns_entry: str
    ew_entry: str
    match_id: str
    seats: Mapping[str, SeatResult]
    """By seat (``N``, ``E``, ``S``, ``W``)."""
    deals: tuple[tuple[int, int, int], ...] = ()
    """(deal number, NS points, EW points) per deal, honours included."""

    @property
    def key(self) -> tuple[str, int, int]:
        """(match key, set number, table number): the run's place in the plan."""
        return (self.match_key, self.set_number, self.table_no)

    def deal_results(self) -> list[DealResult]:
        first, second = self.match_key.split("|", 1)
        return [
            DealResult(
                self.match_key, first, second, self.set_number, deal, self.table_no,
                self.ns_entry, self.ew_entry, ns_points, ew_points,
            )
            for deal, ns_points, ew_points in self.deals
        ]  # fmt: skip

    def seats_dict(self) -> dict[str, Any]:
        """The seats' records as stored (one JSON object, by seat)."""
        return {seat: record.to_dict() for seat, record in self.seats.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_key": self.match_key,
            "set_number": self.set_number,
            "table_no": self.table_no,
            "ns_entry": self.ns_entry,
            "ew_entry": self.ew_entry,
            "match_id": self.match_id,
            "seats": self.seats_dict(),
            "deals": [list(deal) for deal in self.deals],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], what: str = "a table") -> TableResult:
        """:class:`RecordInvalid` names the field that is missing or wrong."""
        deals = checked(data, "deals", list, what)
        if not all(
            isinstance(deal, list | tuple)
            and len(deal) == 3
            and all(isinstance(n, int) and not isinstance(n, bool) for n in deal)
            for deal in deals
        ):
            raise RecordInvalid(f"{what}'s 'deals' are not [deal, NS points, EW points] lists of integers")
        match_key = checked(data, "match_key", str, what)
        if "|" not in match_key:
            raise RecordInvalid(f"{what}'s 'match_key' {match_key!r} does not name two entries (A|B)")
        return cls(
            match_key=match_key,
            set_number=checked(data, "set_number", int, what),
            table_no=checked(data, "table_no", int, what),
            ns_entry=checked(data, "ns_entry", str, what),
            ew_entry=checked(data, "ew_entry", str, what),
            match_id=checked(data, "match_id", str, what),
            seats=seats_of(checked(data, "seats", Mapping, what), what),
            deals=tuple((deal[0], deal[1], deal[2]) for deal in deals),
        )


def seats_of(data: Mapping[str, Any], what: str = "a table") -> dict[str, SeatResult]:
    """A table's seat records from their stored JSON object (by seat)."""
    return {str(seat): SeatResult.from_dict(record, f"{what}'s seat {seat}") for seat, record in data.items()}
