"""The one boundary between wire messages (``oddtrick.v1``) and rules values.

Wire enums start at 1 (0 is "unspecified"), the engine's at 0: every
conversion goes through this module, never through a cast. Decoding what a
peer sent raises :class:`MalformedMessage` with a sentence that says what was
wrong, which the referee forwards to the bot as a refusal.
"""

from __future__ import annotations

from collections.abc import Iterable

from oddtrick.rules import (
    DOUBLE,
    PASS,
    Action,
    Call,
    Card,
    Contract,
    Deal,
    Denomination,
    GameConfig,
    GameKind,
    GameResult,
    HandResult,
    MatchFormat,
    MatchResult,
    Outcome,
    Phase,
    Rank,
    Seat,
    SeatView,
    Side,
    Suit,
    Trick,
    TrumpSelection,
)
from oddtrick.rules import ConfigError as _ConfigError
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2


class MalformedMessage(ValueError):
    """A message that is missing a field or holds a value out of range."""


# ------------------------------------------------------------------ enums


def seat_to_wire(seat: Seat) -> cards_pb2.Seat.ValueType:
    return cards_pb2.Seat.ValueType(seat + 1)


_SEATS_BY_WIRE: dict[int, Seat] = {seat + 1: seat for seat in Seat}


def seat_from_wire(value: int) -> Seat:
    seat = _SEATS_BY_WIRE.get(value)
    if seat is None:
        raise MalformedMessage(f"seat {value} is not one of SEAT_NORTH … SEAT_WEST")
    return seat


def side_to_wire(side: Side) -> cards_pb2.Side.ValueType:
    return cards_pb2.Side.ValueType(side + 1)


def side_from_wire(value: int) -> Side:
    if value not in (1, 2):
        raise MalformedMessage(f"side {value} is not SIDE_NORTH_SOUTH or SIDE_EAST_WEST")
    return Side(value - 1)


def denomination_to_wire(denomination: Denomination) -> cards_pb2.Denomination.ValueType:
    return cards_pb2.Denomination.ValueType(denomination + 1)


def trumps_to_wire(trumps: Suit | None, known: bool = True) -> cards_pb2.Denomination.ValueType:
    """Trumps as a denomination: no trumps when ``None``, unspecified if not known yet."""
    if not known:
        return cards_pb2.DENOMINATION_UNSPECIFIED
    if trumps is None:
        return cards_pb2.DENOMINATION_NO_TRUMPS
    return cards_pb2.Denomination.ValueType(trumps + 1)


_DENOMINATIONS_BY_WIRE: dict[int, Denomination] = {d + 1: d for d in Denomination}


def denomination_from_wire(value: int) -> Denomination:
    denomination = _DENOMINATIONS_BY_WIRE.get(value)
    if denomination is None:
        raise MalformedMessage(f"denomination {value} is not one of DENOMINATION_CLUBS … NO_TRUMPS")
    return denomination


_GAME_KINDS = {
    GameKind.CLASSIC: game_pb2.GAME_KIND_CLASSIC,
    GameKind.CONTRACT: game_pb2.GAME_KIND_CONTRACT,
}
_TRUMP_SELECTIONS = {
    TrumpSelection.TURN_LAST_CARD: game_pb2.TRUMP_SELECTION_TURN_LAST_CARD,
    TrumpSelection.CUT: game_pb2.TRUMP_SELECTION_CUT,
    TrumpSelection.FIXED_ROTATION: game_pb2.TRUMP_SELECTION_FIXED_ROTATION,
}
_FORMATS = {
    MatchFormat.HAND: game_pb2.MATCH_FORMAT_HAND,
    MatchFormat.GAME: game_pb2.MATCH_FORMAT_GAME,
    MatchFormat.RUBBER: game_pb2.MATCH_FORMAT_RUBBER,
    MatchFormat.DEALS: game_pb2.MATCH_FORMAT_DEALS,
}


