"""The game's values as people read them: seats, cards and calls with suit symbols,
contracts, trumps, results, and the faults the referee records.

Written once here so that the terminal (``oddtrick replay``, the transcript, the
analysis) and the web page say a contract, a result or a fault in the same words;
the page's script is sent these texts, never its own copy of them. The rules'
result classes call these too, so the functions take any value with the fields they
read (a protocol), and this module imports none of the classes that use it.
"""

from __future__ import annotations

from typing import Protocol

from oddtrick.rules._calls import Call, Denomination
from oddtrick.rules._cards import Card, Suit
from oddtrick.rules._seats import Seat, Side


class ContractLike(Protocol):
    """What :func:`contract_text` reads of a contract."""

    @property
    def level(self) -> int: ...
    @property
    def denomination(self) -> Denomination: ...
    @property
    def declarer(self) -> Seat: ...
    @property
    def doubled(self) -> bool: ...


class GameLike(Protocol):
    """What :func:`game_text` reads of a game's result."""

    @property
    def game_number(self) -> int: ...
    @property
    def winner(self) -> Side: ...
    @property
    def scores(self) -> tuple[int, int]: ...


class MatchLike(Protocol):
    """What :func:`match_text` reads of a match's result."""

    @property
    def winner(self) -> Side | None: ...
    @property
    def totals(self) -> tuple[int, int]: ...
    @property
    def reason(self) -> str: ...


def seat_name(seat: Seat) -> str:
    """``North``: a seat in full, as the diagrams and sentences name it."""
    return seat.name.title()


def card_text(card: Card) -> str:
    """``10♥``: a card with its suit's symbol (the log writes ``TH``)."""
    return card.pretty


def call_text(call: Call) -> str:
    """``4♥``, ``pass``, ``double``: a call with its suit's symbol."""
    return call.pretty


def contract_text(
    contract: ContractLike, *, side: bool = False, letters: bool = False, by: str | None = None
) -> str:
    """``4♥ doubled by North``, with ``(NS)`` when ``side``; ``letters`` writes it as the
    log does for tables of figures (``4H doubled by N``); ``by`` names the declarer
    otherwise (a person's own seat is ``you``)."""
    doubled = " doubled" if contract.doubled else ""
    if letters:
        return f"{contract.level}{contract.denomination.letters}{doubled} by {contract.declarer.name[0]}"
    declarer = seat_name(contract.declarer) if by is None else by
    text = f"{contract.level}{contract.denomination.symbol}{doubled} by {declarer}"
    if side:
        text += f" ({contract.declarer.side})"
    return text


def contract_line(contract: ContractLike | None, over: bool = True) -> str:
    """A Contract Whist hand's heading: ``contract 4♥ by North (NS) · trumps ♥``, or why
    there is none (``over``: the hand is over, so all four passed)."""
    if contract is None:
        return "thrown in: all four passed" if over else "auction in progress"
    trumps = contract.denomination.suit
    shown = "no trumps" if trumps is None else f"trumps {trumps.symbol}"
    return f"contract {contract_text(contract, side=True)} · {shown}"


def trumps_text(trumps: Suit | None, turned: Card | None, cut: Card | None) -> str:
    """A classic hand's trumps and how they were chosen."""
    if turned is not None:
        return f"trumps {turned.suit.symbol} (turned card {turned.pretty})"
    if cut is not None:
        return f"trumps {cut.suit.symbol} (cut {cut.pretty})"
    if trumps is None:
        return "no trumps (fixed rotation)"
    return f"trumps {trumps.symbol} (fixed rotation)"


def scores_text(scores: tuple[int, int] | list[int]) -> str:
    """``NS 5 · EW 3``."""
    return f"NS {scores[0]} · EW {scores[1]}"


def game_text(game: GameLike) -> str:
    """``game 1 won by NS 5-2``."""
    won, lost = game.scores[game.winner], game.scores[game.winner.other]
    return f"game {game.game_number} won by {game.winner} {won}-{lost}"


def match_text(result: MatchLike) -> str:
    """``match over: NS won 2 games to 1; totals NS 12, EW 7``."""
    return f"match over: {result.reason}; totals NS {result.totals[0]}, EW {result.totals[1]}"


FAULTS = {
    "timeout": "played by the referee: the bot did not answer in time",
    "disconnected": "played by the referee: the bot was disconnected",
    "illegal": "played by the referee: the bot's answers were not legal",
    "forfeited": "played by the referee: the seat was forfeited",
    "bot_error": "the bot's own code failed: its SDK played a fallback",
    "clock": "played by the referee: the bot's time bank ran out",
    "refusal": "the referee refused an answer",
    "disconnect": "the bot's connection dropped",
    "reconnect": "the bot took its seat back",
    "forfeit": "the seat was forfeited: the bot did not come back in time",
}
"""What each kind of fault the log records means: an action's ``fault``, a ``bot_error``,
and the records of refusals and of seats that dropped, came back or were forfeited."""


def fault_text(fault: str | None) -> str:
    """A logged fault in words (empty for none)."""
    if not fault:
        return ""
    return FAULTS.get(fault, f"played by the referee ({fault})")


def duration_text(ms: int) -> str:
    """``850 ms``, ``1.2 s``."""
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def time_text(think_ms: int | None, bot_think_ms: int | None) -> str:
    """A decision's time: the bot's own think time when it reported one, and the referee's
    measure (request sent to answer received, lag included); the two apart, because a slow
    answer may be the network's or the machine's and not the bot's."""
    if think_ms is None:
        return ""
    if bot_think_ms is None:
        return f"answered in {duration_text(think_ms)}"
    return f"thought {duration_text(bot_think_ms)}, answered in {duration_text(think_ms)}"


def one_line(text: str) -> str:
    """A bot's text (a comment, an error) as one line of plain text: its control characters
    never reach a terminal."""
    return "".join(ch if ch.isprintable() else " " for ch in text).strip()
