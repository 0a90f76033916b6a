"""Each seat's next message, and the spectators' record, made from the rules' events.

Everything the table tells anyone goes out here: the seats' messages and the
spectators' numbered record (:class:`Spectators`, shown to each :class:`Spectator`
as it joins and as the match goes on).

The one place that decides who is shown what: a seat is dealt its own cards (from
``state.view(seat)``, the rules' door for hidden information) and is told public
events only; spectators are shown the four hands only at an open table. A seat's
events collect in its next message until the table sends it (with the seat's next
request, or at once), and are numbered then, so the seat's numbering stays gapless
whatever is never sent (a match stopped, a Resync replacing them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import grpc

from oddtrick._codec import (
    cards_to_wire,
    game_result_to_wire,
    hand_result_to_wire,
    hand_state,
    match_result_to_wire,
    match_stopped_to_wire,
    seat_to_wire,
)
from oddtrick._codec_hand import advance_hand, start_hand
from oddtrick._codec_protocol import (
    Seen,
    add_event,
    add_event_to_each,
    auction_ended_to_wire,
    call_made_to_wire,
    card_played_to_wire,
    fill_request,
    hand_started_to_wire,
    match_started_to_wire,
    new_hand_state,
    new_referee_message,
    resync_message,
    trick_completed_to_wire,
)
from oddtrick._events import MatchOpened, MatchStopped, SpectatorEvent
from oddtrick.rules import (
    AuctionEnded,
    CallMade,
    Card,
    CardPlayed,
    GameEnded,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    Phase,
    Seat,
    TrickWon,
)
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee.play.records import SeatRecord
from oddtrick_referee.play.seat import TableSeat
from oddtrick_referee.play.spectators import MAX_WATCHERS, Spectator

_SEATS = tuple(Seat)


@dataclasses.dataclass(frozen=True)
class MatchHeader:
    """What a seat or spectator is told of the match at its start (and again at a Resync)."""

    match_id: str
    table_id: str
    rules: game_pb2.TableRules
    started_at_ms: int


class Outbox:
    """What every seat and spectator of one table is to be told: the part of the table that
    makes its messages. It keeps only its own (each seat's pending message, the hand's
    public state, each seat's cards as dealt and played, the spectators' record); the
    match's state, records and seats are the table's, passed to each call that reads them."""

    def __init__(
        self,
        header: MatchHeader,
        players: tuple[tuple[Seat, str, str], ...],
        *,
        open_table: bool,
        sealed: bool,
    ) -> None:
        self._header = header
        self._players = players
        """Each seat's bot name and version, as the match start tells them."""
        self.spectators = Spectators(header.match_id)
        self._open = open_table
        """Spectators see the four hands live (an exhibition)."""
        self._sealed = sealed
        """One play of a duplicate pair: the seed stays secret at its end."""
        self._outgoing = {seat: new_referee_message() for seat in Seat}
        self._hand = new_hand_state()
        """The hand's public state (no cards), advanced event by event; a request adds the
        seat's own cards and turn to a copy of it instead of re-encoding the whole hand."""
        self._own_cards: dict[Seat, list[Card]] = {seat: [] for seat in Seat}

    # ------------------------------------------------------------- the match

    def match_started(self, state: GameState, seat: Seat | None) -> referee_pb2.MatchStarted:
        """The match as ``seat`` (``None``: a spectator) is told of it."""
        header = self._header
        return match_started_to_wire(
            header.match_id,
            header.table_id,
            state.config,
            header.rules,
            seat,
            list(self._players),
            state.commitment,
            header.started_at_ms,
        )

    def open_match(self, state: GameState) -> None:
        """Every seat and spectator is told of the match, first of all."""
        for seat in _SEATS:
            self.queue(seat, match_started=self.match_started(state, seat))
        players = tuple((seat, name) for seat, name, _ in self._players)
        opened = MatchOpened(self._header.match_id, state.config, players)
        self.spectators.record(opened, {"match_started": self.match_started(state, None)})

    def stopped(
        self,
        state: GameState,
        records: Mapping[Seat, SeatRecord],
        links: Mapping[Seat, TableSeat],
        reason: str,
    ) -> None:
        """Every seat and spectator is told the match was stopped, with why and the score."""
        public = state.view(None)
        stopped = match_stopped_to_wire(
            public.scores,
            public.games_won,
            public.totals,
            len(public.hand_results),
            [record.to_wire(seat) for seat, record in records.items()],
            state.commitment,
            reason,
        )
        self.queue_all(MatchStopped(reason, public.totals), match_ended=stopped)
        self.flush_all(links)

    def resync(
        self,
        state: GameState,
        link: TableSeat,
        request: referee_pb2.DecisionRequest | None,
        time_left_ms: int,
    ) -> None:
        """A seat taken back is sent the match and its hand instead of the events it missed."""
        seat = link.seat
        self._outgoing[seat] = new_referee_message()
        hand = hand_state(state.view(seat))
        started = self.match_started(state, seat)
        link.send(resync_message(link.sequence, started, hand, request, time_left_ms))

    # ------------------------------------------------------------- queueing

    def queue(self, seat: Seat, **event: Any) -> referee_pb2.Event:
        """Add an event to the seat's next message (numbered when it is sent)."""
        return add_event(self._outgoing[seat], event)

    def queue_all(self, seen: SpectatorEvent, **event: Any) -> None:
        """Queue one public event for every seat and spectator, and advance the hand's
        public state with it."""
        added = add_event_to_each(self._outgoing.values(), event)  # in seat order
        assert added is not None
        advance_hand(self._hand, added, cards_pb2.SEAT_UNSPECIFIED)
        self.spectators.record(seen, event)

    def tell(
        self,
        state: GameState,
        records: Mapping[Seat, SeatRecord],
        events: Iterable[MatchEvent],
        decided: Mapping[str, Any],
    ) -> None:
        """Turn the rules' events into each seat's and the spectators' events; ``decided``
        are the fields of how the action was decided (think time or fault)."""
        for event in events:  # the most frequent first
            if isinstance(event, CardPlayed):
                played = card_played_to_wire(event.seat, event.card, event.trick_number, decided)
                self.queue_all(event, card_played=played)
                self._own_cards[event.seat].remove(event.card)
            elif isinstance(event, TrickWon):
                self.queue_all(event, trick_completed=trick_completed_to_wire(event.trick, event.tricks_won))
            elif isinstance(event, CallMade):
                self.queue_all(event, call_made=call_made_to_wire(event.seat, event.call, decided))
            elif isinstance(event, AuctionEnded):
                self.queue_all(event, auction_ended=auction_ended_to_wire(event.contract))
            elif isinstance(event, HandStarted):
                self._deal(state, event)
            else:
                self._score(state, records, event)

    def _deal(self, state: GameState, event: HandStarted) -> None:
        """Each seat its own cards; spectators the four hands at an open table only."""
        started = None
        for seat in _SEATS:
            view = state.view(seat)
            started = hand_started_to_wire(view)
            self.queue(seat, hand_started=started)
            self._own_cards[seat] = list(view.hand)
        assert started is not None
        watched = hand_started_to_wire(state.view(None))
        if self._open:
            for seat in _SEATS:
                watched.hands.add(seat=seat_to_wire(seat), cards=cards_to_wire(self._own_cards[seat]))
        else:
            event = dataclasses.replace(event, hands=None)
        self.spectators.record(event, {"hand_started": watched})
        self._hand = start_hand(started)
        self._hand.ClearField("cards")

    def _score(self, state: GameState, records: Mapping[Seat, SeatRecord], event: MatchEvent) -> None:
        """A hand's, a game's or the match's end: the same for every seat (a thrown-in
        hand's cards hidden from all, as the event has it)."""
        public = state.view(None)
        if isinstance(event, HandEnded):
            self.queue_all(event, hand_ended=hand_result_to_wire(event.result, public.game_number, public))
        elif isinstance(event, GameEnded):
            self.queue_all(event, game_ended=game_result_to_wire(event.result, public.games_won))
        elif isinstance(event, MatchEnded):
            seats = [record.to_wire(seat) for seat, record in records.items()]
            seed = "" if self._sealed else state.seed
            final = match_result_to_wire(event.result, public.scores, seats, seed, state.commitment)
            self.queue_all(event, match_ended=final)

    # -------------------------------------------------------------- sending

    def take(self, seat: Seat, link: TableSeat) -> referee_pb2.RefereeMessage:
        """The seat's pending message (its events so far, now numbered on ``link``), leaving
        a fresh one."""
        message = self._outgoing[seat]
        self._outgoing[seat] = new_referee_message()
        link.number(message.update.events)
        return message

    def request(
        self,
        state: GameState,
        seat: Seat,
        link: TableSeat,
        request_id: int,
        time_left_ms: int,
        **fields: Any,
    ) -> tuple[referee_pb2.RefereeMessage, referee_pb2.DecisionRequest]:
        """The seat's pending events with a decision request: the hand's public state
        with the seat's own cards, and the actions the rules allow it now."""
        message = self.take(seat, link)
        request = fill_request(
            message,
            request_id=request_id,
            auction=state.phase is Phase.AUCTION,
            legal=state.legal_actions,
            time_left_ms=time_left_ms,
            seat=seat,
            last_sequence=link.sequence,
            hand=self._hand,
            own_cards=self._own_cards[seat],
            **fields,
        )
        return message, request

    def flush(self, seat: Seat, link: TableSeat) -> None:
        """Send the seat's pending events, if any, without a request."""
        if self._outgoing[seat].update.events:
            link.send(self.take(seat, link))

    def flush_all(self, links: Mapping[Seat, TableSeat]) -> None:
        for seat in _SEATS:
            self.flush(seat, links[seat])