def game_kind_to_wire(kind: GameKind) -> game_pb2.GameKind.ValueType:
    return _GAME_KINDS[kind]


def game_kind_from_wire(value: int) -> GameKind | None:
    """``None`` for a kind this SDK does not know (a newer referee's game)."""
    for kind, wire in _GAME_KINDS.items():
        if wire == value:
            return kind
    return None


# ----------------------------------------------------------- cards, calls


# Wire forms of the 52 cards and of every action, built once: requests repeat the
# same few dozen values thousands of times a second. They are shared, so copy one
# (``CopyFrom``, or pass it to a constructor or ``append``) before changing it.
_CARD_WIRE: dict[Card, cards_pb2.Card] = {}
_CARDS_BY_WIRE: dict[tuple[int, int], Card] = {}
for _suit in Suit:
    for _rank in Rank:
        _card = Card(_suit, _rank)
        _CARD_WIRE[_card] = cards_pb2.Card(
            suit=cards_pb2.Suit.ValueType(_suit + 1), rank=cards_pb2.Rank.ValueType(_rank)
        )
        _CARDS_BY_WIRE[(_suit + 1, int(_rank))] = _card


def card_to_wire(card: Card) -> cards_pb2.Card:
    """The card's wire form (a shared message: copy it before changing it)."""
    return _CARD_WIRE[card]


def card_from_wire(card: cards_pb2.Card) -> Card:
    found = _CARDS_BY_WIRE.get((card.suit, card.rank))
    if found is not None:
        return found
    if not 1 <= card.suit <= 4:
        raise MalformedMessage(f"card suit {card.suit} is not one of SUIT_CLUBS … SUIT_SPADES")
    raise MalformedMessage(f"card rank {card.rank} is not one of RANK_2 … RANK_ACE")


def cards_from_wire(cards: Iterable[cards_pb2.Card]) -> tuple[Card, ...]:
    """Many cards at once (a hand, a trick): a lookup each, without a call per card, as a
    request's hand is decoded for every decision a bot makes."""
    try:
        return tuple([_CARDS_BY_WIRE[card.suit, card.rank] for card in cards])
    except KeyError:
        return tuple(card_from_wire(card) for card in cards)  # raises, naming the bad value


def call_to_wire(call: Call) -> cards_pb2.Call:
    """The call's wire form (a fresh message)."""
    if call is PASS:
        return cards_pb2.Call(pass_call=cards_pb2.Pass())
    if call is DOUBLE:
        return cards_pb2.Call(double_call=cards_pb2.Double())
    assert call.denomination is not None
    return cards_pb2.Call(
        bid=cards_pb2.Bid(level=call.level, denomination=denomination_to_wire(call.denomination))
    )


_BIDS_BY_WIRE: dict[tuple[int, int], Call] = {
    (level, denomination + 1): Call.bid(level, denomination)
    for level in range(7, 14)
    for denomination in Denomination
}


def call_from_wire(call: cards_pb2.Call) -> Call:
    kind = call.WhichOneof("kind")
    if kind == "pass_call":
        return PASS
    if kind == "double_call":
        return DOUBLE
    if kind == "bid":
        bid = call.bid
        found = _BIDS_BY_WIRE.get((bid.level, bid.denomination))
        if found is not None:
            return found
        if not 7 <= bid.level <= 13:
            raise MalformedMessage(f"bid level {bid.level} is outside 7 … 13")
        return Call.bid(bid.level, denomination_from_wire(bid.denomination))
    raise MalformedMessage("the call names none of bid, pass_call, double_call")


_ACTION_WIRE: dict[Action, cards_pb2.Action] = {}


def action_to_wire(action: Action) -> cards_pb2.Action:
    """The action's wire form (a shared message: copy it before changing it)."""
    wire = _ACTION_WIRE.get(action)
    if wire is None:
        if isinstance(action, Card):
            wire = cards_pb2.Action(card=_CARD_WIRE[action])
        else:
            wire = cards_pb2.Action(call=call_to_wire(action))
        _ACTION_WIRE[action] = wire
    return wire


