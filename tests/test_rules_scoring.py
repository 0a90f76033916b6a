"""Scoring, honours, games, rubbers and fixed numbers of deals, by named example.

Hands that must end with a given number of tricks are played out with
``rules_support.steer``, which searches (a bounded, seeded search) for a legal
line of play giving North-South exactly that many tricks.
"""

from __future__ import annotations

import random

import pytest
from rules_support import (
    EW,
    NS,
    E,
    N,
    Rig,
    S,
    W,
    build_deal,
    calls,
    finish_hand,
    honours_rig,
    new_state,
    play_match,
    rigged,
    steer,
    try_steer,
)

from oddtrick.rules import (
    PACK,
    Call,
    Card,
    Contract,
    Denomination,
    GameConfig,
    GameState,
    MatchFormat,
    Outcome,
    Phase,
    Seat,
    Suit,
    TrumpSelection,
    contract_points,
    honours_held,
    honours_points,
    odd_tricks,
    shuffled_pack,
    trumps_for_rotation,
)

HONOURS_GAME = GameConfig.classic(honours=True)

# ------------------------------------------------------------ Contract Whist


SEED_EXAMPLES = [
    # (bid by North, tricks North-South took, points NS/EW, outcome, margin, the result line)
    ("8H", 9, (9, 4), Outcome.MADE, 1, "8♥ by North made (+1): NS 9, EW 4"),
    ("7NT", 7, (7, 6), Outcome.MADE, 0, "7NT by North made: NS 7, EW 6"),
    ("10S", 9, (0, 4), Outcome.FAILED, 1, "10♠ by North failed by 1: NS 0, EW 4"),
]
SEED_NAMES = ("bid", "taken", "points", "outcome", "margin", "line")
SEED_IDS = ["8H-9-taken", "7NT-7-taken", "10S-9-taken"]


@pytest.mark.parametrize(SEED_NAMES, SEED_EXAMPLES, ids=SEED_IDS)
def test_contract_points_seed_examples(
    bid: str, taken: int, points: tuple[int, int], outcome: Outcome, margin: int, line: str
) -> None:
    call = Call.parse(bid)
    assert call.denomination is not None
    contract = Contract(call.level, call.denomination, N)
    assert contract_points(contract, (taken, 13 - taken)) == (points, outcome, margin)
    # The same contract by East-West, with the tricks the other way round.
    mirrored = Contract(call.level, call.denomination, E)
    assert contract_points(mirrored, (13 - taken, taken)) == (points[::-1], outcome, margin)


@pytest.mark.parametrize(SEED_NAMES, SEED_EXAMPLES, ids=SEED_IDS)
def test_contract_seed_examples_in_played_hands(
    bid: str, taken: int, points: tuple[int, int], outcome: Outcome, margin: int, line: str
) -> None:
    state = GameState(GameConfig.contract(format=MatchFormat.HAND), "contract examples")
    calls(state, f"pass pass pass {bid} pass pass pass")
    assert state.contract is not None
    assert state.contract.declarer is N
    assert state.contract.bid is Call.parse(bid)
    assert state.to_act is E
    steer(state, taken)
    result = state.hand_results[-1]
    assert result.tricks == (taken, 13 - taken)
    assert result.points == points
    assert (result.outcome, result.margin) == (outcome, margin)
    assert state.totals == points
    assert result.describe() == line


def test_defenders_always_score_their_tricks() -> None:
    for level in range(7, 14):
        for taken in range(14):
            contract = Contract(level, Denomination.SPADES, W)
            points, _, _ = contract_points(contract, (taken, 13 - taken))
            assert points[0] == taken
            assert points[1] == (13 - taken if 13 - taken >= level else 0)


@pytest.mark.parametrize(("taken", "points"), [(9, (18, 8)), (7, (0, 12))], ids=["made", "failed"])
def test_a_doubled_hand_doubles_both_sides_points(taken: int, points: tuple[int, int]) -> None:
    state = GameState(GameConfig.contract(doubling=True, format=MatchFormat.HAND), "doubled")
    calls(state, "pass pass pass 8H double pass pass pass")
    assert state.contract == Contract(8, Denomination.HEARTS, N, doubled=True)
    steer(state, taken)
    result = state.hand_results[-1]
    assert result.points == points
    undoubled, _, _ = contract_points(Contract(8, Denomination.HEARTS, N), result.tricks)
    assert result.points == (2 * undoubled[0], 2 * undoubled[1])
    assert "doubled" in result.describe()


