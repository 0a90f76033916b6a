"""Properties of whole random matches in every configuration (Hypothesis).

A small, independent model of the rules (written from docs/rules.md, not from the
engine) follows every match action by action and checks the engine against
it: dealing, following suit, trick winners, scores, games and match results,
replay, refusals, and what each seat's view may contain.
"""

from __future__ import annotations

import dataclasses
import enum
import random
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from rules_support import clone, snapshot

from oddtrick.rules import (
    BIDS,
    DOUBLE,
    PACK,
    PASS,
    Action,
    BidTooLow,
    Call,
    Card,
    CardNotHeld,
    Deal,
    DoubleNotAllowed,
    GameConfig,
    GameKind,
    GameState,
    HandResult,
    IllegalAction,
    MatchFormat,
    MustFollowSuit,
    NotYourTurn,
    Outcome,
    Phase,
    Rank,
    Seat,
    SeatView,
    Suit,
    TrumpSelection,
    WrongPhase,
    deal_cards,
    replay,
)

# ------------------------------------------------------------------ strategies


@st.composite
def configs(draw: st.DrawFn, game: GameKind | None = None) -> GameConfig:
    """Any valid configuration, with targets and lengths kept small enough to be quick.

    The usual choices come first in each list: Hypothesis leans towards the
    first ones, and the degenerate ones (a target of 1, one deal) stay covered.
    """
    if game is None:
        game = draw(st.sampled_from(GameKind))
    match_format = draw(
        st.sampled_from([MatchFormat.GAME, MatchFormat.DEALS, MatchFormat.RUBBER, MatchFormat.HAND])
    )
    deals = draw(st.sampled_from([6, 5, 1, 3])) if match_format is MatchFormat.DEALS else None
    if game is GameKind.CLASSIC:
        selection = draw(st.sampled_from(TrumpSelection))
        return GameConfig.classic(
            trump_selection=selection,
            no_trump_every_fifth=selection is TrumpSelection.FIXED_ROTATION and draw(st.booleans()),
            honours=draw(st.booleans()),
            target=draw(st.sampled_from([5, 7, 1, 3])),
            format=match_format,
            deals=deals,
        )
    # A rubber to 50 runs to thirty hands or more: too slow for many examples.
    targets = [26, 13, 1] if match_format is MatchFormat.RUBBER else [50, 26, 13, 1]
    return GameConfig.contract(
        doubling=draw(st.booleans()),
        target=draw(st.sampled_from(targets)),
        format=match_format,
        deals=deals,
    )


# ------------------------------------------------------------ the independent model


def winner_of(plays: list[tuple[Seat, Card]], trumps: Suit | None) -> Seat:
    """The highest trump, else the highest card of the suit led: by sorting on a key."""
    led = plays[0][1].suit

    def key(play: tuple[Seat, Card]) -> tuple[bool, bool, int]:
        card = play[1]
        return (card.suit == trumps, card.suit == led, int(card.rank))

    return sorted(plays, key=key)[-1][0]


HONOURS = (Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK)


@dataclasses.dataclass(frozen=True)
class _Expected:
    hand_number: int
    dealer: Seat
    trumps: Suit | None
    contract: tuple[Any, ...] | None
    tricks: tuple[int, int]
    points: tuple[int, int]
    honours: tuple[int, int]
    honours_barred: tuple[bool, bool]
    outcome: Outcome
    margin: int
    scores_after: tuple[int, int]
    game_won_by: int | None


