"""Telling a bot why it waits, when only the bot can end the wait.

A match needs some of a bot's seats at once, one stream each. A bot started with
too few streams used to wait without a word: the referee's log said why, but that
log is on the operator's machine, not on the bot author's. So while a wait for
seats lasts, each idle session of a bot with too few streams open is sent a
``Waiting`` message (referee.proto) saying how many the match needs and how many
the bot has: once, and again only when those numbers change. A shortage is told
only after it has held :data:`NOTICE_AFTER_S` unchanged, so that a bot whose
streams are still connecting one by one hears nothing; and a bot with streams
enough that are merely busy in other matches is not short at all.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Protocol

from oddtrick._codec_protocol import waiting_message
from oddtrick.rules import GameKind
from oddtrick.v1 import referee_pb2

log = logging.getLogger("oddtrick.referee.sessions")

NOTICE_AFTER_S = 2.0
"""How long a shortage holds unchanged before the bot is told: longer than a bot takes
to open its streams one after another, short enough that its author is still looking."""


class Listener(Protocol):
    """An idle session, as far as telling it goes."""

    @property
    def id(self) -> str: ...

    def tell(self, message: referee_pb2.RefereeMessage) -> None: ...


@dataclasses.dataclass(frozen=True)
class Shortage:
    """A bot the wait needs more of at once than it has streams open."""

    name: str
    needed: int
    offered: int
    """Its streams open for the game, idle or seated elsewhere (fewer than ``needed``)."""
    idle: Sequence[Listener]
    """Its idle sessions for the game: those that are told."""


class WaitNotices:
    """The Waiting notices of one wait for seats at one game: each idle session of a
    short bot is told what it is short of once, after the shortage has held a moment."""

    def __init__(self, game: GameKind, after_s: float = NOTICE_AFTER_S) -> None:
        self.game = game
        self.after_s = after_s
        self._since: dict[str, tuple[tuple[int, int], float]] = {}
        """Per bot: the (needed, offered) it is short by, and since when (trio clock)."""
        self._told: dict[str, tuple[int, int]] = {}
        """Per session id: the (needed, offered) it was told."""

    def tell(self, shortages: Iterable[Shortage], now: float) -> float:
        """Send the notices due at ``now``; return when the next falls due (inf: none
        will unless something changes, which wakes the wait anyway)."""
        next_due = math.inf
        for short in shortages:
            counts = (short.needed, short.offered)
            seen = self._since.get(short.name)
            if seen is None or seen[0] != counts:
                seen = self._since[short.name] = (counts, now)
            untold = [session for session in short.idle if self._told.get(session.id) != counts]
            if not untold:
                continue
            due = seen[1] + self.after_s
            if now < due:
                next_due = min(next_due, due)
                continue
            message = waiting_message(short.name, short.needed, short.offered, self.game)
            for session in untold:
                session.tell(message)
                self._told[session.id] = counts
            log.info(
                "told %s (%d idle stream%s) that the match needs %d of its seats and it has %d streams open",
                short.name,
                len(untold),
                "" if len(untold) == 1 else "s",
                short.needed,
                short.offered,
            )
        return next_due
