"""How far a table being played is: the hand and the trick, and nothing else.

A sealed table's page, and the list of tables in progress, say how far each table is, so
people can follow a duplicate tournament or a ladder while every table is sealed. The
numbers are counted from the kinds and hand numbers of the table's log records (read by the
one reader, :mod:`oddtrick._log_records`; the only fields used besides a call's being
``pass``): no card, no call, no seat of the log leaves this
module, so nothing a twin table's players must not know can reach a page through it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from pathlib import Path

from oddtrick._log_records import (
    ActionRecord,
    HandResultRecord,
    HandStart,
    MalformedRecord,
    Record,
    log_text_lines,
    records_from_lines,
)
from oddtrick.rules import GameState, Phase
from oddtrick_referee.replay.sources import safe_log_path


@dataclasses.dataclass(frozen=True)
class Progress:
    """A table's place in its match: ``trick`` 0 while the hand is bid, ``over`` once scored."""

    hand: int
    trick: int
    over: bool

    @property
    def text(self) -> str:
        if self.hand == 0:
            return "starting"
        if self.over:
            return f"hand {self.hand} over"
        if self.trick == 0:
            return f"hand {self.hand} · auction"
        return f"hand {self.hand} · trick {self.trick}"

    def to_json(self) -> dict[str, object]:
        return {"hand": self.hand, "trick": self.trick, "over": self.over, "text": self.text}


def progress_of_lines(lines: Iterable[str], contract: bool) -> Progress:
    """Count hands, and cards of the last hand, from a log's lines (of a table being
    played: a line that does not read yet is being written, and left out)."""
    return progress_of_records(_readable(lines), contract)


def _readable(lines: Iterable[str]) -> Iterator[Record]:
    for line in lines:
        try:
            yield from records_from_lines((line,))
        except MalformedRecord:
            continue  # a line being written


def progress_of_records(records: Iterable[Record], contract: bool) -> Progress:
    """Count hands, and cards of the last hand, from a log's records.

    In Contract Whist the first actions of a hand are its auction, which ends, as the
    rules end it, after three passes following a bid (a double resets the count too)
    or four passes with no bid (the hand is thrown in).
    """
    hand, cards, over = 0, 0, False
    bidding, passes, bid = False, 0, False
    for record in records:
        if isinstance(record, HandStart):
            hand, cards, over = record.hand, 0, False
            bidding, passes, bid = contract, 0, False
        elif isinstance(record, HandResultRecord):
            over = True
        elif isinstance(record, ActionRecord) and bidding:
            if record.action == "pass":
                passes += 1
                bidding = not ((bid and passes == 3) or (not bid and passes == 4))
            else:
                passes, bid = 0, True
        elif isinstance(record, ActionRecord):
            cards += 1
    trick = 0 if bidding or hand == 0 else min(13, cards // 4 + 1)
    return Progress(hand, trick, over)


def table_progress(data_dir: Path, stored_log_path: str, contract: bool) -> Progress | None:
    """The progress of the table whose log the index names (``None`` if it cannot be read)."""
    path = safe_log_path(data_dir, stored_log_path)
    if path is None:
        return None
    try:
        return progress_of_lines(log_text_lines(path), contract)
    except OSError:
        return None


def state_progress(state: GameState) -> Progress:
    """How far a table's game is, from its rules state (the referee's own table)."""
    tricks = sum(state.tricks_won)
    if state.phase is Phase.PLAY:
        return Progress(state.hand_number, min(13, tricks + 1), False)
    if state.phase is Phase.AUCTION:
        return Progress(state.hand_number, 0, False)
    return Progress(state.hand_number, tricks, True)