@dataclasses.dataclass
class Model:
    """What docs/rules.md says the score sheet should show."""

    config: GameConfig
    seed: str
    scores: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    totals: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    games_won: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    game_hands: int = 0
    games: list[tuple[int, int, tuple[int, int], int, bool]] = dataclasses.field(default_factory=list)
    played_by_hand: dict[int, set[Card]] = dataclasses.field(default_factory=dict)
    public_by_hand: dict[int, set[Card]] = dataclasses.field(default_factory=dict)
    checked_results: set[HandResult] = dataclasses.field(default_factory=set)

    # The hand in progress.
    number: int = 0
    dealer: Seat = Seat.NORTH
    deal: Deal | None = None
    hands: dict[Seat, set[Card]] = dataclasses.field(default_factory=dict)
    trumps: Suit | None = None
    trick: list[tuple[Seat, Card]] = dataclasses.field(default_factory=list)
    tricks: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    trick_count: int = 0
    high: Call | None = None
    high_seat: Seat | None = None
    doubled: bool = False
    passes: int = 0
    calls: int = 0

    def start_hand(self, number: int) -> None:
        self.number = number
        self.dealer = Seat((number - 1) % 4)
        deal, turned, cut = deal_cards(self.seed, number, self.dealer)
        self.deal = deal
        self.hands = {seat: set(deal[seat]) for seat in Seat}
        self.trick, self.tricks, self.trick_count = [], [0, 0], 0
        self.high, self.high_seat, self.doubled, self.passes, self.calls = None, None, False, 0, 0
        self.played_by_hand[number] = set()
        public: set[Card] = set()
        config = self.config
        if config.game is GameKind.CONTRACT:
            self.trumps = None
        elif config.trump_selection is TrumpSelection.TURN_LAST_CARD:
            self.trumps = turned.suit
            public.add(turned)
        elif config.trump_selection is TrumpSelection.CUT:
            self.trumps = cut.suit
            public.add(cut)
        else:
            place = (number - 1) % (5 if config.no_trump_every_fifth else 4)
            self.trumps = None if place == 4 else (Suit.HEARTS, Suit.DIAMONDS, Suit.SPADES, Suit.CLUBS)[place]
        self.public_by_hand[number] = public

    @property
    def played(self) -> set[Card]:
        return self.played_by_hand[self.number]

    def expected_refusal(self, state: GameState, action: Action, seat: Seat | None) -> type:
        to_act = state.to_act
        if to_act is None:
            return WrongPhase
        if seat is not None and seat is not to_act:
            return NotYourTurn
        if state.phase is Phase.PLAY:
            if not isinstance(action, Card):
                return WrongPhase
            if action not in self.hands[to_act]:
                return CardNotHeld
            return MustFollowSuit
        if isinstance(action, Card):
            return WrongPhase
        if action is DOUBLE:
            return DoubleNotAllowed
        return BidTooLow

    def play(self, seat: Seat, card: Card) -> Seat | None:
        """Check and record a card; return the trick's winner when it completes."""
        hand = self.hands[seat]
        assert card in hand
        if self.trick:
            led = self.trick[0][1].suit
            if any(c.suit is led for c in hand):
                assert card.suit is led, f"{seat} played {card} holding {led.name.lower()}"
        hand.remove(card)
        self.played.add(card)
        self.trick.append((seat, card))
        if len(self.trick) < 4:
            return None
        winner = winner_of(self.trick, self.trumps)
        self.tricks[winner.side] += 1
        self.trick_count += 1
        self.trick = []
        return winner

    def call(self, seat: Seat, call: Call) -> None:
        self.calls += 1
        if call is PASS:
            self.passes += 1
        elif call is DOUBLE:
            assert self.config.doubling
            assert self.high_seat is not None
            assert self.high_seat.side is not seat.side
            assert not self.doubled
            self.doubled, self.passes = True, 0
        else:
            assert self.high is None or call.step > self.high.step
            self.high, self.high_seat, self.doubled, self.passes = call, seat, False, 0

    def finish_hand(self) -> _Expected:
        """The expected result of the hand just finished (and update the sheet)."""
        config = self.config
        target = config.game_target
        to_target = config.plays_to_target
        tricks = (self.tricks[0], self.tricks[1])
        points = [0, 0]
        honours = [0, 0]
        barred = (False, False)
        won: int | None = None
        by_honours = False
        contract = None
        if config.game is GameKind.CONTRACT:
            if self.high is None:
                outcome, margin = Outcome.THROWN_IN, 0
                assert tricks == (0, 0)
            else:
                assert self.high_seat is not None
                assert self.high.denomination is not None
                side = self.high_seat.side
                taken, level = tricks[side], self.high.level
                factor = 2 if self.doubled else 1
                made = taken >= level
                points[side] = taken * factor if made else 0
                points[1 - side] = tricks[1 - side] * factor
                outcome = Outcome.MADE if made else Outcome.FAILED
                margin = taken - level if made else level - taken
                contract = (self.high.level, self.high.denomination, self.high_seat, self.doubled)
            self._add(points)
            if to_target and max(self.scores) >= target and self.scores[0] != self.scores[1]:
                won = 0 if self.scores[0] > self.scores[1] else 1
        else:
            outcome = Outcome.ODD_TRICKS
            points = [max(0, t - 6) for t in tricks]
            margin = max(points)
            assert (points[0] > 0) != (points[1] > 0)
            if to_target:
                barred = (self.scores[0] == target - 1, self.scores[1] == target - 1)
            self._add(points)
            if to_target:
                won = self._reached(target)
            if config.honours and won is None and self.trumps is not None:
                assert self.deal is not None
                held = [0, 0]
                for seat in Seat:
                    held[seat.side] += sum(
                        1 for c in self.deal[seat] if c.suit is self.trumps and c.rank in HONOURS
                    )
                assert sum(held) == 4
                for side in (0, 1):
                    earned = {4: 4, 3: 2}.get(held[side], 0)
                    honours[side] = 0 if barred[side] else earned
                self._add(honours)
                if to_target:
                    won = self._reached(target)
                    by_honours = won is not None
        self.game_hands += 1
        scores_after = (self.scores[0], self.scores[1])
        if won is not None:
            self.games.append((len(self.games) + 1, won, scores_after, self.game_hands, by_honours))
            self.games_won[won] += 1
            if config.format is MatchFormat.RUBBER and max(self.games_won) < 2:
                self.scores = [0, 0]
                self.game_hands = 0
        return _Expected(
            hand_number=self.number,
            dealer=self.dealer,
            trumps=self.trumps,
            contract=contract,
            tricks=tricks,
            points=(points[0], points[1]),
            honours=(honours[0], honours[1]),
            honours_barred=barred,
            outcome=outcome,
            margin=margin,
            scores_after=scores_after,
            game_won_by=won,
        )

    def _add(self, points: list[int]) -> None:
        for side in (0, 1):
            self.scores[side] += points[side]
            self.totals[side] += points[side]

    def _reached(self, target: int) -> int | None:
        reached = [side for side in (0, 1) if self.scores[side] >= target]
        assert len(reached) <= 1
        return reached[0] if reached else None

    def match_over(self) -> bool:
        match self.config.format:
            case MatchFormat.HAND:
                return True
            case MatchFormat.DEALS:
                return self.number >= (self.config.deals or 0)
            case MatchFormat.GAME:
                return bool(self.games)
            case MatchFormat.RUBBER:
                return max(self.games_won) >= 2
        raise AssertionError(self.config.format)


