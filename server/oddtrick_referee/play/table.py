"""One table running one match: the loop of decisions, reconnects, the end and the stop.

The table asks each seat in turn (:mod:`.decide`: deadlines, refusals, faults), and
passes what the rules say each action did to the outbox (:mod:`.outbox`: each seat's
messages and the spectators' record, hidden information decided there), to the
spectators (:mod:`.spectators`) and to the match log (:mod:`.matchlog`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any

import grpc
import trio

from oddtrick._codec_protocol import decided_fields, refusal_reason_name
from oddtrick._drive import next_turn
from oddtrick._log_records import ActionRecord, MatchEnd, MatchStart, Refusal, SeatEvent
from oddtrick._log_records import MatchStopped as MatchStoppedRecord
from oddtrick._options import OptionValue
from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import GameConfig, GameState, HandEnded, HandStarted, MatchEvent, Phase, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.clock import TableClock

# Re-exported: the referee, the conformance kit and the tests import these from here.
from oddtrick_referee.play.decide import Decided, DecisionRules, Decisions
from oddtrick_referee.play.decide import fallback_action as fallback_action
from oddtrick_referee.play.matchlog import MatchLogWriter, action_text
from oddtrick_referee.play.outbox import MatchHeader, Outbox, Spectators
from oddtrick_referee.play.records import Fault as Fault
from oddtrick_referee.play.records import SeatRecord as SeatRecord
from oddtrick_referee.play.records import TableRules as TableRules
from oddtrick_referee.play.records import result_record as result_record
from oddtrick_referee.play.seat import TableSeat
from oddtrick_referee.play.spectators import Spectator


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
        self.spectators = Spectators(match_id)
        self.sealed = not reveal_seed
        """One play of a duplicate pair: its cards stay hidden from everyone until both are over."""
        self.started_at_ms = int(time.time() * 1000)
        header = MatchHeader(match_id, table_id, rules.to_wire(), self.started_at_ms)
        self.outbox = Outbox(
            self.state,
            self.links,
            self.spectators,
            header=header,
            open_table=rules.open,
            records=self.records,
            sealed=self.sealed,
        )
        limits = DecisionRules(rules.deadline_s, max_attempts, max_comment_bytes, untimed)
        self._decisions = Decisions(
            match_id, self.state, self.links, self.records, self.outbox, self._clock, log_writer, limits
        )
        self.added_latency_s = self._decisions.added_latency_s
        self.progress: tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]] = (
            0,
            (0, 0),
            (0, 0),
            (0, 0),
        )
        """Hands played and the scoreboard (game, games won, totals) after the last hand: replaced
        whole after each hand, so the gRPC thread can read it (ListMatches) at any time."""
        self._on_progress = on_progress
        self._close_log = close_log
        """Close (fsync) the log at the end; False: the owner does, off the thread every
        table shares, since an fsync can take milliseconds (Referee.play_match)."""
        self._fold_events = fold_events
        """Send a seat's events with its next request (one message per decision) rather than at once."""
        for link in self.links.values():
            link.bind_table(self._resync, self._disconnected, self._refused_unknown)

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
        self.outbox.open_match()
        try:
            await self._play()
        except BaseException:
            self.tell_stopped()
            self.spectators.end(grpc.StatusCode.UNAVAILABLE, "the match was stopped before its end")
            self._log.close()  # what was played reaches the disk, without a match_end line
            raise
        self.spectators.end(grpc.StatusCode.OK, "the match is over")
        return self.state

    async def _play(self) -> None:
        """The SDK's drive loop (``oddtrick._drive``), stepped by :func:`next_turn`:
        :func:`drive` wants an action at once, and a remote seat's is awaited, with
        a deadline and faults (``decide.py``), and applied there."""
        self._report((self.state.hand_started(),), None)
        await self._decisions.run(self._turns, self._decided)
        self.outbox.flush_all()
        self._finish_log()

    async def _turns(self) -> None:
        """Deal or decide until the match is over (a decision's timeout ends it early:
        :meth:`Decisions.run` hands its fallback to :meth:`_decided` and calls it again)."""
        while (turn := next_turn(self.state)) is not None:
            if isinstance(turn, HandStarted):
                # The hand's last events reach the seat to act first with its next
                # request, and every other seat right after that request has left:
                # the next decision does not wait on four extra sends.
                self._decisions.flush_others_after_request = True
                self._report((turn,), None)
                continue
            self._decided(turn, await self._decide(turn))

    def _decided(self, seat: Seat, decided: Decided) -> None:
        self._count(seat, decided)
        if self._on_progress is not None:
            self._on_progress(self)
        self._report(decided.events, decided)

    async def _decide(self, seat: Seat) -> Decided:
        return await self._decisions.decide(seat)

    def _count(self, seat: Seat, decided: Decided) -> None:
        """The seat's record and the log's action line for one decision."""
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
        hand, action, fault = self.state.hand_number, action_text(decided.action), decided.fault
        if fault is None and not decided.comment and decided.bot_error is None:
            self._log.write_action(hand, seat, action, decided.think_ms, decided.bot_think_ms, clock_ms)
            return
        self._log.write(
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

    def _report(self, events: tuple[MatchEvent, ...], decided: Decided | None) -> None:
        """Pass what the rules said happened to the seats, the spectators and the log."""
        meta: dict[str, Any] = {}
        if decided is not None:
            fault = decided.fault.value if decided.fault is not None else None
            meta = decided_fields(decided.fault is not None, fault, decided.think_ms)
        self.outbox.tell(events, meta)
        for event in events:
            if isinstance(event, HandEnded):
                view = self.state.view(None)
                self.progress = (len(view.hand_results), view.scores, view.games_won, view.totals)
        self._log.write_events(events)
        self.spectators.publish()
        if not self._fold_events:
            self.outbox.flush_all()

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
        self.outbox.stopped(self.stop_reason)
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
        open_request = self._decisions.open.get(link.seat)
        request, time_left_ms = None, 0
        if open_request is not None:
            request, deadline = open_request
            time_left_ms = max(0, round((deadline - trio.current_time()) * 1000))
        self.outbox.resync(link, request, time_left_ms)