def test_contract_default_target_is_100_and_classic_5() -> None:
    assert GameConfig.contract().target == 100
    assert GameConfig.classic().target == 5
    assert GameConfig.contract(target=50).game_target == 50


@pytest.mark.parametrize("target", [50, 100])
def test_contract_game_ends_after_the_first_hand_with_a_side_ahead_at_the_target(
    target: int,
) -> None:
    state = play_match(GameConfig.contract(target=target), f"target {target}", 3)
    results = state.hand_results
    for result in results[:-1]:
        ns, ew = result.scores_after
        assert max(ns, ew) < target or ns == ew
        assert result.game_won_by is None
    ns, ew = results[-1].scores_after
    assert max(ns, ew) >= target
    assert ns != ew
    winner = NS if ns > ew else EW
    assert results[-1].game_won_by is winner
    assert state.match_result is not None
    assert state.match_result.winner is winner
    assert state.game_results[0].scores == (ns, ew)


def test_level_scores_at_or_above_the_target_play_on_until_one_side_is_ahead() -> None:
    state = GameState(GameConfig.contract(target=13), "level at target")
    # Hand 1: North 7C makes exactly: NS 7, EW 6.
    calls(state, "pass pass pass 7C pass pass pass")
    steer(state, 7)
    assert state.scores == (7, 6)
    # Hand 2: East 7C makes exactly: NS 6, EW 7, so 13-13, both at the target.
    state.start_next_hand()
    calls(state, "pass pass pass 7C pass pass pass")
    assert state.contract is not None
    assert state.contract.declarer is E
    steer(state, 6)
    assert state.scores == (13, 13)
    assert state.phase is Phase.HAND_OVER
    assert state.hand_results[-1].game_won_by is None
    assert state.game_results == ()
    # Hand 3: thrown in, still level: play on.
    state.start_next_hand()
    calls(state, "pass pass pass pass")
    assert state.phase is Phase.HAND_OVER
    assert state.scores == (13, 13)
    # Hand 4: West 7C fails by one: NS 7, EW 0 → NS 20-13.
    state.start_next_hand()
    calls(state, "pass pass pass 7C pass pass pass")
    steer(state, 7)
    assert state.scores == (20, 13)
    assert state.phase is Phase.MATCH_OVER
    assert state.hand_results[-1].game_won_by is NS
    assert state.match_result is not None
    assert (state.match_result.winner, state.match_result.hands_played) == (NS, 4)


# --------------------------------------------------------------- classic Whist


ODD_TRICK_TABLE = {0: 0, 1: 0, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0}
ODD_TRICK_TABLE.update({7: 1, 8: 2, 9: 3, 10: 4, 11: 5, 12: 6, 13: 7})


def test_odd_trick_table() -> None:
    assert {tricks: odd_tricks(tricks) for tricks in range(14)} == ODD_TRICK_TABLE


def classic_hand(ns_tricks: int) -> GameState:
    """A one-hand classic match in which North-South took ``ns_tricks``."""
    config = GameConfig.classic(format=MatchFormat.HAND)
    if ns_tricks in (0, 13):
        # One player holds all thirteen trumps (the turned card is theirs), so
        # their side takes every trick whatever is played.
        holder = N if ns_tricks == 13 else E
        deal = build_deal({holder: " ".join(str(c) for c in PACK if c.suit is Suit.SPADES)})
        rigs = {1: Rig(deal, turned=Card.parse("2S") if holder is N else None)}
        if holder is E:
            config = GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.HAND)
            rigs = {1: Rig(deal, cut=Card.parse("AS"))}
        with rigged(rigs):
            state = new_state(config, rigs)
            finish_hand(state, random.Random(ns_tricks))
        return state
    # Some deals cannot give a side 12 tricks: try a few until one does.
    for attempt in range(20):
        state = GameState(config, f"odd tricks {attempt}")
        if try_steer(state, ns_tricks, attempts=100):
            return state
    raise AssertionError(f"no deal found where North-South can take {ns_tricks} tricks")


