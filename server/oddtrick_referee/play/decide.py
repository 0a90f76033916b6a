"""One decision at a table: the request, its deadline, refusals, reconnects and faults.

Each decision lives in its own cancel scope whose deadline is the referee's clock,
never the bot's word. The bot's answer is read with the codec and applied to the
rules (``GameState.step``), which say what it did; a refused answer leaves the state
as it was. Whatever happens, the decision ends with an action: the bot's, or the
fallback with the fault that forced it.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

import trio

from oddtrick._codec import MalformedMessage, action_from_wire
from oddtrick._codec_protocol import (
    MALFORMED,
    refusal_message,
    refusal_reason_name,
    refusal_reason_to_wire,
    refusal_to_wire,
)
from oddtrick._log_records import Refusal, SeatEvent
from oddtrick.rules import PASS, Action, Card, GameState, IllegalAction, MatchEvent, Phase, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.clock import TableClock
from oddtrick_referee.play.matchlog import MatchLogWriter
from oddtrick_referee.play.outbox import Outbox
from oddtrick_referee.play.records import Fault, SeatRecord
from oddtrick_referee.play.seat import TableSeat

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


class Decisions:
    """Asks each seat in turn and returns what it decided (or what was decided for it)."""

    def __init__(
        self,
        match_id: str,
        state: GameState,
        links: Mapping[Seat, TableSeat],
        records: Mapping[Seat, SeatRecord],
        outbox: Outbox,
        clock: TableClock,
        log_writer: MatchLogWriter,
        rules: DecisionRules,
    ) -> None:
        self._match_id = match_id
        self._state = state
        self._links = links
        self._records = records
        self._outbox = outbox
        self._clock = clock
        self._log = log_writer
        self._rules = rules
        self.open: dict[Seat, tuple[referee_pb2.DecisionRequest, float]] = {}
        """Each seat's request in progress and its deadline (a Resync repeats it)."""
        self.added_latency_s: list[float] = []
        """From an answer's arrival to the next request's send, per decision: the referee's cost."""
        self._answer_arrived: float | None = None
        self._fault = Fault.TIMEOUT
        """Why the decision in progress would fall back, were its deadline to pass now."""
        self.flush_others_after_request = False
        """Send the other seats their events once the next request has left (a new hand's)."""
        self._scope = trio.CancelScope()
        """The scope :meth:`run` holds around the table's decisions: its deadline is the
        open decision's. It is left in place once the answer is in, since nothing awaits
        between an answer and the next request, which moves it: a deadline can only pass
        while the table waits, and it waits only for a decision."""
        self._asking: Seat | None = None
        """The seat whose decision is open, while :attr:`_scope`'s deadline is its deadline."""

    async def run(
        self, turns: Callable[[], Awaitable[None]], decided: Callable[[Seat, Decided], None]
    ) -> None:
        """Run ``turns`` (the table's loop of :meth:`decide` calls) to its end; a decision
        whose deadline passes ends with its fallback, handed to ``decided`` as the loop would.

        One cancel scope lasts from one timeout to the next, its deadline moved to each
        decision's: entering and closing a scope per decision is some fifty calls in trio,
        hundreds of times a second per table; moving a deadline is a few.
        """
        while True:
            with trio.CancelScope() as scope:
                self._scope = scope
                await turns()
                return
            seat, self._asking = self._asking, None
            if seat is not None:  # else the deadline passed just after the answer came in
                decided(seat, self._given_up(seat))

    async def decide(self, seat: Seat) -> Decided:
        """The seat's decision (within :meth:`run`): its answer, or the fallback for it."""
        link = self._links[seat]
        if link.forfeited:
            return self._fall_back(seat, Fault.FORFEITED)
        # A scope whose deadline passed as an answer came in is spent: :meth:`run` takes a
        # fresh one before this request is sent.
        await trio.lowlevel.checkpoint_if_cancelled()
        deadline, sent = self._ask(seat)
        self._fault = Fault.TIMEOUT
        scope = self._scope
        scope.deadline = deadline
        if deadline <= trio.current_time():
            scope.cancel()  # no time at all (an empty bank): as a scope entered past its deadline
        self._asking = seat
        try:
            decided = await self._answer(seat, deadline, sent)
        finally:
            link.asked()
            self.open.pop(seat, None)
        self._asking = None
        return decided if decided is not None else self._given_up(seat)

    def _given_up(self, seat: Seat) -> Decided:
        """The decision ended without a legal answer (its deadline, a forfeit): the fallback
        with the fault why."""
        link = self._links[seat]
        fault = self._fault
        if fault is Fault.FORFEITED:
            self._clock.forfeited(seat)
        elif self._clock.expired(seat) and fault is Fault.TIMEOUT:
            fault = Fault.CLOCK  # the bank, not the decision's deadline, ran out
        decided = self._fall_back(seat, fault)
        record = self._records[seat]
        if fault is Fault.FORFEITED and not link.forfeited:
            link.forfeit()
            record.forfeited = True
            self._log.write(SeatEvent("forfeit", self._state.hand_number, str(seat)))
        log.info("%s (%s) %s: fallback %s", link.bot_name, seat.name.title(), fault.value, decided.action)
        return decided

    def _ask(self, seat: Seat) -> tuple[float, float]:
        """Send the seat its request with its pending events: its deadline and when it was sent."""
        link = self._links[seat]
        request_id = next(_request_ids)
        deadline_s = PERSON_DEADLINE_S if seat in self._rules.untimed else self._rules.deadline_s
        deadline_s = self._clock.begin(seat, deadline_s)  # the bank, when it is less
        deadline = trio.current_time() + deadline_s
        link.ask(request_id)
        message, request = self._outbox.request(
            seat,
            request_id,
            self._state.legal_actions,
            round(deadline_s * 1000),
            match_id=self._match_id,
            clock_left_ms=self._clock.left_ms(seat),
        )
        # The message is the transport's from here on: never changed after sending.
        self.open[seat] = (request, deadline)
        link.send(message)
        sent = time.perf_counter()
        if self._answer_arrived is not None:
            self.added_latency_s.append(sent - self._answer_arrived)
            self._answer_arrived = None
        if self.flush_others_after_request:
            self.flush_others_after_request = False
            self._outbox.flush_all()
        return deadline, sent

    async def _answer(self, seat: Seat, deadline: float, sent: float) -> Decided | None:
        """Wait for a legal answer to the request, refusing the others (``None``: the seat
        is forfeited); the caller's deadline cuts it short. :attr:`_fault` says why the
        decision would fall back, as the wait goes."""
        link = self._links[seat]
        attempts = 0
        while True:
            if not link.connected and not link.answers_waiting:
                self._fault = Fault.DISCONNECTED
                if not await link.wait_for_return():
                    self._fault = Fault.FORFEITED
                    return None
                continue
            item = await link.answer()
            if item is None:  # the stream ended: wait for the bot to come back
                continue
            attempts += 1  # the link passes no more than max_attempts answers
            applied = self._try(seat, item)
            if isinstance(applied, Refused):
                self._records[seat].refusals += 1
                self._fault = Fault.ILLEGAL
                self._refuse(seat, item, applied, deadline, self._rules.max_attempts - attempts)
                continue
            return self._accepted(seat, item, applied[0], applied[1], sent)

    def _accepted(
        self,
        seat: Seat,
        item: referee_pb2.Decision,
        action: Action,
        events: tuple[MatchEvent, ...],
        sent: float,
    ) -> Decided:
        arrived = time.perf_counter()
        self._answer_arrived = arrived
        think = round((arrived - sent) * 1000)
        limit = self._rules.max_comment_bytes
        comment = cut_to_bytes(item.comment, limit) if item.HasField("comment") else None
        bot_error = cut_to_bytes(item.bot_error, limit) if item.HasField("bot_error") else None
        if bot_error is not None:
            log.info("%s (%s) reports its code failed: %s", self._links[seat].bot_name, seat, bot_error)
        # The bot's own clock, at most the referee's measure, which contains
        # it (rounding aside); informational, never trusted for the deadline.
        own = item.bot_think_ms if item.HasField("bot_think_ms") else None
        bot_think = None if own is None else min(own, think)
        self._clock.answered(seat, think)
        return Decided(action, None, think, comment, bot_error, bot_think, events)

    def _fall_back(self, seat: Seat, fault: Fault) -> Decided:
        """The action the referee takes for a seat that did not decide, with the fault why."""
        action = fallback_action(self._state)
        events = self._state.step(action, seat)
        self._records[seat].add_fault(fault)
        return Decided(action, fault, None, None, events=events)

    def _try(
        self, seat: Seat, decision: referee_pb2.Decision
    ) -> Refused | tuple[Action, tuple[MatchEvent, ...]]:
        """Apply the bot's answer: the action and what it did, or why it is refused (and
        the state is unchanged)."""
        try:
            action = action_from_wire(decision.action)
        except MalformedMessage as error:
            return Refused(MALFORMED, f"malformed action: {error}")
        try:
            events = self._state.step(action, seat)
        except IllegalAction as error:
            return Refused(refusal_reason_to_wire(error.reason), str(error), str(action))
        return action, events

    def _refuse(
        self,
        seat: Seat,
        decision: referee_pb2.Decision,
        refused: Refused,
        deadline: float,
        attempts_left: int,
    ) -> None:
        reason, text = refused.reason, refused.text
        left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        hand = self._state.hand_number
        self._log.write(
            Refusal(hand, str(seat), decision.request_id, refusal_reason_name(reason), text, refused.action)
        )
        refusal = refusal_to_wire(
            decision.request_id,
            reason,  # type: ignore[arg-type]
            text,
            decision.action,
            time_left_ms=left_ms,
            attempts_left=max(0, attempts_left),
        )
        self._links[seat].send(refusal_message(refusal))