def action_from_wire(action: cards_pb2.Action) -> Action:
    kind = action.WhichOneof("kind")
    if kind == "card":
        return card_from_wire(action.card)
    if kind == "call":
        return call_from_wire(action.call)
    raise MalformedMessage("the action holds neither a call nor a card")


def actions_from_wire(actions: Iterable[cards_pb2.Action]) -> tuple[Action, ...]:
    """A request's legal actions: cards by a lookup each (as :func:`cards_from_wire`),
    calls (or anything else) one by one."""
    try:
        return tuple([_CARDS_BY_WIRE[action.card.suit, action.card.rank] for action in actions])
    except KeyError:  # not all cards (an unset card reads as suit 0, rank 0)
        return tuple(action_from_wire(action) for action in actions)


def cards_to_wire(cards: Iterable[Card]) -> list[cards_pb2.Card]:
    """The cards' wire forms (shared messages: copy one before changing it), looked up
    without a call per card: a request carries the seat's hand every decision."""
    return list(map(_CARD_WIRE.__getitem__, cards))


def actions_to_wire(actions: Iterable[Action]) -> list[cards_pb2.Action]:
    """The actions' wire forms (shared messages, as :func:`action_to_wire`'s): a request
    lists every legal action, every decision."""
    wire = _ACTION_WIRE
    return [wire[action] if action in wire else action_to_wire(action) for action in actions]


# ------------------------------------------------------------ game values


def config_to_wire(config: GameConfig) -> game_pb2.GameConfig:
    return game_pb2.GameConfig(
        kind=_GAME_KINDS[config.game],
        trump_selection=_TRUMP_SELECTIONS[config.trump_selection]
        if config.trump_selection
        else game_pb2.TRUMP_SELECTION_UNSPECIFIED,
        no_trump_every_fifth=config.no_trump_every_fifth,
        honours=config.honours,
        target=config.game_target,
        doubling=config.doubling,
        match_format=_FORMATS[config.format],
        deals=config.deals or 0,
    )


def config_from_wire(config: game_pb2.GameConfig) -> GameConfig:
    kind = game_kind_from_wire(config.kind)
    if kind is None:
        raise MalformedMessage(f"game kind {config.kind} is not known to this SDK")
    selection = next((s for s, w in _TRUMP_SELECTIONS.items() if w == config.trump_selection), None)
    match_format = next((f for f, w in _FORMATS.items() if w == config.match_format), None)
    if match_format is None:
        raise MalformedMessage(f"match format {config.match_format} is not known to this SDK")
    try:
        return GameConfig(
            game=kind,
            trump_selection=selection,
            no_trump_every_fifth=config.no_trump_every_fifth,
            honours=config.honours,
            target=config.target or None,
            doubling=config.doubling,
            format=match_format,
            deals=config.deals or None,
        )
    except _ConfigError as error:
        raise MalformedMessage(f"invalid game configuration: {error}") from None


def per_side(values: tuple[int, int]) -> game_pb2.PerSide:
    return game_pb2.PerSide(north_south=values[0], east_west=values[1])


def per_side_from_wire(values: game_pb2.PerSide) -> tuple[int, int]:
    return (values.north_south, values.east_west)


def scoreboard(view: SeatView) -> game_pb2.Scoreboard:
    return game_pb2.Scoreboard(
        game=per_side(view.scores), games_won=per_side(view.games_won), total=per_side(view.totals)
    )


def contract_to_wire(contract: Contract) -> game_pb2.Contract:
    return game_pb2.Contract(
        level=contract.level,
        denomination=denomination_to_wire(contract.denomination),
        declarer=seat_to_wire(contract.declarer),
        doubled=contract.doubled,
    )


def contract_from_wire(contract: game_pb2.Contract) -> Contract:
    if not 7 <= contract.level <= 13:
        raise MalformedMessage(f"contract level {contract.level} is outside 7 … 13")
    return Contract(
        contract.level,
        denomination_from_wire(contract.denomination),
        seat_from_wire(contract.declarer),
        contract.doubled,
    )