@pytest.mark.parametrize("ns_tricks", range(14))
def test_exactly_one_side_scores_its_odd_tricks(ns_tricks: int) -> None:
    state = classic_hand(ns_tricks)
    result = state.hand_results[-1]
    ew_tricks = 13 - ns_tricks
    assert result.tricks == (ns_tricks, ew_tricks)
    assert result.points == (ODD_TRICK_TABLE[ns_tricks], ODD_TRICK_TABLE[ew_tricks])
    assert (result.points[0] > 0) != (result.points[1] > 0)
    assert result.outcome is Outcome.ODD_TRICKS
    assert result.margin == max(result.points)
    side = "NS" if ns_tricks > 6 else "EW"
    assert result.describe().startswith(f"{side} took {max(ns_tricks, ew_tricks)} tricks")


@pytest.mark.parametrize("target", [5, 7, 9, 10])
def test_classic_game_ends_when_a_side_reaches_the_target(target: int) -> None:
    state = play_match(GameConfig.classic(target=target), f"classic target {target}", 0)
    results = state.hand_results
    assert all(max(r.scores_after) < target for r in results[:-1])
    assert max(results[-1].scores_after) >= target
    assert state.match_result is not None
    assert state.match_result.winner is results[-1].game_won_by
    assert state.match_result.reason == f"{results[-1].game_won_by} won the game"


# -------------------------------------------------------------------- honours


@pytest.mark.parametrize(
    ("held", "points"),
    [((4, 0), (4, 0)), ((3, 1), (2, 0)), ((2, 2), (0, 0)), ((1, 3), (0, 2)), ((0, 4), (0, 4))],
)
def test_honours_table(held: tuple[int, int], points: tuple[int, int]) -> None:
    assert honours_points(held) == points


@pytest.mark.parametrize(
    ("ns_honours", "points"), [(4, (4, 0)), (3, (2, 0)), (2, (0, 0)), (1, (0, 2)), (0, (0, 4))]
)
def test_honours_scored_in_a_played_hand(ns_honours: int, points: tuple[int, int]) -> None:
    config = GameConfig.classic(honours=True, format=MatchFormat.HAND)
    rigs = {1: honours_rig(1, ns_honours)}
    with rigged(rigs):
        state = new_state(config, rigs)
        assert state.turned_card == Card.parse("2H")
        assert honours_held(state.deal, Suit.HEARTS) == (ns_honours, 4 - ns_honours)
        finish_hand(state, random.Random(ns_honours))
    result = state.hand_results[-1]
    assert result.honours == points
    assert state.totals == (result.points[0] + points[0], result.points[1] + points[1])


def test_turned_honour_counts_in_the_dealers_hand() -> None:
    # North deals and turns the A♥; South holds K♥ Q♥: three honours for NS.
    deal = build_deal({N: "AH", S: "KH QH", E: "JH"})
    config = GameConfig.classic(honours=True, format=MatchFormat.HAND)
    with rigged({1: Rig(deal, turned=Card.parse("AH"))}):
        state = new_state(config, {1: Rig(deal)})
        finish_hand(state, random.Random(0))
    assert state.hand_results[-1].honours == (2, 0)


def honours_match(rigs: dict[int, Rig], ns_tricks: list[int], target: int = 5) -> GameState:
    """A classic honours game whose hands are rigged and steered in turn."""
    with rigged(rigs):
        state = new_state(GameConfig.classic(honours=True, target=target), rigs)
        for number, tricks in enumerate(ns_tricks, 1):
            if number > 1:
                state.start_next_hand()
            assert state.deal == rigs[number].deal
            steer(state, tricks)
    return state


@pytest.mark.parametrize(
    ("target", "before"),
    [(5, [10]), (7, [10, 8])],
    ids=["on-4-of-5", "on-6-of-7"],
)
def test_honours_barred_one_short_of_the_target(target: int, before: list[int]) -> None:
    """A side one short of the target at the start of the deal scores no honours."""
    n = len(before) + 1
    rigs = {i: honours_rig(i, 2) for i in range(1, n)}
    rigs[n] = honours_rig(n, 4)
    state = honours_match(rigs, [*before, 6], target)
    result = state.hand_results[-1]
    assert state.hand_results[-2].scores_after == (target - 1, 0)
    assert honours_points(honours_held(state.deal, state.trumps)) == (4, 0)
    assert result.honours_barred == (True, False)
    assert result.honours == (0, 0)
    assert result.points == (0, 1)
    assert result.scores_after == (target - 1, 1)
    assert result.game_won_by is None