def check_result(result: HandResult, expected: _Expected, model: Model) -> None:
    assert result.hand_number == expected.hand_number
    assert result.dealer is expected.dealer
    assert result.trumps is expected.trumps
    assert result.tricks == expected.tricks
    assert sum(result.tricks) == (0 if expected.outcome is Outcome.THROWN_IN else 13)
    assert result.points == expected.points
    assert result.honours == expected.honours
    assert result.honours_barred == expected.honours_barred
    assert result.outcome is expected.outcome
    assert result.margin == expected.margin
    assert result.scores_after == expected.scores_after
    won = result.game_won_by
    assert (None if won is None else int(won)) == expected.game_won_by
    assert result.deal == model.deal
    if expected.contract is None:
        assert result.contract is None
    else:
        assert result.contract is not None
        contract = result.contract
        assert (contract.level, contract.denomination, contract.declarer, contract.doubled) == (
            expected.contract
        )


# ------------------------------------------------------------------- the views


_LEAVES = (int, float, bool, enum.Enum, type(None), Call)
_FIELDS: dict[type, tuple[str, ...]] = {}


def walk(
    value: object, path: tuple[object, ...], found: list[tuple[tuple[object, ...], Card]], texts: list[str]
) -> None:
    """Collect every card (with where it was found) and every string inside a view."""
    kind = type(value)
    if kind is Card:
        found.append((path, value))  # type: ignore[arg-type]
    elif kind is str:
        texts.append(value)  # type: ignore[arg-type]
    elif kind is tuple or kind is list:
        for index, item in enumerate(value):  # type: ignore[arg-type]
            walk(item, (*path, index), found, texts)
    elif isinstance(value, _LEAVES):
        return
    elif isinstance(value, Deal | Mapping):
        for key in value:
            walk(value[key], (*path, key), found, texts)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS.get(kind)
        if names is None:
            names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
        for name in names:
            walk(getattr(value, name), (*path, name), found, texts)
    elif isinstance(value, frozenset | set):
        for item in sorted(value, key=repr):
            walk(item, (*path, "member"), found, texts)
    else:
        raise AssertionError(f"the view holds a {kind.__name__} at {path}: walk it too")


