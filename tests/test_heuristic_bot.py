"""The heuristic sample bot: always legal, clearly better than random, and
sensible in single decisions that the rule texts teach.

Everything is seeded (deals by the match seed, the random opponents by their
own ``random.Random``), so these tests are deterministic.
"""

from __future__ import annotations

import importlib.util
import random
import statistics
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

import oddtrick
from oddtrick import (
    DOUBLE,
    PASS,
    Call,
    Card,
    Denomination,
    FakeReferee,
    GameConfig,
    MatchFormat,
    Rank,
    Seat,
    Side,
    Suit,
    TrumpSelection,
)
from oddtrick.rules import Phase

SAMPLE_BOTS = Path(__file__).resolve().parents[1] / "sample_bots"


def _load(name: str) -> ModuleType:
    """Import a sample bot by file (sample_bots is not a package)."""
    spec = importlib.util.spec_from_file_location(f"sample_bots_{name}", SAMPLE_BOTS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


heuristic_bot = _load("heuristic_bot")
random_bot = _load("random_bot")
HeuristicBot = heuristic_bot.HeuristicBot


class SeededRandomBot(random_bot.RandomBot):
    """The random sample bot with a reproducible stream of choices."""

    def __init__(self, seed: str) -> None:
        super().__init__()
        self.rng = random.Random(seed)


class StrictHeuristicBot(HeuristicBot):
    """Fails at once if a strategy rule picks an illegal action (the public
    methods would quietly replace it with a legal one)."""

    def choose_call(self, view):
        call = self.decide_call(view)
        assert call in view.legal_actions, (call, view.legal_actions)
        return super().choose_call(view)

    def choose_card(self, view):
        card = self.decide_card(view)
        assert card in view.legal_actions, (card, view.legal_actions)
        return super().choose_card(view)


# ------------------------------------------------------------------ legality

LEGALITY_CONFIGS = {
    "classic turned card, honours": GameConfig.classic(honours=True, format=MatchFormat.DEALS, deals=2),
    "classic cut": GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.DEALS, deals=2),
    "classic rotation, no trumps every fifth": GameConfig.classic(
        trump_selection=TrumpSelection.FIXED_ROTATION,
        no_trump_every_fifth=True,
        honours=True,
        format=MatchFormat.DEALS,
        deals=5,
    ),
    "contract": GameConfig.contract(format=MatchFormat.DEALS, deals=2),
    "contract doubling": GameConfig.contract(doubling=True, format=MatchFormat.DEALS, deals=2),
}


@pytest.mark.parametrize("config", LEGALITY_CONFIGS.values(), ids=LEGALITY_CONFIGS.keys())
def test_only_legal_actions_in_every_configuration(config):
    """Four heuristic bots in even matches, heuristic against random in odd
    ones (random makes wild bids and doubles); any illegal action raises."""
    matches = 10 if config.deals == 5 else 30
    no_trump_hands = 0
    for number in range(matches):
        seed = f"legal-{number}"
        if number % 2 == 0:
            bots = {seat: StrictHeuristicBot() for seat in Seat}
        else:
            bots = {
                seat: StrictHeuristicBot()
                if seat.side is Side.NORTH_SOUTH
                else SeededRandomBot(f"{seed}-{seat}")
                for seat in Seat
            }
        state = oddtrick.play_local(bots, config, seed)
        assert state.phase is Phase.MATCH_OVER
        no_trump_hands += sum(result.trumps is None for result in state.hand_results)
    if config.no_trump_every_fifth:
        assert no_trump_hands == matches


# ------------------------------------------------------------ against random


def duplicate_scores(config: GameConfig, seeds: list[str]) -> list[float]:
    """Per deal: heuristic plays North-South against random, then the same deal
    with the seats swapped; the heuristic side's average margin of the two."""

    def play(heuristic_side: int, seed: str) -> float:
        bots = {
            seat: HeuristicBot() if seat.side is Side(heuristic_side) else SeededRandomBot(f"{seed}-{seat}")
            for seat in Seat
        }
        totals = oddtrick.play_local(bots, config, seed).match_result.totals
        return totals[heuristic_side] - totals[1 - heuristic_side]

    return [(play(0, seed) + play(1, seed)) / 2 for seed in seeds]


@pytest.mark.parametrize(
    ("config", "margin"),
    [
        # Odd tricks per deal; the heuristic side averages about 2.
        (GameConfig.classic(format=MatchFormat.DEALS, deals=1), 1.0),
        # Contract points per deal; the heuristic side averages about 8.
        (GameConfig.contract(format=MatchFormat.DEALS, deals=1), 4.0),
    ],
    ids=["classic", "contract"],
)
def test_beats_random_on_duplicate_deals(config, margin):
    scores = duplicate_scores(config, [f"duplicate-{number}" for number in range(30)])
    assert statistics.mean(scores) > margin


# ---------------------------------------------------------- single decisions

