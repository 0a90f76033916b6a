"""The rules API as a third-party harness uses it: clear refusals, truthful values,
and games started from a chosen deal or a position part-way through a hand."""

from __future__ import annotations

import pytest

from oddtrick import FakeReferee, play_local
from oddtrick._local import MatchStalled
from oddtrick.rules import (
    PASS,
    Card,
    Deal,
    Denomination,
    GameConfig,
    GameState,
    MatchFormat,
    MustFollowSuit,
    Phase,
    PositionError,
    Rank,
    Seat,
    Side,
    Suit,
    TrumpSelection,
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


def test_an_illegal_action_in_the_position_is_refused_with_its_reason():
    with pytest.raises(MustFollowSuit):
        GameState.from_deal(
            GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S", actions=["AS", "TH"]
        )


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
