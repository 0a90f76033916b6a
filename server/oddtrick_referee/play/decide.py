"""What one decision at a table comes to: the pieces the table's loop puts together.

Pure helpers, holding nothing of a match: the table (``table.py``) asks a seat, awaits
its answers within the referee's deadline (never the bot's word), and applies them to
the rules; these say what an answer is (the codec reads it: an action, or a refusal
with its reason), what an accepted one or a fallback comes to (:class:`Decided`), what
the seat is told of a refusal and what the log says of a decision. Whatever happens, a
decision ends with an action: the bot's, or the fallback with the fault that forced it.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging

from oddtrick._codec import MalformedMessage, action_from_wire
from oddtrick._codec_protocol import (
    MALFORMED,
    refusal_message,
    refusal_reason_name,
    refusal_reason_to_wire,
    refusal_to_wire,
)
from oddtrick._log_records import ActionRecord, Refusal
from oddtrick.rules import PASS, Action, Card, GameState, IllegalAction, MatchEvent, Phase, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.matchlog import MatchLogWriter, action_text
from oddtrick_referee.play.records import Fault, SeatRecord

log = logging.getLogger("oddtrick.referee.table")

_request_ids = itertools.count(1)
"""Request ids are unique across the referee, hence within every session."""

PERSON_DEADLINE_S = 86_400.0
"""A person's seat (``oddtrick play``) has no deadline to speak of: one day per decision,
which still fits the protocol's ``time_left_ms``."""


@dataclasses.dataclass(frozen=True)
class Decided:
    action: Action
    fault: Fault | None
    think_ms: int | None
    comment: str | None
    bot_error: str | None = None
    """The bot's own report that its code failed and ``action`` is its fallback."""
    bot_think_ms: int | None = None
    """The bot's own measure of its time (Decision.bot_think_ms), when it sent one:
    the referee's ``think_ms`` less this is what transport and scheduling added."""
    events: tuple[MatchEvent, ...] = ()
    """What the action did, as the rules said when it was applied."""


def cut_to_bytes(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, at a character boundary (a limit
    counted in characters lets 256 emoji through as 1,024 bytes)."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[:limit].decode(errors="ignore")


def fallback_action(state: GameState) -> Action:
    """Pass in the auction; in play the lowest legal card (lowest rank, then clubs first)."""
    legal = state.legal_actions
    if state.phase is Phase.AUCTION:
        return PASS
    return min(legal, key=lambda card: (card.rank, card.suit) if isinstance(card, Card) else (0, 0))


@dataclasses.dataclass(frozen=True)
class Refused:
    """Why the rules or the codec refused an answer: the wire reason and its text."""

    reason: int
    text: str
    action: str | None = None
    """The action refused, when the answer held one (logged for the replays)."""


@dataclasses.dataclass(frozen=True)
class DecisionRules:
    """What bounds every decision of a table."""

    deadline_s: float
    max_attempts: int
    max_comment_bytes: int
    untimed: frozenset[Seat]
    """Seats played by a person at a terminal: their deadline is :data:`PERSON_DEADLINE_S`."""


def next_request_id() -> int:
    """A fresh request id: unique across the referee, hence within every session."""
    return next(_request_ids)


def decision_deadline_s(rules: DecisionRules, seat: Seat) -> float:
    """The seat's deadline per decision before its time bank (a person's is a day)."""
    return PERSON_DEADLINE_S if seat in rules.untimed else rules.deadline_s


def read_action(decision: referee_pb2.Decision) -> Action | Refused:
    """The action an answer holds, or why it cannot be read."""
    try:
        return action_from_wire(decision.action)
    except MalformedMessage as error:
        return Refused(MALFORMED, f"malformed action: {error}")


def refused_by_rules(error: IllegalAction, action: Action) -> Refused:
    """An action the rules refused (the state is unchanged), as the seat and the log say it."""
    return Refused(refusal_reason_to_wire(error.reason), str(error), str(action))


def refusal(
    decision: referee_pb2.Decision, refused: Refused, left_ms: int, attempts_left: int
) -> referee_pb2.RefereeMessage:
    """What the seat is told of its refused answer: why, its time left and its attempts left."""
    wire = refusal_to_wire(
        decision.request_id,
        refused.reason,  # type: ignore[arg-type]
        refused.text,
        decision.action,
        time_left_ms=left_ms,
        attempts_left=max(0, attempts_left),
    )
    return refusal_message(wire)


def refusal_record(hand: int, seat: Seat, decision: referee_pb2.Decision, refused: Refused) -> Refusal:
    """The log's line for a refused answer."""
    reason = refusal_reason_name(refused.reason)
    return Refusal(hand, str(seat), decision.request_id, reason, refused.text, refused.action)


def accepted(
    bot_name: str,
    seat: Seat,
    item: referee_pb2.Decision,
    applied: tuple[Action, tuple[MatchEvent, ...]],
    think: int,
    max_comment_bytes: int,
) -> Decided:
    """An answer the rules took, ``think`` ms after its request left: what it decided."""
    comment = cut_to_bytes(item.comment, max_comment_bytes) if item.HasField("comment") else None
    bot_error = cut_to_bytes(item.bot_error, max_comment_bytes) if item.HasField("bot_error") else None
    if bot_error is not None:
        log.info("%s (%s) reports its code failed: %s", bot_name, seat, bot_error)
    # The bot's own clock, at most the referee's measure, which contains
    # it (rounding aside); informational, never trusted for the deadline.
    own = item.bot_think_ms if item.HasField("bot_think_ms") else None
    bot_think = None if own is None else min(own, think)
    return Decided(applied[0], None, think, comment, bot_error, bot_think, applied[1])


def count(record: SeatRecord, decided: Decided) -> None:
    """Add one decision to the seat's record."""
    if decided.fault is None:  # fallbacks are faults, not the bot's decisions
        record.decisions += 1
    if decided.think_ms is not None:
        record.think_ms_total += decided.think_ms
        record.think_ms_max = max(record.think_ms_max, decided.think_ms)
        record.times.add(decided.think_ms, decided.bot_think_ms, decided.comment)
    if decided.bot_error is not None:
        record.add_fault(Fault.BOT_ERROR)


def write_action(
    log_writer: MatchLogWriter, hand: int, seat: Seat, decided: Decided, clock_ms: int | None
) -> None:
    """The log's action line for one decision (the short form when there is nothing more to say)."""
    action, fault = action_text(decided.action), decided.fault
    if fault is None and not decided.comment and decided.bot_error is None:
        log_writer.write_action(hand, seat, action, decided.think_ms, decided.bot_think_ms, clock_ms)
        return
    log_writer.write(
        ActionRecord(
            hand,
            str(seat),
            action,
            decided.think_ms,
            decided.bot_think_ms,
            fault.value if fault is not None else None,
            decided.comment or None,
            decided.bot_error,
            clock_ms,
        )
    )
