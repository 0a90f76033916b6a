"""The rules API as a third-party harness uses it: clear refusals, truthful values,
and games started from a chosen deal or a position part-way through a hand."""

from __future__ import annotations

import pytest

from oddtrick import FakeReferee, play_local
from oddtrick._local import MatchStalled
from oddtrick.rules import (
    PASS,
    Card,
    CardNotHeld,
    Deal,
    Denomination,
    GameConfig,
    GameState,
    IllegalStartingAction,
    MatchFormat,
    MustFollowSuit,
    ParseError,
    Phase,
    PositionError,
    Rank,
    Reason,
    Seat,
    Side,
    Suit,
    TrumpSelection,
    WrongPhase,
    replay,
)

DEAL = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


def test_a_seat_given_as_a_number_is_refused_clearly():
    state = GameState(GameConfig.contract(), seed="int-seat")
    assert state.to_act is Seat.EAST
    for seat in (1, 0, "E"):
        with pytest.raises(TypeError, match=r"not a seat: .*Seat\(n\)"):
            state.apply(PASS, seat)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not a seat"):
            state.is_legal(PASS, seat)  # type: ignore[arg-type]
    assert state.history == ()
    assert state.is_legal(PASS, Seat.EAST)
    state.apply(PASS, Seat(1))
    assert state.history == ((Seat.EAST, PASS),)


@pytest.mark.parametrize("value", [Suit.CLUBS, Seat.NORTH, Side.NORTH_SOUTH, Denomination.CLUBS, Rank.TWO])
def test_every_enum_value_is_true(value):
    assert value
    assert (value and str(value)) == str(value)


def test_no_trumps_is_told_apart_from_an_auction_still_running():
    contract = GameState(GameConfig.contract(), seed="denomination")
    assert contract.trumps is None
    assert contract.denomination is None
    assert contract.view(Seat.EAST).denomination is None
    for call in ("7NT", "pass", "pass", "pass"):
        contract.apply(contract.legal_actions[[str(a) for a in contract.legal_actions].index(call)])
    assert contract.trumps is None
    assert contract.denomination is Denomination.NO_TRUMPS
    assert contract.view(None).denomination is Denomination.NO_TRUMPS

    rotation = GameConfig.classic(trump_selection=TrumpSelection.FIXED_ROTATION, no_trump_every_fifth=True)
    fifth = GameState.from_deal(rotation, DEAL, hand_number=5)
    assert fifth.trumps is None
    assert fifth.denomination is Denomination.NO_TRUMPS
    first = GameState.from_deal(rotation, DEAL, hand_number=1)
    assert first.denomination is Denomination.HEARTS


def test_a_game_starts_from_a_chosen_deal_dealer_turned_card_and_scores():
    state = GameState.from_deal(
        GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S", scores=(3, 4), seed="later"
    )
    assert state.deal == Deal.parse(DEAL)
    assert state.dealer is Seat.WEST
    assert state.turned_card == Card.parse("2S")
    assert state.trumps is Suit.SPADES
    assert state.to_act is Seat.NORTH
    assert state.scores == (3, 4)
    assert state.hand_of(Seat.NORTH) == Deal.parse(DEAL)[Seat.NORTH]
    # North holds every trump above the two: thirteen tricks, the game.
    while state.phase is Phase.PLAY:
        state.apply(state.legal_actions[-1] if state.to_act is Seat.NORTH else state.legal_actions[0])
    assert state.hand_results[-1].tricks == (13, 0)
    assert state.scores == (10, 4)


def test_a_game_starts_part_way_through_a_hand():
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=3)
    state = GameState.from_deal(
        config, DEAL, dealer=Seat.NORTH, hand_number=2, actions=["7C", "pass", "pass", "pass", "8H"]
    )
    assert state.phase is Phase.PLAY
    assert state.contract is not None
    assert str(state.contract.denomination) == "C"
    assert state.current_trick == ((Seat.SOUTH, Card.parse("8H")),)
    assert state.to_act is Seat.WEST
    assert state.hand_number == 2


@pytest.mark.parametrize(
    ("config", "options", "message"),
    [
        (GameConfig.classic(), {}, "give turned_card"),
        (GameConfig.classic(), {"turned_card": "AS"}, "not in the dealer's"),
        (GameConfig.contract(), {"turned_card": "2S"}, "only for classic"),
        (GameConfig.classic(trump_selection=TrumpSelection.CUT), {}, "give cut_card"),
        (GameConfig.classic(), {"turned_card": "2S", "scores": (5, 0)}, "already reached"),
        (GameConfig.contract(), {"games_won": (1, 0)}, "only for rubbers"),
        (GameConfig.contract(), {"hand_number": 0}, "start at 1"),
    ],
)
def test_an_impossible_starting_position_is_refused(config, options, message):
    options.setdefault("dealer", Seat.WEST)
    with pytest.raises(PositionError, match=message):
        GameState.from_deal(config, DEAL, **options)


def test_an_illegal_action_in_the_position_is_refused_with_its_reason_and_index():
    with pytest.raises(IllegalStartingAction, match=r"action 1 \(TH\)") as caught:
        GameState.from_deal(
            GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S", actions=["AS", "TH"]
        )
    assert isinstance(caught.value, PositionError)
    assert caught.value.index == 1
    assert isinstance(caught.value.error, MustFollowSuit)
    assert caught.value.reason is Reason.MUST_FOLLOW_SUIT


