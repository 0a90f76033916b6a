"""The bot protocol's messages (``referee.proto``), built from domain values.

:mod:`oddtrick._codec` converts the game's values (cards, calls, configurations,
results); this module puts them together into what the referee and a bot say to each
other: a bot's Hello, Decision and Leave; the referee's Welcome, events, requests,
refusals, resyncs and Waiting notices. Nothing else in the SDK or the referee builds
these messages, so a new field is added here and in the .proto, and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from oddtrick._codec import (
    FAULT_KINDS,
    actions_to_wire,
    call_from_wire,
    call_to_wire,
    card_from_wire,
    card_to_wire,
    cards_to_wire,
    config_from_wire,
    config_to_wire,
    contract_from_wire,
    contract_to_wire,
    game_kind_to_wire,
    hand_result_from_wire,
    per_side,
    per_side_from_wire,
    scoreboard,
    seat_from_wire,
    seat_player_to_wire,
    seat_to_wire,
    side_from_wire,
    trick_from_wire,
    trick_to_wire,
    trumps_from_wire,
    trumps_to_wire,
)
from oddtrick._events import MatchOpened, MatchStopped, SpectatorEvent
from oddtrick.rules import (
    Action,
    AuctionEnded,
    Call,
    CallMade,
    Card,
    CardPlayed,
    Contract,
    Deal,
    GameConfig,
    GameEnded,
    GameKind,
    GameResult,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchResult,
    Reason,
    Seat,
    SeatView,
    Trick,
    TrickWon,
)
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2

PROTOCOL_NAME = "oddtrick.v1"
PROTOCOL_MINOR = 0


def protocol_version(name: str = PROTOCOL_NAME, minor: int = PROTOCOL_MINOR) -> referee_pb2.ProtocolVersion:
    return referee_pb2.ProtocolVersion(name=name, minor=minor)


# ------------------------------------------------------------------ a bot's messages


def hello_message(
    bot_name: str,
    bot_version: str,
    token: str,
    games: Iterable[GameKind],
    max_seats: int,
    resume_token: str | None = None,
) -> referee_pb2.BotMessage:
    hello = referee_pb2.Hello(
        bot_name=bot_name,
        bot_version=bot_version,
        token=token,
        protocol=protocol_version(),
        games=[game_kind_to_wire(g) for g in games],
        max_seats=max_seats,
    )
    if resume_token is not None:
        hello.resume_token = resume_token
    return referee_pb2.BotMessage(hello=hello)


def leave_message() -> referee_pb2.BotMessage:
    return referee_pb2.BotMessage(leave=referee_pb2.Leave())


def decision_message(
    request_id: int,
    action: cards_pb2.Action,
    comment: str | None = None,
    bot_error: str | None = None,
    bot_think_ms: int | None = None,
) -> referee_pb2.BotMessage:
    """An answer; its optional fields only when given."""
    decision = referee_pb2.Decision(request_id=request_id, action=action)
    if comment is not None:
        decision.comment = comment
    if bot_error is not None:
        decision.bot_error = bot_error
    if bot_think_ms is not None:
        decision.bot_think_ms = bot_think_ms
    return referee_pb2.BotMessage(decision=decision)


def new_hand_state() -> referee_pb2.HandState:
    """An empty hand state: what a seat knows between matches."""
    return referee_pb2.HandState()


# ------------------------------------------------------------------ the referee's messages


def session_limits_to_wire(
    max_unsolicited: int, max_attempts: int, max_message_bytes: int, max_comment_bytes: int, max_seats: int
) -> referee_pb2.SessionLimits:
    return referee_pb2.SessionLimits(
        max_unsolicited_messages=max_unsolicited,
        max_attempts_per_request=max_attempts,
        max_message_bytes=max_message_bytes,
        max_comment_bytes=max_comment_bytes,
        max_seats=max_seats,
    )


def welcome_message(
    session_id: str,
    resume_token: str,
    server_version: str,
    limits: referee_pb2.SessionLimits,
    resumed: bool,
    games: Iterable[GameKind],
) -> referee_pb2.RefereeMessage:
    return referee_pb2.RefereeMessage(
        welcome=referee_pb2.Welcome(
            session_id=session_id,
            resume_token=resume_token,
            server_name="oddtrick",
            server_version=server_version,
            protocol=protocol_version(),
            limits=limits,
            resumed=resumed,
            games=[game_kind_to_wire(g) for g in sorted(games, key=lambda g: g.value)],
        )
    )


def waiting_message(name: str, needed: int, offered: int, game: GameKind) -> referee_pb2.RefereeMessage:
    """Why a bot's idle session is not seated: its match needs ``needed`` of its seats at
    once, and it has ``offered`` streams open (fewer)."""
    streams = "stream" if offered == 1 else "streams"
    text = (
        f"waiting: a match here needs {needed} seats of {name} at once, and {name} has "
        f"{offered} {streams} open (a bot opens one stream per seat); "
        f"start the bot with --seats {needed}"
    )
    return referee_pb2.RefereeMessage(
        waiting=referee_pb2.Waiting(
            message=text, seats_needed=needed, seats_offered=offered, game=game_kind_to_wire(game)
        )
    )


def new_referee_message() -> referee_pb2.RefereeMessage:
    """An empty message, which a seat's events are collected into until it is sent."""
    return referee_pb2.RefereeMessage()