def test_a_barred_side_still_scores_odd_tricks() -> None:
    rigs = {1: honours_rig(1, 2), 2: honours_rig(2, 4)}
    state = honours_match(rigs, [10, 8])
    result = state.hand_results[-1]
    assert result.honours_barred == (True, False)
    assert result.points == (2, 0)
    assert result.honours == (0, 0)
    assert result.scores_after == (6, 0)
    assert result.game_won_by is NS
    assert not state.game_results[0].by_honours


def test_the_bar_looks_at_the_score_at_the_start_of_the_deal() -> None:
    """NS start the deal on 2, reach 4 by tricks, and still score their honours."""
    rigs = {1: honours_rig(1, 2), 2: honours_rig(2, 3)}
    state = honours_match(rigs, [8, 8])
    result = state.hand_results[-1]
    assert result.honours_barred == (False, False)
    assert result.points == (2, 0)
    assert result.honours == (2, 0)
    assert result.scores_after == (6, 0)
    assert result.game_won_by is NS
    assert state.game_results[0].by_honours
    assert "NS 2 for honours" in result.describe()


def test_tricks_are_scored_before_honours() -> None:
    """NS on 3 make 2 odd tricks and win; EW on 3 holding four honours score nothing."""
    rigs = {1: honours_rig(1, 2), 2: honours_rig(2, 2), 3: honours_rig(3, 0)}
    state = honours_match(rigs, [9, 4, 8])
    assert state.hand_results[-2].scores_after == (3, 3)
    result = state.hand_results[-1]
    assert honours_points(honours_held(state.deal, state.trumps)) == (0, 4)
    assert result.honours_barred == (False, False)
    assert result.points == (2, 0)
    assert result.honours == (0, 0)
    assert result.scores_after == (5, 3)
    assert result.game_won_by is NS
    assert not state.game_results[0].by_honours
    assert state.match_result is not None
    assert state.match_result.winner is NS


def test_honours_can_win_the_game_for_the_side_that_lost_the_tricks() -> None:
    rigs = {1: honours_rig(1, 2), 2: honours_rig(2, 2), 3: honours_rig(3, 0)}
    state = honours_match(rigs, [9, 4, 7])
    result = state.hand_results[-1]
    assert result.points == (1, 0)
    assert result.honours == (0, 4)
    assert result.scores_after == (4, 7)
    assert result.game_won_by is EW
    assert state.game_results[0].by_honours


def test_no_honours_at_no_trumps() -> None:
    config = GameConfig.classic(
        trump_selection=TrumpSelection.FIXED_ROTATION,
        no_trump_every_fifth=True,
        honours=True,
        format=MatchFormat.DEALS,
        deals=5,
    )
    # Deal 5, at no trumps: North holds every ace and king, South every queen and jack.
    high = {rank: " ".join(f"{rank}{s}" for s in "SHDC") for rank in "AKQJ"}
    deal = build_deal({N: f"{high['A']} {high['K']}", S: f"{high['Q']} {high['J']}"})
    with rigged({5: Rig(deal)}):
        state = GameState(config, "no trump honours")
        rng = random.Random(0)
        for _ in range(4):
            finish_hand(state, rng)
            state.start_next_hand()
        assert state.deal == deal
        assert state.trumps is None
        finish_hand(state, rng)
    result = state.hand_results[-1]
    assert result.trumps is None
    assert all(honours_held(deal, suit) == (4, 0) for suit in Suit)
    assert honours_held(deal, None) == (0, 0)
    assert result.honours == (0, 0)
    assert sum(state.totals) == sum(sum(r.points) + sum(r.honours) for r in state.hand_results)


