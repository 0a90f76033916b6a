"""SDK bots seated beside a learner, shown the game exactly as a referee's table shows it.

A referee plays its own bots through the SDK's :class:`~oddtrick._in_process.BotSide`:
it hands the side the very messages it would send a remote bot, and the side rebuilds
the bot's view with the :class:`~oddtrick._seat_state.SeatState` a remote bot's client
keeps, calls its hooks and asks it. These seats do the same, in this process and without
a referee: each seat is sent, through the codec, what the referee's outbox sends a seat
(the match's start, its own cards at each deal, the public calls, cards, tricks and
results, a request with the public hand and its own cards when it is to act). So a bot
here sees what it would see at a table: not a card more, and in the same form.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from oddtrick._bot import Bot, bot_name, make_bot
from oddtrick._codec import (
    action_from_wire,
    game_result_to_wire,
    hand_result_to_wire,
    match_result_to_wire,
    table_rules_to_wire,
)
from oddtrick._codec_hand import advance_hand, start_hand
from oddtrick._codec_protocol import (
    add_event,
    add_event_to_each,
    auction_ended_to_wire,
    call_made_to_wire,
    card_played_to_wire,
    decided_fields,
    fill_request,
    hand_started_to_wire,
    match_started_to_wire,
    new_hand_state,
    new_referee_message,
    trick_completed_to_wire,
)
from oddtrick._in_process import BotSide
from oddtrick.rules import (
    Action,
    AuctionEnded,
    CallMade,
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
from oddtrick.v1 import cards_pb2, referee_pb2

_DECIDED = decided_fields(False, None, None)
"""A call or card decided by its seat (no fault): how the events say so."""


def seed_bot(bot: Bot, seed: int) -> Bot:
    """Reseed the bot's ``rng`` when it keeps its randomness there as a ``random.Random``
    (the shipped random and strong bots do), so a seeded episode plays the same."""
    rng = getattr(bot, "rng", None)
    if isinstance(rng, random.Random):
        rng.seed(seed)
    return bot


class BotSeats:
    """The seats of ``bots`` (a way to make each seat's bot), told the game as it goes."""

    def __init__(self, bots: Mapping[Seat, object], time_left_ms: int) -> None:
        for target in bots.values():
            if not (isinstance(target, Bot) or callable(target)):
                raise TypeError(
                    f"not a bot: {target!r} (expected an oddtrick.Bot instance, a Bot subclass "
                    "or a function of a view)"
                )
        self._targets = dict(bots)
        self.names = {seat: _name_of(target) for seat, target in self._targets.items()}
        self._time_left_ms = time_left_ms
        self._sides: dict[Seat, BotSide] = {}
        self._outgoing: dict[Seat, referee_pb2.RefereeMessage] = {}
        self._sequence: dict[Seat, int] = {}
        self._hand = new_hand_state()
        self._state: GameState | None = None
        self._requests = 0

    # ------------------------------------------------------------------ the match

    def start(self, state: GameState, players: Mapping[Seat, str], seeds: Mapping[Seat, int]) -> None:
        """A new match: a fresh side (and a fresh bot, for a bot made per match) for each
        seat, told of the match and of its first deal."""
        self._state = state
        self._requests = 0
        self._sides = {
            seat: BotSide(self._maker(target, seeds[seat])) for seat, target in self._targets.items()
        }
        self._outgoing = {seat: new_referee_message() for seat in self._sides}
        self._sequence = dict.fromkeys(self._sides, 0)
        rules = table_rules_to_wire(self._time_left_ms / 1000, 0.0, False)
        named = [(seat, players[seat], "") for seat in Seat]
        for seat in self._sides:
            started = match_started_to_wire("", "", state.config, rules, seat, named, state.commitment, 0)
            add_event(self._outgoing[seat], {"match_started": started})
        self.tell((state.hand_started(),))

    @staticmethod
    def _maker(target: object, seed: int) -> Callable[[], Bot]:
        return lambda: seed_bot(make_bot(target), seed)

    def finish(self) -> None:
        """The match is over: each bot takes in the last events (its end-of-match hooks)."""
        for seat, side in self._sides.items():
            side.receive(self._take(seat))
            side.read_inbox()

    # ------------------------------------------------------------------ telling

    def tell(self, events: Iterable[MatchEvent]) -> None:
        """What the rules said happened, queued for every bot's seat as the referee's
        outbox would queue it: a deal privately to each seat, the rest to all."""
        state = self._current()
        for event in events:
            if isinstance(event, CardPlayed):
                self._public(
                    card_played=card_played_to_wire(event.seat, event.card, event.trick_number, _DECIDED)
                )
            elif isinstance(event, TrickWon):
                self._public(trick_completed=trick_completed_to_wire(event.trick, event.tricks_won))
            elif isinstance(event, CallMade):
                self._public(call_made=call_made_to_wire(event.seat, event.call, _DECIDED))
            elif isinstance(event, AuctionEnded):
                self._public(auction_ended=auction_ended_to_wire(event.contract))
            elif isinstance(event, HandStarted):
                self._deal(state)
            else:
                self._score(state, event)

    def _public(self, **fields: Any) -> None:
        added = add_event_to_each(self._outgoing.values(), fields)
        if added is not None:
            advance_hand(self._hand, added, cards_pb2.SEAT_UNSPECIFIED)

    def _deal(self, state: GameState) -> None:
        started = None
        for seat in self._sides:
            started = hand_started_to_wire(state.view(seat))
            add_event(self._outgoing[seat], {"hand_started": started})
        if started is None:
            started = hand_started_to_wire(state.view(None))
        self._hand = start_hand(started)
        self._hand.ClearField("cards")

    def _score(self, state: GameState, event: MatchEvent) -> None:
        public = state.view(None)
        if isinstance(event, HandEnded):
            self._public(hand_ended=hand_result_to_wire(event.result, public.game_number, public))
        elif isinstance(event, GameEnded):
            self._public(game_ended=game_result_to_wire(event.result, public.games_won))
        elif isinstance(event, MatchEnded):
            final = match_result_to_wire(event.result, public.scores, [], state.seed, state.commitment)
            self._public(match_ended=final)

    # ------------------------------------------------------------------ asking

    def act(self, seat: Seat) -> Action:
        """The action the bot at ``seat`` (the seat to act) chooses, asked with the request
        a referee would send it; not applied."""
        state = self._current()
        message = self._take(seat)
        self._requests += 1
        request = fill_request(
            message,
            request_id=self._requests,
            auction=state.phase is Phase.AUCTION,
            legal=state.legal_actions,
            time_left_ms=self._time_left_ms,
            match_id="",
            seat=seat,
            last_sequence=self._sequence[seat],
            hand=self._hand,
            own_cards=state.hand_of(seat),
        )
        side = self._sides[seat]
        side.receive(message)
        return action_from_wire(side.answer(request).decision.action)

    def _take(self, seat: Seat) -> referee_pb2.RefereeMessage:
        """The seat's pending message, its events numbered, leaving a fresh one."""
        message = self._outgoing[seat]
        self._outgoing[seat] = new_referee_message()
        for event in message.update.events:
            self._sequence[seat] += 1
            event.sequence = self._sequence[seat]
        return message

    def _current(self) -> GameState:
        if self._state is None:
            raise RuntimeError("no match yet: start() first")
        return self._state


def _name_of(target: object) -> str:
    """The name a bot plays under, without making one (a class is made only per match)."""
    if isinstance(target, Bot):
        return bot_name(target)
    if isinstance(target, type) and issubclass(target, Bot):
        return target.name
    return getattr(target, "__name__", "bot")