def refusal_to_wire(
    request_id: int,
    reason: referee_pb2.RefusalReason.ValueType,
    message: str,
    action: cards_pb2.Action,
    time_left_ms: int = 0,
    attempts_left: int = 0,
) -> referee_pb2.Refusal:
    return referee_pb2.Refusal(
        request_id=request_id,
        reason=reason,
        message=message,
        time_left_ms=time_left_ms,
        attempts_left=attempts_left,
        action=action,
    )


def refusal_message(refusal: referee_pb2.Refusal) -> referee_pb2.RefereeMessage:
    return referee_pb2.RefereeMessage(refusal=refusal)


_REFUSAL_REASONS: dict[Reason, referee_pb2.RefusalReason.ValueType] = {
    Reason.NOT_YOUR_TURN: referee_pb2.REFUSAL_REASON_NOT_YOUR_TURN,
    Reason.WRONG_PHASE: referee_pb2.REFUSAL_REASON_WRONG_PHASE,
    Reason.CARD_NOT_HELD: referee_pb2.REFUSAL_REASON_CARD_NOT_HELD,
    Reason.MUST_FOLLOW_SUIT: referee_pb2.REFUSAL_REASON_MUST_FOLLOW_SUIT,
    Reason.BID_TOO_LOW: referee_pb2.REFUSAL_REASON_BID_TOO_LOW,
    Reason.DOUBLE_NOT_ALLOWED: referee_pb2.REFUSAL_REASON_DOUBLE_NOT_ALLOWED,
}
MALFORMED = referee_pb2.REFUSAL_REASON_MALFORMED
UNKNOWN_REQUEST = referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST


def refusal_reason_to_wire(reason: Reason) -> referee_pb2.RefusalReason.ValueType:
    """The rules' reason for refusing an action, as the protocol's code."""
    return _REFUSAL_REASONS[reason]


def refusal_reason_name(reason: int) -> str:
    """The reason's name as the match log writes it (``REFUSAL_REASON_…``)."""
    return referee_pb2.RefusalReason.Name(reason)  # type: ignore[arg-type]


def event_to_wire(sequence: int, fields: Mapping[str, Any]) -> referee_pb2.Event:
    """An event numbered ``sequence``, from the fields :func:`add_event` was given."""
    return referee_pb2.Event(sequence=sequence, **fields)


class Seen:
    """One spectator event: its number (from 1), its value and its wire fields, so that a
    spectator taking values (the live page) and one sending wire events (``WatchMatch``)
    are both served without decoding or re-encoding the other's form."""

    __slots__ = ("_wire", "event", "fields", "number")

    def __init__(self, number: int, event: SpectatorEvent, fields: Mapping[str, Any]) -> None:
        self.number = number
        self.event = event
        self.fields = fields
        self._wire: referee_pb2.Event | None = None

    def wire(self) -> referee_pb2.Event:
        """The wire event, built once however many streams send it (and only if one does)."""
        if self._wire is None:
            self._wire = event_to_wire(self.number, self.fields)
        return self._wire


def add_event(message: referee_pb2.RefereeMessage, fields: Mapping[str, Any]) -> referee_pb2.Event:
    """Add an (unnumbered) event to ``message``'s update; returns it."""
    added: referee_pb2.Event = message.update.events.add(**fields)
    return added