def test_cut_card_names_trumps_and_nobody_holds_it() -> None:
    config = GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.DEALS, deals=3)
    state = GameState(config, "cut for trumps")
    rng = random.Random(0)
    for number in (1, 2, 3):
        cut = state.cut_card
        assert cut is not None
        assert state.turned_card is None
        assert not state.turned_card_face_up
        assert state.trumps is cut.suit
        assert cut == shuffled_pack(state.seed, number)[1]
        # The cut comes from a second pack: the dealer has 13 cards like everyone.
        assert all(len(state.hand_of(seat)) == 13 for seat in Seat)
        assert len({c for seat in Seat for c in state.hand_of(seat)}) == 52
        assert state.view(E).cut_card is cut
        assert state.view(None).cut_card is cut
        finish_hand(state, rng)
        assert state.hand_results[-1].cut_card is cut
        if number < 3:
            state.start_next_hand()


def test_cut_card_does_not_count_as_an_honour() -> None:
    # The A♥ is cut from the second pack; in the dealt pack East holds the A♥.
    deal = build_deal({N: "KH QH", S: "JH", E: "AH"})
    config = GameConfig.classic(trump_selection=TrumpSelection.CUT, honours=True, format=MatchFormat.HAND)
    with rigged({1: Rig(deal, cut=Card.parse("AH"))}):
        state = new_state(config, {1: Rig(deal)})
        assert state.trumps is Suit.HEARTS
        finish_hand(state, random.Random(0))
    result = state.hand_results[-1]
    assert result.cut_card == Card.parse("AH")
    assert result.honours == (2, 0)


# ------------------------------------------------------------ fixed rotation


@pytest.mark.parametrize(
    ("every_fifth", "expected"),
    [(False, "HDSCHDSCHD"), (True, "HDSC-HDSC-")],
    ids=["four-suits", "no-trumps-every-fifth"],
)
def test_fixed_rotation_trumps(every_fifth: bool, expected: str) -> None:
    config = GameConfig.classic(
        trump_selection=TrumpSelection.FIXED_ROTATION,
        no_trump_every_fifth=every_fifth,
        format=MatchFormat.DEALS,
        deals=10,
    )
    state = GameState(config, "rotation")
    rng = random.Random(0)
    seen = []
    while True:
        assert state.turned_card is None
        assert state.cut_card is None
        seen.append("-" if state.trumps is None else state.trumps.letter)
        finish_hand(state, rng)
        if state.phase is Phase.MATCH_OVER:
            break
        state.start_next_hand()
    assert "".join(seen) == expected
    assert "".join("-" if r.trumps is None else r.trumps.letter for r in state.hand_results) == expected
    rotation = [trumps_for_rotation(n, every_fifth) for n in range(1, 11)]
    assert "".join("-" if t is None else t.letter for t in rotation) == expected


# ------------------------------------------------------------- match formats


def find_rubber(games: tuple[int, int]) -> GameState:
    config = GameConfig.classic(format=MatchFormat.RUBBER)
    for k in range(200):
        state = play_match(config, "rubber", k)
        if sorted(state.games_won) == sorted(games):
            return state
    raise AssertionError(f"no rubber ending {games} in 200 seeds")


def test_rubber_ends_after_two_straight_wins_without_a_third_game() -> None:
    state = find_rubber((2, 0))
    assert state.phase is Phase.MATCH_OVER
    assert len(state.game_results) == 2
    assert state.game_results[0].winner is state.game_results[1].winner
    assert state.game_number == 2
    assert state.hand_results[-1].game_won_by is state.game_results[1].winner
    assert state.match_result is not None
    assert state.match_result.reason.endswith("won the rubber 2-0")


def test_rubber_at_one_game_all_plays_a_third_game() -> None:
    state = find_rubber((2, 1))
    games = state.game_results
    assert len(games) == 3
    assert games[0].winner is not games[1].winner
    assert state.match_result is not None
    assert state.match_result.winner is games[2].winner
    assert state.match_result.reason.endswith("won the rubber 2-1")
    # Scores restart from 0-0 for each game; totals run across the rubber.
    ends = [i + 1 for i, r in enumerate(state.hand_results) if r.game_won_by is not None]
    firsts = [0, *ends[:-1]]
    assert len(firsts) == 3
    for first in firsts[1:]:
        result = state.hand_results[first]
        assert result.scores_after == (
            result.points[0] + result.honours[0],
            result.points[1] + result.honours[1],
        )
    assert [g.hands for g in games] == [
        b - a for a, b in zip(firsts, [*firsts[1:], len(state.hand_results)], strict=True)
    ]
    assert state.totals == tuple(
        sum(r.points[side] + r.honours[side] for r in state.hand_results) for side in (0, 1)
    )


