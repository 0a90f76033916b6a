"""The match log's records (format ``oddtrick-match-log/1``, docs/match-log.md) as typed values.

One class per record type, each knowing its line: :meth:`to_dict` gives the JSON object
the referee writes (the same keys, in the same order, optional ones only when set, as
the log has always had), and :func:`record_from_dict` reads one back, keeping the
fields it does not know in ``extra`` (a later minor version may add some: readers
ignore them, and a record read and written again keeps them). The referee writes
through these, and this module is the one reader of a log: :func:`read_records` reads a
log's file (plain or compressed, bounded, through :mod:`oddtrick._logfile`) and
:func:`records_from_lines` the lines of one that came another way (a referee's
``GetMatchLog``, a job's payload), for every reader: the check, the replay, the page's
progress, ``oddtrick watch``, the analysis, the tournament and the benchmarks. So a new
field of the log is a change to one record class here (and docs/match-log.md), never to
its readers' parsing. Those that pass a log on as it is written (the Arena's
``GetMatchLog``, the page's download, an analysis job's payload) read its text through
:func:`log_text_lines` and :func:`log_text`, this module's too.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, TypeAlias

from oddtrick._logfile import MAX_LOG_BYTES, is_compressed, last_bytes, log_lines, read_log_text

LOG_FORMAT = "oddtrick-match-log/1"


def _extra(data: Mapping[str, Any], known: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key != "type" and key not in known}


@dataclasses.dataclass(frozen=True, slots=True)
class MatchStart:
    """The first line: the configuration, the players and the seed's commitment."""

    type: ClassVar[str] = "match_start"
    match_id: str
    table_id: str
    started_at_ms: int | None
    """``None`` only in a log without it (none the referee wrote)."""
    config: dict[str, Any]
    rules: dict[str, Any]
    """``deadline_ms``, ``grace_ms``; ``clock`` and ``untimed_seats`` when there are any."""
    players: dict[str, dict[str, Any]]
    """Seat (``N``…) → ``name``, ``version``, and ``options`` (the bot options its entry was
    started with, ``{"think_seconds": 2}``) when there were any."""
    seed_commitment: str
    format: str = LOG_FORMAT
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Fields after these (a fixed deal set's ``deal_set``), in the order written."""

    _KNOWN: ClassVar = ("format", "match_id", "table_id", "started_at_ms", "config", "rules", "players")
    _KNOWN_ALL: ClassVar = (*_KNOWN, "seed_commitment")

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "format": self.format,
            "match_id": self.match_id,
            "table_id": self.table_id,
            "started_at_ms": self.started_at_ms,
            "config": self.config,
            "rules": self.rules,
            "players": self.players,
            "seed_commitment": self.seed_commitment,
            **self.extra,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchStart:
        return cls(
            match_id=data["match_id"],
            table_id=data.get("table_id", ""),
            started_at_ms=data.get("started_at_ms"),
            config=data["config"],
            rules=data.get("rules", {}),
            players=data.get("players", {}),
            seed_commitment=data.get("seed_commitment", ""),
            format=data.get("format", ""),
            extra=_extra(data, cls._KNOWN_ALL),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class HandStart:
    type: ClassVar[str] = "hand_start"
    hand: int
    dealer: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "hand": self.hand, "dealer": self.dealer}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandStart:
        return cls(data["hand"], data["dealer"])


@dataclasses.dataclass(slots=True)
class ActionRecord:
    """A call or card: the seat's, or the referee's fallback (``fault`` says why).

    Not frozen, unlike the other records, though nothing changes one once made: a log has
    a line per action, every reader makes one per line, and a frozen dataclass's
    ``__init__`` (``object.__setattr__`` per field) costs several times a plain one's.
    """

    type: ClassVar[str] = "action"
    hand: int
    seat: str
    action: str
    think_ms: int | None
    bot_think_ms: int | None = None
    fault: str | None = None
    comment: str | None = None
    bot_error: str | None = None
    clock_ms: int | None = None

    @property
    def plain(self) -> bool:
        """No fault, comment or bot error: a line the writer formats without ``json.dumps``."""
        return self.fault is None and not self.comment and self.bot_error is None

    def to_dict(self) -> dict[str, Any]:
        line: dict[str, Any] = {
            "type": self.type,
            "hand": self.hand,
            "seat": self.seat,
            "action": self.action,
            "think_ms": self.think_ms,
        }
        if self.bot_think_ms is not None:
            line["bot_think_ms"] = self.bot_think_ms
        if self.fault is not None:
            line["fault"] = self.fault
        if self.comment:
            line["comment"] = self.comment
        if self.bot_error is not None:
            line["bot_error"] = self.bot_error
        if self.clock_ms is not None:
            line["clock_ms"] = self.clock_ms
        return line

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ActionRecord:
        return cls(
            data["hand"],
            data["seat"],
            data["action"],
            data.get("think_ms"),
            data.get("bot_think_ms"),
            data.get("fault"),
            data.get("comment"),
            data.get("bot_error"),
            data.get("clock_ms"),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """A refused answer (with the protocol's ``RefusalReason`` name), and the action refused
    when the answer held one the codec could read (so a replay shows what the bot tried)."""

    type: ClassVar[str] = "refusal"
    hand: int
    seat: str
    request_id: int
    reason: str
    message: str
    action: str | None = None

    def to_dict(self) -> dict[str, Any]:
        line = {
            "type": self.type,
            "hand": self.hand,
            "seat": self.seat,
            "request_id": self.request_id,
            "reason": self.reason,
            "message": self.message,
        }
        if self.action is not None:
            line["action"] = self.action
        return line

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Refusal:
        action = data.get("action")
        return cls(
            data["hand"],
            data["seat"],
            data["request_id"],
            data["reason"],
            data["message"],
            None if action is None else str(action),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class SeatEvent:
    """A seat's stream dropped (``disconnect``), came back (``reconnect``) or its grace
    period ran out (``forfeit``)."""

    kind: str
    hand: int
    seat: str

    KINDS: ClassVar = ("disconnect", "reconnect", "forfeit")

    @property
    def type(self) -> str:
        return self.kind

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "hand": self.hand, "seat": self.seat}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SeatEvent:
        return cls(data["type"], data["hand"], data["seat"])


@dataclasses.dataclass(frozen=True, slots=True)
class HandResultRecord:
    type: ClassVar[str] = "hand_result"
    hand: int
    outcome: str
    tricks: list[int]
    points: list[int]
    honours: list[int]
    scores: list[int]
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "hand": self.hand,
            "outcome": self.outcome,
            "tricks": self.tricks,
            "points": self.points,
            "honours": self.honours,
            "scores": self.scores,
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HandResultRecord:
        return cls(
            data["hand"],
            data["outcome"],
            data["tricks"],
            data["points"],
            data.get("honours", [0, 0]),
            data["scores"],
            data.get("text", ""),
        )


@dataclasses.dataclass(frozen=True, slots=True)
class GameResultRecord:
    type: ClassVar[str] = "game_result"
    game: int
    winner: str
    scores: list[int]

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "game": self.game, "winner": self.winner, "scores": self.scores}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameResultRecord:
        return cls(data["game"], data["winner"], data["scores"])


@dataclasses.dataclass(frozen=True, slots=True)
class MatchEnd:
    """The last line: the result, what each seat did, and the revealed seed."""

    type: ClassVar[str] = "match_end"
    result: dict[str, Any]
    """``winner`` (``None``: a draw), ``totals``, ``games_won``, ``hands``, ``reason``."""
    seats: dict[str, dict[str, Any]]
    seed: str
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Fields after these (a fixed deal set's deals), in the order written."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "result": self.result,
            "seats": self.seats,
            "seed": self.seed,
            **self.extra,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchEnd:
        return cls(
            data["result"], data.get("seats", {}), data["seed"], _extra(data, ("result", "seats", "seed"))
        )


@dataclasses.dataclass(frozen=True, slots=True)
class MatchStopped:
    """The last line of a match stopped before its end, with why (where a finished match
    has :class:`MatchEnd`)."""

    type: ClassVar[str] = "match_stopped"
    hand: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "hand": self.hand, "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchStopped:
        return cls(data["hand"], data["reason"])


@dataclasses.dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A record of a type this version does not know: kept as it was, and ignored."""

    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type"))

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)


Record: TypeAlias = (
    MatchStart
    | HandStart
    | ActionRecord
    | Refusal
    | SeatEvent
    | HandResultRecord
    | GameResultRecord
    | MatchEnd
    | MatchStopped
    | UnknownRecord
)

_READERS: dict[str, Any] = {
    "match_start": MatchStart.from_dict,
    "hand_start": HandStart.from_dict,
    "action": ActionRecord.from_dict,
    "refusal": Refusal.from_dict,
    "disconnect": SeatEvent.from_dict,
    "reconnect": SeatEvent.from_dict,
    "forfeit": SeatEvent.from_dict,
    "hand_result": HandResultRecord.from_dict,
    "game_result": GameResultRecord.from_dict,
    "match_end": MatchEnd.from_dict,
    "match_stopped": MatchStopped.from_dict,
}


class MalformedRecord(ValueError):
    """A line that is not a record: not JSON, not a JSON object, or a record of a known
    type without the fields it must have (a damaged log, or not a match log at all). The
    message names the line, when it is known, and what is wrong with it."""

    def __init__(self, problem: str, line: int | None = None) -> None:
        super().__init__(problem if line is None else f"line {line}: {problem}")
        self.problem = problem
        self.line = line


def record_from_dict(data: Mapping[str, Any], line: int | None = None) -> Record:
    """The typed record of one line's JSON object (line number ``line`` of its log, for
    the error); raises :class:`MalformedRecord` for a record of a known type without its
    fields."""
    if not isinstance(data, Mapping):
        return UnknownRecord({"type": None})
    kind = str(data.get("type"))
    reader = _READERS.get(kind)
    if reader is None:
        return UnknownRecord(dict(data))
    article = "an" if kind[:1] in "aeiou" else "a"
    try:
        record: Record = reader(data)
    except KeyError as missing:
        raise MalformedRecord(f"{article} {kind} line without its {missing}", line) from None
    except (TypeError, ValueError, AttributeError) as error:
        raise MalformedRecord(f"{article} {kind} line that does not read: {error}", line) from None
    return record


def record_line(record: Record) -> str:
    """The record as its line of the log (with the newline)."""
    return json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"


_PLAIN_ACTION = re.compile(
    r'\{"type":"action","hand":(0|[1-9][0-9]*),"seat":"([NESW])","action":"([0-9A-Za-z]+)",'
    r'"think_ms":(0|[1-9][0-9]*|null)(?:,"bot_think_ms":(0|[1-9][0-9]*))?(?:,"clock_ms":(0|[1-9][0-9]*))?\}'
).fullmatch
"""A plain action line exactly as the referee's writer formats it (``write_action``): read
without a JSON parse, they are nearly every line of a log (the JSON it is, read by
``json.loads``, is the same record; a test compares them)."""


def records_from_lines(lines: Iterable[str]) -> Iterator[Record]:
    """The typed records of a log's whole lines (without their newlines), numbered from 1;
    raises :class:`MalformedRecord` at the first line that is not a record."""
    plain = _PLAIN_ACTION
    for number, line in enumerate(lines, 1):
        found = plain(line)
        if found is not None:
            yield plain_action_record(found.groups())  # type: ignore[arg-type]  # six groups
            continue
        yield _record_of_line(line, number)


PlainAction = tuple[str, str, str, str, "str | None", "str | None"]
"""A plain action line's fields as the writer wrote them, not converted: hand, seat,
action, think_ms (digits or ``null``), bot_think_ms and clock_ms (digits or None)."""


def plain_action_record(fields: PlainAction) -> ActionRecord:
    """The record of a plain action line's fields (:data:`PlainAction`): what
    :func:`records_from_lines` yields for it, and what the check makes of one only when it
    checks its clock."""
    hand, seat, action, think, own, clock = fields
    return ActionRecord(
        int(hand),
        seat,
        action,
        None if think == "null" else int(think),
        None if own is None else int(own),
        None,
        None,
        None,
        None if clock is None else int(clock),
    )


def records_for_check(path: Path) -> Iterator[Record | PlainAction]:
    """:func:`read_records` as the check reads a log: a plain action line comes as its
    fields' text (:data:`PlainAction`), every other line as its record. The check reads
    nearly every line of every log for a seat and an action; making an
    :class:`ActionRecord` of each cost it a third more CPU."""
    plain = _PLAIN_ACTION
    for number, line in enumerate(log_lines(path), 1):
        found = plain(line)
        if found is not None:
            yield found.groups()  # type: ignore[misc]  # the pattern's six groups, as PlainAction
            continue
        yield _record_of_line(line, number)


def _record_of_line(line: str, number: int) -> Record:
    """The record of a line that is not a plain action: read as JSON."""
    try:
        data = json.loads(line)
    except ValueError:
        raise MalformedRecord("not JSON", number) from None
    if not isinstance(data, dict):
        raise MalformedRecord("not a JSON object", number)
    return record_from_dict(data, number)


def records_from_text(text: str) -> Iterator[Record]:
    """The typed records of a log's text held whole (a page's cached log); a torn last
    line (a crash mid-write) is left out, as :func:`read_records` leaves it."""
    lines = text.split("\n")
    lines.pop()  # what follows the last newline: nothing, or a torn last line
    return records_from_lines(lines)


def read_records(path: Path) -> Iterator[Record]:
    """The typed records of a log, plain or compressed, read as a stream (bounded: see
    :func:`oddtrick._logfile.log_lines`); a torn last line (a crash mid-write) is skipped.
    Raises :class:`OSError` for a log that cannot be read, :class:`MalformedRecord` at
    the first line that is not a record."""
    return records_from_lines(log_lines(path))


def read_ends(path: Path) -> tuple[Record | None, Record | None]:
    """A log's first and last records, read as a stream, the lines between them not parsed
    (``None``, ``None`` for an empty log): ``oddtrick check`` needs the seed on the last
    line before it replays the first, and reads the log twice rather than hold it."""
    lines = log_lines(path)
    first = next(lines, None)
    if first is None:
        return None, None
    count, last = 1, first
    for count, last in enumerate(lines, 2):  # noqa: B007 (the last one is kept)
        pass
    head = next(records_from_lines([first]))
    if count == 1:
        return head, head
    try:
        tail = next(records_from_lines([last]))
    except MalformedRecord as error:
        raise MalformedRecord(error.problem, count) from None
    return head, tail


def is_finished_log(path: Path) -> bool:
    """Whether a log's last line is its ``match_end`` record, read from the end of the file
    (a referee's start looks at every log this way: a finished one is compressed)."""
    if is_compressed(path):
        return True  # only finished logs are ever compressed
    lines = last_bytes(path, 4096).split(b"\n")
    return len(lines) >= 2 and lines[-1] == b"" and lines[-2].startswith(b'{"type":"match_end"')


def read_log_dicts(path: Path) -> Iterator[dict[str, Any]]:
    """Each record of a log as its JSON object (:func:`read_records`, then ``to_dict``): for
    code that reads a log's fields by name, such as tests and scripts of one's own."""
    for record in read_records(path):
        yield record.to_dict()


def log_text_lines(path: Path) -> Iterator[str]:
    """A log's whole lines as written (without their newlines), unparsed, read as a stream:
    for whoever passes them on as they are (the Arena's ``GetMatchLog``)."""
    return log_lines(path)


def log_text(path: Path, limit: int = MAX_LOG_BYTES) -> str:
    """A log's whole text as written, at most ``limit`` bytes: for whoever passes it on as
    it is (the page's download, an analysis job's payload)."""
    return read_log_text(path, limit)
