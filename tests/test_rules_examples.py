"""The named examples of docs/rules.md and the seed documents: play, the auction and refusals.

Positions are built with rigged deals (``rules_support.rigged``) or from seeded
deals whose details do not matter to the rule under test.
"""

from __future__ import annotations

import random

import pytest
from rules_support import (
    NS,
    E,
    N,
    Rig,
    S,
    W,
    build_deal,
    calls,
    clone,
    finish_hand,
    new_state,
    rigged,
    snapshot,
)

from oddtrick.rules import (
    BIDS,
    DOUBLE,
    PASS,
    BidTooLow,
    Call,
    Card,
    CardNotHeld,
    Deal,
    Denomination,
    DoubleNotAllowed,
    GameConfig,
    GameState,
    IllegalAction,
    MatchFormat,
    MustFollowSuit,
    NotYourTurn,
    Outcome,
    Phase,
    Reason,
    Seat,
    Suit,
    WrongPhase,
)

CONTRACT = GameConfig.contract(format=MatchFormat.DEALS, deals=4)
DOUBLING = GameConfig.contract(doubling=True, format=MatchFormat.DEALS, deals=4)


def card(text: str) -> Card:
    return Card.parse(text)


def assert_refused(
    state: GameState, action: Card | Call, error: type[IllegalAction], seat: Seat | None = None
) -> IllegalAction:
    """``action`` raises ``error`` and leaves every part of ``state`` as it was."""
    before = clone(state)
    inside = snapshot(state)
    with pytest.raises(error) as caught:
        state.apply(action, seat)
    assert state == before
    assert snapshot(state) == inside
    assert caught.value.reason is error.reason
    assert caught.value.action is action
    return caught.value


# ------------------------------------------------------------ the turned card


def test_turned_card_is_the_dealers_and_shown_to_everyone() -> None:
    state = GameState(GameConfig.classic(), "turned card")
    turned = state.turned_card
    assert turned is not None
    assert state.dealer is N
    assert turned in state.hand_of(N)
    assert state.trumps is turned.suit
    for seat in (E, S, W, None):
        view = state.view(seat)
        assert view.turned_card is turned
        assert view.turned_card_face_up
        assert turned not in view.hand
    assert turned in state.view(N).hand


def test_turned_card_counts_for_following_suit() -> None:
    # North deals and holds one spade, the turned 5♠: a spade lead forces it out.
    deal = build_deal({N: "5S", E: "AS"}, {N: "S"})
    with rigged({1: Rig(deal, turned=card("5S"))}):
        state = new_state(GameConfig.classic(), {1: Rig(deal)})
        assert state.trumps is Suit.SPADES
        state.apply(card("AS"), E)
        state.apply(state.legal_actions[0])
        state.apply(state.legal_actions[0])
        assert state.to_act is N
        assert state.legal_actions == (card("5S"),)
        assert_refused(state, card(_any_non_spade(state.hand_of(N))), MustFollowSuit, N)


def _any_non_spade(hand: tuple[Card, ...]) -> str:
    return str(next(c for c in hand if c.suit is not Suit.SPADES))


def test_dealer_may_keep_the_turned_card_for_a_later_trick() -> None:
    deal = build_deal({N: "5S 2H", E: "AH 2S", S: "3H", W: "4H"})
    with rigged({1: Rig(deal, turned=card("5S"))}):
        state = new_state(GameConfig.classic(), {1: Rig(deal)})
        state.apply(card("AH"), E)
        state.apply(card("3H"), S)
        state.apply(card("4H"), W)
        # Face up until the dealer plays to the first trick …
        assert state.turned_card_face_up
        assert state.view(E).turned_card_face_up
        state.apply(card("2H"), N)
        # … then an ordinary card of the dealer's hand, still known to all.
        assert not state.turned_card_face_up
        assert not state.view(E).turned_card_face_up
        assert state.view(E).turned_card == card("5S")
        assert card("5S") in state.hand_of(N)
        assert state.tricks[0].winner is E
        state.apply(card("2S"), E)
        state.apply(state.legal_actions[0])
        state.apply(state.legal_actions[0])
        assert card("5S") in state.legal_actions
        state.apply(card("5S"), N)
        assert card("5S") not in state.hand_of(N)
        assert state.tricks[1].cards[3] is card("5S")


