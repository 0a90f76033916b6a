"""What a spectator is told of a match, as values: the rules' events and the table's own.

The rules report a match's events (``oddtrick.rules``: :class:`HandStarted` to
:class:`MatchEnded`, returned by ``GameState.step``); a table adds what only it
knows: the match opening with its players, and a stop before the end. A spectator
(``Arena.WatchMatch``, the live web page) receives these values; the spectators'
wire events are their encoding (``oddtrick._codec_protocol``), and
:func:`oddtrick._codec_protocol.spectator_event_from_wire` reads them back, so a page
following a referee elsewhere takes the same values as one beside the table.
"""

from __future__ import annotations

import dataclasses
from typing import TypeAlias

from oddtrick.rules import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    GameConfig,
    GameEnded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    Seat,
    TrickWon,
)


@dataclasses.dataclass(frozen=True, slots=True)
class MatchOpened:
    """The match begins: what it is and who plays."""

    match_id: str
    config: GameConfig
    players: tuple[tuple[Seat, str], ...]
    """Each seat and the name of its bot."""


@dataclasses.dataclass(frozen=True, slots=True)
class MatchStopped:
    """The match was stopped before its end, with why, and the points so far."""

    reason: str
    totals: tuple[int, int]


SpectatorEvent: TypeAlias = MatchOpened | MatchEvent | MatchStopped
"""Everything a spectator is told, in order (``HandStarted.hands`` only at an open table)."""

__all__ = [
    "AuctionEnded",
    "CallMade",
    "CardPlayed",
    "GameEnded",
    "HandEnded",
    "HandStarted",
    "MatchEnded",
    "MatchEvent",
    "MatchOpened",
    "MatchStopped",
    "SpectatorEvent",
    "TrickWon",
]
