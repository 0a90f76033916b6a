"""A finished table's figures, read from its match log by the rules engine, and from nothing else.

Whoever counts a table (the tournament, the ladder, the standings of a run on
workers, ``oddtrick tournament status``) counts what :func:`scored_table` reads off
the table's log: each deal's points from the rules' own replay of the logged actions
(:func:`~oddtrick_referee.play.matchlog.replay_log`, the check ``oddtrick check``
makes), each seat's faults, refusals, forfeit and times from the log's lines. A
result also reports its figures beside its log (a worker's job result, the
referee's in-memory record of a table): they are never counted, only compared
(:func:`disagreement`), so that a result whose figures were changed after the play
(a database rewritten, a worker running other code) is refused rather than believed.
"""

from __future__ import annotations

import collections
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from oddtrick._codec_protocol import UNKNOWN_REQUEST, refusal_reason_name
from oddtrick._log_records import (
    ActionRecord,
    MatchStart,
    Record,
    Refusal,
    SeatEvent,
    log_text,
    records_from_text,
)
from oddtrick.rules import GameState, Seat
from oddtrick_referee._exceptions import ResultRefused
from oddtrick_referee.play.matchlog import replay_log
from oddtrick_referee.play.records import Fault, SeatRecord
from oddtrick_referee.storage.results import SeatResult

DealPoints = tuple[int, int, int]
"""(deal number, NS points, EW points), honours included."""

_UNCOUNTED_REFUSAL = refusal_reason_name(UNKNOWN_REQUEST)
"""An answer to a request never issued on the seat: logged, never counted against it."""


def deal_points(state: GameState) -> list[DealPoints]:
    """Every hand of a finished table, honours included."""
    return [
        (r.hand_number, r.points[0] + r.honours[0], r.points[1] + r.honours[1]) for r in state.hand_results
    ]


@dataclasses.dataclass(frozen=True)
class PlayedTable:
    """What a finished table gives the standings (made by :func:`scored_table` only)."""

    match_id: str
    deals: list[DealPoints]
    seats: Mapping[Seat, SeatRecord]
    seed: str = ""
    """The seed the log revealed: the one its deals were dealt from."""

    def seat_results(self) -> dict[str, SeatResult]:
        """The seats' records as values, by seat (``N``, ``E``, ...)."""
        return {str(seat): record.result() for seat, record in self.seats.items()}

    def seat_dicts(self) -> dict[str, Any]:
        """The seats' records as a store keeps them (``SeatResult.to_dict``), by seat."""
        return {seat: record.to_dict() for seat, record in self.seat_results().items()}

    def faults(self) -> collections.Counter[str]:
        """Faults of every kind, by bot name."""
        counts: collections.Counter[str] = collections.Counter()
        for record in self.seats.values():
            counts[record.bot_name] += sum(record.faults.values())
        return counts

    def forfeited(self) -> set[str]:
        """The bots that did not come back within the grace period."""
        return {record.bot_name for record in self.seats.values() if record.forfeited}


def scored_table(log_text: str, name: str = "") -> PlayedTable:
    """A finished table's figures from its match log's whole text (plain, not gzip), checked
    by the rules engine; :class:`ResultRefused` (``name`` saying which table) when the log
    fails the check, or its own last line's seats are not what its lines give."""
    where = f"table {name}: " if name else ""
    try:
        replayed = replay_log(log_text)
        if not replayed.report.ok:
            raise ResultRefused(
                f"{where}its log fails the rules' check: {'; '.join(replayed.report.problems)}"
            )
        assert replayed.state is not None
        assert replayed.start is not None
        assert replayed.end is not None
        seats = _seats(replayed.start, records_from_text(log_text))
        match_id = replayed.start.match_id
    except (KeyError, TypeError, ValueError, IndexError) as error:
        if isinstance(error, ResultRefused):
            raise
        raise ResultRefused(f"{where}its log cannot be read: {type(error).__name__}: {error}") from error
    played = PlayedTable(match_id, deal_points(replayed.state), seats, replayed.state.seed)
    logged = replayed.end.seats
    if not isinstance(logged, dict) or (differs := _seats_differ(played, logged, "its last line")):
        raise ResultRefused(f"{where}its log's lines and its match_end disagree: {differs or 'no seats'}")
    return played