# -------------------------------------------------------------- following suit


def follow_suit_deal() -> Deal:
    # West A♣, North 7♣, East Q♣; South holds the 3♣ and diamonds (trumps).
    return build_deal({W: "AC", N: "7C", E: "QC", S: "3C 2D 5D"})


def test_must_follow_suit_seed_example_contract() -> None:
    """Diamonds trump, West leads A♣, North 7♣, East Q♣: South holds a club and must play one."""
    deal = follow_suit_deal()
    with rigged({1: Rig(deal)}):
        state = new_state(GameConfig.contract(), {1: Rig(deal)})
        calls(state, "pass 7D pass pass pass")
        assert state.contract is not None
        assert state.contract.declarer is S
        assert state.trumps is Suit.DIAMONDS
        _check_follow_suit_example(state)


def test_must_follow_suit_seed_example_classic() -> None:
    """The same trick in classic Whist: deal 3, South deals and turns a diamond."""
    deal = follow_suit_deal()
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=3)
    rigs = {3: Rig(deal, turned=card("2D"))}
    with rigged(rigs):
        state = new_state(config, rigs)
        rng = random.Random(3)
        for _ in range(2):
            finish_hand(state, rng)
            state.start_next_hand()
        assert (state.hand_number, state.dealer) == (3, S)
        assert state.deal == deal
        assert state.trumps is Suit.DIAMONDS
        _check_follow_suit_example(state)


def _check_follow_suit_example(state: GameState) -> None:
    assert state.to_act is W
    state.apply(card("AC"), W)
    state.apply(card("7C"), N)
    state.apply(card("QC"), E)
    assert all(c.suit is Suit.CLUBS for c in state.legal_actions)
    error = assert_refused(state, card("2D"), MustFollowSuit, S)
    assert isinstance(error, MustFollowSuit)
    assert error.suit is Suit.CLUBS
    assert "clubs" in str(error)
    assert "2D" in str(error)
    state.apply(card("3C"), S)
    assert state.tricks[0].winner is W
    assert state.to_act is W


@pytest.mark.parametrize(
    ("west", "winner"),
    [("5C", S), ("JH", W)],
    ids=["three-of-trumps-beats-the-ace-led", "a-later-higher-trump-beats-it"],
)
def test_trump_beats_the_suit_led_and_higher_trump_beats_lower(west: str, winner: Seat) -> None:
    """Spades led, South has none, hearts trump: South's 3♥ beats the A♠;
    a later J♥ (West, also void in spades) beats the 3♥."""
    deal = build_deal({N: "KH 2S", E: "AS", S: "3H", W: "JH 5C"}, {S: "S", W: "S"})
    with rigged({1: Rig(deal, turned=card("KH"))}):
        state = new_state(GameConfig.classic(), {1: Rig(deal)})
        assert state.trumps is Suit.HEARTS
        for seat, played in ((E, "AS"), (S, "3H"), (W, west), (N, "2S")):
            state.apply(card(played), seat)
        assert state.tricks[0].winner is winner
        assert state.to_act is winner
        assert state.tricks_won == ((1, 0) if winner.side is NS else (0, 1))


def test_a_void_player_need_not_trump() -> None:
    deal = build_deal({N: "KH 2S", E: "AS", S: "3H 4C", W: "5C"}, {S: "S", W: "S"})
    with rigged({1: Rig(deal, turned=card("KH"))}):
        state = new_state(GameConfig.classic(), {1: Rig(deal)})
        state.apply(card("AS"), E)
        assert card("4C") in state.legal_actions
        assert card("3H") in state.legal_actions
        state.apply(card("4C"), S)
        state.apply(card("5C"), W)
        state.apply(card("2S"), N)
        assert state.tricks[0].winner is E


# ------------------------------------------------------------------- the lead


def test_dealers_left_leads_the_first_trick_in_classic() -> None:
    state = GameState(GameConfig.classic(format=MatchFormat.DEALS, deals=5), "first lead")
    rng = random.Random(0)
    for number, dealer in enumerate((N, E, S, W, N), 1):
        assert (state.hand_number, state.dealer) == (number, dealer)
        assert state.phase is Phase.PLAY
        assert state.to_act is dealer.left
        assert state.current_trick == ()
        finish_hand(state, rng)
        assert state.hand_results[-1].dealer is dealer
        if number < 5:
            state.start_next_hand()
    assert state.phase is Phase.MATCH_OVER


