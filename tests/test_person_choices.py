"""What a person at the terminal is offered: the choices numbered in the order the hand is shown."""

from __future__ import annotations

from oddtrick import Card, FakeReferee, GameConfig, GameState, Seat
from oddtrick._bot import Bot, BotView
from oddtrick._human import choices_of, parse_answer
from oddtrick.rules import Action

DEAL = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


class Lowest(Bot):
    def choose_card(self, view: BotView) -> Action:
        return view.legal_actions[0]


def leading_view() -> BotView:
    position = GameState.from_deal(GameConfig.classic(), DEAL, dealer=Seat.WEST, turned_card="2S")
    fake = FakeReferee(Lowest(), seat=Seat.NORTH, state=position)
    fake.ask()
    ((view, _),) = fake.decisions
    return view


def test_cards_are_numbered_spades_first_high_to_low_as_the_hand_is_shown() -> None:
    view = leading_view()
    offered = choices_of(view)
    assert [str(card) for card in offered[:5]] == ["AS", "KS", "QS", "JS", "AH"]
    assert str(offered[-1]) == "QC"
    assert parse_answer("1", view) == Card.parse("AS")
    assert parse_answer(str(len(offered)), view) == Card.parse("QC")