def cards_in(value: object) -> list[tuple[tuple[object, ...], Card]]:
    found: list[tuple[tuple[object, ...], Card]] = []
    walk(value, (), found, [])
    return found


def check_view(state: GameState, model: Model, seat: Seat | None) -> None:
    view = state.view(seat)
    assert isinstance(view, SeatView)
    own = model.hands.get(seat, set()) if seat is not None else set()
    assert set(view.hand) == own
    assert len(view.hand) == len(own)
    if seat is not None and seat is state.to_act:
        assert view.legal_actions == state.legal_actions
    else:
        assert view.legal_actions == ()
    # The hands already over: each result is immutable, so one check per result suffices.
    for result in view.hand_results:
        if result.outcome is Outcome.THROWN_IN:
            assert result.deal is None
        else:
            assert result.deal is not None
        if result in model.checked_results:
            continue
        number = result.hand_number
        allowed = model.played_by_hand[number] | model.public_by_hand[number]
        texts: list[str] = []
        found: list[tuple[tuple[object, ...], Card]] = []
        walk(result, ("hand_results", number), found, texts)
        for path, card in found:
            assert card in allowed, f"{seat} sees {card} at {path}"
        assert state.seed not in texts
        model.checked_results.add(result)
    # Everything else: the hand in progress, the scores, the match.
    allowed = own | model.played | model.public_by_hand[model.number]
    texts = []
    found = []
    for field in dataclasses.fields(view):
        if field.name != "hand_results":
            walk(getattr(view, field.name), (field.name,), found, texts)
    for path, card in found:
        assert card in allowed, f"{seat} sees {card} at {path}"
    if state.phase is Phase.MATCH_OVER:
        assert view.seed == state.seed
    else:
        assert view.seed is None
        assert state.seed not in texts
    assert view.seed_commitment == state.commitment


def check_views(state: GameState, model: Model) -> None:
    for seat in (*Seat, None):
        check_view(state, model, seat)


# ----------------------------------------------------------- refusals, replay


ALL_ACTIONS: tuple[Action, ...] = (*PACK, PASS, DOUBLE, *BIDS)


