"""A finished match, hand by hand and card by card, re-created from its log.

The log holds no deals: the seed revealed on its last line re-creates them, and
every logged action is re-applied through the rules engine, which is what says
who won each trick and what each hand scored. A log whose actions the rules
refuse, or whose seed does not match its commitment, is not replayed at all.

A *position* in a hand is how many cards have been played (0: the auction is
over, nobody has played; 52: the hand is over); the auction is shown whole at
every position. ``?hand=3&card=17`` on the web page is hand 3, position 17.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from oddtrick._drive import replay_actions
from oddtrick._log_records import (
    LOG_FORMAT,
    ActionRecord,
    MalformedRecord,
    MatchEnd,
    MatchStart,
    Record,
    Refusal,
    SeatEvent,
    read_records,
)
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.rules import (
    Action,
    Call,
    CallMade,
    Card,
    CardPlayed,
    Contract,
    Deal,
    GameConfig,
    GameKind,
    GameResult,
    GameState,
    HandResult,
    HandStarted,
    MatchEvent,
    MatchResult,
    Phase,
    RulesError,
    Seat,
    Suit,
    commitment,
    sort_cards,
)
from oddtrick.rules._words import fault_text, one_line
from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.play.matchlog import logged_action, logged_seat


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    """Something that went wrong for a seat, at the step it happened: the fault of an action
    the referee made for it (``timeout``, ``clock``, ``illegal``, ``disconnected``,
    ``forfeited``), the bot's own code failing (``bot_error``, with its message), an answer
    refused (``refusal``: the action, the rules' reason), or its connection dropping, coming
    back or being forfeited (``disconnect``, ``reconnect``, ``forfeit``). The log writes the
    records of the last four before the action they precede, so that is their step."""

    kind: str
    seat: Seat
    detail: str = ""
    """The bot's error message, or the refusal's reason and message."""
    action: str | None = None
    """The refused action, as the log writes actions (a refusal that held one)."""

    @property
    def text(self) -> str:
        """The fault in words, with its detail."""
        words = fault_text(self.kind)
        refused = f" {self.action}" if self.action else ""
        if self.kind == "refusal":
            words = f"the referee refused{refused or ' an answer'}"
        return f"{words}: {self.detail}" if self.detail else words


@dataclasses.dataclass(frozen=True, slots=True)
class CallStep:
    """One call of the auction, as logged."""

    seat: Seat
    call: Call
    think_ms: int | None = None
    fault: str | None = None
    comment: str | None = None
    clock_ms: int | None = None
    """The seat's time bank after the call, in a match with a clock."""
    bot_think_ms: int | None = None
    """The bot's own measure of its thinking, when it reported one (``think_ms`` less it is lag)."""
    faults: tuple[Fault, ...] = ()
    """Every fault at this call, in the order logged (:class:`Fault`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class PlayStep:
    """One card played, with what the rules made of it.

    ``trick`` is the trick's number (1-13); ``winner`` is set on the card that
    completes a trick; ``tricks`` is each side's tricks once this card is played.
    """

    seat: Seat
    card: Card
    trick: int
    winner: Seat | None
    tricks: tuple[int, int]
    think_ms: int | None = None
    fault: str | None = None
    comment: str | None = None
    clock_ms: int | None = None
    """The seat's time bank after the card, in a match with a clock."""
    bot_think_ms: int | None = None
    """The bot's own measure of its thinking, when it reported one (``think_ms`` less it is lag)."""
    faults: tuple[Fault, ...] = ()
    """Every fault at this card, in the order logged (:class:`Fault`)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """A moment of a hand: what each seat still holds, the trick on the table."""

    hand: int
    card: int
    """Cards played so far (0 … the hand's number of plays)."""
    holding: Mapping[Seat, tuple[Card, ...]]
    trick: tuple[tuple[Seat, Card], ...]
    """The cards of the trick in progress, or of the trick just completed."""
    trick_number: int
    """The trick shown (0 before the first card)."""
    trick_winner: Seat | None
    """Set when the trick shown is complete."""
    tricks: tuple[int, int]
    """Tricks taken by each side so far."""
    to_play: Seat | None
    """Who plays next (``None`` when the hand is over)."""


@dataclasses.dataclass(frozen=True)
class HandReplay:
    """One hand of the match: the deal, the auction, the play and the result."""

    number: int
    game_number: int
    dealer: Seat
    deal: Deal
    trumps: Suit | None
    turned_card: Card | None
    cut_card: Card | None
    contract: Contract | None
    calls: tuple[CallStep, ...]
    plays: tuple[PlayStep, ...]
    first_leader: Seat | None
    result: HandResult | None
    """``None`` for a hand the log stops in."""
    game_result: GameResult | None

    @property
    def positions(self) -> int:
        """The last position: the number of cards played."""
        return len(self.plays)

    def position(self, card: int) -> Position:
        """The hand after ``card`` cards (clamped to 0 … :attr:`positions`)."""
        card = max(0, min(card, len(self.plays)))
        played = {step.card for step in self.plays[:card]}
        holding = {seat: tuple(c for c in self.deal[seat] if c not in played) for seat in Seat}
        if card == 0:
            return Position(self.number, 0, holding, (), 0, None, (0, 0), self.first_leader)
        last = self.plays[card - 1]
        start = (last.trick - 1) * 4
        trick = tuple((step.seat, step.card) for step in self.plays[start:card])
        if card < len(self.plays):
            to_play: Seat | None = self.plays[card].seat
        else:
            to_play = None
        return Position(self.number, card, holding, trick, last.trick, last.winner, last.tricks, to_play)

    def trick_start(self, trick: int) -> int:
        """The position just before trick ``trick`` (1-based) is led, clamped to the hand."""
        return max(0, min((trick - 1) * 4, len(self.plays)))

    @property
    def tricks(self) -> list[tuple[int, tuple[PlayStep, ...]]]:
        """The completed and partial tricks: (number, the cards in the order played)."""
        grouped: dict[int, list[PlayStep]] = {}
        for step in self.plays:
            grouped.setdefault(step.trick, []).append(step)
        return [(number, tuple(steps)) for number, steps in grouped.items()]


@dataclasses.dataclass(frozen=True)
class MatchReplay:
    """A match re-created from its log."""

    match_id: str
    config: GameConfig
    players: Mapping[Seat, str]
    seed: str
    started_at_ms: int | None
    hands: tuple[HandReplay, ...]
    result: MatchResult | None
    finished: bool
    deal_set: str | None = None
    """Which fixed deal set the deals came from (name, size, digest), or None: from the seed."""
    events: tuple[MatchEvent, ...] = ()
    """The rules' events of the whole match in order, as a spectator was shown them (less
    the match's opening, which is the table's): the one presentation's event list."""
    late_faults: tuple[Fault, ...] = ()
    """Faults logged after the last action (a seat that dropped as the match ended)."""

    @property
    def faults(self) -> list[Fault]:
        """Every fault of the match, in order."""
        found: list[Fault] = []
        for hand in self.hands:
            for call in hand.calls:
                found.extend(call.faults)
            for play in hand.plays:
                found.extend(play.faults)
        return found + list(self.late_faults)

    def fault_counts(self) -> dict[Seat, dict[str, int]]:
        """Each seat's faults by kind (a seat with none is absent): the faults panel."""
        counts: dict[Seat, dict[str, int]] = {}
        for fault in self.faults:
            kinds = counts.setdefault(fault.seat, {})
            kinds[fault.kind] = kinds.get(fault.kind, 0) + 1
        return counts

    @property
    def classic(self) -> bool:
        return self.config.game is GameKind.CLASSIC

    def hand(self, number: int) -> HandReplay:
        """Hand ``number`` (1-based); raises :class:`ReplayError` naming the hands there are."""
        if not 1 <= number <= len(self.hands):
            raise ReplayError(f"no hand {number}: this match has hands 1 to {len(self.hands)}")
        return self.hands[number - 1]


def replay_records(records: Iterable[Record], name: str | None = None) -> MatchReplay:
    """Re-create the match a log's records describe (read by the one reader,
    :mod:`oddtrick._log_records`); raises :class:`ReplayError`, naming ``name`` for a line
    that is not a record."""
    try:
        read = list(records)
    except MalformedRecord as error:
        raise ReplayError(str(error) if name is None else f"{name}, {error}") from None
    start = read[0] if read else None
    if not isinstance(start, MatchStart):
        raise ReplayError("not a match log: the first line is not a match_start record")
    if start.format != LOG_FORMAT:
        raise ReplayError(f"unknown log format {start.format!r} (this version reads {LOG_FORMAT})")
    end = read[-1]
    if not isinstance(end, MatchEnd) or not end.seed:
        raise ReplayError(
            "the match did not finish (no match_end line with the seed): its deals cannot be "
            "re-created, since the seed is revealed only at the end"
        )
    seed = str(end.seed)
    if commitment(seed) != start.seed_commitment:
        raise ReplayError("the revealed seed does not match the commitment published at the start")
    try:
        config = GameConfig.from_dict(start.config)
        players = {Seat.parse(seat): str(info.get("name", "?")) for seat, info in start.players.items()}
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise ReplayError(f"the match_start line is malformed: {error}") from None
    try:
        fixed = deals_from_log(start, end)
    except DealSetError as error:
        raise ReplayError(str(error)) from None
    state = GameState(config, seed, deals=fixed)
    builder = _Builder(state)
    builder.replay(read[1:-1])
    hands = builder.finish()
    return MatchReplay(
        match_id=str(start.match_id),
        config=config,
        players=players,
        seed=seed,
        started_at_ms=start.started_at_ms,
        hands=tuple(hands),
        result=state.match_result,
        finished=state.phase is Phase.MATCH_OVER,
        deal_set=deal_set_text(start),
        events=tuple(builder.events),
        late_faults=tuple(builder.pending),
    )


def deal_set_text(start: MatchStart) -> str | None:
    """How a log's match_start names its fixed deal set, for people: ``name (N deals, sha256 …)``."""
    given = start.extra.get("deal_set")
    if not isinstance(given, dict):
        return None
    return f"{given.get('name', '?')} ({given.get('size', '?')} deals, sha256 {given.get('sha256', '')})"


def replay_log(path: Path) -> MatchReplay:
    """The match of the log at ``path``; raises :class:`ReplayError` naming the file."""
    try:
        return replay_records(read_records(path))
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
    except ReplayError as error:
        raise ReplayError(f"{path}: {error}") from None


class _Builder:
    """Collects each hand as the drive loop (``oddtrick._drive``) re-applies the log's actions."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.hands: list[HandReplay] = []
        self._record: ActionRecord | None = None
        """The action line read last: the one applied, or refused."""
        self.events: list[MatchEvent] = [state.hand_started()]
        self.pending: list[Fault] = []
        """Faults logged since the last action: they belong to the next."""
        self._before: dict[int, list[Fault]] = {}
        """The faults logged before each action record (by its ``id``)."""
        self._begin()

    def _begin(self) -> None:
        state = self.state
        self._number = state.hand_number
        self._game = state.game_number
        self._dealer = state.dealer
        self._deal = state.deal
        self._turned = state.turned_card
        self._cut = state.cut_card
        self._trumps = state.trumps
        self._calls: list[CallStep] = []
        self._plays: list[PlayStep] = []
        self._first: Seat | None = state.to_act if state.phase is Phase.PLAY else None

    def _sort(self, records: Sequence[Record]) -> list[ActionRecord]:
        """The action records, each with the faults logged before it kept for its step."""
        actions: list[ActionRecord] = []
        for record in records:
            if isinstance(record, ActionRecord):
                self._before[id(record)], self.pending = self.pending, []
                actions.append(record)
            elif isinstance(record, Refusal):
                detail = f"{record.reason}: {record.message}"
                self.pending.append(Fault("refusal", Seat.parse(record.seat), detail, record.action))
            elif isinstance(record, SeatEvent):
                self.pending.append(Fault(record.kind, Seat.parse(record.seat)))
        return actions

    def replay(self, records: Sequence[Record]) -> None:
        """Re-apply the log's action records, to where the log ends."""
        state = self.state
        lines = self._sort(records)
        try:
            for events in replay_actions(state, lines, self._read, before_deal=self._close):
                self.events.extend(events)
                if isinstance(events[0], HandStarted):
                    self._begin()
                else:
                    self._applied(events[0])
        except RulesError as error:
            record = self._record
            assert record is not None
            actions = len(self._calls) + len(self._plays) + 1  # the one refused, of this hand
            raise ReplayError(
                f"hand {state.hand_number}, action {actions} ({record.seat} {record.action!s}) "
                f"is against the rules: {error}"
            ) from None

    def _read(self, state: GameState, record: ActionRecord) -> tuple[Seat, Action]:
        self._record = record
        # As logged: a damaged line may hold anything.
        return logged_seat(str(record.seat)), logged_action(str(record.action), state)

    def _applied(self, event: MatchEvent) -> None:
        """One logged action, applied: ``event`` is its call or card."""
        state, record = self.state, self._record
        assert record is not None
        think, fault, comment, bank = record.think_ms, record.fault, record.comment, record.clock_ms
        own = record.bot_think_ms
        faults = self._faults(logged_seat(str(record.seat)), record)
        if isinstance(event, CallMade):
            self._calls.append(CallStep(event.seat, event.call, think, fault, comment, bank, own, faults))
            if state.phase is Phase.PLAY:
                self._first = state.to_act
                self._trumps = state.trumps
            return
        assert isinstance(event, CardPlayed)
        done = state.tricks
        trick = event.trick_number
        winner = done[-1].winner if len(done) == trick else None
        self._plays.append(
            PlayStep(
                event.seat,
                event.card,
                trick,
                winner,
                state.tricks_won,
                think,
                fault,
                comment,
                bank,
                own,
                faults,
            )
        )

    def _faults(self, seat: Seat, record: ActionRecord) -> tuple[Fault, ...]:
        """The faults at one action: those logged before it, then its own (the referee's
        fallback, or the bot's error with its message)."""
        faults = self._before.pop(id(record), [])
        if record.fault:
            faults.append(Fault(str(record.fault), seat))
        if record.bot_error is not None:
            faults.append(Fault("bot_error", seat, one_line(str(record.bot_error))))
        return tuple(faults)

    def _close(self, state: GameState) -> None:
        """The hand is over (before the next is dealt) or the log ends: keep it."""
        results = state.hand_results
        result = results[self._number - 1] if len(results) >= self._number else None
        game = None
        if result is not None and result.game_won_by is not None:
            game = next((g for g in state.game_results if g.game_number == self._game), None)
        self.hands.append(
            HandReplay(
                number=self._number,
                game_number=self._game,
                dealer=self._dealer,
                deal=self._deal,
                trumps=self._trumps,
                turned_card=self._turned,
                cut_card=self._cut,
                contract=state.contract,
                calls=tuple(self._calls),
                plays=tuple(self._plays),
                first_leader=self._first,
                result=result,
                game_result=game,
            )
        )

    def finish(self) -> list[HandReplay]:
        self._close(self.state)
        return self.hands


def holding_text(cards: Iterable[Card]) -> list[tuple[Suit, list[Card]]]:
    """A holding by suit, spades first, high cards first: how card players lay out a hand."""
    ordered = sort_cards(cards)
    return [(suit, [c for c in reversed(ordered) if c.suit is suit]) for suit in reversed(Suit)]