def seat_cards(plays: Iterable[tuple[Seat, Card]]) -> list[game_pb2.SeatCard]:
    return [game_pb2.SeatCard(seat=seat_to_wire(s), card=card_to_wire(c)) for s, c in plays]


def trick_to_wire(trick: Trick) -> game_pb2.Trick:
    return game_pb2.Trick(
        number=trick.number,
        leader=seat_to_wire(trick.leader),
        cards=seat_cards(trick.plays),
        winner=seat_to_wire(trick.winner),
    )


def trick_from_wire(trick: game_pb2.Trick) -> Trick:
    cards = cards_from_wire([play.card for play in trick.cards])
    if len(cards) != 4:
        raise MalformedMessage(f"trick {trick.number} has {len(cards)} cards, not 4")
    first, second, third, fourth = cards
    return Trick(
        trick.number,
        seat_from_wire(trick.leader),
        (first, second, third, fourth),
        seat_from_wire(trick.winner),
    )


_OUTCOMES = {
    Outcome.ODD_TRICKS: game_pb2.HAND_OUTCOME_ODD_TRICKS,
    Outcome.MADE: game_pb2.HAND_OUTCOME_CONTRACT_MADE,
    Outcome.FAILED: game_pb2.HAND_OUTCOME_CONTRACT_FAILED,
    Outcome.THROWN_IN: game_pb2.HAND_OUTCOME_THROWN_IN,
}


_OUTCOMES_FROM_WIRE: dict[int, Outcome] = {wire: outcome for outcome, wire in _OUTCOMES.items()}


def trumps_from_wire(value: int) -> Suit | None:
    """Trumps from a denomination: ``None`` at no trumps or when not known yet."""
    return Suit(value - 1) if 1 <= value <= 4 else None


def hand_result_from_wire(message: game_pb2.HandResult) -> HandResult:
    """A hand's result as a seat received it (turned and cut cards are not repeated there)."""
    deal = None
    if len(message.hands) == 4:
        deal = Deal({seat_from_wire(h.seat): [card_from_wire(c) for c in h.cards] for h in message.hands})
    honours = [0, 0]
    barred = [False, False]
    if message.HasField("honours"):
        side = side_from_wire(message.honours.side)
        honours[side] = message.honours.points
        barred[side] = message.honours.status == game_pb2.HONOURS_STATUS_BARRED
    return HandResult(
        hand_number=message.hand_number,
        dealer=seat_from_wire(message.dealer),
        deal=deal,
        trumps=trumps_from_wire(message.trumps),
        turned_card=None,
        cut_card=None,
        contract=contract_from_wire(message.contract) if message.HasField("contract") else None,
        tricks=per_side_from_wire(message.tricks),
        points=per_side_from_wire(message.points),
        honours=(honours[0], honours[1]),
        honours_barred=(barred[0], barred[1]),
        outcome=_OUTCOMES_FROM_WIRE.get(message.outcome, Outcome.ODD_TRICKS),
        margin=message.margin,
        scores_after=per_side_from_wire(message.score.game),
        game_won_by=None,
    )


def hand_result_to_wire(result: HandResult, game_number: int, view: SeatView) -> game_pb2.HandResult:
    """A hand's result as a seat may see it (``result`` must come from its view)."""
    message = game_pb2.HandResult(
        hand_number=result.hand_number,
        game_number=game_number,
        dealer=seat_to_wire(result.dealer),
        outcome=_OUTCOMES[result.outcome],
        trumps=trumps_to_wire(result.trumps, result.outcome is not Outcome.THROWN_IN),
        tricks=per_side(result.tricks),
        points=per_side(result.points),
        margin=result.margin,
        score=game_pb2.Scoreboard(
            game=per_side(result.scores_after),
            games_won=per_side(view.games_won),
            total=per_side(view.totals),
        ),
    )
    if result.contract is not None:
        message.contract.CopyFrom(contract_to_wire(result.contract))
    if result.deal is not None:
        for seat in Seat:
            message.hands.append(
                game_pb2.SeatHand(seat=seat_to_wire(seat), cards=cards_to_wire(result.deal[seat]))
            )
    for side in Side:
        if result.honours[side] or result.honours_barred[side]:
            status = (
                game_pb2.HONOURS_STATUS_BARRED
                if result.honours_barred[side] and not result.honours[side]
                else game_pb2.HONOURS_STATUS_SCORED
            )
            message.honours.CopyFrom(
                game_pb2.Honours(side=side_to_wire(side), points=result.honours[side], status=status)
            )
    return message


