"""A person's seat: a bot whose decisions are typed at a terminal.

To the referee it is a bot like any other (the same protocol, the same log);
to the person it shows what the seat knows as it happens: the hand with suit
symbols (hearts and diamonds in red on a terminal), the auction, each card
and trick, the results; and when it is their turn, the legal choices,
numbered. A choice is typed as its number or as the card or call itself
(``QH``, ``10h``, ``Q♥``; ``7C``, ``8NT``, ``pass``, ``double``); anything else
gets a one-line reason and the question again, so no illegal play can leave
the terminal.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from oddtrick._bot import Bot, BotView
from oddtrick._terminal import console, suits
from oddtrick.rules import (
    Action,
    Call,
    Card,
    GameKind,
    HandResult,
    MatchResult,
    ParseError,
    Seat,
    Suit,
    Trick,
)
from oddtrick.rules._cards import pretty_hand


class Quit(BaseException):
    """The person ended their input (Ctrl-D): stop the match rather than play for them."""


class HumanSeat(Bot):
    """Asks the person at ``read``/``out`` for each decision and tells them everything
    their seat sees."""

    name = "human"

    def __init__(self, out: IO[str], read: Callable[[str], str] = input) -> None:
        self.out = console(out)
        self._stream = out
        self._read = read

    # ------------------------------------------------------------- telling

    def say(self, text: str, style: str = "") -> None:
        self.out.print(suits(text, style))
        self._stream.flush()

    def on_match_start(self, view: BotView) -> None:
        seat = view.seat
        assert seat is not None
        partner = view.players.get(seat.partner, "?")
        others = " and ".join(sorted({view.players.get(seat.left, "?"), view.players.get(seat.right, "?")}))
        self.say(f"{view.config.describe()}", "bold")
        self.say(f"you sit {seat.name.title()}; your partner {seat.partner.name.title()} is {partner}; "
                 f"your opponents are {others}")  # fmt: skip

    def on_hand_start(self, view: BotView) -> None:
        line = f"hand {view.hand_number} · dealer {view.dealer.name.title()}"
        if view.config.game is GameKind.CLASSIC:
            line += f" · trumps {view.trumps.symbol if view.trumps is not None else 'none (no trumps)'}"
        if view.turned_card is not None:
            line += f" (turned {view.turned_card.pretty})"
        if view.cut_card is not None:
            line += f" (cut {view.cut_card.pretty})"
        self.say("")
        self.say(line, "bold")
        self.say(f"your hand: {pretty_hand(view.hand)}")

    def on_call(self, view: BotView, seat: Seat, call: Call) -> None:
        self.say(f"  {self._who(view, seat)} {'pass' if call.kind.value == 'pass' else call.pretty}")

    def on_card(self, view: BotView, seat: Seat, card: Card) -> None:
        self.say(f"  {self._who(view, seat)} {card.pretty}")

    def on_trick(self, view: BotView, trick: Trick) -> None:
        ns, ew = view.tricks_won
        ours = ns if view.seat is not None and view.seat.side == 0 else ew
        self.say(f"  trick {trick.number} to {self._who(view, trick.winner)} · your side {ours}, "
                 f"theirs {ns + ew - ours}", "dim")  # fmt: skip

    def on_hand_end(self, view: BotView, result: HandResult) -> None:
        self.say(f"result: {result.describe()}", "bold")
        if result.deal is not None:
            for seat in Seat:
                self.say(f"  {seat.name.title():<5} {pretty_hand(result.deal[seat])}")

    def on_match_end(self, view: BotView, result: MatchResult) -> None:
        seat = view.seat
        assert seat is not None
        side = seat.side
        outcome = "drawn" if result.winner is None else ("you won" if result.winner is side else "you lost")
        self.say("")
        self.say(f"match over: {outcome}, {result.totals[side]}-{result.totals[side.other]}", "bold")

    def _who(self, view: BotView, seat: Seat) -> str:
        if seat is view.seat:
            return "you"
        return f"{seat.name.title()} ({view.players.get(seat, '?')})"

    # -------------------------------------------------------------- asking

    def choose_call(self, view: BotView) -> Action:
        auction = ", ".join(
            f"{seat.letter} {'pass' if call.kind.value == 'pass' else call.pretty}"
            for seat, call in view.auction
        )
        self.say(f"auction so far: {auction or 'none'} · your hand: {pretty_hand(view.hand)}")
        return self._ask(view, "your call")

    def choose_card(self, view: BotView) -> Action:
        trick = "  ".join(f"{seat.letter} {card.pretty}" for seat, card in view.current_trick)
        contract = f"{view.contract} · " if view.contract is not None else ""
        self.say(f"{contract}trick {len(view.tricks) + 1}: {trick or 'you lead'}")
        self.say(f"your hand: {pretty_hand(view.hand)}")
        return self._ask(view, "your card")

    def _ask(self, view: BotView, question: str) -> Action:
        """Blocks on the person's input: the seat's decision runs on its own worker thread."""
        choices = "  ".join(f"[{n}] {_shown(action)}" for n, action in enumerate(choices_of(view), 1))
        self.say(f"{question}: {choices}")
        while True:
            try:
                text = self._read(f"{question}> ")
            except EOFError:
                raise Quit from None
            answer = parse_answer(text, view)
            if isinstance(answer, str):
                self.say(answer, "yellow")
                continue
            return answer


def _shown(action: Action) -> str:
    if isinstance(action, Card):
        return action.pretty
    return "pass" if action.kind.value == "pass" else action.pretty


def choices_of(view: BotView) -> tuple[Action, ...]:
    """The legal actions as the person is offered them, numbered from 1: cards in the order
    the hand is shown (spades first, high to low), calls in the rules' order."""
    legal = view.legal_actions
    if legal and isinstance(legal[0], Card):
        return tuple(sorted(legal, key=lambda card: (-card.suit, -card.rank)))  # type: ignore[union-attr]
    return legal


