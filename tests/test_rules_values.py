"""Small values: configuration checks and the text round trips of cards, calls, seats, hands, deals."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oddtrick.rules import (
    BIDS,
    DOUBLE,
    PACK,
    PASS,
    RANKS,
    SEATS,
    SUITS,
    Call,
    CallKind,
    Card,
    ConfigError,
    Deal,
    Denomination,
    GameConfig,
    GameKind,
    MatchFormat,
    ParseError,
    Rank,
    Seat,
    Side,
    Suit,
    TrumpSelection,
    deal_cards,
    format_hand,
    parse_hand,
    sort_cards,
)

# --------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"target": 0}, "target must be a whole number from 1"),
        ({"target": -5}, "target must be a whole number from 1"),
        ({"target": 10_001}, "target must be a whole number from 1 to 10000"),
        ({"target": 5.0}, "target must be a whole number"),
        ({"target": True}, "target must be a whole number"),
        ({"doubling": True}, "doubling exists only in Contract Whist"),
        ({"game": GameKind.CONTRACT, "honours": True}, "honours are scored only in classic"),
        ({"no_trump_every_fifth": True}, "no_trump_every_fifth needs trump_selection"),
        (
            {"no_trump_every_fifth": True, "trump_selection": TrumpSelection.CUT},
            "no_trump_every_fifth needs trump_selection fixed_rotation",
        ),
        ({"deals": 10}, "a number of deals is given only with format 'deals'"),
        ({"format": MatchFormat.DEALS}, "format 'deals' needs a number of deals"),
        ({"format": MatchFormat.DEALS, "deals": 0}, "format 'deals' needs a number of deals"),
        (
            {"game": GameKind.CONTRACT, "trump_selection": TrumpSelection.CUT},
            "trump selection applies only to classic Whist",
        ),
        ({"trump_selection": "cut"}, "trump_selection must be a TrumpSelection"),
        ({"game": "classic"}, "game must be a GameKind"),
        ({"honours": 1}, "honours must be true or false"),
    ],
)
def test_config_refusals_give_the_reason(options: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        GameConfig(**options)
    assert words in str(caught.value)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"colour": "red"}, "unknown configuration keys: colour"),
        ({"game": "classic", "targte": 7, "honors": True}, "unknown configuration keys: honors, targte"),
        ({"game": "bridge"}, "'bridge' is not a valid GameKind"),
        ({"format": "league"}, "'league' is not a valid MatchFormat"),
        ({"trump_selection": "highest"}, "'highest' is not a valid TrumpSelection"),
        ({"game": "contract", "honours": True}, "honours are scored only in classic"),
    ],
)
def test_config_from_dict_refusals(data: dict[str, Any], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        GameConfig.from_dict(data)
    assert words in str(caught.value)


CONFIGS = [
    GameConfig.classic(),
    GameConfig.classic(honours=True, target=7, format=MatchFormat.RUBBER),
    GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.HAND),
    GameConfig.classic(
        trump_selection=TrumpSelection.FIXED_ROTATION,
        no_trump_every_fifth=True,
        format=MatchFormat.DEALS,
        deals=20,
    ),
    GameConfig.contract(),
    GameConfig.contract(doubling=True, target=50, format=MatchFormat.RUBBER),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.describe())
def test_config_dict_round_trip(config: GameConfig) -> None:
    data = config.to_dict()
    assert set(data) == {
        "game",
        "trump_selection",
        "no_trump_every_fifth",
        "honours",
        "target",
        "doubling",
        "format",
        "deals",
    }
    assert GameConfig.from_dict(data) == config
    assert GameConfig.from_dict(json.loads(json.dumps(data))) == config


def test_config_defaults_are_filled_in() -> None:
    assert GameConfig.from_dict({}) == GameConfig.classic()
    assert GameConfig.classic().to_dict() == {
        "game": "classic",
        "trump_selection": "turn_last_card",
        "no_trump_every_fifth": False,
        "honours": False,
        "target": 5,
        "doubling": False,
        "format": "game",
        "deals": None,
    }
    contract = GameConfig.from_dict({"game": "contract"})
    assert (contract.trump_selection, contract.target) == (None, 100)


@pytest.mark.parametrize(
    ("config", "line"),
    [
        (GameConfig.classic(), "classic whist, turn last card, target 5, a game"),
        (
            GameConfig.classic(honours=True, format=MatchFormat.RUBBER),
            "classic whist, turn last card, honours, target 5, a rubber",
        ),
        (
            GameConfig.classic(
                trump_selection=TrumpSelection.FIXED_ROTATION,
                no_trump_every_fifth=True,
                format=MatchFormat.DEALS,
                deals=10,
            ),
            "classic whist, fixed rotation, no trumps every fifth deal, 10 deals",
        ),
        (GameConfig.contract(doubling=True), "contract whist, doubling, target 100, a game"),
        (GameConfig.contract(format=MatchFormat.HAND), "contract whist, one hand"),
    ],
)
def test_config_describe(config: GameConfig, line: str) -> None:
    assert config.describe() == line


# ----------------------------------------------------------------------- cards


def test_card_parse_forms() -> None:
    queen = Card(Suit.HEARTS, Rank.QUEEN)
    for text in ("QH", "qh", "Q♥", " QH ", "Qh"):
        assert Card.parse(text) is queen
    ten = Card.parse("10H")
    assert ten is Card.parse("TH")
    assert ten is Card.parse("10♥")
    assert ten is Card.parse("th")
    assert (ten.suit, ten.rank) == (Suit.HEARTS, Rank.TEN)
    assert str(ten) == "TH"
    assert ten.pretty == "10♥"
    assert repr(ten) == "Card.parse('TH')"


def test_every_card_round_trips_through_both_text_forms() -> None:
    assert len(PACK) == 52
    assert len(set(PACK)) == 52
    for index, card in enumerate(PACK):
        assert card.index == index
        assert Card.from_index(index) is card
        assert Card.parse(str(card)) is card
        assert Card.parse(card.pretty) is card
        assert len(str(card)) == 2
        assert eval(repr(card)) is card  # repr pastes back
    assert str(PACK[0]) == "2C"
    assert str(PACK[-1]) == "AS"


@pytest.mark.parametrize("text", ["", "H", "10", "1H", "11H", "QX", "AKH", "HQ", "Q♥♥", "XX"])
def test_bad_card_text_raises_parse_error_naming_the_input(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        Card.parse(text)
    assert repr(text) in str(caught.value)


def test_card_index_out_of_range() -> None:
    for bad in (-1, 52):
        with pytest.raises(ParseError, match=str(bad)):
            Card.from_index(bad)


def test_cards_are_immutable() -> None:
    with pytest.raises(AttributeError):
        Card.parse("AS").rank = Rank.TWO  # type: ignore[misc]


def test_suits_and_ranks() -> None:
    assert [s.letter for s in SUITS] == ["C", "D", "H", "S"]
    assert [s.symbol for s in SUITS] == ["♣", "♦", "♥", "♠"]
    assert [r.label for r in RANKS] == ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    assert sorted(RANKS)[-1] is Rank.ACE
    for suit in SUITS:
        assert Suit.parse(suit.letter) is suit
        assert Suit.parse(suit.symbol) is suit
        assert Suit.parse(suit.name.lower()) is suit
    with pytest.raises(ParseError, match="'X'"):
        Suit.parse("X")
    with pytest.raises(ParseError, match="'1'"):
        Rank.parse("1")


# ----------------------------------------------------------------------- calls


def test_every_bid_round_trips() -> None:
    for bid in BIDS:
        assert Call.parse(str(bid)) is bid
        assert Call.parse(bid.pretty) is bid
        assert bid.is_bid
        assert bid.kind is CallKind.BID
    assert str(Call.parse("7C")) == "7C"
    assert str(Call.parse("13NT")) == "13NT"
    assert Call.parse("13nt") is BIDS[-1]
    assert Call.parse("7c") is BIDS[0]
    assert Call.parse("10♠") is Call.bid(10, Denomination.SPADES)
    assert Call.parse("8H").pretty == "8♥"
    assert Call.parse("9NT").pretty == "9NT"


def test_pass_and_double_round_trip() -> None:
    for text in ("pass", "PASS", "p"):
        assert Call.parse(text) is PASS
    for text in ("double", "Double", "x", "dbl"):
        assert Call.parse(text) is DOUBLE
    assert (str(PASS), str(DOUBLE)) == ("pass", "double")
    assert not PASS.is_bid
    assert not DOUBLE.is_bid
    assert Call(CallKind.PASS) is PASS
    assert Call(CallKind.DOUBLE) is DOUBLE
    assert Call(CallKind.BID, 8, Denomination.HEARTS) is Call.parse("8H")


@pytest.mark.parametrize("text", ["", "6H", "14C", "7X", "0NT", "seven clubs", "redouble", "NT7"])
def test_bad_call_text_raises_parse_error_naming_the_input(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        Call.parse(text)
    assert repr(text) in str(caught.value)


def test_bid_levels_outside_the_ladder_are_refused() -> None:
    for level in (6, 14):
        with pytest.raises(ParseError, match=f"level {level}"):
            Call.bid(level, Denomination.CLUBS)


# ----------------------------------------------------------------------- seats


@pytest.mark.parametrize(
    ("seat", "left", "partner", "right", "side"),
    [
        (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST, Side.NORTH_SOUTH),
        (Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH, Side.EAST_WEST),
        (Seat.SOUTH, Seat.WEST, Seat.NORTH, Seat.EAST, Side.NORTH_SOUTH),
        (Seat.WEST, Seat.NORTH, Seat.EAST, Seat.SOUTH, Side.EAST_WEST),
    ],
)
def test_seat_helpers(seat: Seat, left: Seat, partner: Seat, right: Seat, side: Side) -> None:
    assert seat.left is left
    assert seat.next is left
    assert seat.partner is partner
    assert seat.right is right
    assert seat.side is side
    assert seat in side.seats
    assert Seat.parse(seat.letter) is seat
    assert Seat.parse(seat.name.lower()) is seat
    assert str(seat) == seat.name[0]


def test_seats_sides_and_their_text() -> None:
    assert SEATS == (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST)
    assert Side.NORTH_SOUTH.seats == (Seat.NORTH, Seat.SOUTH)
    assert Side.EAST_WEST.seats == (Seat.EAST, Seat.WEST)
    assert Side.NORTH_SOUTH.other is Side.EAST_WEST
    assert (str(Side.NORTH_SOUTH), str(Side.EAST_WEST)) == ("NS", "EW")
    with pytest.raises(ParseError, match="'Q'"):
        Seat.parse("Q")


# ------------------------------------------------------------ hands and deals


EXAMPLE_DEAL = "N:AKQJ.T98.765.432 T98.765.432.AKQJ 765.432.AKQJ.T98 432.AKQJ.T98.765"


def test_hand_text_round_trip() -> None:
    hand = parse_hand("AKQ.JT9.8765.432")
    assert len(hand) == 13
    assert hand == sort_cards(hand)
    assert format_hand(hand) == "AKQ.JT9.8765.432"
    assert parse_hand("AKQ.J109.8765.432") == hand
    assert parse_hand("akq.jt9.8765.432") == hand
    assert format_hand(parse_hand("...")) == "..."
    assert format_hand(parse_hand("AKQJT98765432...")) == "AKQJT98765432..."


@pytest.mark.parametrize("text", ["AKQ.JT9.8765", "AKQ.JT9.8765.43X", "AA.K.Q.J", "A.K.Q.J.T"])
def test_bad_hand_text_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse_hand(text)
    assert repr(text) in str(caught.value)


def test_deal_text_round_trip() -> None:
    deal = Deal.parse(EXAMPLE_DEAL)
    assert str(deal) == EXAMPLE_DEAL
    assert Deal.parse(str(deal)) == deal
    assert deal[Seat.NORTH] == parse_hand("AKQJ.T98.765.432")
    assert deal[Seat.WEST] == parse_hand("432.AKQJ.T98.765")
    assert eval(repr(deal)) == deal
    # The first seat of the text may be any; the hands follow clockwise.
    hands = EXAMPLE_DEAL[2:].split()
    assert Deal.parse("E:" + " ".join(hands[1:] + hands[:1])) == deal
    assert Deal.parse("W:" + " ".join(hands[3:] + hands[:3])) == deal
    assert list(deal) == list(Seat)
    assert len(deal) == 4


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("AKQJ.T98.765.432 T98.765.432.AKQJ", "expected e.g."),
        ("N:AKQJ.T98.765.432 T98.765.432.AKQJ", "expected four hands"),
        (
            "N:AKQJ.T98.765.43 T98.765.432.AKQJ2 765.432.AKQJ.T98 432.AKQJ.T98.765",
            "North has 12 cards",
        ),
        (
            "N:AKQJ.T98.765.432 AKQJ.765.432.T98 765.432.AKQJ.T98 432.AKQJ.T98.765",
            "some card is in two hands",
        ),
        ("X:AKQJ.T98.765.432 T98.765.432.AKQJ 765.432.AKQJ.T98 432.AKQJ.T98.765", "not a seat"),
    ],
)
def test_bad_deal_text_raises_parse_error(text: str, words: str) -> None:
    with pytest.raises(ParseError) as caught:
        Deal.parse(text)
    assert words in str(caught.value)


@settings(max_examples=60)
@given(seed=st.text(max_size=20), number=st.integers(1, 10_000), dealer=st.sampled_from(SEATS))
def test_dealt_deals_round_trip_through_pbn(seed: str, number: int, dealer: Seat) -> None:
    deal, _, _ = deal_cards(seed, number, dealer)
    text = str(deal)
    assert Deal.parse(text) == deal
    for seat in Seat:
        assert parse_hand(format_hand(deal[seat])) == deal[seat]
