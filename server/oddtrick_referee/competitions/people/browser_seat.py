"""A person's seat played from a web page: a local seat whose decisions come from clicks.

To the table it is a seat like any other (``play/local_seat.py``): it is sent what the
outbox decides that seat may see, read into a :class:`~oddtrick.BotView` by the SDK's
own seat state, and its answers are refereed and logged as any bot's. What it tells the
page is built here from that view and from nothing else: the page can learn only what the
seat itself was sent. Every message is a whole snapshot of the seat's view, so a page that
reconnects, or misses one, shows the right table from the next.

The page, the desk and the table all live in the referee's trio run: the seat's hooks
publish to the desk as the events come, and a decision awaits the page's answer there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import trio

from oddtrick._bot import Bot, BotView
from oddtrick._in_process import BotSide
from oddtrick.rules import Action, Call, Card, GameKind, HandResult, MatchResult, Phase, Seat, Trick
from oddtrick.rules._words import contract_text
from oddtrick.v1 import referee_pb2
from oddtrick_referee.competitions.people.seat_desk import SeatDesk

RANK_NAMES = {
    "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
    "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace",
}  # fmt: skip
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades", "NT": "no trumps"}
LEVEL_NAMES = {7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen"}


def card_label(card: Card) -> str:
    """``Q♠ queen of spades``: what a screen reader says of a card, symbol and words."""
    return f"{card.pretty} {RANK_NAMES[card.rank.letter]} of {SUIT_NAMES[card.suit.letter]}"


def call_label(call: Call) -> str:
    """``7♠ seven spades``, ``8NT eight no trumps``, ``pass``, ``double``."""
    if call.denomination is None:
        return call.kind.value
    return f"{call.pretty} {LEVEL_NAMES[call.level]} {SUIT_NAMES[call.denomination.letters]}"


def _card(card: Card) -> dict[str, Any]:
    return {
        "card": str(card),
        "text": card.pretty,
        "label": card_label(card),
        "red": card.suit.letter in "HD",
    }


def _call(call: Call) -> dict[str, str]:
    return {"call": str(call), "text": call.pretty, "label": call_label(call)}


def _action(action: Action) -> str:
    return str(action)


def seat_name(view: BotView, seat: Seat) -> str:
    """``you`` for the person's own seat, else ``West (heuristic-opponents)``."""
    if seat is view.seat:
        return "you"
    return f"{seat.name.title()} ({view.players.get(seat, '?')})"


def turn_text(view: BotView) -> str:
    """Whose turn it is, in words (empty when nobody is to act)."""
    if view.to_act is None:
        return ""
    doing = "call" if view.phase is Phase.AUCTION else "play"
    if view.to_act is view.seat:
        return f"your turn to {doing}"
    return f"{seat_name(view, view.to_act)} to {doing}"


def snapshot(view: BotView, kind: str, say: str, asked: bool = False) -> dict[str, Any]:
    """Everything the page shows, from what this seat sees: its own hand and nothing of
    the other hands but the cards already played."""
    seat = view.seat
    assert seat is not None
    contract = view.contract
    shown: dict[str, Any] = {
        "type": kind,
        "say": say,
        "hand_number": view.hand_number,
        "game": view.config.game.value,
        "seat": str(seat),
        "players": {str(s): view.players.get(s, "?") for s in Seat},
        "dealer": str(view.dealer),
        "phase": view.phase.value,
        "to_act": None if view.to_act is None else str(view.to_act),
        "turn": turn_text(view),
        "cards": [_card(card) for card in sorted(view.hand, key=lambda c: (-c.suit, -c.rank))],
        "legal": [_action(action) for action in view.legal_actions] if asked else [],
        "auction": [{"seat": str(s), **_call(call)} for s, call in view.auction],
        "contract": None if contract is None else _contract_text(view),
        "trumps": None if view.trumps is None else view.trumps.symbol,
        "trick": [{"seat": str(s), **_card(card)} for s, card in view.current_trick],
        "last_trick": _last_trick(view),
        "played": len(view.played_cards),
        "tricks": list(view.tricks_won),
        "scores": list(view.scores),
        "totals": list(view.totals),
        "result": view.hand_results[-1].describe()
        if view.hand_results and view.hand_results[-1].hand_number == view.hand_number
        else None,
        "match_result": None,
    }
    return shown


