"""One table running one match: the one object that owns it, and its loop of decisions.

The table holds everything of the match (the rules' state, the seats, their records,
the clock, the log) and drives it: it asks each seat in turn, awaits its answer within
the referee's deadline, applies it to the rules and passes what it did on. Its parts
keep nothing of that state: the outbox (:mod:`.outbox`: each seat's messages and the
spectators' record, hidden information decided there) is handed the state with each
call, and :mod:`.decide`'s helpers say what an answer, a refusal or a fallback comes to.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import grpc
import trio

from oddtrick._codec_protocol import decided_fields, refusal_reason_name
from oddtrick._drive import next_turn
from oddtrick._log_records import MatchEnd, MatchStart, Refusal, SeatEvent
from oddtrick._log_records import MatchStopped as MatchStoppedRecord
from oddtrick._options import OptionValue
from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import (
    GameConfig,
    GameState,
    HandEnded,
    HandStarted,
    IllegalAction,
    MatchEvent,
    Phase,
    Seat,
)
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play import decide
from oddtrick_referee.play.clock import TableClock

# Re-exported: the referee, the conformance kit and the tests import these from here.
from oddtrick_referee.play.decide import Decided, DecisionRules, Refused
from oddtrick_referee.play.decide import fallback_action as fallback_action
from oddtrick_referee.play.matchlog import MatchLogWriter
from oddtrick_referee.play.outbox import MatchHeader, Outbox
from oddtrick_referee.play.records import Fault as Fault
from oddtrick_referee.play.records import SeatRecord as SeatRecord
from oddtrick_referee.play.records import TableRules as TableRules
from oddtrick_referee.play.records import result_record as result_record
from oddtrick_referee.play.seat import TableSeat
from oddtrick_referee.play.spectators import Spectator
from oddtrick_referee.play.stall import LoopLag, loop_lag

log = logging.getLogger("oddtrick.referee.table")


class _Window(NamedTuple):
    """The open request's time: when it was sent (``perf_counter``), its deadline as sent
    (trio's clock), the referee's stall so far then, and the milliseconds it allows."""

    sent: float
    deadline: float
    stalled_s: float
    allowed_ms: int


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
        links: Mapping[Seat, TableSeat],
        log_writer: MatchLogWriter,
        max_attempts: int,
        max_comment_bytes: int,
        on_progress: Callable[[Table], None] | None = None,
        reveal_seed: bool = True,
        fold_events: bool = True,
        close_log: bool = True,
        untimed: frozenset[Seat] = frozenset(),
        deals: MatchDeals | None = None,
        options: Mapping[Seat, Mapping[str, OptionValue]] | None = None,
        on_decided: Callable[[str | None], None] | None = None,
    ) -> None:
        self.match_id = match_id
        self.table_id = table_id
        self._untimed = untimed
        self._deals = deals
        """The match's deals when they come from a fixed deal set (else from the seed)."""
        self._options = dict(options or {})
        """The bot options each seat's bot was started with, for the log's players."""
        self.stop_reason = "the referee stopped the match before its end"
        """What the seats are told if the match is stopped early: whoever stops it may say why."""
        self.state = GameState(config, seed, deals=None if deals is None else deals.deals)
        self.rules = rules
        self.links = dict(links)
        self.records = {seat: SeatRecord(link.bot_name) for seat, link in self.links.items()}
        self._log = log_writer
        self._log_opened = False
        self._clock = TableClock(rules.clock, [seat for seat in Seat if seat not in untimed])
        """Each timed seat's time bank, when the match has a clock."""
        self.sealed = not reveal_seed
        """One play of a duplicate pair: its cards stay hidden from everyone until both are over."""
        self.started_at_ms = int(time.time() * 1000)
        header = MatchHeader(match_id, table_id, rules.to_wire(), self.started_at_ms)
        players = tuple((seat, link.bot_name, link.bot_version) for seat, link in self.links.items())
        self._outbox = Outbox(header, players, open_table=rules.open, sealed=self.sealed)
        self.spectators = self._outbox.spectators
        """Who watches the match and all they were shown (the outbox's, which tells them)."""
        self._limits = DecisionRules(rules.deadline_s, max_attempts, max_comment_bytes, untimed)
        self._init_decisions()
        self.progress: tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]] = (
            0,
            (0, 0),
            (0, 0),
            (0, 0),
        )
        """Hands played and the scoreboard (game, games won, totals) after the last hand: replaced
        whole after each hand, so the gRPC thread can read it (ListMatches) at any time."""
        self._on_progress = on_progress
        self._on_decided = on_decided
        """Told of each decision and its fault's kind, if any (the referee's ``/metrics``)."""
        self._close_log = close_log
        """Close (fsync) the log at the end; False: the owner does, off the thread every
        table shares, since an fsync can take milliseconds (Referee.play_match)."""
        self._fold_events = fold_events
        """Send a seat's events with its next request (one message per decision) rather than at once."""
        for link in self.links.values():
            link.bind_table(self._resync, self._disconnected, self._refused_unknown)

    def _init_decisions(self) -> None:
        """The decision in progress, and what the decisions so far measured."""
        self._open: tuple[Seat, referee_pb2.DecisionRequest, float] | None = None
        """The request in progress, its seat and its deadline (a Resync repeats it)."""
        self._window = _Window(0.0, 0.0, 0.0, 0)
        """When the open request was sent, its deadline as sent, and the referee's stall then."""
        self._lag: LoopLag | None = None
        """The event loop's stall measure (taken at the first request: it needs the loop)."""
        self.added_latency_s: list[float] = []
        """From an answer's arrival to the next request's send, per decision: the referee's cost."""
        self._answer_arrived: float | None = None
        self._fault = Fault.TIMEOUT
        """Why the decision in progress would fall back, were its deadline to pass now."""
        self._flush_after_request = False
        """Send the other seats their events once the next request has left (a new hand's)."""
        self._scope = trio.CancelScope()
        """The scope :meth:`_play` holds around the decisions: its deadline is the open
        decision's. It is left in place once the answer is in, since nothing awaits
        between an answer and the next request, which moves it: a deadline can only pass
        while the table waits, and it waits only for a decision."""
        self._asking: Seat | None = None
        """The seat whose decision is open, while :attr:`_scope`'s deadline is its deadline."""

    # ------------------------------------------------------------------ run

    def open_log(self) -> None:
        """Write the log's first line (the match start), which creates the file: a log never
        exists without it, whenever the referee is killed. :meth:`run` does it if not done."""
        if self._log_opened:
            return
        self._log_opened = True
        self._log.write(
            MatchStart(
                match_id=self.match_id,
                table_id=self.table_id,
                started_at_ms=self.started_at_ms,
                config=self.state.config.to_dict(),
                rules=self.rules.log_record(self._untimed),
                players={str(seat): self._player(seat, link) for seat, link in self.links.items()},
                seed_commitment=self.state.commitment,
                extra=self._deals.start_record() if self._deals is not None else {},
            )
        )

    def _player(self, seat: Seat, link: TableSeat) -> dict[str, Any]:
        """A seat's entry in the log's ``players``: the bot's name and version, and the
        options it was started with when it has some (a log without options reads as before)."""
        player: dict[str, Any] = {"name": link.bot_name, "version": link.bot_version}
        if self._options.get(seat):
            player["options"] = dict(self._options[seat])
        return player

    async def run(self) -> GameState:
        self.open_log()
        self._outbox.open_match(self.state)
        try:
            await self._play()
        except BaseException:
            self._close_request()
            self.tell_stopped()
            self.spectators.end(grpc.StatusCode.UNAVAILABLE, "the match was stopped before its end")
            self._log.close()  # what was played reaches the disk, without a match_end line
            raise
        self.spectators.end(grpc.StatusCode.OK, "the match is over")
        return self.state

    async def _play(self) -> None:
        """The SDK's drive loop (``oddtrick._drive``), stepped by :func:`next_turn`, until
        the match is over; a decision whose deadline passes ends with its fallback.

        One cancel scope lasts from one timeout to the next, its deadline moved to each
        decision's (:meth:`_decide`): entering and closing a scope per decision is some
        fifty calls in trio, hundreds of times a second per table; moving a deadline is a few.
        """
        self._report((self.state.hand_started(),), None)
        resume: Seat | None = None
        while True:
            with trio.CancelScope() as scope:
                self._scope = scope
                if resume is not None:
                    self._decided(resume, await self._resume(resume))
                await self._turns()
                break
            resume, self._asking = self._asking, None
            if resume is not None and not self._extended(resume):
                # else the deadline passed just after the answer came in
                self._close_request()
                self._decided(resume, self._given_up(resume))
                resume = None
        self._outbox.flush_all(self.links)
        self._finish_log()

    async def _turns(self) -> None:
        """Deal or decide until the match is over (or a decision's deadline passes)."""
        while (turn := next_turn(self.state)) is not None:
            if isinstance(turn, HandStarted):
                # The hand's last events reach the seat to act first with its next
                # request, and every other seat right after that request has left:
                # the next decision does not wait on four extra sends.
                self._flush_after_request = True
                self._report((turn,), None)
                continue
            self._decided(turn, await self._decide(turn))

    def _decided(self, seat: Seat, decided: Decided) -> None:
        """Count a decision, log it and pass on what it did."""
        decide.count(self.records[seat], decided)
        if self._on_decided is not None:
            self._on_decided(decided.fault.value if decided.fault is not None else None)
        decide.write_action(self._log, self.state.hand_number, seat, decided, self._clock.left_ms(seat))
        if self._on_progress is not None:
            self._on_progress(self)
        self._report(decided.events, decided)

    def _report(self, events: tuple[MatchEvent, ...], decided: Decided | None) -> None:
        """Pass what the rules said happened to the seats, the spectators and the log."""
        meta: dict[str, Any] = {}
        if decided is not None:
            fault = decided.fault.value if decided.fault is not None else None
            meta = decided_fields(decided.fault is not None, fault, decided.think_ms)
        self._outbox.tell(self.state, self.records, events, meta)
        for event in events:
            if isinstance(event, HandEnded):
                view = self.state.view(None)
                self.progress = (len(view.hand_results), view.scores, view.games_won, view.totals)
        self._log.write_events(events)
        self.spectators.publish()
        if not self._fold_events:
            self._outbox.flush_all(self.links)

    # ------------------------------------------------------------ a decision

    async def _decide(self, seat: Seat) -> Decided:
        """The seat's decision (within :meth:`_play`'s scope): its answer, or the fallback."""
        link = self.links[seat]
        if link.forfeited:
            return self._fall_back(seat, Fault.FORFEITED)
        # A scope whose deadline passed as an answer came in is spent: :meth:`_play` takes
        # a fresh one before this request is sent.
        await trio.lowlevel.checkpoint_if_cancelled()
        self._ask(seat, link)
        self._fault = Fault.TIMEOUT
        return await self._resume(seat)

    async def _resume(self, seat: Seat) -> Decided:
        """Await the open request's decision within its deadline (a decision the referee's
        own stall cut short goes on from here, its request standing)."""
        assert self._open is not None
        link, deadline = self.links[seat], self._open[2]
        scope = self._scope
        scope.deadline = deadline
        if deadline <= trio.current_time():
            scope.cancel()  # no time at all (an empty bank): as a scope entered past its deadline
        self._asking = seat
        decided = await self._answer(seat, link)
        self._close_request()
        self._asking = None
        return decided if decided is not None else self._given_up(seat)

    def _close_request(self) -> None:
        """The open request is decided or given up: later answers to it are not passed on."""
        if self._open is not None:
            self.links[self._open[0]].asked()
            self._open = None

    def _stalled_s(self) -> float:
        """How long the referee itself stalled since the open request was sent."""
        assert self._lag is not None
        return max(0.0, self._lag.stalled(trio.current_time()) - self._window.stalled_s)

    def _extended(self, seat: Seat) -> bool:
        """The open decision's deadline passed: if the referee stalled meanwhile (its process
        stopped or starved), the seat was not given its time. Then its deadline moves on by
        the stall (the request stands: the seat is told nothing new) and True; False once
        the seat has had all its time, when the deadline's fallback stands."""
        if self._open is None:
            return False
        stalled = self._stalled_s()
        deadline = self._window.deadline + stalled
        if deadline <= self._open[2] or deadline <= trio.current_time():
            return False
        self._open = (seat, self._open[1], deadline)
        log.warning(
            "the referee stalled %.1f s during %s's decision (%s, hand %d); its deadline was extended",
            stalled,
            self.links[seat].bot_name,
            seat.name.title(),
            self.state.hand_number,
        )
        return True

    def _ask(self, seat: Seat, link: TableSeat) -> None:
        """Send the seat its request with its pending events (its deadline, when it was sent
        and the referee's stall so far are the open request's :attr:`_window`)."""
        request_id = decide.next_request_id()
        deadline_s = self._clock.begin(seat, decide.decision_deadline_s(self._limits, seat))
        deadline = trio.current_time() + deadline_s  # the bank, when it is less
        link.ask(request_id)
        message, request = self._outbox.request(
            self.state,
            seat,
            link,
            request_id,
            round(deadline_s * 1000),
            match_id=self.match_id,
            clock_left_ms=self._clock.left_ms(seat),
        )
        # The message is the transport's from here on: never changed after sending.
        self._open = (seat, request, deadline)
        link.send(message)
        sent = time.perf_counter()
        if self._lag is None:
            self._lag = loop_lag()
        stalled = self._lag.stalled(trio.current_time())
        self._window = _Window(sent, deadline, stalled, round(deadline_s * 1000))
        if self._answer_arrived is not None:
            self.added_latency_s.append(sent - self._answer_arrived)
            self._answer_arrived = None
        if self._flush_after_request:
            self._flush_after_request = False
            self._outbox.flush_all(self.links)

    async def _answer(self, seat: Seat, link: TableSeat) -> Decided | None:
        """Wait for a legal answer to the request, refusing the others (``None``: the seat
        is forfeited); the scope's deadline cuts it short. :attr:`_fault` says why the
        decision would fall back, as the wait goes."""
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
            applied = self._apply(seat, link, item)
            if not isinstance(applied, Refused):
                return applied
            self._refuse(seat, link, item, applied, self._limits.max_attempts - attempts)

    def _apply(self, seat: Seat, link: TableSeat, item: referee_pb2.Decision) -> Decided | Refused:
        """Apply the bot's answer to the rules: what it decided, or why it is refused (and
        the state is unchanged)."""
        action = decide.read_action(item)
        if isinstance(action, Refused):
            return action
        try:
            events = self.state.step(action, seat)
        except IllegalAction as error:
            return decide.refused_by_rules(error, action)
        arrived = time.perf_counter()
        self._answer_arrived = arrived
        think = self._think_ms(arrived)
        decided = decide.accepted(
            link.bot_name, seat, item, (action, events), think, self._limits.max_comment_bytes
        )
        self._clock.answered(seat, think)
        return decided

    def _think_ms(self, arrived: float) -> int:
        """The answer's time on the referee's clock, less the referee's own stall since the
        request left: the seat's bank is not charged for the time the referee was not
        running, and the log's figure stays within what the clock allowed."""
        think_s = arrived - self._window.sent
        stalled = self._stalled_s()
        if stalled == 0.0:
            return round(think_s * 1000)
        return min(self._window.allowed_ms, max(0, round((think_s - stalled) * 1000)))

    def _refuse(
        self,
        seat: Seat,
        link: TableSeat,
        item: referee_pb2.Decision,
        refused: Refused,
        attempts_left: int,
    ) -> None:
        """Count and log a refused answer, and tell the seat why, its time and attempts left."""
        self.records[seat].refusals += 1
        self._fault = Fault.ILLEGAL
        deadline = self._open[2] if self._open is not None else trio.current_time()
        left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        self._log.write(decide.refusal_record(self.state.hand_number, seat, item, refused))
        link.send(decide.refusal(item, refused, left_ms, attempts_left))

    def _given_up(self, seat: Seat) -> Decided:
        """The decision ended without a legal answer (its deadline, a forfeit): the fallback
        with the fault why."""
        link = self.links[seat]
        fault = self._fault
        if fault is Fault.FORFEITED:
            self._clock.forfeited(seat)
        elif self._clock.expired(seat) and fault is Fault.TIMEOUT:
            fault = Fault.CLOCK  # the bank, not the decision's deadline, ran out
        decided = self._fall_back(seat, fault)
        if fault is Fault.FORFEITED and not link.forfeited:
            link.forfeit()
            self.records[seat].forfeited = True
            self._log.write(SeatEvent("forfeit", self.state.hand_number, str(seat)))
        log.info("%s (%s) %s: fallback %s", link.bot_name, seat.name.title(), fault.value, decided.action)
        return decided

    def _fall_back(self, seat: Seat, fault: Fault) -> Decided:
        """The action the referee takes for a seat that did not decide, with the fault why."""
        action = fallback_action(self.state)
        events = self.state.step(action, seat)
        self.records[seat].add_fault(fault)
        return Decided(action, fault, None, None, events=events)

    # -------------------------------------------------------------- the end

    def tell_stopped(self, reason: str | None = None) -> None:
        """The match is stopped before its end: tell every seat and spectator so, with why
        (a MatchResult with MATCH_OUTCOME_ABORTED and ``stop_reason``), and say it in the
        log (a ``match_stopped`` line, where a finished match has ``match_end``). Once only;
        without waiting (the sends are queued), so it can run where the match is cancelled."""
        if self.spectators.over or self.state.phase is Phase.MATCH_OVER:
            return
        self.spectators.over = True
        if reason is not None:
            self.stop_reason = reason
        self._outbox.stopped(self.state, self.records, self.links, self.stop_reason)
        self.spectators.publish()
        # A full disk (or a closed log) may be what stopped it: the seats are told all the same.
        with contextlib.suppress(OSError, ValueError):
            self._log.write(MatchStoppedRecord(self.state.hand_number, self.stop_reason))

    def watch(self, spectator: Spectator) -> None:
        """A spectator joins (Arena.WatchMatch, the live page): everything so far, then the rest."""
        self.spectators.join(spectator)

    def seat_records(self) -> dict[str, dict[str, Any]]:
        return {str(seat): record.to_dict() for seat, record in self.records.items()}

    def _finish_log(self) -> None:
        result = self.state.match_result
        assert result is not None
        deals = self._deals.end_record() if self._deals is not None else {}
        self._log.write(MatchEnd(result_record(result), self.seat_records(), self.state.seed, deals))
        if self._close_log:
            self._log.close()

    # --------------------------------------------------------------- resume

    def _disconnected(self, link: TableSeat) -> None:
        """A seat's stream dropped: the log says when (the seat is kept for its grace period)."""
        if not self.spectators.over:
            self._log.write(SeatEvent("disconnect", self.state.hand_number, str(link.seat)))

    def _refused_unknown(self, link: TableSeat, refusal: referee_pb2.Refusal) -> None:
        """An answer to a request never issued on the seat: logged like every refusal (it
        changes nothing, and is not counted against the seat)."""
        if not self.spectators.over:
            reason = refusal_reason_name(refusal.reason)
            hand = self.state.hand_number
            self._log.write(Refusal(hand, str(link.seat), refusal.request_id, reason, refusal.message))

    def _resync(self, link: TableSeat) -> None:
        """A bot took its seat back: send what it needs to go on (logged, as a disconnect
        is, only while the match is on: once it is over the log may be closed)."""
        if not self.spectators.over:
            self._log.write(SeatEvent("reconnect", self.state.hand_number, str(link.seat)))
        request, time_left_ms = None, 0
        if self._open is not None and self._open[0] is link.seat:
            _, request, deadline = self._open
            time_left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        self._outbox.resync(self.state, link, request, time_left_ms)
