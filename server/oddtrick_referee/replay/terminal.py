"""``oddtrick replay``: a logged match as card players lay it out, in a terminal.

Each hand is a diagram (the four hands round the compass with suit symbols,
the dealer, trumps or the contract, the turned card), the auction as a table
in seat columns, then the play trick by trick (leader, cards, winner, the
running trick count), the hand's result and the scores. Piped, everything is
printed; on a terminal the keys step through the match a trick at a time.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
from collections.abc import Iterator
from typing import TextIO

from oddtrick._terminal import console, suits
from oddtrick.rules import Card, Seat
from oddtrick.rules._words import (
    contract_line,
    game_text,
    match_text,
    one_line,
    seat_name,
    trumps_text,
)
from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.replay.model import HandReplay, MatchReplay, Position, holding_text

_COLUMNS = (Seat.WEST, Seat.NORTH, Seat.EAST, Seat.SOUTH)
"""Auction columns, as bridge writes them."""
_SIDE_WIDTH = 26
_MIDDLE_WIDTH = 16


def trumps_line(match: MatchReplay, hand: HandReplay) -> str:
    """Trumps and how they were chosen, or the contract."""
    if not match.classic:
        return contract_line(hand.contract, over=hand.result is not None)
    return trumps_text(hand.trumps, hand.turned_card, hand.cut_card)


def _suit_lines(cards: tuple[Card, ...]) -> list[str]:
    return [
        f"{suit.symbol} {' '.join(c.rank.label for c in held) if held else '—'}"
        for suit, held in holding_text(cards)
    ]


def diagram(match: MatchReplay, position: Position) -> list[str]:
    """The four hands round the compass as they are at ``position``, the trick in the middle."""
    holding = position.holding
    players = match.players
    trick = dict(position.trick)

    def block(seat: Seat) -> list[str]:
        return [f"{seat_name(seat)} · {players.get(seat, '?')}", *_suit_lines(holding[seat])]

    def played(seat: Seat) -> str:
        card = trick.get(seat)
        if card is None:
            return ""
        mark = "*" if position.trick_winner is seat else ""
        return card.pretty + mark

    pad = " " * _SIDE_WIDTH
    lines = [pad + line for line in block(Seat.NORTH)]
    west, east = block(Seat.WEST), block(Seat.EAST)
    middle = ["", played(Seat.NORTH).center(_MIDDLE_WIDTH), "", played(Seat.SOUTH).center(_MIDDLE_WIDTH), ""]
    middle[2] = (played(Seat.WEST).ljust(_MIDDLE_WIDTH // 2) + played(Seat.EAST).rjust(_MIDDLE_WIDTH // 2))[
        :_MIDDLE_WIDTH
    ]
    for row in range(5):
        lines.append(
            (west[row].ljust(_SIDE_WIDTH) + middle[row].ljust(_MIDDLE_WIDTH) + "  " + east[row]).rstrip()
        )
    lines.extend(pad + line for line in block(Seat.SOUTH))
    return lines


def auction_lines(hand: HandReplay) -> list[str]:
    """The auction as a table, one column per seat (West, North, East, South)."""
    if not hand.calls:
        return []
    width = 10
    lines = ["auction: " + "".join(seat_name(seat).ljust(width) for seat in _COLUMNS).rstrip()]
    cells = [""] * _COLUMNS.index(hand.calls[0].seat)
    for step in hand.calls:
        mark = f" ({step.fault})" if step.fault else ""
        cells.append(step.call.pretty + mark)
    for start in range(0, len(cells), 4):
        lines.append("         " + "".join(cell.ljust(width) for cell in cells[start : start + 4]).rstrip())
    return lines


def trick_lines(hand: HandReplay, upto: int | None = None) -> list[str]:
    """Trick by trick: the leader first, then the winner and the running count."""
    lines = []
    for number, steps in hand.tricks:
        if upto is not None and number > upto:
            break
        cards = "  ".join(
            f"{step.seat} {step.card.pretty:<3}{' (' + step.fault + ')' if step.fault else ''}"
            for step in steps
        )
        last = steps[-1]
        if last.winner is not None:
            tail = f"→ {seat_name(last.winner):<5}  NS {last.tricks[0]:>2}  EW {last.tricks[1]:>2}"
        else:
            tail = "(in progress)"
        lines.append(f"trick {number:>2}  {cards}   {tail}")
    return lines


def comment_lines(hand: HandReplay, upto: int | None = None) -> list[str]:
    """What the bots said about their decisions (Decision.comment), one line each, in play
    order: ``comment  trick 3  S K♣  finesse``. Never sent to a seat, so only replays show them."""
    lines = [
        f"comment  auction   {step.seat} {step.call.pretty:<4} {one_line(step.comment)}"
        for step in hand.calls
        if step.comment
    ]
    lines += [
        f"comment  trick {step.trick:>2}  {step.seat} {step.card.pretty:<4} {one_line(step.comment)}"
        for step in hand.plays
        if step.comment and (upto is None or step.trick <= upto)
    ]
    return lines


def fault_lines(hand: HandReplay, upto: int | None = None) -> list[str]:
    """Every fault at its call or card, one line each, in play order:
    ``fault    trick  3  S K♣   the bot's own code failed…: ValueError: boom``."""
    lines = [
        f"fault    auction   {step.seat} {step.call.pretty:<4} {one_line(fault.text)}"
        for step in hand.calls
        for fault in step.faults
    ]
    lines += [
        f"fault    trick {step.trick:>2}  {step.seat} {step.card.pretty:<4} {one_line(fault.text)}"
        for step in hand.plays
        if upto is None or step.trick <= upto
        for fault in step.faults
    ]
    return lines