def game_result_to_wire(result: GameResult, games_won: tuple[int, int]) -> game_pb2.GameResult:
    return game_pb2.GameResult(
        game_number=result.game_number,
        winner=side_to_wire(result.winner),
        score=per_side(result.scores),
        reason=game_pb2.GAME_END_REASON_HONOURS
        if result.by_honours
        else game_pb2.GAME_END_REASON_TARGET_REACHED,
        games_won=per_side(games_won),
        hands=result.hands,
    )


_PHASES = {
    Phase.AUCTION: referee_pb2.HAND_PHASE_AUCTION,
    Phase.PLAY: referee_pb2.HAND_PHASE_PLAY,
    Phase.HAND_OVER: referee_pb2.HAND_PHASE_ENDED,
    Phase.MATCH_OVER: referee_pb2.HAND_PHASE_ENDED,
}
_PHASES_FROM_WIRE: dict[int, Phase] = {
    wire: phase for phase, wire in _PHASES.items() if phase is not Phase.MATCH_OVER
}


def phase_from_wire(value: int) -> Phase:
    """A hand's phase (an unknown value from a newer referee reads as play)."""
    return _PHASES_FROM_WIRE.get(value, Phase.PLAY)


def hand_state(view: SeatView) -> referee_pb2.HandState:
    """The public state of the current hand plus the seat's own cards, from the engine.

    The referee sends it on a resync; requests carry the same state advanced
    event by event (``oddtrick._codec_hand``), which tests compare with this.
    """
    message = referee_pb2.HandState(
        hand_number=view.hand_number,
        game_number=view.game_number,
        dealer=seat_to_wire(view.dealer),
        phase=_PHASES[view.phase],
        turn=seat_to_wire(view.to_act) if view.to_act is not None else cards_pb2.SEAT_UNSPECIFIED,
        cards=cards_to_wire(view.hand),
        trumps=trumps_to_wire(
            view.trumps,
            view.phase is not Phase.AUCTION
            and (view.contract is not None or view.config.game is GameKind.CLASSIC),
        ),
        turned_card_face_up=view.turned_card_face_up,
        auction=[
            referee_pb2.CallMade(seat=seat_to_wire(seat), call=call_to_wire(call))
            for seat, call in view.auction
        ],
        tricks=[trick_to_wire(trick) for trick in view.tricks],
        tricks_won=per_side(view.tricks_won),
        score=scoreboard(view),
    )
    if view.turned_card is not None:
        message.turned_card.CopyFrom(card_to_wire(view.turned_card))
    if view.cut_card is not None:
        message.cut_card.CopyFrom(card_to_wire(view.cut_card))
    if view.contract is not None:
        message.contract.CopyFrom(contract_to_wire(view.contract))
    if view.current_trick:
        leader = view.current_trick[0][0]
        message.current_trick.CopyFrom(
            game_pb2.Trick(
                number=len(view.tricks) + 1,
                leader=seat_to_wire(leader),
                cards=seat_cards(view.current_trick),
            )
        )
    return message


