"""What one seat knows, rebuilt on the bot's side from the referee's messages.

Each decision request carries the whole public state of the hand (a
``HandState``), so the view for a decision is rebuilt from it, never from a
chain of events that a reconnect could break; events feed the bot's hooks
and the results of earlier hands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from oddtrick._bot import Bot, BotView
from oddtrick._codec import (
    MalformedMessage,
    actions_from_wire,
    call_from_wire,
    card_from_wire,
    cards_from_wire,
    config_from_wire,
    contract_from_wire,
    hand_result_from_wire,
    per_side_from_wire,
    phase_from_wire,
    seat_from_wire,
    seat_to_wire,
    side_from_wire,
    trick_from_wire,
    trumps_from_wire,
)
from oddtrick._codec_hand import advance_hand, start_hand
from oddtrick._codec_protocol import new_hand_state
from oddtrick.rules import (
    Call,
    Contract,
    GameConfig,
    GameResult,
    HandResult,
    MatchResult,
    Phase,
    Seat,
)
from oddtrick.v1 import game_pb2, referee_pb2

log = logging.getLogger("oddtrick.bot")


T = TypeVar("T")
W = TypeVar("W")


class _PerHand(Generic[W, T]):
    """Decodes a list that only grows within a hand (its tricks, its calls), each item
    once: every request repeats the whole list. A new hand, or a shorter list (a
    resync), starts again."""

    def __init__(self, decode: Callable[[W], T]) -> None:
        self._decode = decode
        self._hand = 0
        self._decoded: list[T] = []
        self._as_tuple: tuple[T, ...] = ()

    def __call__(self, hand_number: int, items: Sequence[W]) -> tuple[T, ...]:
        count = len(items)
        if hand_number != self._hand or len(self._decoded) > count:
            self._hand, self._decoded, self._as_tuple = hand_number, [], ()
        decoded = self._decoded
        if len(decoded) < count:
            decoded.extend(self._decode(items[index]) for index in range(len(decoded), count))
            self._as_tuple = tuple(decoded)
        return self._as_tuple


def _call_made_from_wire(made: referee_pb2.CallMade) -> tuple[Seat, Call]:
    return seat_from_wire(made.seat), call_from_wire(made.call)


IN_HAND_EVENTS = frozenset({"call_made", "auction_ended", "card_played", "trick_completed"})
"""The events that only advance the hand in play (its calls, its cards, its tricks)."""


class SeatState:
    """One seat's knowledge during one match, fed by the referee's messages."""

    def __init__(self) -> None:
        self.match_id = ""
        self.seat = Seat.NORTH
        self.config = GameConfig()
        self.seed_commitment = ""
        self.players: dict[Seat, str] = {}
        self.hand_results: list[HandResult] = []
        self.game_results: list[GameResult] = []
        self.match_result: MatchResult | None = None
        self.match_aborted = False
        """The referee stopped the match before its end: it does not count."""
        self.stop_reason = ""
        """Why the referee stopped it (MatchResult.stop_reason), when it did."""
        self.seed: str | None = None
        self.clock_increment_ms: int | None = None
        """The match clock's increment per decision (None: the match has no clock)."""
        self.last_sequence = 0
        self.hand = new_hand_state()
        self._tricks = _PerHand(trick_from_wire)
        self._auction = _PerHand(_call_made_from_wire)

    def start_match(self, message: referee_pb2.MatchStarted) -> None:
        self.__init__()  # type: ignore[misc]
        self.match_id = message.match_id
        self.seat = seat_from_wire(message.seat)
        self.config = config_from_wire(message.config)
        self.seed_commitment = message.seed_commitment
        self.players = {seat_from_wire(p.seat): p.bot_name for p in message.players}
        if message.rules.HasField("clock_initial_ms"):
            self.clock_increment_ms = message.rules.clock_increment_ms

    def apply(self, events: Iterable[referee_pb2.Event], track_hand: bool = True) -> None:
        """Take in events. ``track_hand=False`` skips advancing :attr:`hand` through
        the hand's plays, for events a request with the whole hand follows at once."""
        for event in events:
            self.last_sequence = event.sequence
            kind = event.WhichOneof("kind")
            hand = self.hand
            if kind == "match_started":
                self.start_match(event.match_started)
            elif kind == "hand_started":
                self.hand = start_hand(event.hand_started)
            elif kind == "hand_ended":
                self.hand_results.append(hand_result_from_wire(event.hand_ended))
                advance_hand(hand, event, seat_to_wire(self.seat))
            elif kind in IN_HAND_EVENTS:
                if track_hand:
                    advance_hand(hand, event, seat_to_wire(self.seat))
            elif kind == "game_ended":
                game = event.game_ended
                self.game_results.append(
                    GameResult(
                        game.game_number,
                        side_from_wire(game.winner),
                        per_side_from_wire(game.score),
                        game.hands,
                        game.reason == game_pb2.GAME_END_REASON_HONOURS,
                    )
                )
            elif kind == "match_ended":
                result = event.match_ended
                totals = per_side_from_wire(result.score.total)
                self.match_aborted = result.outcome == game_pb2.MATCH_OUTCOME_ABORTED
                self.stop_reason = result.stop_reason or "no reason given" if self.match_aborted else ""
                winner = side_from_wire(result.winner) if result.winner and not self.match_aborted else None
                reason = (
                    f"stopped by the referee: {self.stop_reason}"
                    if self.match_aborted
                    else f"{winner} won"
                    if winner is not None
                    else "drawn"
                )
                self.match_result = MatchResult(
                    winner,
                    totals,
                    per_side_from_wire(result.score.games_won),
                    result.hands_played,
                    reason,
                )
                self.seed = result.seed

    def view(
        self,
        request: referee_pb2.DecisionRequest | None = None,
        received_at: float | None = None,
        transport_ms: float | None = None,
    ) -> BotView:
        """The bot's view now; with a request, the one that request is about
        (``received_at`` and ``transport_ms`` are the client's clock readings)."""
        hand = request.hand if request is not None else self.hand
        if request is not None:
            self.hand = hand
        try:
            return self._build(hand, request, received_at, transport_ms)
        except MalformedMessage:
            raise
        except (ValueError, KeyError) as error:
            raise MalformedMessage(f"the referee sent an inconsistent state: {error}") from None

    def _build(
        self,
        hand: referee_pb2.HandState,
        request: referee_pb2.DecisionRequest | None,
        received_at: float | None = None,
        transport_ms: float | None = None,
    ) -> BotView:
        current = tuple(
            (seat_from_wire(play.seat), card_from_wire(play.card)) for play in hand.current_trick.cards
        )
        tricks = self._tricks(hand.hand_number, hand.tricks)
        contract: Contract | None = contract_from_wire(hand.contract) if hand.HasField("contract") else None
        scores = hand.score
        return BotView(
            seat=self.seat,
            config=self.config,
            seed_commitment=self.seed_commitment,
            phase=Phase.MATCH_OVER if self.match_result is not None else phase_from_wire(hand.phase),
            hand_number=hand.hand_number,
            dealer=seat_from_wire(hand.dealer) if hand.dealer else Seat.NORTH,
            to_act=seat_from_wire(hand.turn) if hand.turn else None,
            hand=cards_from_wire(hand.cards),
            legal_actions=actions_from_wire(request.legal_actions) if request else (),
            trumps=trumps_from_wire(hand.trumps),
            turned_card=card_from_wire(hand.turned_card) if hand.HasField("turned_card") else None,
            turned_card_face_up=hand.turned_card_face_up,
            cut_card=card_from_wire(hand.cut_card) if hand.HasField("cut_card") else None,
            auction=self._auction(hand.hand_number, hand.auction),
            contract=contract,
            current_trick=current,
            tricks=tricks,
            tricks_won=per_side_from_wire(hand.tricks_won),
            scores=per_side_from_wire(scores.game),
            totals=per_side_from_wire(scores.total),
            games_won=per_side_from_wire(scores.games_won),
            game_number=hand.game_number,
            hand_results=tuple(self.hand_results),
            game_results=tuple(self.game_results),
            match_result=self.match_result,
            seed=self.seed,
            players=dict(self.players),
            time_left_ms=request.time_left_ms if request else None,
            clock_left_ms=request.clock_left_ms if request and request.HasField("clock_left_ms") else None,
            clock_increment_ms=self.clock_increment_ms,
            match_id=self.match_id,
            request_id=request.request_id if request else 0,
            received_at=received_at,
            transport_ms=transport_ms,
        )