def faults_panel(match: MatchReplay) -> list[str]:
    """Each seat's faults counted by kind (the web page's faults panel says the same)."""
    counts = match.fault_counts()
    if not counts:
        return ["faults: none"]
    lines = ["faults:"]
    for seat in sorted(counts):
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(counts[seat].items()))
        lines.append(f"  {seat_name(seat):<5}  {match.players.get(seat, '?')}: {kinds}")
    lines += [f"  after the last action: {seat_name(f.seat)} {one_line(f.text)}" for f in match.late_faults]
    return lines


def header(match: MatchReplay, hand: HandReplay) -> list[str]:
    game = f" · game {hand.game_number}" if match.config.plays_to_target else ""
    return [
        f"Hand {hand.number} of {len(match.hands)}{game} · dealer {seat_name(hand.dealer)} · "
        f"{trumps_line(match, hand)}"
    ]


def result_lines(match: MatchReplay, hand: HandReplay) -> list[str]:
    result = hand.result
    if result is None:
        return ["(the log stops during this hand)"]
    lines = [
        f"result: {result.describe()}",
        f"scores: NS {result.scores_after[0]}, EW {result.scores_after[1]}",
    ]
    if hand.game_result is not None:
        lines.append(game_text(hand.game_result))
    return lines


def match_header(match: MatchReplay) -> list[str]:
    seats = "  ".join(f"{seat} {name}" for seat, name in sorted(match.players.items()))
    lines = [f"match {match.match_id} · {match.config.describe()}", f"  {seats}"]
    if match.deal_set is not None:
        lines.append(f"  deals from {match.deal_set}")
    return lines


def match_footer(match: MatchReplay) -> list[str]:
    result = match.result
    if result is None:
        return faults_panel(match)
    return [match_text(result), *faults_panel(match)]


def hand_text(match: MatchReplay, hand: HandReplay, from_trick: int = 1) -> list[str]:
    """A whole hand, for piped output: the deal (as it stood before ``from_trick``), auction, tricks."""
    lines = header(match, hand)
    lines += diagram(match, hand.position(hand.trick_start(from_trick)))
    lines += auction_lines(hand)
    if hand.first_leader is not None:
        lines.append(f"first lead: {seat_name(hand.first_leader)}")
    lines += [line for line in trick_lines(hand) if int(line.split()[1]) >= from_trick]
    lines += fault_lines(hand)
    lines += comment_lines(hand)
    lines += result_lines(match, hand)
    return lines


def print_match(match: MatchReplay, out: TextIO, hand: int | None = None, trick: int = 1) -> None:
    """Everything, for a pipe: every hand (or only ``hand``), from ``trick`` on in the first one shown."""
    lines = match_header(match)
    chosen = [match.hand(hand)] if hand is not None else list(match.hands)
    for index, each in enumerate(chosen):
        lines.append("")
        lines += hand_text(match, each, trick if index == 0 else 1)
    lines.append("")
    lines += match_footer(match)
    _write(out, lines)


def _write(out: TextIO, lines: list[str]) -> None:
    """``lines`` on ``out``, the red suits in red where it shows colour (a terminal, or
    FORCE_COLOR for ``less -R``; never with NO_COLOR), as ``oddtrick watch`` shows them."""
    shown = console(out)
    if shown.color_system is None:
        out.write("\n".join(lines) + "\n")
        return
    for line in lines:
        shown.print(suits(line))