class Spectators:
    """The spectators of one match and everything they have been told."""

    def __init__(self, match_id: str) -> None:
        self._match_id = match_id
        self._seen: list[Seen] = []
        self._shown = 0
        self._watchers: list[Spectator] = []
        self.over = False
        self._ended: tuple[grpc.StatusCode, str] | None = None
        """How the spectators were closed (:meth:`end`), for one who joins after."""

    def record(self, event: SpectatorEvent, fields: Mapping[str, Any]) -> None:
        """Add an event, shown to the spectators at the next :meth:`publish`."""
        self._seen.append(Seen(len(self._seen) + 1, event, fields))

    def join(self, spectator: Spectator) -> None:
        """A spectator joins: shown everything so far, then what follows. One who comes as
        the match ends (its table not yet let go, its log not yet in the index) is shown
        the whole match from here, and closed as the others were."""
        if self._ended is not None:
            spectator.show(self._seen)
            spectator.close(*self._ended)
            return
        self._watchers = [w for w in self._watchers if not w.closed]
        if len(self._watchers) >= MAX_WATCHERS:
            spectator.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"match {self._match_id} has {MAX_WATCHERS} spectators already; try again later",
            )
            return
        self._watchers.append(spectator)
        spectator.show(self._seen[: self._shown])

    def publish(self) -> None:
        """Show the spectators the events recorded since the last time."""
        if self._shown == len(self._seen):
            return
        if self._watchers:
            self._watchers = [w for w in self._watchers if not w.closed]
            batch = self._seen[self._shown :]
            for watcher in self._watchers:
                watcher.show(batch)
        self._shown = len(self._seen)

    def end(self, code: grpc.StatusCode, details: str) -> None:
        """The match is over or stopped: every spectator is closed with why."""
        self.over = True
        self.publish()
        self._ended = (code, details)
        for watcher in self._watchers:
            watcher.close(code, details)
