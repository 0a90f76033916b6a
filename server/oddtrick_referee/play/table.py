"""One table running one match: requests, deadlines, refusals, faults, events, log.

Everything a seat is told comes from ``state.view(seat)``, the rules
engine's one door for hidden information: its cards at the deal, then
public events only (the hand state a request carries is advanced by those
events, see ``oddtrick._codec_hand``). Spectators get what
``state.view(None)`` shows. Each decision lives in its own cancel scope
whose deadline is the referee's clock, never the bot's word.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import itertools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import grpc
import trio

from oddtrick._codec import (
    MalformedMessage,
    action_from_wire,
    game_result_to_wire,
    hand_result_to_wire,
    hand_state,
    match_result_to_wire,
    match_stopped_to_wire,
    seat_record_to_wire,
    seat_to_wire,
    table_rules_to_wire,
)
from oddtrick._codec_arena import watch_response
from oddtrick._codec_hand import advance_hand, start_hand
from oddtrick._codec_protocol import (
    MALFORMED,
    add_event,
    auction_ended_to_wire,
    call_made_to_wire,
    card_played_to_wire,
    decided_fields,
    event_to_wire,
    fill_request,
    hand_started_to_wire,
    match_started_to_wire,
    new_hand_state,
    new_referee_message,
    refusal_message,
    refusal_reason_name,
    refusal_reason_to_wire,
    refusal_to_wire,
    resync_message,
    trick_completed_to_wire,
)
from oddtrick._events import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    EventCursor,
    GameEnded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    TrickCompleted,
)
from oddtrick._log_records import (
    ActionRecord,
    GameResultRecord,
    HandResultRecord,
    HandStart,
    MatchEnd,
    MatchStart,
    MatchStopped,
    Refusal,
    SeatEvent,
)
from oddtrick._timing import DecisionTimes
from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import (
    PASS,
    Action,
    Card,
    GameConfig,
    GameState,
    IllegalAction,
    MatchResult,
    Phase,
    Seat,
    SeatView,
)
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee.play.clock import ClockRule, TableClock
from oddtrick_referee.play.matchlog import MatchLogWriter
from oddtrick_referee.transport.bridge import WatchStream
from oddtrick_referee.transport.sessions import DISCONNECTED, SeatLink

log = logging.getLogger("oddtrick.referee.table")

_SEATS = tuple(Seat)
MAX_WATCHERS = 16
"""Spectators per match: watching costs the table's thread a little per spectator."""
_request_ids = itertools.count(1)
"""Request ids are unique across the referee, hence within every session."""


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot_name,
            "faults": {fault.value: count for fault, count in self.faults.items()},
            "refusals": self.refusals,
            "forfeited": self.forfeited,
            "decisions": self.decisions,
            "think_ms_total": self.think_ms_total,
            "think_ms_max": self.think_ms_max,
            "times": self.times.to_dict(),
        }

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


@dataclasses.dataclass(frozen=True)
class _Decided:
    action: Action
    fault: Fault | None
    think_ms: int | None
    comment: str | None
    bot_error: str | None = None
    """The bot's own report that its code failed and ``action`` is its fallback."""
    bot_think_ms: int | None = None
    """The bot's own measure of its time (Decision.bot_think_ms), when it sent one:
    the referee's ``think_ms`` less this is what transport and scheduling added."""


