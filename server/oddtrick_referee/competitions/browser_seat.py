"""A person's seat played from a web page: a bot whose decisions come from clicks.

To the referee it is a client like any other (the SDK's, over gRPC), so the match is
refereed and logged as any bot's. What it tells the page is built here from the
:class:`~oddtrick.BotView` the client hands its bot, and from nothing else: the page can
learn only what the seat itself was sent (the other hands never reach this process
before their cards are played). Every message is a whole snapshot of the seat's view, so
a page that reconnects, or misses one, shows the right table from the next.

The client runs on asyncio in a thread of its own; the page lives in the referee's trio
run. ``post`` carries each message over (``TrioToken.run_sync_soon``), and a decision
comes back as a call that settles the asyncio future this seat awaits.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

from oddtrick._bot import Bot, BotView
from oddtrick.rules import Action, Call, Card, GameKind, HandResult, MatchResult, Phase, Seat, Trick

RANK_NAMES = {
    "2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
    "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace",
}  # fmt: skip
SUIT_NAMES = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades", "NT": "no trumps"}
LEVEL_NAMES = {7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen"}

Post = Callable[[Callable[[], None]], None]
"""Runs a function on the page's (trio) thread, soon."""


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
    doubled = " doubled" if contract.doubled else ""
    return f"{contract.level}{contract.denomination.symbol}{doubled} by {seat_name(view, contract.declarer)}"


def _last_trick(view: BotView) -> list[dict[str, Any]]:
    if view.current_trick or not view.tricks:
        return []
    trick = view.tricks[-1]
    return [{"seat": str(s), **_card(card), "won": s is trick.winner} for s, card in trick.plays]


class BrowserSeat(Bot):
    """The person's seat: tells the page everything the seat sees, and waits, without a
    deadline (the referee lifts it for this seat), for the page's decision."""

    name = "person"

    def __init__(self, publish: Callable[[dict[str, Any]], None], ask: AskPage, post: Post) -> None:
        self._publish = publish
        self._ask = ask
        self._post = post

    def _tell(self, view: BotView, kind: str, say: str) -> None:
        turn = turn_text(view)
        self._post(functools.partial(self._publish, snapshot(view, kind, f"{say}. {turn}" if turn else say)))

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
        self._post(functools.partial(self._publish, shown))

    async def choose_call(self, view: BotView) -> Action:
        return await self._decide(view)

    async def choose_card(self, view: BotView) -> Action:
        return await self._decide(view)

    async def _decide(self, view: BotView) -> Action:
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Action] = loop.create_future()

        def settle(action: Action) -> None:  # on the page's thread
            loop.call_soon_threadsafe(_settle, answer, action)

        shown = snapshot(view, "your_turn", "", asked=True)  # the page says the turn once
        self._post(functools.partial(self._ask, shown, view, settle))
        return await answer


AskPage = Callable[[dict[str, Any], BotView, Callable[[Action], None]], None]
"""Puts a question to the page: what it shows, the view it is asked in, and how to answer."""


def _settle(future: asyncio.Future[Action], action: Action) -> None:
    if not future.done():
        future.set_result(action)