def _seats(start: MatchStart, records: Iterable[Record]) -> dict[Seat, SeatRecord]:
    """Each seat's record as the table kept it (``play/table.py``, ``play/decide.py``),
    counted again from the log's records."""
    seats = {seat: SeatRecord(str(start.players[str(seat)]["name"])) for seat in Seat}
    by_text = {str(seat): record for seat, record in seats.items()}
    for record in records:
        if isinstance(record, ActionRecord):
            seat = by_text[record.seat]
            if record.fault is None:  # fallbacks are faults, not the bot's decisions
                seat.decisions += 1
            else:
                seat.add_fault(Fault(record.fault))
            think = record.think_ms
            if think is not None:
                seat.think_ms_total += think
                seat.think_ms_max = max(seat.think_ms_max, think)
                seat.times.add(think, record.bot_think_ms, record.comment)
            if record.bot_error is not None:
                seat.add_fault(Fault.BOT_ERROR)
        elif isinstance(record, Refusal) and record.reason != _UNCOUNTED_REFUSAL:
            by_text[record.seat].refusals += 1
        elif isinstance(record, SeatEvent) and record.kind == "forfeit":
            by_text[record.seat].forfeited = True
    return seats


def _plain(data: Any) -> Any:
    """As JSON carries it (string keys, lists for tuples): two figures compare alike however kept."""
    return json.loads(json.dumps(data))


def _seats_differ(table: PlayedTable, reported: Mapping[str, Any], who: str) -> str | None:
    """The first seat field ``who`` reports otherwise than the log gives (fields ``who``
    leaves out are not compared: a log of an older referee has no times)."""
    mine = _plain(table.seat_dicts())
    theirs = _plain(reported)
    if set(theirs) != set(mine):
        return f"{who} has the seats {sorted(theirs)}, the log {sorted(mine)}"
    for seat, fields in sorted(mine.items()):
        given = theirs[seat]
        if not isinstance(given, dict):
            return f"{who} has no record of seat {seat}"
        for field, value in fields.items():
            if field in given and given[field] != value:
                return f"seat {seat}'s {field} is {given[field]!r} in {who}, {value!r} in the log"
    return None


def disagreement(
    table: PlayedTable, deals: Sequence[Sequence[int]], seats: Mapping[str, Any], who: str = "the result"
) -> str | None:
    """What figures reported beside a table's log (its deals' points, its seats' records)
    say otherwise than the log does; None when they agree."""
    mine, theirs = _plain(table.deals), _plain(list(deals))
    by_deal = {deal[0]: deal for deal in mine}
    for given in theirs:
        if not isinstance(given, list) or not given or by_deal.get(given[0]) != given:
            logged = by_deal.get(given[0]) if isinstance(given, list) and given else None
            return f"{who} reports deal {given} where the log gives {logged}"
    if len(theirs) != len(mine) or len({given[0] for given in theirs}) != len(theirs):
        return f"{who} reports {len(theirs)} deals, the log {len(mine)}"
    return _seats_differ(table, seats, who)


def scored_record(
    match_id: str, log_path: Path, state: GameState, seats: Mapping[Seat, SeatRecord]
) -> PlayedTable:
    """A table the referee here just played (its record: the log it wrote, the state and
    seats it kept), scored from its log; refused when the log and the record disagree."""
    where = f"table {match_id}"
    try:
        text = log_text(log_path)
    except OSError as error:
        raise ResultRefused(f"{where}: its log cannot be read: {error}") from error
    played = scored_table(text, match_id)
    kept = {str(seat): record.to_dict() for seat, record in seats.items()}
    differs = disagreement(played, deal_points(state), kept, "the referee's record")
    if differs is None and played.seed != state.seed:
        differs = "its log was dealt from another seed than the referee's record"
    if differs is None and played.match_id != match_id:
        differs = f"its log is of match {played.match_id}"
    if differs is not None:
        raise ResultRefused(f"{where}: {differs}")
    return played