# ---------------------------------------------------------------- stepping


class Stepper:
    """Where the viewer is: a hand, and a trick boundary in it (0: before the first card)."""

    def __init__(self, match: MatchReplay, hand: int = 1, trick: int = 0) -> None:
        self.match = match
        self.hand = max(1, min(hand, len(match.hands)))
        self.step = 0
        self.step = max(0, min(trick, self._last()))

    def _last(self) -> int:
        """The last step of the hand: one per trick started."""
        plays = self.match.hand(self.hand).positions
        return (plays + 3) // 4

    @property
    def card(self) -> int:
        return min(self.step * 4, self.match.hand(self.hand).positions)

    def forward(self) -> None:
        if self.step < self._last():
            self.step += 1
        elif self.hand < len(self.match.hands):
            self.hand, self.step = self.hand + 1, 0

    def back(self) -> None:
        if self.step > 0:
            self.step -= 1
        elif self.hand > 1:
            self.hand -= 1
            self.step = self._last()

    def next_hand(self) -> None:
        if self.hand < len(self.match.hands):
            self.hand, self.step = self.hand + 1, 0

    def previous_hand(self) -> None:
        if self.hand > 1:
            self.hand, self.step = self.hand - 1, 0

    def screen(self) -> list[str]:
        match = self.match
        hand = match.hand(self.hand)
        position = hand.position(self.card)
        lines = [*match_header(match), "", *header(match, hand)]
        lines += diagram(match, position)
        lines += auction_lines(hand)
        lines += trick_lines(hand, upto=position.trick_number)
        lines += fault_lines(hand, upto=position.trick_number)
        lines += comment_lines(hand, upto=position.trick_number)
        if position.card == hand.positions:
            lines += result_lines(match, hand)
            if self.hand == len(match.hands):
                lines += match_footer(match)
        lines.append("")
        lines.append(
            f"hand {self.hand}/{len(match.hands)} · trick {position.trick_number}/{(hand.positions + 3) // 4}"
            "   → next  ← back  ↓ next hand  ↑ previous hand  q quit"
        )
        return lines


_KEYS = {
    "\x1b[C": "forward",
    "l": "forward",
    " ": "forward",
    "n": "forward",
    "\r": "forward",
    "\x1b[D": "back",
    "h": "back",
    "p": "back",
    "\x1b[B": "next_hand",
    "j": "next_hand",
    "\x1b[6~": "next_hand",
    "\x1b[A": "previous_hand",
    "k": "previous_hand",
    "\x1b[5~": "previous_hand",
}


def _read_key(fd: int) -> str:
    """One key press: a character, or an escape sequence (arrows, page keys) read whole."""
    data = os.read(fd, 1)
    if data == b"\x1b":
        # The rest of a sequence arrives with it; a lone Esc has nothing after it.
        while select.select([fd], [], [], 0.05)[0]:
            data += os.read(fd, 1)
            if data[-1:].isalpha() or data[-1:] == b"~":
                break
    return data.decode("utf-8", "replace")


@contextlib.contextmanager
def _raw(fd: int) -> Iterator[None]:
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def interactive(match: MatchReplay, out: TextIO, fd: int, hand: int = 1, trick: int = 0) -> None:
    """Step through the match with the keys until q (or Ctrl-C, or end of input)."""
    stepper = Stepper(match, hand, trick)
    with _raw(fd):
        while True:
            out.write("\x1b[H\x1b[2J")
            _write(out, stepper.screen())
            out.flush()
            key = _read_key(fd)
            if key in ("q", "Q", "\x03", "\x04", ""):
                return
            move = _KEYS.get(key)
            if move is not None:
                getattr(stepper, move)()


def run(
    match: MatchReplay, out: TextIO, hand: int | None, trick: int | None, keys: bool | None = None
) -> None:
    """The ``replay`` command's output: stepping on a terminal, everything when piped."""
    if hand is not None:
        match.hand(hand)  # the error names the hands there are
    if trick is not None and not 1 <= trick <= 13:
        raise ReplayError(f"no trick {trick}: tricks are numbered 1 to 13")
    if keys is None:
        keys = sys.stdin.isatty() and out.isatty()
    if keys:
        interactive(match, out, sys.stdin.fileno(), hand or 1, (trick - 1) if trick else 0)
    else:
        print_match(match, out, hand, trick or 1)