@pytest.mark.parametrize(
    ("actions", "index", "refusal"),
    [
        (["AS", "pass"], 1, WrongPhase),  # a call during the play
        (["AS", "7S", "3S", "2S", "QS", "double"], 5, WrongPhase),
        (["AS", "XX"], 1, ParseError),  # text that spells no action
        ([Card.parse("AS"), Card.parse("AS")], 1, CardNotHeld),
    ],
)
def test_every_refused_action_is_a_position_error_naming_its_index(actions, index, refusal):
    with pytest.raises(PositionError) as caught:
        GameState.from_deal(GameConfig.classic(), DEAL, **_classic_options(actions))
    error = caught.value
    assert isinstance(error, IllegalStartingAction)
    assert error.index == index
    assert isinstance(error.error, refusal)
    assert f"action {index} " in str(error)


def _classic_options(actions):
    return {"dealer": Seat.WEST, "turned_card": "2S", "actions": actions}


def test_a_card_during_the_auction_is_wrong_phase():
    with pytest.raises(IllegalStartingAction) as caught:
        GameState.from_deal(GameConfig.contract(), DEAL, actions=["pass", "QH"])
    assert caught.value.index == 1
    assert isinstance(caught.value.error, WrongPhase)
    assert caught.value.reason is Reason.WRONG_PHASE


def test_a_string_of_actions_is_refused_not_read_a_letter_at_a_time():
    with pytest.raises(PositionError, match="must be a list of actions"):
        GameState.from_deal(GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S", actions="AS")


@pytest.mark.parametrize("scores", [None, 5, (1,), (1, 2, 3), ("1", 2), (-1, 0), (True, 0)])
def test_scores_that_are_not_two_whole_numbers_are_a_clear_position_error(scores):
    with pytest.raises(PositionError, match=r"scores must be two whole numbers, NS then EW"):
        GameState.from_deal(GameConfig.contract(), DEAL, scores=scores)


@pytest.mark.parametrize("scores", [(100, 100), (104, 104)])
def test_contract_scores_level_at_or_above_the_target_play_on(scores):
    state = GameState.from_deal(GameConfig.contract(), DEAL, dealer=Seat.NORTH, scores=scores, seed="level")
    assert state.phase is Phase.AUCTION
    assert state.scores == scores
    # North holds thirteen tricks at no trumps: the hand breaks the tie, and the game is over.
    for call in ("pass", "pass", "pass", "13NT", "pass", "pass", "pass"):
        state.apply(next(a for a in state.legal_actions if str(a) == call))
    while state.phase is Phase.PLAY:
        state.apply(state.legal_actions[-1] if state.to_act is Seat.NORTH else state.legal_actions[0])
    assert state.hand_results[-1].tricks == (13, 0)
    assert state.match_result is not None
    assert state.match_result.winner is Side.NORTH_SOUTH


@pytest.mark.parametrize("scores", [(100, 99), (104, 100), (0, 100)])
def test_contract_scores_with_a_side_ahead_at_the_target_are_over(scores):
    with pytest.raises(PositionError, match="already reached the target"):
        GameState.from_deal(GameConfig.contract(), DEAL, scores=scores)


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        ("N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876", "four hands"),
        ("AKQJ.AKQ.AKQ.AKQ", "not a deal"),
        (12, "not a deal"),
    ],
)
def test_a_bad_deal_is_a_position_error(deal, message):
    with pytest.raises(PositionError, match=message):
        GameState.from_deal(GameConfig.contract(), deal)


def test_a_deal_cannot_be_built_unchecked():
    north = Deal.parse(DEAL)[Seat.NORTH]
    assert not hasattr(Deal, "trusted")
    with pytest.raises(ParseError, match="some card is in two hands"):
        Deal({Seat.NORTH: north, Seat.EAST: north, Seat.SOUTH: north, Seat.WEST: north})
    twelve = {seat: Deal.parse(DEAL)[seat] for seat in Seat}
    twelve[Seat.WEST] = twelve[Seat.WEST][:12]
    with pytest.raises(ParseError, match="West has 12 cards"):
        Deal(twelve)


def test_the_fake_referee_puts_a_bot_in_a_chosen_position():
    seen = []

    def lowest(view):
        seen.append(view)
        return view.legal_actions[0]

    position = GameState.from_deal(
        GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S", actions=["AS", "7S"]
    )
    fake = FakeReferee(lowest, seat=Seat.SOUTH, state=position)
    assert fake.step() == Card.parse("3S")
    view = seen[0]
    assert view.hand == Deal.parse(DEAL)[Seat.SOUTH]
    assert [str(card) for _, card in view.current_trick] == ["AS", "7S"]
    assert view.legal_actions == tuple(Card.parse(c) for c in ("3S", "4S", "5S", "6S"))


def test_play_local_stops_a_match_that_every_hand_throws_in():
    with pytest.raises(MatchStalled, match="thrown in"):
        play_local({seat: (lambda view: PASS) for seat in Seat}, GameConfig.contract(), seed="passers")


def test_a_logged_deal_replays_from_a_chosen_trick():
    config = GameConfig.classic(format=MatchFormat.HAND)
    whole = replay(config, "chosen-trick", [])
    while whole.phase is Phase.PLAY:
        whole.apply(whole.legal_actions[0])
    history = [action for _, action in whole.history]
    partial = GameState.from_deal(
        config,
        whole.hand_results[0].deal,
        turned_card=whole.hand_results[0].turned_card,
        actions=history[:20],
    )
    for action in history[20:]:
        partial.apply(action)
    assert partial.hand_results[0].tricks == whole.hand_results[0].tricks
    assert partial.match_result == whole.match_result