def try_illegal(state: GameState, model: Model, rng: random.Random) -> None:
    """Try one illegal action: it must be refused for the right reason, changing nothing."""
    legal = set(state.legal_actions)
    to_act = state.to_act
    if to_act is not None and legal and rng.random() < 0.3:
        action: Action = rng.choice(state.legal_actions)
        seat: Seat | None = rng.choice([s for s in Seat if s is not to_act])
    else:
        action = rng.choice([a for a in ALL_ACTIONS if a not in legal])
        seat = rng.choice([None, to_act, rng.choice(list(Seat))])
    expected = model.expected_refusal(state, action, seat)
    before = snapshot(state)
    reference = clone(state)
    with pytest.raises(IllegalAction) as caught:
        state.apply(action, seat)
    assert type(caught.value) is expected, f"{action} by {seat}: {caught.value!r}"
    assert caught.value.action is action
    assert state == reference
    assert snapshot(state) == before


def choose(state: GameState, rng: random.Random, pass_rate: float, low_bids: bool) -> Action:
    legal = state.legal_actions
    if state.phase is Phase.AUCTION:
        if rng.random() < pass_rate:
            return PASS
        others = legal[1:4] if low_bids else legal[1:]
        return rng.choice(others or legal)
    return rng.choice(legal)


# --------------------------------------------------------------- the property


def run_match(
    config: GameConfig,
    seed: str,
    k: int,
    pass_rate: float,
    low_bids: bool,
    view_rate: float,
) -> GameState:
    rng = random.Random(k)
    state = GameState(config, seed)
    model = Model(config, seed)
    model.start_hand(1)
    while True:
        # ---- a hand
        assert state.hand_number == model.number
        assert state.dealer is model.dealer
        assert state.deal == model.deal
        assert state.trumps is (None if config.game is GameKind.CONTRACT else model.trumps)
        assert state.to_act is model.dealer.left
        check_views(state, model)
        while state.phase in (Phase.AUCTION, Phase.PLAY):
            if rng.random() < 0.03:
                try_illegal(state, model, rng)
            seat = state.to_act
            assert seat is not None
            action = choose(state, rng, pass_rate, low_bids)
            phase = state.phase
            state.apply(action)
            if phase is Phase.AUCTION:
                assert isinstance(action, Call)
                model.call(seat, action)
                if state.phase is Phase.PLAY:
                    assert model.high_seat is not None
                    model.trumps = state.trumps
                    assert model.high is not None
                    assert model.high.denomination is not None
                    assert state.trumps is model.high.denomination.suit
                    assert state.to_act is model.high_seat.left
            else:
                assert isinstance(action, Card)
                winner = model.play(seat, action)
                if winner is not None:
                    assert state.tricks[-1].winner is winner
                    assert state.tricks_won == (model.tricks[0], model.tricks[1])
                    if state.phase is Phase.PLAY:
                        assert state.to_act is winner
            assert state.history[-1] == (seat, action)
            if rng.random() < view_rate:
                check_views(state, model)
        # ---- the hand is over
        if config.game is GameKind.CONTRACT and model.high is None:
            assert model.calls == 4
            assert model.played == set()
        else:
            assert model.trick_count == 13
            assert model.played == set(PACK)
            assert len(state.tricks) == 13
            played = [card for trick in state.tricks for card in trick.cards]
            assert sorted(played) == list(PACK)
        expected = model.finish_hand()
        check_result(state.hand_results[-1], expected, model)
        assert state.scores == tuple(model.scores)
        assert state.totals == tuple(model.totals)
        assert state.games_won == tuple(model.games_won)
        assert [
            (g.game_number, int(g.winner), g.scores, g.hands, g.by_honours) for g in state.game_results
        ] == model.games
        assert state.to_act is None
        assert state.legal_actions == ()
        check_views(state, model)
        if rng.random() < 0.3:
            try_illegal(state, model, rng)
            assert replay(config, seed, state.history) == state
        if model.match_over():
            break
        assert state.phase is Phase.HAND_OVER
        state.start_next_hand()
        model.start_hand(model.number + 1)
    # ---- the match is over
    assert state.phase is Phase.MATCH_OVER
    result = state.match_result
    assert result is not None
    assert result.totals == tuple(model.totals)
    assert result.games_won == tuple(model.games_won)
    assert result.hands_played == model.number
    if config.plays_to_target:
        assert max(model.games_won) == (2 if config.format is MatchFormat.RUBBER else 1)
        assert result.winner is not None
        assert int(result.winner) == (0 if model.games_won[0] > model.games_won[1] else 1)
    elif model.totals[0] == model.totals[1]:
        assert result.winner is None
    else:
        assert result.winner is not None
        assert int(result.winner) == (0 if model.totals[0] > model.totals[1] else 1)
    assert sum(model.totals) == sum(sum(r.points) + sum(r.honours) for r in state.hand_results)
    assert replay(config, seed, state.history) == state
    return state


