"""The codec's batch decoders (a request's hand and legal actions, decoded for every
decision a bot makes) agree with the one-by-one decoders, and refuse what they refuse."""

from __future__ import annotations

import pytest

from oddtrick._codec import (
    MalformedMessage,
    action_from_wire,
    action_to_wire,
    actions_from_wire,
    card_from_wire,
    card_to_wire,
    cards_from_wire,
)
from oddtrick.rules import DOUBLE, PASS, Call, Card, Denomination
from oddtrick.v1 import cards_pb2

ALL_CARDS = [Card.parse(f"{rank}{suit}") for suit in "CDHS" for rank in "23456789TJQKA"]


def test_every_card_decodes_as_one_by_one() -> None:
    wire = [card_to_wire(card) for card in ALL_CARDS]
    assert cards_from_wire(wire) == tuple(card_from_wire(card) for card in wire) == tuple(ALL_CARDS)
    assert cards_from_wire([]) == ()


def test_actions_decode_as_one_by_one_cards_calls_or_both() -> None:
    calls: list[Call] = [PASS, DOUBLE, Call.bid(7, Denomination.NO_TRUMPS), Call.bid(13, Denomination.SPADES)]
    for actions in (ALL_CARDS, calls, [ALL_CARDS[0], PASS, ALL_CARDS[51]]):
        wire = [action_to_wire(action) for action in actions]
        assert actions_from_wire(wire) == tuple(action_from_wire(a) for a in wire) == tuple(actions)


@pytest.mark.parametrize(
    ("card", "says"),
    [
        (cards_pb2.Card(suit=5, rank=10), "suit 5"),
        (cards_pb2.Card(suit=2, rank=15), "rank 15"),
        (cards_pb2.Card(), "suit 0"),
    ],
)
def test_a_bad_card_among_good_ones_is_refused_naming_it(card: cards_pb2.Card, says: str) -> None:
    hand = [card_to_wire(ALL_CARDS[0]), card, card_to_wire(ALL_CARDS[1])]
    with pytest.raises(MalformedMessage, match=says):
        cards_from_wire(hand)
    with pytest.raises(MalformedMessage, match=says):
        actions_from_wire([cards_pb2.Action(card=c) for c in hand])


def test_an_empty_action_among_cards_is_refused() -> None:
    with pytest.raises(MalformedMessage, match="neither a call nor a card"):
        actions_from_wire([action_to_wire(ALL_CARDS[0]), cards_pb2.Action()])