CUT = GameConfig.classic(trump_selection=TrumpSelection.CUT)
"""Classic Whist with a cut trump: no turned card in anyone's hand. In the
first hand North deals, so East leads, then South, West and North."""
CONTRACT = GameConfig.contract()
DOUBLING = GameConfig.contract(doubling=True)


def cards_of(fake: FakeReferee, seat: Seat, suit: Suit) -> list[Card]:
    """A seat's cards of one suit in the deal, lowest first (the test may look)."""
    return sorted((card for card in fake.state.deal[seat] if card.suit is suit), key=lambda c: c.rank)


def find_position(
    bot_seat: Seat, config: GameConfig, fits: Callable[[FakeReferee], list[Card | str] | None]
) -> tuple[FakeReferee, list[Card | str]]:
    """The first of a bounded run of seeds whose deal ``fits``, which returns the
    actions to script before the bot decides (``None``: try the next seed)."""
    for number in range(2000):
        fake = FakeReferee(HeuristicBot(), seat=bot_seat, config=config, seed=f"position-{number}")
        actions = fits(fake)
        if actions is not None:
            fake.play(*actions)
            return fake, actions
    pytest.fail("no deal fits the position")


def side_suits(fake: FakeReferee) -> Iterator[Suit]:
    return (suit for suit in Suit if suit is not fake.state.trumps)


def test_second_hand_plays_low_holding_the_ace():
    def fits(fake):
        for suit in side_suits(fake):
            east, south = cards_of(fake, Seat.EAST, suit), cards_of(fake, Seat.SOUTH, suit)
            if east and east[0].rank < Rank.JACK and len(south) >= 2 and south[-1].rank is Rank.ACE:
                return [east[0]]
        return None

    fake, _ = find_position(Seat.SOUTH, CUT, fits)
    led = fake.state.current_trick[0][1]
    assert fake.ask() == cards_of(fake, Seat.SOUTH, led.suit)[0]


def test_third_hand_plays_high_but_only_as_high_as_needed():
    """Holding A K (no Q) over two low cards, third hand wins with the king."""

    def fits(fake):
        for suit in side_suits(fake):
            east, south = cards_of(fake, Seat.EAST, suit), cards_of(fake, Seat.SOUTH, suit)
            ranks = {card.rank for card in cards_of(fake, Seat.WEST, suit)}
            if east and south and {Rank.ACE, Rank.KING} <= ranks and Rank.QUEEN not in ranks:
                return [east[0], south[0]]
        return None

    fake, actions = find_position(Seat.WEST, CUT, fits)
    assert fake.ask() == Card(actions[0].suit, Rank.KING)


def test_third_hand_high_without_a_sure_winner():
    """Holding the king but not the ace, third hand still plays the king to
    force out the fourth hand's ace rather than winning cheaply with a small card."""

    def fits(fake):
        for suit in side_suits(fake):
            east, south = cards_of(fake, Seat.EAST, suit), cards_of(fake, Seat.SOUTH, suit)
            west = cards_of(fake, Seat.WEST, suit)
            ranks = {card.rank for card in west}
            if not east or not south or Rank.KING not in ranks or ranks & {Rank.ACE, Rank.QUEEN}:
                continue
            played = max(east[0].rank, south[0].rank)
            if any(played < card.rank < Rank.KING for card in west):
                return [east[0], south[0]]
        return None

    fake, actions = find_position(Seat.WEST, CUT, fits)
    assert fake.ask() == Card(actions[0].suit, Rank.KING)


def test_fourth_hand_wins_as_cheaply_as_it_can():
    def fits(fake):
        for suit in side_suits(fake):
            east, south = cards_of(fake, Seat.EAST, suit), cards_of(fake, Seat.SOUTH, suit)
            west, north = cards_of(fake, Seat.WEST, suit), cards_of(fake, Seat.NORTH, suit)
            if not (east and south and west):
                continue
            winning = max(east[0], south[0], west[-1], key=lambda card: card.rank)
            if winning is south[0]:
                continue
            higher = [card for card in north if card.rank > winning.rank]
            if len(higher) >= 2:
                return [east[0], south[0], west[-1]]
        return None

    fake, actions = find_position(Seat.NORTH, CUT, fits)
    winning = max(actions, key=lambda card: card.rank)
    expected = min(
        (c for c in cards_of(fake, Seat.NORTH, winning.suit) if c.rank > winning.rank), key=lambda c: c.rank
    )
    assert fake.ask() == expected


def void_fourth_hand(partner_wins: bool) -> Callable[[FakeReferee], list[Card | str] | None]:
    """North (fourth) is out of a side suit and holds two trumps or more; East
    leads it, and either South (North's partner) or an opponent wins so far."""

    def fits(fake):
        trumps = fake.state.trumps
        if len(cards_of(fake, Seat.NORTH, trumps)) < 2:
            return None
        for suit in side_suits(fake):
            east, south = cards_of(fake, Seat.EAST, suit), cards_of(fake, Seat.SOUTH, suit)
            west = cards_of(fake, Seat.WEST, suit)
            if cards_of(fake, Seat.NORTH, suit) or not (east and south and west):
                continue
            plays = [east[0], south[-1], west[0]] if partner_wins else [east[-1], south[0], west[0]]
            winner = max(plays, key=lambda card: card.rank)
            if (winner is plays[1]) == partner_wins:
                return plays
        return None

    return fits