def run_and_label(config: GameConfig, seed: str, k: int, pass_rate: float, low_bids: bool) -> None:
    state = run_match(config, seed, k, pass_rate, low_bids, view_rate=0.1)
    event(f"{config.game.value} {config.format.value}")
    event(f"hands: {min(len(state.hand_results), 9) // 3 * 3}+")
    results = state.hand_results
    if any(r.outcome is Outcome.THROWN_IN for r in results):
        event("a hand thrown in")
    if any(r.contract is not None and r.contract.doubled for r in results):
        event("a contract doubled")
    if any(r.outcome is Outcome.MADE for r in results):
        event("a contract made")
    if any(any(r.honours) for r in results):
        event("honours scored")
    if any(any(r.honours_barred) for r in results):
        event("a side one short of the target")
    if any(r.trumps is None for r in results) and config.game is GameKind.CLASSIC:
        event("a classic hand at no trumps")


SEEDS = st.text(max_size=12).map(lambda text: f"seed:{text}")
PASS_RATES = st.sampled_from([0.6, 0.8, 0.3, 0.0])


@settings(max_examples=70)
@given(config=configs(GameKind.CLASSIC), seed=SEEDS, k=st.integers(0, 2**32 - 1))
def test_random_classic_matches_follow_the_rules(config: GameConfig, seed: str, k: int) -> None:
    run_and_label(config, seed, k, 0.0, False)


@settings(max_examples=70)
@given(
    config=configs(GameKind.CONTRACT),
    seed=SEEDS,
    k=st.integers(0, 2**32 - 1),
    pass_rate=PASS_RATES,
    low_bids=st.booleans(),
)
def test_random_contract_matches_follow_the_rules(
    config: GameConfig, seed: str, k: int, pass_rate: float, low_bids: bool
) -> None:
    run_and_label(config, seed, k, pass_rate, low_bids)


@settings(max_examples=10)
@given(config=configs(), seed=st.text(max_size=8), k=st.integers(0, 2**32 - 1))
def test_every_view_at_every_step_hides_unplayed_cards(config: GameConfig, seed: str, k: int) -> None:
    """The same walk, checking all five views after every single action."""
    if config.format in (MatchFormat.GAME, MatchFormat.RUBBER) and config.game is GameKind.CONTRACT:
        config = dataclasses.replace(config, target=min(config.game_target, 13))
    run_match(config, f"views:{seed}", k, 0.6, True, view_rate=1.0)


def test_the_model_catches_a_wrong_winner() -> None:
    """The second, independent winner function: spot checks by hand."""
    plays = [
        (Seat.EAST, Card.parse("AS")),
        (Seat.SOUTH, Card.parse("3H")),
        (Seat.WEST, Card.parse("JH")),
        (Seat.NORTH, Card.parse("2S")),
    ]
    assert winner_of(plays, Suit.HEARTS) is Seat.WEST
    assert winner_of(plays, None) is Seat.EAST
    assert winner_of(plays, Suit.CLUBS) is Seat.EAST
    overtaken = [*plays[:2], (Seat.WEST, Card.parse("KS")), plays[3]]
    assert winner_of(overtaken, Suit.HEARTS) is Seat.SOUTH
