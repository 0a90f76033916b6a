"""The one interface of a match's spectators.

Every spectator, a gRPC stream of ``Arena.WatchMatch`` (arena.py) or the live web
page beside the referee (web/live.py), is a :class:`Spectator`: it is shown
:class:`~oddtrick._codec_protocol.Seen` events, each the value
(``oddtrick._events``) and its wire fields, so the page takes values and the Arena
service sends wire events without either decoding or re-encoding the other's form.
What they are shown, and the record of it, is the table's outbox's
(:class:`~oddtrick_referee.play.outbox.Spectators`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import grpc

from oddtrick._codec_protocol import Seen

MAX_WATCHERS = 16
"""Spectators per match: watching costs the table's thread a little per spectator."""


class Spectator(Protocol):
    """Whoever follows a match: told its events in order, then closed with why."""

    @property
    def closed(self) -> bool:
        """True once it went away (or was cut off): it is sent nothing more."""

    def show(self, seen: Sequence[Seen]) -> None:
        """The next events, in order; never blocks (a spectator too far behind closes)."""

    def close(self, code: grpc.StatusCode, details: str) -> None:
        """The match is over (``OK``), stopped, or not to be watched."""