def parse_answer(text: str, view: BotView) -> Action | str:
    """The legal action ``text`` names, or a one-line reason why it names none."""
    text = text.strip()
    legal = choices_of(view)
    if not text:
        return f"type a number from 1 to {len(legal)}, or the {_kind(view)} itself"
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(legal):
            return legal[number - 1]
        return f"{number} is not one of the choices: type a number from 1 to {len(legal)}"
    is_card = isinstance(legal[0], Card)
    try:
        action: Action = Card.parse(text) if is_card else Call.parse(text)
    except ParseError as error:
        return f"{error}"
    if action in legal:
        return action
    return _why_not(action, view)


def _kind(view: BotView) -> str:
    return (
        "card (such as QH or 10♥)" if isinstance(view.legal_actions[0], Card) else "call (such as 7H or pass)"
    )


def _why_not(action: Action, view: BotView) -> str:
    if isinstance(action, Card):
        if action not in view.hand:
            return f"you do not hold {action.pretty}"
        led = view.current_trick[0][1].suit
        return f"you must follow suit: {_suit_name(led)} was led and you hold {pretty_hand_of(view, led)}"
    if action.kind.value == "double":
        return "you cannot double now (only an opponent's bid, once, and only with doubling on)"
    return f"{action.pretty} is not higher than the bid so far; the lowest you may bid is {_lowest_bid(view)}"


def _suit_name(suit: Suit) -> str:
    return f"{suit.name.lower()} {suit.symbol}"


def pretty_hand_of(view: BotView, suit: Suit) -> str:
    return " ".join(card.pretty for card in view.hand if card.suit is suit)


def _lowest_bid(view: BotView) -> str:
    bids = [a for a in view.legal_actions if isinstance(a, Call) and a.kind.value == "bid"]
    return bids[0].pretty if bids else "none (pass)"