_HOOKS = {
    "match_started": "on_match_start",
    "hand_started": "on_hand_start",
    "call_made": "on_call",
    "card_played": "on_card",
    "trick_completed": "on_trick",
    "hand_ended": "on_hand_end",
    "game_ended": "on_game_end",
    "match_ended": "on_match_end",
}


def listens(bot: Bot) -> bool:
    """Whether ``bot`` overrides any hook (if not, events need no view built for them)."""
    return any(getattr(type(bot), hook) is not getattr(Bot, hook) for hook in _HOOKS.values())


def dispatch_hooks(bot: Bot, state: SeatState, event: referee_pb2.Event) -> None:
    """Call the hook of ``bot`` that ``event`` names (after ``state`` has applied it).

    A hook that raises is logged and ignored: a bug in a hook must not cost
    the bot its seat.
    """
    kind = event.WhichOneof("kind")
    hook = _HOOKS.get(kind or "")
    if hook is None or getattr(type(bot), hook) is getattr(Bot, hook):
        return  # the bot does not listen: don't build a view for nothing
    try:
        if kind == "match_started":
            bot.on_match_start(state.view())
        elif kind == "hand_started":
            bot.on_hand_start(state.view())
        elif kind == "call_made":
            made = event.call_made
            bot.on_call(state.view(), seat_from_wire(made.seat), call_from_wire(made.call))
        elif kind == "card_played":
            played = event.card_played
            bot.on_card(state.view(), seat_from_wire(played.seat), card_from_wire(played.card))
        elif kind == "trick_completed":
            bot.on_trick(state.view(), trick_from_wire(event.trick_completed.trick))
        elif kind == "hand_ended":
            bot.on_hand_end(state.view(), state.hand_results[-1])
        elif kind == "game_ended":
            bot.on_game_end(state.view(), state.game_results[-1])
        elif kind == "match_ended":
            assert state.match_result is not None
            bot.on_match_end(state.view(), state.match_result)
    except Exception:
        log.exception("the bot's hook for %s raised; carrying on", kind)