def add_event_to_each(
    messages: Iterable[referee_pb2.RefereeMessage], fields: Mapping[str, Any]
) -> referee_pb2.Event | None:
    """Add the same (unnumbered) event to every message's update; returns the last one
    added (``None`` for no message). One call per public event, not one per seat: the
    table's outbox adds every call and card to four messages, hundreds of times a second."""
    added: referee_pb2.Event | None = None
    for message in messages:
        added = message.update.events.add(**fields)
    return added


def decided_fields(by_referee: bool, fault: str | None, think_ms: int | None) -> dict[str, Any]:
    """The fields a call or card event carries about how the action was decided: by the
    referee (with its fault, a name of :data:`~oddtrick._codec.FAULT_KINDS`), or by the
    seat (with its think time)."""
    fields: dict[str, Any] = {"by_referee": by_referee}
    if fault is not None:
        fields["fault"] = FAULT_KINDS[fault]
    if think_ms is not None:
        fields["think_ms"] = think_ms
    return fields


def hand_started_to_wire(view: SeatView) -> referee_pb2.HandStarted:
    """A hand's deal as ``view``'s seat is told of it: its own cards, none of the others'."""
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


def call_made_to_wire(seat: Seat, call: Call, decided: Mapping[str, Any]) -> referee_pb2.CallMade:
    return referee_pb2.CallMade(seat=seat_to_wire(seat), call=call_to_wire(call), **decided)


def auction_ended_to_wire(contract: Contract | None) -> referee_pb2.AuctionEnded:
    """The auction's end: its contract, or thrown in (``None``)."""
    if contract is None:
        return referee_pb2.AuctionEnded(thrown_in=referee_pb2.ThrownIn())
    return referee_pb2.AuctionEnded(contract=contract_to_wire(contract))


def card_played_to_wire(
    seat: Seat, card: Card, trick_number: int, decided: Mapping[str, Any]
) -> referee_pb2.CardPlayed:
    return referee_pb2.CardPlayed(
        seat=seat_to_wire(seat), card=card_to_wire(card), trick_number=trick_number, **decided
    )


def trick_completed_to_wire(trick: Trick, tricks_won: tuple[int, int]) -> referee_pb2.TrickCompleted:
    return referee_pb2.TrickCompleted(trick=trick_to_wire(trick), tricks=per_side(tricks_won))


def match_started_to_wire(
    match_id: str,
    table_id: str,
    config: GameConfig,
    rules: game_pb2.TableRules,
    seat: Seat | None,
    players: Iterable[tuple[Seat, str, str]],
    seed_commitment: str,
    started_at_ms: int,
) -> referee_pb2.MatchStarted:
    """The match as ``seat`` (``None``: a spectator) is told of it; ``players`` are
    (seat, bot name, bot version)."""
    return referee_pb2.MatchStarted(
        match_id=match_id,
        table_id=table_id,
        config=config_to_wire(config),
        rules=rules,
        seat=seat_to_wire(seat) if seat is not None else cards_pb2.SEAT_UNSPECIFIED,
        players=[seat_player_to_wire(s, name, version) for s, name, version in players],
        seed_commitment=seed_commitment,
        started_at_unix_ms=started_at_ms,
    )


def fill_request(
    message: referee_pb2.RefereeMessage,
    *,
    request_id: int,
    auction: bool,
    legal: Sequence[Action],
    time_left_ms: int,
    match_id: str,
    seat: Seat,
    last_sequence: int,
    hand: referee_pb2.HandState,
    own_cards: Iterable[Card],
    clock_left_ms: int | None = None,
) -> referee_pb2.DecisionRequest:
    """Make ``message`` (holding the seat's pending events) a decision request: the public
    ``hand`` with the seat's turn and its own cards added, and what is left of the seat's
    time bank in a match with a clock. Returns the request."""
    request = message.update.request
    request.request_id = request_id
    request.kind = referee_pb2.DECISION_KIND_CALL if auction else referee_pb2.DECISION_KIND_CARD
    request.legal_actions.extend(actions_to_wire(legal))
    request.time_left_ms = time_left_ms
    if clock_left_ms is not None:
        request.clock_left_ms = clock_left_ms
    request.match_id = match_id
    request.seat = seat_to_wire(seat)
    request.last_sequence = last_sequence
    state = request.hand
    state.CopyFrom(hand)
    state.turn = request.seat
    state.cards.extend(cards_to_wire(own_cards))
    return request


