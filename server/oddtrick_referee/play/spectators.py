"""A match's spectators: the numbered record of what they are told, and one interface.

Every spectator, a gRPC stream of ``Arena.WatchMatch`` (arena.py) or the live web
page beside the referee (web/live.py), is a :class:`Spectator`: it is shown
:class:`Seen` events, each the value (``oddtrick._events``) and its wire fields, so
the page takes values and the Arena service sends wire events without either
decoding or re-encoding the other's form. What goes into the record (the four hands
only at an open table) is decided by the table's outbox (:mod:`.outbox`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import grpc

from oddtrick._codec_protocol import event_to_wire
from oddtrick._events import SpectatorEvent
from oddtrick.v1 import referee_pb2

MAX_WATCHERS = 16
"""Spectators per match: watching costs the table's thread a little per spectator."""


class Seen:
    """One spectator event: its number (from 1), its value and its wire fields."""

    __slots__ = ("_wire", "event", "fields", "number")

    def __init__(self, number: int, event: SpectatorEvent, fields: Mapping[str, Any]) -> None:
        self.number = number
        self.event = event
        self.fields = fields
        self._wire: referee_pb2.Event | None = None

    def wire(self) -> referee_pb2.Event:
        """The wire event, built once however many streams send it (and only if one does)."""
        if self._wire is None:
            self._wire = event_to_wire(self.number, self.fields)
        return self._wire


class Spectator(Protocol):
    """Whoever follows a match: told its events in order, then closed with why."""

    @property
    def closed(self) -> bool:
        """True once it went away (or was cut off): it is sent nothing more."""

    def show(self, seen: Sequence[Seen]) -> None:
        """The next events, in order; never blocks (a spectator too far behind closes)."""

    def close(self, code: grpc.StatusCode, details: str) -> None:
        """The match is over (``OK``), stopped, or not to be watched."""


class Spectators:
    """The spectators of one match and everything they have been told."""

    def __init__(self, match_id: str) -> None:
        self._match_id = match_id
        self._seen: list[Seen] = []
        self._shown = 0
        self._watchers: list[Spectator] = []
        self.over = False

    def record(self, event: SpectatorEvent, fields: Mapping[str, Any]) -> None:
        """Add an event, shown to the spectators at the next :meth:`publish`."""
        self._seen.append(Seen(len(self._seen) + 1, event, fields))

    def join(self, spectator: Spectator) -> None:
        """A spectator joins: shown everything so far, then what follows."""
        if self.over:
            spectator.close(grpc.StatusCode.NOT_FOUND, f"match {self._match_id} is over; fetch its log")
            return
        self._watchers = [w for w in self._watchers if not w.closed]
        if len(self._watchers) >= MAX_WATCHERS:
            spectator.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"match {self._match_id} has {MAX_WATCHERS} spectators already; try again later",
            )
            return
        self._watchers.append(spectator)
        spectator.show(self._seen[: self._shown])

    def publish(self) -> None:
        """Show the spectators the events recorded since the last time."""
        if self._shown == len(self._seen):
            return
        if self._watchers:
            self._watchers = [w for w in self._watchers if not w.closed]
            batch = self._seen[self._shown :]
            for watcher in self._watchers:
                watcher.show(batch)
        self._shown = len(self._seen)

    def end(self, code: grpc.StatusCode, details: str) -> None:
        """The match is over or stopped: every spectator is closed with why."""
        self.over = True
        for watcher in self._watchers:
            watcher.close(code, details)