def _cut_utf8(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, never inside a character."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def result_record(result: MatchResult) -> dict[str, Any]:
    """A match result as the log and the SQLite index store it."""
    return {
        "winner": result.winner.short if result.winner is not None else None,
        "totals": list(result.totals),
        "games_won": list(result.games_won),
        "hands": result.hands_played,
        "reason": result.reason,
    }


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


PERSON_DEADLINE_S = 86_400.0
"""A person's seat (``oddtrick play``) has no deadline to speak of: one day per decision,
which still fits the protocol's ``time_left_ms``."""


class Table:
    """Runs one match between the four seat links to the end, whatever the bots do."""

    def __init__(
        self,
        *,
        match_id: str,
        table_id: str,
        config: GameConfig,
        seed: str,
        rules: TableRules,
        links: Mapping[Seat, SeatLink],
        log_writer: MatchLogWriter,
        max_attempts: int,
        max_comment_bytes: int,
        on_progress: Callable[[Table], None] | None = None,
        reveal_seed: bool = True,
        fold_events: bool = True,
        close_log: bool = True,
        untimed: frozenset[Seat] = frozenset(),
        deals: MatchDeals | None = None,
    ) -> None:
        self.match_id = match_id
        self._untimed = untimed
        """Seats played by a person at a terminal: their deadline is :data:`PERSON_DEADLINE_S`."""
        self.table_id = table_id
        self._deals = deals
        """The match's deals when they come from a fixed deal set (else from the seed)."""
        self.stop_reason = "the referee stopped the match before its end"
        """What the seats are told if the match is stopped early: whoever stops it may say why."""
        self.state = GameState(config, seed, deals=None if deals is None else deals.deals)
        self.rules = rules
        self._clock = TableClock(rules.clock, [seat for seat in Seat if seat not in untimed])
        """Each timed seat's time bank, when the match has a clock."""
        self.links = dict(links)
        self.records = {seat: SeatRecord(link.bot_name) for seat, link in self.links.items()}
        self._log = log_writer
        self._log_opened = False
        self._cursor = EventCursor(self.state)
        self._max_attempts = max_attempts
        self._max_comment_bytes = max_comment_bytes
        self._outgoing = {seat: new_referee_message() for seat in Seat}
        """Each seat's next message, collecting its events until it is sent."""
        self._hand = new_hand_state()
        """The hand's public state (no cards), advanced event by event; a request adds the
        seat's own cards and turn to a copy of it instead of re-encoding the whole hand."""
        self._own_cards: dict[Seat, list[Card]] = {seat: [] for seat in Seat}
        self._watch_log: list[dict[str, Any]] = []
        """Every event as spectators see it (the fields of an Event, which is built only when
        someone watches), numbered from 1: a new spectator gets them all."""
        self._watch_sent = 0
        self._watch_built: list[referee_pb2.Event] = []
        self._watchers: list[WatchStream] = []
        self._over = False
        self.progress: tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]] = (
            0,
            (0, 0),
            (0, 0),
            (0, 0),
        )
        """Hands played and the scoreboard (game, games won, totals) after the last hand: replaced
        whole after each hand, so the gRPC thread can read it (ListMatches) at any time."""
        self._open: dict[Seat, tuple[referee_pb2.DecisionRequest, float]] = {}
        self._last_decided: _Decided | None = None
        self._on_progress = on_progress
        self.sealed = not reveal_seed
        """One play of a duplicate pair: its cards stay hidden from everyone until both are over."""
        self._close_log = close_log
        """Close (fsync) the log at the end; False: the owner does, off the thread every
        table shares, since an fsync can take milliseconds (Referee.play_match)."""
        self._fold_events = fold_events
        """Send a seat's events with its next request (one message per decision) rather than at once."""
        self.started_at_ms = int(time.time() * 1000)
        self.added_latency_s: list[float] = []
        self._answer_arrived: float | None = None
        self._flush_others_after_request = False
        for link in self.links.values():
            link.on_resume = self._resync
            link.on_detach = self._disconnected
            link.on_unknown = self._refused_unknown

    # ------------------------------------------------------------------ run

    def open_log(self) -> None:
        """Write the log's first line (the match start), which creates the file: a log never
        exists without it, whenever the referee is killed. :meth:`run` does it if not done."""
        if self._log_opened:
            return
        self._log_opened = True
        state = self.state
        self._log.write(
            MatchStart(
                match_id=self.match_id,
                table_id=self.table_id,
                started_at_ms=self.started_at_ms,
                config=state.config.to_dict(),
                rules={
                    "deadline_ms": round(self.rules.deadline_s * 1000),
                    "grace_ms": round(self.rules.grace_s * 1000),
                    **({"clock": self.rules.clock.to_record()} if self.rules.clock is not None else {}),
                    **(
                        {"untimed_seats": sorted(str(seat) for seat in self._untimed)}
                        if self._untimed
                        else {}
                    ),
                },
                players={
                    str(seat): {"name": link.bot_name, "version": link.bot_version}
                    for seat, link in self.links.items()
                },
                seed_commitment=state.commitment,
                extra=self._deals.start_record() if self._deals is not None else {},
            )
        )

    async def run(self) -> GameState:
        state = self.state
        self.open_log()
        for seat in Seat:
            self._queue(seat, match_started=self._match_started(seat))
        self._record_watched(match_started=self._match_started(None))
        try:
            await self._play()
        except BaseException:
            self.tell_stopped()
            self._end_watching(grpc.StatusCode.UNAVAILABLE, "the match was stopped before its end")
            self._log.close()  # what was played reaches the disk, without a match_end line
            raise
        self._end_watching(grpc.StatusCode.OK, "the match is over")
        return state

    async def _play(self) -> None:
        state = self.state
        while True:
            self._report(self._cursor.poll())
            if state.phase is Phase.MATCH_OVER:
                break
            if state.phase is Phase.HAND_OVER:
                # The hand's last events reach the seat to act first with its next
                # request, and every other seat right after that request has left:
                # the next decision does not wait on four extra sends.
                self._flush_others_after_request = True
                state.start_next_hand()
                continue
            to_act = state.to_act
            assert to_act is not None
            seat = to_act
            decided = await self._decide(seat)
            self._last_decided = decided
            record = self.records[seat]
            if decided.fault is None:  # fallbacks are faults, not the bot's decisions
                record.decisions += 1
            if decided.think_ms is not None:
                record.think_ms_total += decided.think_ms
                record.think_ms_max = max(record.think_ms_max, decided.think_ms)
                record.times.add(decided.think_ms, decided.bot_think_ms)
            if decided.bot_error is not None:
                record.add_fault(Fault.BOT_ERROR)
            clock_ms = self._clock.left_ms(seat)
            if decided.fault is None and not decided.comment and decided.bot_error is None:
                self._log.write_action(
                    state.hand_number,
                    seat,
                    str(decided.action),
                    decided.think_ms,
                    decided.bot_think_ms,
                    clock_ms,
                )
            else:
                self._log.write(
                    ActionRecord(
                        state.hand_number,
                        str(seat),
                        str(decided.action),
                        decided.think_ms,
                        decided.bot_think_ms,
                        decided.fault.value if decided.fault is not None else None,
                        decided.comment or None,
                        decided.bot_error,
                        clock_ms,
                    )
                )
            if self._on_progress is not None:
                self._on_progress(self)
        self._flush_all()
        self._finish_log()

    def tell_stopped(self, reason: str | None = None) -> None:
        """The match is stopped before its end: tell every seat and spectator so, with why
        (a MatchResult with MATCH_OUTCOME_ABORTED and ``stop_reason``), and say it in the
        log (a ``match_stopped`` line, where a finished match has ``match_end``). Once only;
        without waiting (the sends are queued), so it can run where the match is cancelled."""
        if self._over or self.state.phase is Phase.MATCH_OVER:
            return
        self._over = True
        if reason is not None:
            self.stop_reason = reason
        public = self.state.view(None)
        stopped = match_stopped_to_wire(
            public.scores,
            public.games_won,
            public.totals,
            len(public.hand_results),
            [record.to_wire(seat) for seat, record in self.records.items()],
            self.state.commitment,
            self.stop_reason,
        )
        self._queue_all(match_ended=stopped)
        self._flush_all()
        self._publish()
        # A full disk (or a closed log) may be what stopped it: the seats are told all the same.
        with contextlib.suppress(OSError, ValueError):
            self._log.write(MatchStopped(self.state.hand_number, self.stop_reason))

    def seat_records(self) -> dict[str, dict[str, Any]]:
        return {str(seat): record.to_dict() for seat, record in self.records.items()}

    def _finish_log(self) -> None:
        result = self.state.match_result
        assert result is not None
        self._log.write(
            MatchEnd(
                result_record(result),
                self.seat_records(),
                self.state.seed,
                self._deals.end_record() if self._deals is not None else {},
            )
        )
        if self._close_log:
            self._log.close()

    # ------------------------------------------------------------ decisions

    async def _decide(self, seat: Seat) -> _Decided:
        link = self.links[seat]
        record = self.records[seat]
        state = self.state
        if link.forfeited:
            action = fallback_action(state)
            state.apply(action, seat)
            record.add_fault(Fault.FORFEITED)
            return _Decided(action, Fault.FORFEITED, None, None)
        request_id = next(_request_ids)
        deadline_s = PERSON_DEADLINE_S if seat in self._untimed else self.rules.deadline_s
        deadline_s = self._clock.begin(seat, deadline_s)  # the bank, when it is less
        deadline = trio.current_time() + deadline_s
        link.open_request = link.last_request = request_id
        link.unsolicited = link.answers = 0
        message = self._take_outgoing(seat)
        request = fill_request(
            message,
            request_id=request_id,
            auction=state.phase is Phase.AUCTION,
            legal=state.legal_actions,
            time_left_ms=round(deadline_s * 1000),
            match_id=self.match_id,
            seat=seat,
            last_sequence=link.sequence,
            hand=self._hand,
            own_cards=self._own_cards[seat],
            clock_left_ms=self._clock.left_ms(seat),
        )
        # The message is the transport's from here on: never changed after sending.
        self._open[seat] = (request, deadline)
        link.send(message)
        sent = time.perf_counter()
        if self._answer_arrived is not None:
            self.added_latency_s.append(sent - self._answer_arrived)
            self._answer_arrived = None
        if self._flush_others_after_request:
            self._flush_others_after_request = False
            self._flush_all()
        attempts = 0
        fault = Fault.TIMEOUT
        try:
            with trio.move_on_at(deadline):
                while True:
                    if link.session is None:
                        fault = Fault.DISCONNECTED
                        if not await self._await_reconnect(link):
                            fault = Fault.FORFEITED
                            break
                        continue
                    item = await link.decisions.receive()
                    if item is DISCONNECTED or item.request_id != request_id:
                        continue
                    if attempts >= self._max_attempts:  # the reader passes no more than this
                        continue
                    attempts += 1
                    refusal_or_action = self._try(seat, item)
                    if not isinstance(refusal_or_action, tuple):
                        arrived = time.perf_counter()
                        self._answer_arrived = arrived
                        think = round((arrived - sent) * 1000)
                        comment = (
                            cut_to_bytes(item.comment, self._max_comment_bytes)
                            if item.HasField("comment")
                            else None
                        )
                        bot_error = (
                            _cut_utf8(item.bot_error, self._max_comment_bytes)
                            if item.HasField("bot_error")
                            else None
                        )
                        if bot_error is not None:
                            log.info("%s (%s) reports its code failed: %s", link.bot_name, seat, bot_error)
                        # The bot's own clock, at most the referee's measure, which contains
                        # it (rounding aside); informational, never trusted for the deadline.
                        own = item.bot_think_ms if item.HasField("bot_think_ms") else None
                        bot_think = None if own is None else min(own, think)
                        self._clock.answered(seat, think)
                        return _Decided(refusal_or_action, None, think, comment, bot_error, bot_think)
                    record.refusals += 1
                    fault = Fault.ILLEGAL
                    reason, text = refusal_or_action
                    self._refuse(seat, item, reason, text, deadline, self._max_attempts - attempts)
        finally:
            link.open_request = 0
            self._open.pop(seat, None)
        if fault is Fault.FORFEITED:
            self._clock.forfeited(seat)
        elif self._clock.expired(seat) and fault is Fault.TIMEOUT:
            fault = Fault.CLOCK  # the bank, not the decision's deadline, ran out
        action = fallback_action(state)
        state.apply(action, seat)
        record.add_fault(fault)
        if fault is Fault.FORFEITED and not link.forfeited:
            link.forfeited = True
            record.forfeited = True
            self._log.write(SeatEvent("forfeit", state.hand_number, str(seat)))
        log.info("%s (%s) %s: fallback %s", link.bot_name, seat.name.title(), fault.value, action)
        return _Decided(action, fault, None, None)

    async def _await_reconnect(self, link: SeatLink) -> bool:
        """Wait (within the decision's scope) for the seat's bot to come back."""
        if link.grace_over():
            return False
        assert link.disconnected_at is not None
        with trio.move_on_at(link.disconnected_at + link.grace_s):
            await link.reconnected.wait()
        return link.session is not None

    def _try(self, seat: Seat, decision: referee_pb2.Decision) -> tuple[int, str] | Action:
        """Apply the bot's answer and return it; on refusal, the reason code and text
        (and the state is unchanged)."""
        try:
            action = action_from_wire(decision.action)
        except MalformedMessage as error:
            return MALFORMED, f"malformed action: {error}"
        try:
            self.state.apply(action, seat)
        except IllegalAction as error:
            return refusal_reason_to_wire(error.reason), str(error)
        return action

    def _refuse(
        self,
        seat: Seat,
        decision: referee_pb2.Decision,
        reason: int,
        text: str,
        deadline: float,
        attempts_left: int,
    ) -> None:
        left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        self._log.write(
            Refusal(self.state.hand_number, str(seat), decision.request_id, refusal_reason_name(reason), text)
        )
        refusal = refusal_to_wire(
            decision.request_id,
            reason,  # type: ignore[arg-type]
            text,
            decision.action,
            time_left_ms=left_ms,
            attempts_left=max(0, attempts_left),
        )
        self.links[seat].send(refusal_message(refusal))

    # --------------------------------------------------------------- events

    def _queue(self, seat: Seat, **event: Any) -> referee_pb2.Event:
        """Add an event to the seat's next message. It is numbered when that message is
        sent (:meth:`_take_outgoing`): events that are never sent (the match was stopped,
        or a Resync replaced them) take no number, so the seat's numbering stays gapless."""
        return add_event(self._outgoing[seat], event)

    def _queue_all(self, **event: Any) -> None:
        """Queue one public event for every seat and spectator, and advance the hand's
        public state with it."""
        for seat in _SEATS:
            added = self._queue(seat, **event)
        advance_hand(self._hand, added, cards_pb2.SEAT_UNSPECIFIED)
        self._record_watched(**event)

    # ------------------------------------------------------------ spectators

    def _record_watched(self, **event: Any) -> None:
        self._watch_log.append(event)

    def _watched_events(self, start: int) -> list[referee_pb2.Event]:
        """Spectator events from ``start`` on, each built once (when first watched)."""
        built = self._watch_built
        for number, fields in enumerate(self._watch_log[len(built) :], len(built) + 1):
            built.append(event_to_wire(number, fields))
        return built[start:]

    def watch(self, watcher: WatchStream) -> None:
        """A spectator joins (Arena.WatchMatch): send it everything so far, then what follows."""
        if self._over:
            watcher.close(grpc.StatusCode.NOT_FOUND, f"match {self.match_id} is over; fetch its log")
            return
        self._watchers = [w for w in self._watchers if not w.closed]
        if len(self._watchers) >= MAX_WATCHERS:
            watcher.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"match {self.match_id} has {MAX_WATCHERS} spectators already; try again later",
            )
            return
        self._watchers.append(watcher)
        watcher.send(watch_response(self._watched_events(0)))

    def _end_watching(self, code: grpc.StatusCode, details: str) -> None:
        self._over = True
        for watcher in self._watchers:
            watcher.close(code, details)

    def _publish(self) -> None:
        """Send spectators the events recorded since the last time."""
        if self._watch_sent == len(self._watch_log):
            return
        if self._watchers:
            self._watchers = [w for w in self._watchers if not w.closed]
            response = watch_response(self._watched_events(self._watch_sent))
            for watcher in self._watchers:
                watcher.send(response)
        self._watch_sent = len(self._watch_log)

    def _take_outgoing(self, seat: Seat) -> referee_pb2.RefereeMessage:
        """The seat's pending message (its events so far), leaving a fresh one in its place."""
        message = self._outgoing[seat]
        self._outgoing[seat] = new_referee_message()
        link = self.links[seat]
        for event in message.update.events:
            link.sequence += 1
            event.sequence = link.sequence
        return message

    def _flush(self, seat: Seat) -> None:
        """Send the seat's pending events, if any, without a request."""
        if self._outgoing[seat].update.events:
            self.links[seat].send(self._take_outgoing(seat))

    def _flush_all(self) -> None:
        for seat in _SEATS:
            self._flush(seat)

    def _report(self, events: list[MatchEvent]) -> None:
        """Turn the engine's public events into each seat's wire events."""
        if not events:
            return
        state = self.state
        public: SeatView | None = None  # results are the same for every seat: one spectator's view
        decided = self._last_decided
        meta: dict[str, Any] = {}
        if decided is not None:
            fault = decided.fault.value if decided.fault is not None else None
            meta = decided_fields(decided.fault is not None, fault, decided.think_ms)
        for event in events:
            if isinstance(event, HandStarted):
                watched = hand_started_to_wire(state.view(None))
                for seat in Seat:
                    view = state.view(seat)
                    started = hand_started_to_wire(view)
                    self._queue(seat, hand_started=started)
                    self._own_cards[seat] = list(view.hand)
                    if self.rules.open:
                        watched.hands.add(seat=seat_to_wire(seat), cards=started.cards)
                self._record_watched(hand_started=watched)
                self._hand = start_hand(started)
                self._hand.ClearField("cards")
            elif isinstance(event, CallMade):
                self._queue_all(call_made=call_made_to_wire(event.seat, event.call, meta))
            elif isinstance(event, AuctionEnded):
                self._queue_all(auction_ended=auction_ended_to_wire(event.contract))
            elif isinstance(event, CardPlayed):
                self._queue_all(
                    card_played=card_played_to_wire(event.seat, event.card, event.trick_number, meta)
                )
                self._own_cards[event.seat].remove(event.card)
            elif isinstance(event, TrickCompleted):
                self._queue_all(trick_completed=trick_completed_to_wire(event.trick, event.tricks_won))
            elif isinstance(event, HandEnded):
                # Every seat sees the same result (a thrown-in hand's cards hidden from all).
                view = public = public or state.view(None)
                result = view.hand_results[event.result.hand_number - 1]
                self.progress = (len(view.hand_results), view.scores, view.games_won, view.totals)
                self._queue_all(hand_ended=hand_result_to_wire(result, view.game_number, view))
            elif isinstance(event, GameEnded):
                public = public or state.view(None)
                self._queue_all(game_ended=game_result_to_wire(event.result, public.games_won))
            elif isinstance(event, MatchEnded):
                public = public or state.view(None)
                self._queue_all(match_ended=self._match_result(public))
            self._log_event(event)
        self._publish()
        if not self._fold_events:
            self._flush_all()

    def _log_event(self, event: MatchEvent) -> None:
        state = self.state
        if isinstance(event, HandStarted):
            self._log.write(HandStart(event.hand_number, str(state.dealer)))
        elif isinstance(event, HandEnded):
            result = event.result
            self._log.write(
                HandResultRecord(
                    result.hand_number,
                    result.outcome.value,
                    list(result.tricks),
                    list(result.points),
                    list(result.honours),
                    list(result.scores_after),
                    result.describe(),
                )
            )
        elif isinstance(event, GameEnded):
            self._log.write(
                GameResultRecord(
                    event.result.game_number, event.result.winner.short, list(event.result.scores)
                )
            )

    def _match_result(self, view: Any) -> game_pb2.MatchResult:
        result = self.state.match_result
        assert result is not None
        return match_result_to_wire(
            result,
            view.scores,
            [record.to_wire(seat) for seat, record in self.records.items()],
            "" if self.sealed else self.state.seed,
            self.state.commitment,
        )

    def _match_started(self, seat: Seat | None) -> referee_pb2.MatchStarted:
        """The match as ``seat`` (``None``: a spectator) is told of it."""
        return match_started_to_wire(
            self.match_id,
            self.table_id,
            self.state.config,
            self.rules.to_wire(),
            seat,
            [(s, link.bot_name, link.bot_version) for s, link in self.links.items()],
            self.state.commitment,
            self.started_at_ms,
        )

    # --------------------------------------------------------------- resume

    def _disconnected(self, link: SeatLink) -> None:
        """A seat's stream dropped: the log says when (the seat is kept for its grace period)."""
        if not self._over:
            self._log.write(SeatEvent("disconnect", self.state.hand_number, str(link.seat)))

    def _refused_unknown(self, link: SeatLink, refusal: referee_pb2.Refusal) -> None:
        """An answer to a request never issued on the seat: logged like every refusal (it
        changes nothing, and is not counted against the seat)."""
        if not self._over:
            self._log.write(
                Refusal(
                    self.state.hand_number,
                    str(link.seat),
                    refusal.request_id,
                    refusal_reason_name(refusal.reason),
                    refusal.message,
                )
            )

    def _resync(self, link: SeatLink) -> None:
        """A bot took its seat back: send what it needs to go on."""
        seat = link.seat
        self._outgoing[seat] = new_referee_message()
        self._log.write(SeatEvent("reconnect", self.state.hand_number, str(seat)))
        open_request = self._open.get(seat)
        request, time_left_ms = None, 0
        if open_request is not None:
            request, deadline = open_request
            time_left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        match, hand = self._match_started(seat), hand_state(self.state.view(seat))
        link.send(resync_message(link.sequence, match, hand, request, time_left_ms))
