"""The strong sample bot: right on hand-made end positions, its samples consistent
with everything the seat knows, its auction sensible, always legal, and its
fallback when there is no time.

The bot's own random stream is seeded in every test; its decisions also depend
on how many deals it solves within its time budget, so the positions are ones
where the right card is right on every layout the bot may sample.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest
from tournament_support import entries, run_tournament, sample_bot

from oddtrick import PASS, Card, Contract, Denomination, GameConfig, MatchFormat, Phase, Seat, Suit, Trick
from oddtrick._bot import BotView, decide_sync
from oddtrick._local import bot_view
from oddtrick.duplicate import deal_config, play_pair
from oddtrick.rules import PACK, GameState

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"sample_bots_{name}", SAMPLE_BOTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


pimc_bot = _load("pimc_bot")
random_bot = _load("random_bot")
PimcBot = pimc_bot.PimcBot
N, E, S, W = Seat


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(word) for word in text.split())


def end_position(
    hands: dict[Seat, str],
    me: Seat,
    leader: Seat,
    trick: str = "",
    trumps: Suit | None = None,
    won: tuple[int, int] = (0, 0),
    config: GameConfig | None = None,
    contract: Contract | None = None,
) -> BotView:
    """The view of ``me`` in a hand-made end position: ``hands`` hold what each
    seat has left, ``leader`` led the current trick (``trick`` so far).

    The cards played before are made into tricks in which everyone followed
    suit (so no void is shown and the bot knows only how many cards each seat
    holds): each suit's played cards must therefore be a multiple of four.
    """
    held = {seat: cards(text) for seat, text in hands.items()}
    current = cards(trick)
    gone = {card for hand in held.values() for card in hand} | set(current)
    tricks: list[Trick] = []
    for suit in Suit:
        played = [card for card in PACK if card.suit is suit and card not in gone]
        assert len(played) % 4 == 0, f"{len(played)} played cards of {suit}: not whole tricks"
        for start in range(0, len(played), 4):
            four = (played[start], played[start + 1], played[start + 2], played[start + 3])
            tricks.append(Trick(len(tricks) + 1, N, four, N))
    assert sum(won) == len(tricks)
    mine = tuple(sorted(held[me]))
    follow = tuple(card for card in mine if current and card.suit is current[0].suit)
    return BotView(
        seat=me,
        config=config or GameConfig.classic(),
        seed_commitment="",
        phase=Phase.PLAY,
        hand_number=1,
        dealer=N,
        to_act=me,
        hand=mine,
        legal_actions=follow or mine,
        trumps=trumps,
        turned_card=None,
        turned_card_face_up=False,
        cut_card=None,
        auction=(),
        contract=contract,
        current_trick=tuple((Seat((leader + i) % 4), card) for i, card in enumerate(current)),
        tricks=tuple(tricks),
        tricks_won=won,
        scores=(0, 0),
        totals=(0, 0),
        games_won=(0, 0),
        game_number=1,
        hand_results=(),
        game_results=(),
        match_result=None,
        seed=None,
        players=dict.fromkeys(Seat, "bot"),
        time_left_ms=5000,
    )


def layout(hands: dict[Seat, str]) -> tuple[tuple[Card, ...], ...]:
    return tuple(cards(hands[seat]) for seat in Seat)


# --------------------------------------------------------------- end positions

FOURTH_HAND = {S: "AC 2C 3D", W: "5D 6D", N: "7D 2H", E: "8D 2S"}
"""Hearts trumps; West led the club king, North and East followed low; South,
last to play, holds the ace: winning now takes the seventh trick, ducking may
lose the ace's trick for ever (a diamond lead leaves it stranded)."""

DRAW_TRUMPS = {S: "AS QS KH QH", N: "3S 4S 2D 3D", E: "JH TH 9H 2C", W: "JS 4D 5D 6D"}
"""Spades trumps, South to lead with four tricks to go: draw West's last trump
(the jack falls under the queen or the ace) before cashing the hearts, or West
ruffs the first heart and North cannot overruff."""


def test_fourth_hand_takes_the_seventh_trick():
    view = end_position(FOURTH_HAND, S, W, "KC 3C 4C", Suit.HEARTS, won=(6, 4))
    assert decide_sync(PimcBot(seed=1), view).action == Card.parse("AC")


def test_draws_the_last_trump_before_cashing_winners():
    view = end_position(DRAW_TRUMPS, S, S, trumps=Suit.SPADES, won=(5, 4))
    # Either top trump draws the jack; of equal cards the bot keeps the higher.
    assert decide_sync(PimcBot(seed=2), view).action == Card.parse("QS")


def test_values_cards_by_the_deal_score_on_the_actual_layout():
    """With the layout known, each card's value is our points less theirs after
    double-dummy play: classic Whist scores the tricks beyond six."""
    view = end_position(DRAW_TRUMPS, S, S, trumps=Suit.SPADES, won=(5, 4))
    values = PimcBot(seed=3).card_values(view, [layout(DRAW_TRUMPS)])
    # Trumps first: all four tricks, 9 in all, 3 odd tricks; a heart first: West ruffs, 8 tricks.
    assert values == {
        Card.parse("AS"): 3.0,
        Card.parse("QS"): 3.0,
        Card.parse("KH"): 2.0,
        Card.parse("QH"): 2.0,
    }