@pytest.mark.parametrize("declarer", list(Seat))
def test_declarers_left_leads_the_first_trick_in_contract(declarer: Seat) -> None:
    state = GameState(CONTRACT, "declarer lead")
    # East calls first (North deals); passes until the declarer bids 7H.
    for _ in range((declarer - E) % 4):
        state.apply(PASS)
    state.apply(Call.parse("7H"), declarer)
    calls(state, "pass pass pass")
    assert state.phase is Phase.PLAY
    assert state.contract is not None
    assert state.contract.declarer is declarer
    assert state.to_act is declarer.left


def test_winner_of_a_trick_leads_the_next() -> None:
    state = GameState(GameConfig.classic(), "winner leads")
    rng = random.Random(1)
    for _ in range(13):
        for _ in range(4):
            state.apply(rng.choice(state.legal_actions))
        if state.phase is Phase.PLAY:
            assert state.to_act is state.tricks[-1].winner
    leaders = [trick.leader for trick in state.tricks]
    winners = [trick.winner for trick in state.tricks]
    assert leaders[1:] == winners[:-1]


# ---------------------------------------------------------------- the auction


def test_auction_starts_at_dealers_left() -> None:
    state = GameState(CONTRACT, "auction order")
    assert state.phase is Phase.AUCTION
    assert state.to_act is E
    for seat in (E, S, W):
        assert state.to_act is seat
        state.apply(PASS)
    assert state.to_act is N


def test_bid_ladder_has_35_steps_from_7c_to_13nt() -> None:
    assert len(BIDS) == 35
    assert str(BIDS[0]) == "7C"
    assert str(BIDS[-1]) == "13NT"
    denominations = list(Denomination)
    expected = [f"{level}{d.letters}" for level in range(7, 14) for d in denominations]
    assert [str(bid) for bid in BIDS] == expected
    assert [bid.step for bid in BIDS] == list(range(35))


def test_seven_no_trumps_beats_seven_spades_and_eight_clubs_beats_seven_no_trumps() -> None:
    assert Call.parse("7S").step < Call.parse("7NT").step < Call.parse("8C").step
    state = GameState(CONTRACT, "bid order")
    calls(state, "7S 7NT")
    assert Call.parse("7S") not in state.legal_actions
    assert Call.parse("8C") in state.legal_actions
    error = assert_refused(state, Call.parse("7S"), BidTooLow)
    assert isinstance(error, BidTooLow)
    assert error.highest is Call.parse("7NT")
    calls(state, "8C")
    assert state.auction[-1] == (W, Call.parse("8C"))


@pytest.mark.parametrize("low", ["8H", "7NT", "8C", "7C"])
def test_bid_too_low_names_the_current_bid(low: str) -> None:
    state = GameState(CONTRACT, "too low")
    calls(state, "8H")
    error = assert_refused(state, Call.parse(low), BidTooLow)
    assert isinstance(error, BidTooLow)
    assert error.highest is Call.parse("8H")
    assert "8H" in str(error)
    assert low in str(error)


def test_a_player_who_passed_may_bid_later() -> None:
    state = GameState(CONTRACT, "pass then bid")
    calls(state, "pass 7C pass pass")
    assert state.to_act is E
    assert Call.parse("7D") in state.legal_actions
    calls(state, "7D pass pass pass")
    assert state.contract is not None
    assert (state.contract.declarer, str(state.contract.bid)) == (E, "7D")


def test_four_passes_throw_the_hand_in_and_the_deal_passes_left() -> None:
    state = GameState(CONTRACT, "thrown in")
    calls(state, "pass pass pass")
    assert state.phase is Phase.AUCTION
    calls(state, "pass")
    assert state.phase is Phase.HAND_OVER
    assert state.to_act is None
    assert state.legal_actions == ()
    result = state.hand_results[-1]
    assert result.outcome is Outcome.THROWN_IN
    assert result.contract is None
    assert result.points == (0, 0)
    assert result.tricks == (0, 0)
    assert result.scores_after == (0, 0)
    assert state.scores == state.totals == (0, 0)
    assert result.describe() == "thrown in (four passes): NS 0, EW 0"
    # The cards were never played, so no player or spectator is shown them.
    assert result.deal == state.deal
    for seat in (*Seat, None):
        assert state.view(seat).hand_results[-1].deal is None
    state.start_next_hand()
    assert (state.hand_number, state.dealer, state.to_act) == (2, E, S)