def test_does_not_trump_partners_winning_trick():
    fake, _ = find_position(Seat.NORTH, CUT, void_fourth_hand(partner_wins=True))
    card = fake.ask()
    assert card.suit is not fake.state.trumps


def test_trumps_an_opponents_winner_with_the_lowest_trump():
    fake, _ = find_position(Seat.NORTH, CUT, void_fourth_hand(partner_wins=False))
    assert fake.ask() == cards_of(fake, Seat.NORTH, fake.state.trumps)[0]


def test_declarer_draws_trumps():
    """South declares in its longest suit, wins the first trick with an ace,
    and leads a trump."""

    def fits(fake):
        south = fake.state.deal[Seat.SOUTH]
        trumps = max(Suit, key=lambda suit: len(cards_of(fake, Seat.SOUTH, suit)))
        if len(cards_of(fake, Seat.SOUTH, trumps)) < 4:
            return None
        for suit in Suit:
            if suit is trumps or Card(suit, Rank.ACE) not in south:
                continue
            others = [cards_of(fake, seat, suit) for seat in (Seat.WEST, Seat.NORTH, Seat.EAST)]
            if all(others):
                bid = Call.bid(7, Denomination(trumps))
                follow = [cards[0] for cards in others]
                return ["pass", bid, "pass", "pass", "pass", *follow, Card(suit, Rank.ACE)]
        return None

    fake, _ = find_position(Seat.SOUTH, CONTRACT, fits)
    assert fake.state.to_act is Seat.SOUTH
    assert fake.ask().suit is fake.state.trumps


def test_leads_trumps_in_classic_whist_with_four_or_more():
    fake, _ = find_position(
        Seat.EAST, CUT, lambda fake: [] if len(cards_of(fake, Seat.EAST, fake.state.trumps)) >= 4 else None
    )
    assert fake.ask().suit is fake.state.trumps


def test_only_card_is_played():
    """With one legal card left, that is the answer (the last trick)."""
    fake = FakeReferee(HeuristicBot(), seat=Seat.SOUTH, config=CUT, seed="last-trick")
    while len(fake.state.hand_of(Seat.SOUTH)) > 1 or fake.state.to_act is not Seat.SOUTH:
        fake.play(fake.state.legal_actions[0])
    assert fake.ask() == fake.state.legal_actions[0]


# ------------------------------------------------------------------ auction


def test_opens_its_long_strong_suit_at_seven():
    def fits(fake):
        hand = fake.state.deal[Seat.EAST]
        for suit in Suit:
            cards = cards_of(fake, Seat.EAST, suit)
            others = [len(cards_of(fake, Seat.EAST, other)) for other in Suit if other is not suit]
            if len(cards) >= 6 and Card(suit, Rank.ACE) in hand and Card(suit, Rank.KING) in hand:
                return [] if max(others) <= 3 else None
        return None

    fake, _ = find_position(Seat.EAST, CONTRACT, fits)
    call = fake.ask()
    longest = max(Suit, key=lambda suit: len(cards_of(fake, Seat.EAST, suit)))
    assert call == Call.bid(7, Denomination(longest))


def test_does_not_raise_partners_contract_for_nothing():
    """North opened 7 clubs; South has club support but nothing a different
    contract would add, so it passes rather than bid 8 clubs."""

    def fits(fake):
        by_suit = {suit: tuple(cards_of(fake, Seat.SOUTH, suit)) for suit in Suit}
        clubs = heuristic_bot.hand_tricks(by_suit, Denomination.CLUBS)
        others = [
            heuristic_bot.hand_tricks(by_suit, d) or 0.0 for d in Denomination if d.suit is not Suit.CLUBS
        ]
        if len(by_suit[Suit.CLUBS]) >= 3 and clubs >= 3 and max(others) <= clubs + 1:
            return ["pass", "pass", "pass", "7C", "pass"]
        return None

    fake, _ = find_position(Seat.SOUTH, CONTRACT, fits)
    assert fake.ask() is PASS


def test_doubles_a_contract_it_expects_to_beat():
    """East bids 13 clubs: the defenders need only one trick to beat it."""
    fake = FakeReferee(HeuristicBot(), seat=Seat.SOUTH, config=DOUBLING, seed="double")
    fake.play("13C")
    assert fake.ask() is DOUBLE


def test_never_doubles_when_doubling_is_off():
    fake = FakeReferee(HeuristicBot(), seat=Seat.SOUTH, config=CONTRACT, seed="double")
    fake.play("13C")
    call = fake.ask()
    assert call is not DOUBLE
    assert call in fake.state.legal_actions
