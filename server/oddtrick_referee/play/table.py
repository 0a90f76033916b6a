"""One table running one match: requests, deadlines, refusals, faults, events, log.

Everything a seat is told comes from ``state.view(seat)``, the rules
engine's one door for hidden information: its cards at the deal, then
public events only (the hand state a request carries is advanced by those
events, see ``oddtrick._hand_tracking``). Spectators get what
``state.view(None)`` shows. Each decision lives in its own cancel scope
whose deadline is the referee's clock, never the bot's word.
"""

from __future__ import annotations

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
    action_to_wire,
    call_to_wire,
    card_to_wire,
    cards_to_wire,
    config_to_wire,
    contract_to_wire,
    game_result_to_wire,
    hand_result_to_wire,
    hand_state,
    per_side,
    scoreboard,
    seat_to_wire,
    side_to_wire,
    trick_to_wire,
    trumps_to_wire,
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
from oddtrick._hand_tracking import advance_hand, start_hand
from oddtrick._timing import DecisionTimes
from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import (
    PASS,
    Action,
    Card,
    GameConfig,
    GameKind,
    GameState,
    IllegalAction,
    MatchResult,
    Phase,
    Reason,
    Seat,
    SeatView,
)
from oddtrick.v1 import arena_pb2, cards_pb2, game_pb2, referee_pb2
from oddtrick_referee.play.clock import ClockRule, TableClock
from oddtrick_referee.play.matchlog import LOG_FORMAT, MatchLogWriter
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


_FAULT_WIRE = {
    Fault.TIMEOUT: game_pb2.FAULT_KIND_TIMEOUT,
    Fault.ILLEGAL: game_pb2.FAULT_KIND_ILLEGAL,
    Fault.DISCONNECTED: game_pb2.FAULT_KIND_DISCONNECTED,
    Fault.FORFEITED: game_pb2.FAULT_KIND_FORFEITED,
    Fault.BOT_ERROR: game_pb2.FAULT_KIND_BOT_ERROR,
    Fault.CLOCK: game_pb2.FAULT_KIND_CLOCK,
}