def test_a_contract_is_valued_by_its_score_not_its_tricks():
    """Declaring 8 hearts with six tricks won: on the actual layout the club ace
    brings nine tricks (made: North-South 9, East-West 4) and ducking seven
    (one short: North-South score nothing, East-West 6)."""
    config = GameConfig.contract()
    contract = Contract(8, Denomination.HEARTS, S)
    view = end_position(
        FOURTH_HAND, S, W, "KC 3C 4C", Suit.HEARTS, won=(6, 4), config=config, contract=contract
    )
    values = PimcBot(seed=4).card_values(view, [layout(FOURTH_HAND)])
    assert values == {Card.parse("AC"): 9 - 4, Card.parse("2C"): 0 - 6}


def test_the_margins_are_the_rules_scores_from_either_side():
    """Our points less theirs for each count of our tricks: classic Whist's odd tricks, and a
    doubled contract seen by a defender (8 hearts by South doubled: East-West's five tricks
    leave it made, 16 to 10; their sixth sets it, 0 to 12)."""
    classic = pimc_bot.margins(end_position(DRAW_TRUMPS, S, S, trumps=Suit.SPADES, won=(5, 4)))
    assert classic == (-7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7)
    contract = Contract(8, Denomination.HEARTS, S, doubled=True)
    view = end_position(
        DRAW_TRUMPS, E, S, trumps=Suit.HEARTS, won=(5, 4), config=GameConfig.contract(), contract=contract
    )
    table = pimc_bot.margins(view)
    assert (table[5], table[6]) == (10 - 16, 12 - 0)
    assert (table[0], table[13]) == (-26, 26)


# ----------------------------------------------------------------- sampling


@pytest.mark.parametrize("config", [GameConfig.classic(), GameConfig.contract()], ids=["classic", "contract"])
def test_samples_fit_everything_the_seat_knows(config):
    """Every sample gives the seat its own hand, every other seat as many cards
    as it really holds, only cards not yet played, no card of a suit a seat
    has shown out of, and the turned trump card to the dealer until played."""
    rng = random.Random(7)
    checked = 0
    for number in range(6):
        state = GameState(config, f"samples-{number}")
        while state.phase is Phase.AUCTION:
            legal = state.legal_actions
            state.apply(PASS if PASS in legal and rng.random() < 0.7 else rng.choice(legal))
        if state.phase is not Phase.PLAY:
            continue  # thrown in
        while state.phase is Phase.PLAY:
            seat = state.to_act
            assert seat is not None
            view = bot_view(state, seat, dict.fromkeys(Seat, "bot"))
            knowledge = pimc_bot.Knowledge(view)
            played = set(view.played_cards)
            voids = view.voids()
            for _ in range(3):
                hands = knowledge.sample(rng)
                assert set(hands[seat]) == set(state.hand_of(seat))
                assert sorted(len(hand) for hand in hands) == sorted(len(state.hand_of(s)) for s in Seat)
                for other in Seat:
                    assert len(hands[other]) == len(state.hand_of(other))
                    assert not played & set(hands[other])
                    assert not any(card.suit in voids[other] for card in hands[other] if other is not seat)
                assert sorted(card for hand in hands for card in hand) == sorted(
                    card for s in Seat for card in state.hand_of(s)
                )
                turned = view.turned_card
                if turned is not None and turned not in played:
                    assert turned in hands[view.dealer]
                checked += 1
            state.apply(rng.choice(state.legal_actions))
    assert checked > 100


def test_sampling_prefers_deals_that_fit_the_auction():
    """An opening bid of 7 spades shows spades: the likelihood of a deal where
    the bidder has none is far below one where it has five."""
    auction = ((E, pimc_bot.Call.parse("7S")),)
    long_spades = (cards("2C 3C 4C"), cards("AS KS QS JS TS AH KH 2D 3D 4D 5D 6D 7D"), (), ())
    no_spades = (cards("2C 3C 4C"), cards("AH KH QH JH TH AD KD 2D 3D 4D 5D 6D 7D"), (), ())
    assert pimc_bot.auction_likelihood(auction, S, no_spades) < 0.1 * pimc_bot.auction_likelihood(
        auction, S, long_spades
    )


# ------------------------------------------------------------------ auction


