"""The strong bot's auction by simulation: a call is scored by the contract the auction
ends in after it, as the rules end an auction and score a hand, and it replaces the
heuristic bot's call only when the samples clearly say so."""

from __future__ import annotations

import pytest

from oddtrick import PASS, Call, Contract, Denomination, GameConfig, MatchFormat, Phase, Seat
from oddtrick._bot import decide_sync
from oddtrick._local import bot_view
from oddtrick.bots import auction_simulation
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.bots.pimc_bot import PimcBot
from oddtrick.rules import Deal, GameState

N, E, S, W = Seat
CONFIG = GameConfig.contract(format=MatchFormat.DEALS, deals=1)


@pytest.mark.parametrize(
    ("contract", "took", "north_south", "east_west"),
    [
        (Contract(8, Denomination.HEARTS, N), 9, 9, 4),  # RULES.md's examples
        (Contract(7, Denomination.NO_TRUMPS, N), 7, 7, 6),
        (Contract(10, Denomination.SPADES, N), 9, 0, 4),
        (Contract(9, Denomination.CLUBS, E), 8, 5, 0),
        (Contract(7, Denomination.DIAMONDS, W, doubled=True), 10, 6, 20),
    ],
)
def test_a_contract_scores_as_the_rules_say_from_either_side(
    contract: Contract, took: int, north_south: int, east_west: int
) -> None:
    for seat in Seat:
        ours, theirs = (north_south, east_west) if seat in (N, S) else (east_west, north_south)
        assert auction_simulation.contract_score(seat, contract, took, optimism=0.0) == ours - theirs


def test_optimism_weighs_the_score_one_trick_short() -> None:
    contract = Contract(8, Denomination.HEARTS, N)
    made, short = 8 - 5, 0 - 6  # 8 taken: 8 to 5; 7 taken: 0 to 6
    halfway = pytest.approx((made + short) / 2)
    assert auction_simulation.contract_score(N, contract, 8, optimism=0.5) == halfway
    assert auction_simulation.contract_score(E, contract, 8, optimism=0.25) == pytest.approx(
        -(0.75 * made + 0.25 * short)
    )
    assert auction_simulation.contract_score(S, None, 0, optimism=0.5) == 0.0  # thrown in


def test_play_out_ends_the_auction_as_the_rules_do() -> None:
    """Four passes throw the hand in; otherwise the contract is the one a real auction of
    the same calls reaches."""
    heuristic = HeuristicBot()
    for number in range(20):
        state = GameState(CONFIG, f"play-out-{number}")
        deal = state.deal
        for _ in range(number % 3):  # the calls made before this seat's: none, one or two
            seat = state.to_act
            assert seat is not None
            state.apply(heuristic.choose_call(bot_view(state, seat, dict.fromkeys(Seat, "bot"))))
        before = [call for _, call in state.auction]
        me = state.to_act
        assert me is not None
        view = bot_view(state, me, dict.fromkeys(Seat, "bot"))
        for call in auction_simulation.candidate_calls(view, levels_above=1):
            real = GameState.from_deal(CONFIG, deal, dealer=state.dealer, actions=[*before, call])
            while real.phase is Phase.AUCTION:
                seat = real.to_act
                assert seat is not None
                real.apply(heuristic.choose_call(bot_view(real, seat, dict.fromkeys(Seat, "bot"))))
            assert auction_simulation.play_out(view, deal, call, heuristic) == real.contract


def test_candidates_are_legal_and_include_the_model_s_call() -> None:
    state = GameState(CONFIG, "candidates")
    state.apply(Call.parse("8H"))
    seat = state.to_act
    assert seat is not None
    view = bot_view(state, seat, dict.fromkeys(Seat, "bot"))
    jump = Call.parse("11S")
    found = auction_simulation.candidate_calls(view, levels_above=1, also=[jump])
    assert set(found) <= set(view.legal_actions)
    assert PASS in found
    assert jump in found
    assert Call.parse("8H") not in found  # not above the standing bid
    assert {Call.parse("9H"), Call.parse("10H"), Call.parse("8S"), Call.parse("9S")} <= set(found)


def test_the_model_s_call_stands_unless_the_samples_clearly_beat_it() -> None:
    bid, other = Call.parse("8S"), PASS
    assert auction_simulation.best_call({bid: [9.0], other: [0.0]}, other, 0.25, 1.0) is other  # one sample
    noisy = {bid: [9.0, -9.0, 9.0, -8.0], other: [0.0, 0.0, 0.0, 0.0]}
    assert auction_simulation.best_call(noisy, other, 0.25, 1.0) is other
    clear = {bid: [5.0, 6.0, 4.0, 5.0], other: [0.0, 0.0, 0.0, 0.0]}
    assert auction_simulation.best_call(clear, other, 0.25, 1.0) is bid
    worse = {bid: [-5.0, -6.0], other: [0.0, 0.0]}
    assert auction_simulation.best_call(worse, other, 0.25, 1.0) is other


def test_the_bot_says_what_its_call_and_the_model_s_scored() -> None:
    state = GameState(CONFIG, "comment")
    seat = state.to_act
    assert seat is not None
    view = bot_view(state, seat, dict.fromkeys(Seat, "bot"), time_left_ms=5000)

    class Simulating(PimcBot):
        simulate_auction = True

    decision = decide_sync(Simulating(seed=3), view)
    assert decision.action in state.legal_actions
    assert "samples solved" in decision.comment
    assert "(model)" in decision.comment


def test_a_sampled_deal_s_tricks_come_from_the_solver_for_each_ending() -> None:
    """North-South hold every spade and every heart, East-West every diamond and club:
    in spades North-South take all thirteen tricks whoever of them declares, in clubs
    East-West all thirteen."""
    deal = Deal.parse("N:AKQJT98.AKQJT9.. ..AKQJT98.AKQJT9 765432.8765432.. ..765432.8765432")
    hands = tuple(deal[seat] for seat in Seat)
    endings = [(Denomination.SPADES, N), (Denomination.SPADES, S), (Denomination.CLUBS, E)]
    tricks = auction_simulation.declarer_tricks(hands, endings)
    assert tricks == {(Denomination.SPADES, N): 13, (Denomination.SPADES, S): 13, (Denomination.CLUBS, E): 13}