_REFUSAL_WIRE = {
    Reason.NOT_YOUR_TURN: referee_pb2.REFUSAL_REASON_NOT_YOUR_TURN,
    Reason.WRONG_PHASE: referee_pb2.REFUSAL_REASON_WRONG_PHASE,
    Reason.CARD_NOT_HELD: referee_pb2.REFUSAL_REASON_CARD_NOT_HELD,
    Reason.MUST_FOLLOW_SUIT: referee_pb2.REFUSAL_REASON_MUST_FOLLOW_SUIT,
    Reason.BID_TOO_LOW: referee_pb2.REFUSAL_REASON_BID_TOO_LOW,
    Reason.DOUBLE_NOT_ALLOWED: referee_pb2.REFUSAL_REASON_DOUBLE_NOT_ALLOWED,
}


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
        wire = game_pb2.TableRules(
            decision_deadline_ms=round(self.deadline_s * 1000),
            reconnect_grace_ms=round(self.grace_s * 1000),
            open=self.open,
        )
        if self.clock is not None:
            wire.clock_initial_ms = self.clock.initial_ms
            wire.clock_increment_ms = self.clock.increment_ms
        return wire


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
        return game_pb2.SeatRecord(
            seat=seat_to_wire(seat),
            faults=[
                game_pb2.FaultCount(kind=_FAULT_WIRE[fault], count=count)
                for fault, count in sorted(self.faults.items(), key=lambda item: _FAULT_WIRE[item[0]])
            ],
            refusals=self.refusals,
            forfeited=self.forfeited,
            decisions=self.decisions,
            think_ms_total=self.think_ms_total,
            think_ms_max=self.think_ms_max,
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
        self._outgoing = {seat: referee_pb2.RefereeMessage() for seat in Seat}
        """Each seat's next message, collecting its events until it is sent."""
        self._hand = referee_pb2.HandState()
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
            {
                "type": "match_start",
                "format": LOG_FORMAT,
                "match_id": self.match_id,
                "table_id": self.table_id,
                "started_at_ms": self.started_at_ms,
                "config": state.config.to_dict(),
                "rules": {
                    "deadline_ms": round(self.rules.deadline_s * 1000),
                    "grace_ms": round(self.rules.grace_s * 1000),
                    **({"clock": self.rules.clock.to_record()} if self.rules.clock is not None else {}),
                    **(
                        {"untimed_seats": sorted(str(seat) for seat in self._untimed)}
                        if self._untimed
                        else {}
                    ),
                },
                "players": {
                    str(seat): {"name": link.bot_name, "version": link.bot_version}
                    for seat, link in self.links.items()
                },
                "seed_commitment": state.commitment,
                **(self._deals.start_record() if self._deals is not None else {}),
            }
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
                entry: dict[str, Any] = {
                    "type": "action",
                    "hand": state.hand_number,
                    "seat": str(seat),
                    "action": str(decided.action),
                    "think_ms": decided.think_ms,
                }
                if decided.bot_think_ms is not None:
                    entry["bot_think_ms"] = decided.bot_think_ms
                if decided.fault is not None:
                    entry["fault"] = decided.fault.value
                if decided.comment:
                    entry["comment"] = decided.comment
                if decided.bot_error is not None:
                    entry["bot_error"] = decided.bot_error
                if clock_ms is not None:
                    entry["clock_ms"] = clock_ms
                self._log.write(entry)
            if self._on_progress is not None:
                self._on_progress(self)
        self._flush_all()
        self._finish_log()

    def seat_records(self) -> dict[str, dict[str, Any]]:
        return {str(seat): record.to_dict() for seat, record in self.records.items()}

    def _finish_log(self) -> None:
        result = self.state.match_result
        assert result is not None
        self._log.write(
            {
                "type": "match_end",
                "result": result_record(result),
                "seats": self.seat_records(),
                "seed": self.state.seed,
                **(self._deals.end_record() if self._deals is not None else {}),
            }
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
        request = message.update.request
        request.request_id = request_id
        request.kind = (
            referee_pb2.DECISION_KIND_CALL if state.phase is Phase.AUCTION else referee_pb2.DECISION_KIND_CARD
        )
        request.legal_actions.extend([action_to_wire(a) for a in state.legal_actions])
        request.time_left_ms = round(deadline_s * 1000)
        if (bank_ms := self._clock.left_ms(seat)) is not None:
            request.clock_left_ms = bank_ms
        request.match_id = self.match_id
        request.seat = seat_to_wire(seat)
        request.last_sequence = link.sequence
        hand = request.hand
        hand.CopyFrom(self._hand)
        hand.turn = request.seat
        hand.cards.extend([card_to_wire(card) for card in self._own_cards[seat]])
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
            self._log.write({"type": "forfeit", "hand": state.hand_number, "seat": str(seat)})
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
            return referee_pb2.REFUSAL_REASON_MALFORMED, f"malformed action: {error}"
        try:
            self.state.apply(action, seat)
        except IllegalAction as error:
            return _REFUSAL_WIRE[error.reason], str(error)
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
            {
                "type": "refusal",
                "hand": self.state.hand_number,
                "seat": str(seat),
                "request_id": decision.request_id,
                "reason": referee_pb2.RefusalReason.Name(reason),  # type: ignore[arg-type]
                "message": text,
            }
        )
        self.links[seat].send(
            referee_pb2.RefereeMessage(
                refusal=referee_pb2.Refusal(
                    request_id=decision.request_id,
                    reason=reason,  # type: ignore[arg-type]
                    message=text,
                    time_left_ms=left_ms,
                    attempts_left=max(0, attempts_left),
                    action=decision.action,
                )
            )
        )

    # --------------------------------------------------------------- events

    def _queue(self, seat: Seat, **event: Any) -> referee_pb2.Event:
        """Add an event to the seat's next message. It is numbered when that message is
        sent (:meth:`_take_outgoing`): events that are never sent (the match was stopped,
        or a Resync replaced them) take no number, so the seat's numbering stays gapless."""
        added: referee_pb2.Event = self._outgoing[seat].update.events.add(**event)
        return added

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
            built.append(referee_pb2.Event(sequence=number, **fields))
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
        watcher.send(arena_pb2.WatchMatchResponse(events=self._watched_events(0)))

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
            response = arena_pb2.WatchMatchResponse(events=self._watched_events(self._watch_sent))
            for watcher in self._watchers:
                watcher.send(response)
        self._watch_sent = len(self._watch_log)

    def _hand_started(self, view: SeatView) -> referee_pb2.HandStarted:
        message = referee_pb2.HandStarted(
            hand_number=view.hand_number,
            game_number=view.game_number,
            dealer=seat_to_wire(view.dealer),
            cards=cards_to_wire(view.hand),
            trumps=trumps_to_wire(view.trumps, view.config.game is GameKind.CLASSIC),
            score=scoreboard(view),
        )
        if view.turned_card is not None:
            message.turned_card.CopyFrom(card_to_wire(view.turned_card))
        if view.cut_card is not None:
            message.cut_card.CopyFrom(card_to_wire(view.cut_card))
        return message

    def _take_outgoing(self, seat: Seat) -> referee_pb2.RefereeMessage:
        """The seat's pending message (its events so far), leaving a fresh one in its place."""
        message = self._outgoing[seat]
        self._outgoing[seat] = referee_pb2.RefereeMessage()
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
            meta = {"by_referee": decided.fault is not None}
            if decided.fault is not None:
                meta["fault"] = _FAULT_WIRE[decided.fault]
            if decided.think_ms is not None:
                meta["think_ms"] = decided.think_ms
        for event in events:
            if isinstance(event, HandStarted):
                watched = self._hand_started(state.view(None))
                for seat in Seat:
                    view = state.view(seat)
                    started = self._hand_started(view)
                    self._queue(seat, hand_started=started)
                    self._own_cards[seat] = list(view.hand)
                    if self.rules.open:
                        watched.hands.add(seat=seat_to_wire(seat), cards=started.cards)
                self._record_watched(hand_started=watched)
                self._hand = start_hand(started)
                self._hand.ClearField("cards")
            elif isinstance(event, CallMade):
                call = referee_pb2.CallMade(
                    seat=seat_to_wire(event.seat), call=call_to_wire(event.call), **meta
                )
                self._queue_all(call_made=call)
            elif isinstance(event, AuctionEnded):
                if event.contract is None:
                    ended = referee_pb2.AuctionEnded(thrown_in=referee_pb2.ThrownIn())
                else:
                    ended = referee_pb2.AuctionEnded(contract=contract_to_wire(event.contract))
                self._queue_all(auction_ended=ended)
            elif isinstance(event, CardPlayed):
                played = referee_pb2.CardPlayed(
                    seat=seat_to_wire(event.seat),
                    card=card_to_wire(event.card),
                    trick_number=event.trick_number,
                    **meta,
                )
                self._queue_all(card_played=played)
                self._own_cards[event.seat].remove(event.card)
            elif isinstance(event, TrickCompleted):
                trick = trick_to_wire(event.trick)
                self._queue_all(
                    trick_completed=referee_pb2.TrickCompleted(trick=trick, tricks=per_side(event.tricks_won))
                )
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
            self._log.write({"type": "hand_start", "hand": event.hand_number, "dealer": str(state.dealer)})
        elif isinstance(event, HandEnded):
            result = event.result
            self._log.write(
                {
                    "type": "hand_result",
                    "hand": result.hand_number,
                    "outcome": result.outcome.value,
                    "tricks": list(result.tricks),
                    "points": list(result.points),
                    "honours": list(result.honours),
                    "scores": list(result.scores_after),
                    "text": result.describe(),
                }
            )
        elif isinstance(event, GameEnded):
            self._log.write(
                {
                    "type": "game_result",
                    "game": event.result.game_number,
                    "winner": event.result.winner.short,
                    "scores": list(event.result.scores),
                }
            )

    def _match_result(self, view: Any) -> game_pb2.MatchResult:
        result = self.state.match_result
        assert result is not None
        message = game_pb2.MatchResult(
            outcome=game_pb2.MATCH_OUTCOME_WIN if result.winner is not None else game_pb2.MATCH_OUTCOME_DRAW,
            score=game_pb2.Scoreboard(
                game=per_side(view.scores),
                games_won=per_side(result.games_won),
                total=per_side(result.totals),
            ),
            hands_played=result.hands_played,
            seats=[record.to_wire(seat) for seat, record in self.records.items()],
            seed="" if self.sealed else self.state.seed,
            seed_commitment=self.state.commitment,
        )
        if result.winner is not None:
            message.winner = side_to_wire(result.winner)
        return message

    def _match_started(self, seat: Seat | None) -> referee_pb2.MatchStarted:
        """The match as ``seat`` (``None``: a spectator) is told of it."""
        return referee_pb2.MatchStarted(
            match_id=self.match_id,
            table_id=self.table_id,
            config=config_to_wire(self.state.config),
            rules=self.rules.to_wire(),
            seat=seat_to_wire(seat) if seat is not None else cards_pb2.SEAT_UNSPECIFIED,
            players=[
                game_pb2.SeatPlayer(
                    seat=seat_to_wire(s), bot_name=link.bot_name, bot_version=link.bot_version
                )
                for s, link in self.links.items()
            ],
            seed_commitment=self.state.commitment,
            started_at_unix_ms=self.started_at_ms,
        )

    # --------------------------------------------------------------- resume

    def _disconnected(self, link: SeatLink) -> None:
        """A seat's stream dropped: the log says when (the seat is kept for its grace period)."""
        if not self._over:
            self._log.write({"type": "disconnect", "hand": self.state.hand_number, "seat": str(link.seat)})

    def _refused_unknown(self, link: SeatLink, refusal: referee_pb2.Refusal) -> None:
        """An answer to a request never issued on the seat: logged like every refusal (it
        changes nothing, and is not counted against the seat)."""
        if not self._over:
            self._log.write(
                {
                    "type": "refusal",
                    "hand": self.state.hand_number,
                    "seat": str(link.seat),
                    "request_id": refusal.request_id,
                    "reason": referee_pb2.RefusalReason.Name(refusal.reason),
                    "message": refusal.message,
                }
            )

    def _resync(self, link: SeatLink) -> None:
        """A bot took its seat back: send what it needs to go on."""
        seat = link.seat
        self._outgoing[seat] = referee_pb2.RefereeMessage()
        self._log.write({"type": "reconnect", "hand": self.state.hand_number, "seat": str(seat)})
        resync = referee_pb2.Resync(
            last_sequence=link.sequence,
            match=self._match_started(seat),
            hand=hand_state(self.state.view(seat)),
        )
        open_request = self._open.get(seat)
        if open_request is not None:
            request, deadline = open_request
            resync.request.CopyFrom(request)  # a copy: the request itself was sent, so never changes
            resync.request.time_left_ms = max(0, round((deadline - trio.current_time()) * 1000))
            if request.HasField("clock_left_ms"):  # less what the decision has taken so far
                spent = request.time_left_ms - resync.request.time_left_ms
                resync.request.clock_left_ms = max(0, request.clock_left_ms - spent)
        link.send(referee_pb2.RefereeMessage(resync=resync))