FAULT_KINDS: dict[str, game_pb2.FaultKind.ValueType] = {
    "timeout": game_pb2.FAULT_KIND_TIMEOUT,
    "illegal": game_pb2.FAULT_KIND_ILLEGAL,
    "disconnected": game_pb2.FAULT_KIND_DISCONNECTED,
    "forfeited": game_pb2.FAULT_KIND_FORFEITED,
    "bot_error": game_pb2.FAULT_KIND_BOT_ERROR,
    "clock": game_pb2.FAULT_KIND_CLOCK,
}
"""A seat's faults by the names the match log writes, to the wire's kinds."""


def table_rules_to_wire(
    deadline_s: float,
    grace_s: float,
    open: bool,
    clock_initial_ms: int | None = None,
    clock_increment_ms: int | None = None,
) -> game_pb2.TableRules:
    """A table's rules; the clock's fields only for a match with a clock (a time bank)."""
    wire = game_pb2.TableRules(
        decision_deadline_ms=round(deadline_s * 1000),
        reconnect_grace_ms=round(grace_s * 1000),
        open=open,
    )
    if clock_initial_ms is not None:
        wire.clock_initial_ms = clock_initial_ms
    if clock_increment_ms is not None:
        wire.clock_increment_ms = clock_increment_ms
    return wire


def seat_player_to_wire(seat: Seat, bot_name: str, bot_version: str = "") -> game_pb2.SeatPlayer:
    return game_pb2.SeatPlayer(seat=seat_to_wire(seat), bot_name=bot_name, bot_version=bot_version)


def scoreboard_to_wire(
    game: tuple[int, int], games_won: tuple[int, int], total: tuple[int, int]
) -> game_pb2.Scoreboard:
    return game_pb2.Scoreboard(game=per_side(game), games_won=per_side(games_won), total=per_side(total))


def seat_record_to_wire(
    seat: Seat,
    faults: Iterable[tuple[str, int]],
    refusals: int,
    forfeited: bool,
    decisions: int,
    think_ms_total: int,
    think_ms_max: int,
) -> game_pb2.SeatRecord:
    """What a seat did in a match; ``faults`` are (name in :data:`FAULT_KINDS`, count)."""
    return game_pb2.SeatRecord(
        seat=seat_to_wire(seat),
        faults=[
            game_pb2.FaultCount(kind=FAULT_KINDS[fault], count=count)
            for fault, count in sorted(faults, key=lambda item: FAULT_KINDS[item[0]])
        ],
        refusals=refusals,
        forfeited=forfeited,
        decisions=decisions,
        think_ms_total=think_ms_total,
        think_ms_max=think_ms_max,
    )


def match_result_to_wire(
    result: MatchResult,
    scores: tuple[int, int],
    seats: Iterable[game_pb2.SeatRecord],
    seed: str,
    seed_commitment: str,
) -> game_pb2.MatchResult:
    """The match's end; ``seed`` empty while it stays secret (a sealed play)."""
    message = game_pb2.MatchResult(
        outcome=game_pb2.MATCH_OUTCOME_WIN if result.winner is not None else game_pb2.MATCH_OUTCOME_DRAW,
        score=scoreboard_to_wire(scores, result.games_won, result.totals),
        hands_played=result.hands_played,
        seats=list(seats),
        seed=seed,
        seed_commitment=seed_commitment,
    )
    if result.winner is not None:
        message.winner = side_to_wire(result.winner)
    return message


def match_stopped_to_wire(
    scores: tuple[int, int],
    games_won: tuple[int, int],
    totals: tuple[int, int],
    hands_played: int,
    seats: Iterable[game_pb2.SeatRecord],
    seed_commitment: str,
    stop_reason: str,
) -> game_pb2.MatchResult:
    """A match stopped before its end (``MATCH_OUTCOME_ABORTED``), with why: the score so
    far, and no seed (its deals may still be played elsewhere)."""
    return game_pb2.MatchResult(
        outcome=game_pb2.MATCH_OUTCOME_ABORTED,
        score=scoreboard_to_wire(scores, games_won, totals),
        hands_played=hands_played,
        seats=list(seats),
        seed_commitment=seed_commitment,
        stop_reason=stop_reason,
    )