def resync_message(
    last_sequence: int,
    match: referee_pb2.MatchStarted,
    hand: referee_pb2.HandState,
    request: referee_pb2.DecisionRequest | None = None,
    time_left_ms: int = 0,
) -> referee_pb2.RefereeMessage:
    """What a seat taken back needs to go on: the match, the hand as it sees it, and the
    request open for it (a copy, with the time it has left, and its time bank less what
    the decision has taken so far), if any."""
    resync = referee_pb2.Resync(last_sequence=last_sequence, match=match, hand=hand)
    if request is not None:
        resync.request.CopyFrom(request)  # a copy: the request itself was sent, so never changes
        resync.request.time_left_ms = time_left_ms
        if request.HasField("clock_left_ms"):
            spent = request.time_left_ms - time_left_ms
            resync.request.clock_left_ms = max(0, request.clock_left_ms - spent)
    return referee_pb2.RefereeMessage(resync=resync)


def _dealt(hands: Iterable[game_pb2.SeatHand]) -> Deal | None:
    """The four hands a spectator is shown, or ``None`` when they are not all there."""
    held = {seat_from_wire(hand.seat): [card_from_wire(card) for card in hand.cards] for hand in hands}
    return Deal(held) if len(held) == 4 else None


def _match_end_from_wire(final: game_pb2.MatchResult) -> MatchEnded | MatchStopped:
    totals = per_side_from_wire(final.score.total)
    if final.outcome == game_pb2.MATCH_OUTCOME_ABORTED:
        return MatchStopped(final.stop_reason, totals)
    winner = side_from_wire(final.winner) if final.outcome == game_pb2.MATCH_OUTCOME_WIN else None
    games = per_side_from_wire(final.score.games_won)
    return MatchEnded(MatchResult(winner, totals, games, final.hands_played, ""))


def spectator_event_from_wire(event: referee_pb2.Event) -> SpectatorEvent | None:
    """A spectator's wire event read back as the value it encodes (``None``: a kind a
    spectator is not sent, or one newer than this SDK)."""
    kind = event.WhichOneof("kind")
    if kind == "match_started":
        started = event.match_started
        players = tuple((seat_from_wire(p.seat), p.bot_name) for p in started.players)
        return MatchOpened(started.match_id, config_from_wire(started.config), players)
    if kind == "hand_started":
        hand = event.hand_started
        return HandStarted(
            hand.hand_number,
            seat_from_wire(hand.dealer),
            trumps_from_wire(hand.trumps),
            card_from_wire(hand.turned_card) if hand.HasField("turned_card") else None,
            card_from_wire(hand.cut_card) if hand.HasField("cut_card") else None,
            _dealt(hand.hands),
        )
    if kind == "call_made":
        return CallMade(seat_from_wire(event.call_made.seat), call_from_wire(event.call_made.call))
    if kind == "auction_ended":
        if not event.auction_ended.HasField("contract"):
            return AuctionEnded(None, None)
        contract = contract_from_wire(event.auction_ended.contract)
        return AuctionEnded(contract, contract.declarer.left)
    if kind == "card_played":
        played = event.card_played
        return CardPlayed(seat_from_wire(played.seat), card_from_wire(played.card), played.trick_number)
    if kind == "trick_completed":
        completed = event.trick_completed
        return TrickWon(trick_from_wire(completed.trick), per_side_from_wire(completed.tricks))
    if kind == "hand_ended":
        return HandEnded(hand_result_from_wire(event.hand_ended))
    if kind == "game_ended":
        game = event.game_ended
        by_honours = game.reason == game_pb2.GAME_END_REASON_HONOURS
        scores = per_side_from_wire(game.score)
        return GameEnded(
            GameResult(game.game_number, side_from_wire(game.winner), scores, game.hands, by_honours)
        )
    if kind == "match_ended":
        return _match_end_from_wire(event.match_ended)
    return None


def revealed_seed_from_wire(event: referee_pb2.Event) -> str:
    """The seed a spectator's ``match_ended`` event reveals at the match's end (the values
    of :func:`spectator_event_from_wire` do not hold it); ``""`` for any other event, a
    stopped match, or a seed that stays secret."""
    if event.WhichOneof("kind") != "match_ended":
        return ""
    return event.match_ended.seed