def test_three_passes_after_a_bid_end_the_auction() -> None:
    state = GameState(CONTRACT, "three passes")
    calls(state, "pass 7C pass pass")
    assert state.phase is Phase.AUCTION
    calls(state, "pass")
    assert state.phase is Phase.PLAY
    assert state.contract is not None
    assert (state.contract.declarer, str(state.contract.bid), state.contract.doubled) == (
        S,
        "7C",
        False,
    )
    assert state.trumps is Suit.CLUBS


def test_three_passes_after_a_double_end_the_auction_doubled() -> None:
    state = GameState(DOUBLING, "double then passes")
    calls(state, "7C double pass pass")
    assert state.phase is Phase.AUCTION
    calls(state, "pass")
    assert state.phase is Phase.PLAY
    assert state.contract is not None
    assert (state.contract.declarer, state.contract.doubled) == (E, True)
    assert str(state.contract) == "7C doubled by East"
    assert state.to_act is S


def test_no_trumps_contract_has_no_trumps() -> None:
    state = GameState(CONTRACT, "no trumps")
    calls(state, "7NT pass pass pass")
    assert state.contract is not None
    assert state.contract.trumps is None
    assert state.trumps is None


@pytest.mark.parametrize("new_bid", ["pass 7H", "7D"], ids=["by-partner", "by-the-doubled-side"])
def test_a_new_bid_cancels_a_double(new_bid: str) -> None:
    state = GameState(DOUBLING, "cancel double")
    calls(state, f"7C double {new_bid} pass pass pass")
    assert state.phase is Phase.PLAY
    assert state.contract is not None
    assert not state.contract.doubled
    assert str(state.contract.bid) == new_bid.split()[-1]


def test_a_new_bid_after_a_cancelled_double_may_be_doubled_again() -> None:
    state = GameState(DOUBLING, "double again")
    calls(state, "7C double 7D")
    assert DOUBLE in state.legal_actions  # North, an opponent of West
    calls(state, "double pass pass pass")
    assert state.contract is not None
    assert (str(state.contract.bid), state.contract.doubled) == ("7D", True)


def test_there_is_no_redouble() -> None:
    state = GameState(DOUBLING, "no redouble")
    calls(state, "7C double")
    assert DOUBLE not in state.legal_actions
    error = assert_refused(state, DOUBLE, DoubleNotAllowed)
    assert "already doubled" in str(error)
    assert "redouble" in str(error)
    calls(state, "pass")
    # North, on the doubling side, cannot double again either.
    error = assert_refused(state, DOUBLE, DoubleNotAllowed)
    assert "already doubled" in str(error)


def test_the_declaring_side_cannot_double_its_own_bid() -> None:
    state = GameState(DOUBLING, "own side")
    calls(state, "7C pass")
    assert state.to_act is W
    assert DOUBLE not in state.legal_actions
    error = assert_refused(state, DOUBLE, DoubleNotAllowed)
    assert "own side" in str(error)
    assert isinstance(error, DoubleNotAllowed)
    assert "own side" in error.why


def test_double_refused_before_any_bid() -> None:
    state = GameState(DOUBLING, "nothing to double")
    assert DOUBLE not in state.legal_actions
    error = assert_refused(state, DOUBLE, DoubleNotAllowed)
    assert "no bid" in str(error)


def test_double_refused_when_doubling_is_off() -> None:
    state = GameState(CONTRACT, "doubling off")
    calls(state, "7C")
    assert DOUBLE not in state.legal_actions
    error = assert_refused(state, DOUBLE, DoubleNotAllowed)
    assert "doubling is off" in str(error)


# ------------------------------------------------------------------- refusals


def test_not_your_turn() -> None:
    state = GameState(GameConfig.classic(), "turns")
    assert state.to_act is E
    mine = state.hand_of(S)[0]
    error = assert_refused(state, mine, NotYourTurn, S)
    assert isinstance(error, NotYourTurn)
    assert error.to_act is E
    assert error.seat is S
    assert "East's turn" in str(error)
    assert not state.is_legal(state.legal_actions[0], S)
    assert state.is_legal(state.legal_actions[0], E)