def test_bids_a_long_strong_suit_and_passes_a_weak_hand():
    """Contract Whist, South first to call after East passes: with eight solid
    spades South bids them; with a handful of small cards South passes."""
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=1)
    strong = weak = None
    for number in range(4000):
        state = GameState(config, f"auction-{number}")
        hand = state.hand_of(S)
        spades = [card for card in hand if card.suit is Suit.SPADES]
        points = pimc_bot.high_card_points(hand)
        if strong is None and len(spades) >= 7 and pimc_bot.high_card_points(spades) >= 9:
            strong = state
        if weak is None and points <= 3:
            weak = state
        if strong and weak:
            break
    assert strong is not None
    assert weak is not None
    for state in (strong, weak):
        while state.to_act is not S:
            state.apply(PASS)
    call = decide_sync(
        PimcBot(seed=5), bot_view(strong, S, dict.fromkeys(Seat, "bot"), time_left_ms=5000)
    ).action
    assert call.is_bid
    assert call.denomination is Denomination.SPADES
    assert (
        decide_sync(PimcBot(seed=6), bot_view(weak, S, dict.fromkeys(Seat, "bot"), time_left_ms=5000)).action
        is PASS
    )


# ------------------------------------------------------------ time and legality


def test_without_time_it_plays_the_heuristic_bots_choice():
    """A decision with no time left to solve even one deal gets the heuristic
    bot's answer at once rather than a miss of the deadline."""
    heuristic = pimc_bot.HeuristicBot()
    for number in range(5):
        state = GameState(GameConfig.contract(), f"no-time-{number}")
        while state.phase is Phase.AUCTION:
            seat = state.to_act
            view = bot_view(state, seat, dict.fromkeys(Seat, "bot"), time_left_ms=10)
            call = decide_sync(PimcBot(seed=number), view).action
            assert call == heuristic.choose_call(view)
            state.apply(call)
        for _ in range(8):
            if state.phase is not Phase.PLAY:
                break
            seat = state.to_act
            view = bot_view(state, seat, dict.fromkeys(Seat, "bot"), time_left_ms=10)
            card = decide_sync(PimcBot(seed=number), view).action
            assert card == heuristic.choose_card(view)
            state.apply(card)


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_plays_whole_deals_legally(game):
    """A duplicate deal pair against the random bot with a short budget: the
    rules engine raises on any illegal action."""

    class QuickPimc(PimcBot):
        think_seconds = 0.05

    result = play_pair(QuickPimc, random_bot.RandomBot, deal_config(game), f"legal-{game}")
    assert -26 <= result.first <= 26
    assert -26 <= result.second <= 26


def test_loads_as_the_oddtrick_bot_command_loads_it():
    """``oddtrick bot sample_bots/pimc_bot.py:PimcBot`` loads the file by path,
    where the heuristic bot it builds on must still be found."""
    from oddtrick._run import load_bot

    loaded = load_bot(f"{SAMPLE_BOTS / 'pimc_bot.py'}:PimcBot")
    view = end_position(FOURTH_HAND, S, W, "KC 3C 4C", Suit.HEARTS, won=(6, 4))
    assert decide_sync(loaded(seed=1), view).action == Card.parse("AC")


def test_plays_a_referee_tournament_as_its_own_process_without_a_fault(tmp_path):
    """On a real referee, each seat a separate bot process and the referee's
    deadline running: the strong bot's time budget keeps it inside it."""
    result = run_tournament(
        tmp_path, "--json", deals=1, bots={"pimc": sample_bot("pimc"), "heuristic": sample_bot("heuristic")}
    )
    pimc = entries(result)["pimc"]
    assert pimc["deals"] == 1
    assert set(pimc["faults"].values()) == {0}


@pytest.mark.parametrize("phase_config", ["classic", "contract"])
def test_never_thinks_past_half_the_time_left_whatever_its_think_seconds(phase_config: str) -> None:
    """Under the conformance kit's 1 s deadline the budget ends by 0.5 s after the request
    arrived (a call's too, though it may think twice as long); at the default 5 s deadline
    the think time stands."""
    import dataclasses

    config = GameConfig.classic() if phase_config == "classic" else GameConfig.contract()
    state = GameState(config, "budget")
    seat = state.to_act
    assert seat is not None
    bot = PimcBot(seed=1, think_seconds=5.0)
    short = dataclasses.replace(
        bot_view(state, seat, dict.fromkeys(Seat, "bot"), time_left_ms=1000),
        received_at=100.0,
        transport_ms=0,
    )
    assert bot.budget(short).answer_by <= 100.5
    roomy = dataclasses.replace(short, time_left_ms=60_000)
    think = 5.0 * (PimcBot.call_think_factor if state.phase is Phase.AUCTION else 1.0)
    assert bot.budget(roomy).answer_by == pytest.approx(100.0 + min(think, 30.0))


def test_a_decision_is_close_only_while_more_samples_may_change_the_card():
    ace, king, two = Card.parse("AS"), Card.parse("KS"), Card.parse("2S")
    assert not pimc_bot.is_close({ace: [1.0, 1.0, 1.0], king: [1.0, 1.0, 1.0]})  # equal on every deal
    assert not pimc_bot.is_close({ace: [3.0, 2.0, 3.0], king: [-1.0, -1.0, -2.0], two: [0.0, 0.0, 0.0]})
    assert pimc_bot.is_close({ace: [3.0, -2.0, 1.0, 0.0], king: [-1.0, 1.0, 0.0, 0.5]})
    assert not pimc_bot.is_close({ace: [3.0], king: [-3.0]})  # one deal says nothing of the spread
