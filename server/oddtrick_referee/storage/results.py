"""What a competition records of its matches: the rows the stores keep and the standings read.

Plain values below both: the tournament's store writes and reads them, and the standings
(``competitions/scoring/standings.py``) compute from them, so storage never imports a competition.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DealResult:
    """One play of one deal at one table, as the tournament runner records it."""

    match: str  # key of the match (the pairing), e.g. "alice|bob"
    first: str  # the match's two entries, in the order the match key names them
    second: str
    set_number: int  # a match is played in sets of deals, each with its own seed
    deal_number: int  # deal within the set (1-based)
    table: int  # 0 or 1: the two plays of a duplicate deal (0 only when not duplicate)
    ns_entry: str  # who held North-South at this table
    ew_entry: str
    ns_points: int  # points scored on this deal at this table (incl. honours)
    ew_points: int


@dataclass(frozen=True)
class FaultCounts:
    """How often an entry's bot misbehaved; reported next to its score, never folded into it."""

    timeouts: int = 0
    illegal: int = 0  # fallback after refused actions until the deadline
    disconnected: int = 0
    forfeits: int = 0  # matches forfeited (absent) + seats forfeited (grace over)
    refusals: int = 0  # refused actions (each refusal, even if corrected)
    bot_errors: int = 0  # the bot's own code raised; it played its SDK's fallback
    clock: int = 0  # the seat's time bank ran out (a match with --clock): a time-out of the bank

    @property
    def out_of_time(self) -> int:
        """Decisions lost on time, to the deadline or to the time bank."""
        return self.timeouts + self.clock


@dataclass(frozen=True)
class Forfeit:
    """A match that was never played because one entry did not show up."""

    match: str
    absent: str  # the entry that did not show up: loses the match
    present: str