def test_not_your_turn_in_the_auction() -> None:
    state = GameState(CONTRACT, "auction turns")
    error = assert_refused(state, PASS, NotYourTurn, N)
    assert "North tried pass" in str(error)


def test_card_not_held() -> None:
    state = GameState(GameConfig.classic(), "not held")
    foreign = state.hand_of(W)[0]
    error = assert_refused(state, foreign, CardNotHeld)
    assert str(foreign) in str(error)
    assert "East does not hold" in str(error)
    # A card already played is not held either.
    played = state.legal_actions[0]
    state.apply(played)
    for _ in range(3):
        state.apply(state.legal_actions[0])
    assert state.to_act is not None
    assert_refused(state, played, CardNotHeld)


def test_card_refused_during_the_auction() -> None:
    state = GameState(CONTRACT, "card in auction")
    error = assert_refused(state, state.hand_of(E)[0], WrongPhase)
    assert "auction" in str(error)


def test_call_refused_during_play() -> None:
    state = GameState(GameConfig.classic(), "call in play")
    for call in (PASS, DOUBLE, Call.parse("7C")):
        error = assert_refused(state, call, WrongPhase)
        assert "play" in str(error)


@pytest.mark.parametrize("config", [GameConfig.classic(format=MatchFormat.DEALS, deals=2), CONTRACT])
def test_nothing_is_accepted_once_the_hand_is_over(config: GameConfig) -> None:
    state = GameState(config, "hand over")
    finish_hand(state, random.Random(5))
    assert state.phase is Phase.HAND_OVER
    anything = [PASS, DOUBLE, Call.parse("7C"), Card.parse("AS"), *state.hand_of(N)[:1]]
    for action in anything:
        assert_refused(state, action, WrongPhase)
        for seat in Seat:
            assert_refused(state, action, WrongPhase, seat)


def test_nothing_is_accepted_once_the_match_is_over() -> None:
    state = GameState(GameConfig.classic(format=MatchFormat.HAND), "match over")
    finish_hand(state, random.Random(2))
    assert state.phase is Phase.MATCH_OVER
    assert_refused(state, Card.parse("AS"), WrongPhase)
    with pytest.raises(WrongPhase):
        state.start_next_hand()


def test_next_hand_cannot_be_dealt_mid_hand() -> None:
    state = GameState(GameConfig.classic(), "too early")
    before = clone(state)
    with pytest.raises(WrongPhase):
        state.start_next_hand()
    assert state == before


def test_a_refusal_reason_is_a_stable_code() -> None:
    assert {reason.value for reason in Reason} == {
        "not_your_turn",
        "wrong_phase",
        "card_not_held",
        "must_follow_suit",
        "bid_too_low",
        "double_not_allowed",
    }


def test_non_actions_are_a_type_error_not_a_refusal() -> None:
    state = GameState(GameConfig.classic(), "type error")
    before = clone(state)
    with pytest.raises(TypeError, match="not an action"):
        state.apply("AS")  # type: ignore[arg-type]
    assert state == before


def test_either_opponent_may_double_while_the_bid_stands() -> None:
    state = GameState(DOUBLING, "late double")
    calls(state, "7C pass pass")
    assert state.to_act is N
    assert DOUBLE in state.legal_actions
    calls(state, "double pass pass pass")
    assert state.contract is not None
    assert (state.contract.declarer, state.contract.doubled) == (E, True)


def test_legal_actions_come_sorted() -> None:
    state = GameState(DOUBLING, "sorted")
    assert state.legal_actions == (PASS, *BIDS)
    calls(state, "9H")
    assert state.legal_actions == (PASS, DOUBLE, *BIDS[BIDS.index(Call.parse("9S")) :])
    classic = GameState(GameConfig.classic(), "sorted cards")
    legal = classic.legal_actions
    assert list(legal) == sorted(legal, key=lambda c: (c.suit, c.rank))
    assert legal == classic.hand_of(E)


def test_dealing_the_next_hand_too_early_says_so():
    state = GameState(GameConfig.classic(), "x")
    with pytest.raises(WrongPhase, match="the next hand cannot be dealt now: the match is in the play phase"):
        state.start_next_hand()