def _contract_text(view: BotView) -> str:
    contract = view.contract
    assert contract is not None
    return contract_text(contract, by=seat_name(view, contract.declarer))


def _last_trick(view: BotView) -> list[dict[str, Any]]:
    if view.current_trick or not view.tricks:
        return []
    trick = view.tricks[-1]
    return [{"seat": str(s), **_card(card), "won": s is trick.winner} for s, card in trick.plays]


class BrowserSeat(Bot):
    """What the person's seat tells the page: a snapshot of the seat's view at every event."""

    name = "person"

    def __init__(self, publish: Callable[[dict[str, Any]], None]) -> None:
        self._publish = publish

    def _tell(self, view: BotView, kind: str, say: str) -> None:
        turn = turn_text(view)
        self._publish(snapshot(view, kind, f"{say}. {turn}" if turn else say))

    def on_match_start(self, view: BotView) -> None:
        seat = view.seat
        assert seat is not None
        self._tell(view, "match_started", f"{view.config.describe()}; you sit {seat.name.title()}")

    def on_hand_start(self, view: BotView) -> None:
        trumps = ""
        if view.config.game is GameKind.CLASSIC:
            trumps = f", trumps {view.trumps.symbol if view.trumps is not None else 'none'}"
        self._tell(
            view, "hand_started", f"hand {view.hand_number}, dealer {view.dealer.name.title()}{trumps}"
        )

    def on_call(self, view: BotView, seat: Seat, call: Call) -> None:
        self._tell(view, "call_made", f"{seat_name(view, seat)} called {call_label(call)}")

    def on_card(self, view: BotView, seat: Seat, card: Card) -> None:
        self._tell(view, "card_played", f"{seat_name(view, seat)} played {card_label(card)}")

    def on_trick(self, view: BotView, trick: Trick) -> None:
        self._tell(view, "trick_completed", f"trick {trick.number} to {seat_name(view, trick.winner)}")

    def on_hand_end(self, view: BotView, result: HandResult) -> None:
        self._tell(view, "hand_ended", f"hand {result.hand_number} over: {result.describe()}")

    def on_match_end(self, view: BotView, result: MatchResult) -> None:
        seat = view.seat
        assert seat is not None
        side = seat.side
        outcome = "drawn" if result.winner is None else ("you won" if result.winner is side else "you lost")
        shown = snapshot(view, "match_ended", f"match over: {outcome}")
        shown["match_result"] = f"match over: {outcome}, {result.totals[side]}–{result.totals[side.other]}"
        self._publish(shown)


class PagePlayer:
    """The person's local seat (a :class:`~oddtrick_referee.play.local_seat.LocalPlayer`):
    every event reaches the page as it comes, and each decision waits, without a deadline
    (the referee lifts it for this seat), for the page's answer through ``desk``."""

    def __init__(self, desk: SeatDesk) -> None:
        self._desk = desk
        self._side = BotSide(lambda: BrowserSeat(desk.publish))

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        self._side.receive(message)
        self._side.read_inbox()  # the page is told at once, not with the next request

    async def decide(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        arrived = time.monotonic()
        view = self._side.view_for(request, arrived)
        answered = trio.Event()
        chosen: list[Action] = []

        def reply(action: Action) -> None:  # the desk checked it is legal
            chosen.append(action)
            answered.set()

        self._desk.ask(
            snapshot(view, "your_turn", "", asked=True), view, reply
        )  # the page says the turn once
        await answered.wait()
        return self._side.answer_with(request, chosen[0], arrived)

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        return self._side.again(refusal)

    def finish(self) -> None:
        self._side.read_inbox()