@pytest.mark.parametrize("deals", [1, 3, 7])
def test_fixed_number_of_deals_stops_after_n_deals_with_totals(deals: int) -> None:
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=deals, target=5)
    state = play_match(config, "fixed deals", deals)
    assert state.phase is Phase.MATCH_OVER
    assert len(state.hand_results) == deals
    assert state.game_results == ()
    totals = tuple(sum(r.points[side] for r in state.hand_results) for side in (0, 1))
    assert state.totals == state.scores == totals
    result = state.match_result
    assert result is not None
    assert (result.totals, result.hands_played, result.games_won) == (totals, deals, (0, 0))
    if totals[0] == totals[1]:
        assert result.winner is None
    else:
        assert result.winner is (NS if totals[0] > totals[1] else EW)


def test_thrown_in_hands_count_as_deals() -> None:
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=3)
    state = play_match(config, "all passes", 0, pass_rate=1.0)
    assert [r.outcome for r in state.hand_results] == [Outcome.THROWN_IN] * 3
    assert [r.dealer for r in state.hand_results] == [N, E, S]
    assert state.match_result is not None
    assert state.match_result.winner is None
    assert state.match_result.reason == "drawn at 0-0"


def test_thrown_in_cards_stay_hidden_after_the_match() -> None:
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=2)
    state = play_match(config, "hidden for good", 0, pass_rate=1.0)
    assert state.phase is Phase.MATCH_OVER
    assert all(r.deal is not None for r in state.hand_results)
    for seat in (*Seat, None):
        view = state.view(seat)
        assert view.seed == state.seed
        assert [r.deal for r in view.hand_results] == [None, None]


def test_dealer_rotation_continues_across_the_games_of_a_rubber() -> None:
    state = find_rubber((2, 1))
    dealers = [r.dealer for r in state.hand_results]
    assert dealers == [Seat(i % 4) for i in range(len(dealers))]
    assert [r.hand_number for r in state.hand_results] == list(range(1, len(dealers) + 1))


def test_the_deal_does_not_depend_on_the_configuration() -> None:
    configs = [
        GameConfig.classic(),
        GameConfig.classic(trump_selection=TrumpSelection.CUT),
        GameConfig.classic(trump_selection=TrumpSelection.FIXED_ROTATION),
        GameConfig.contract(doubling=True),
    ]
    deals = {str(GameState(config, "same deal").deal) for config in configs}
    assert len(deals) == 1
    turned = GameState(configs[0], "same deal").turned_card
    assert turned is not None
    assert turned in GameState(configs[1], "same deal").deal[N]


def test_honours_are_never_barred_outside_a_game() -> None:
    """In a fixed number of deals there is no target to be one short of."""
    rigs = {1: honours_rig(1, 2), 2: honours_rig(2, 4)}
    config = GameConfig.classic(honours=True, format=MatchFormat.DEALS, deals=2)
    with rigged(rigs):
        state = new_state(config, rigs)
        steer(state, 10)
        assert state.scores == (4, 0)
        state.start_next_hand()
        steer(state, 6)
    result = state.hand_results[-1]
    assert result.honours_barred == (False, False)
    assert result.honours == (4, 0)
    assert state.totals == (8, 1)
    assert state.game_results == ()


def test_single_hand_thrown_in_is_a_draw() -> None:
    state = GameState(GameConfig.contract(format=MatchFormat.HAND), "one hand")
    calls(state, "pass pass pass pass")
    assert state.phase is Phase.MATCH_OVER
    result = state.match_result
    assert result is not None
    assert (result.winner, result.totals, result.hands_played) == (None, (0, 0), 1)


def test_classic_single_hand_is_won_on_the_totals() -> None:
    state = GameState(GameConfig.classic(format=MatchFormat.HAND), "classic one hand")
    steer(state, 8)
    result = state.match_result
    assert result is not None
    assert (result.winner, result.totals) == (NS, (2, 0))
    assert result.reason == "NS scored more points, 2-0"
