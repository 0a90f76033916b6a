"""Live play for the web page: what a spectator is told, as JSON for the page's script.

Two sources give the same events: :class:`RefereeLive` is a spectator of a table
of the referee the page runs beside (in the same trio run, a :class:`LiveSpectator`
shown the events' values), :class:`ArenaLive` follows a referee elsewhere through
its Arena service, whose wire events the codec reads back into the same values.
Either way :func:`event_json` turns values, never messages, into the page's JSON (the
same events a finished match's document holds, ``replay/json_export.py``),
and the page sees exactly what a spectator sees: the table's outbox decides what
spectators are shown (the four hands live only at an open table), and a sealed
play has no spectators at all.
"""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import trio

from oddtrick._codec_arena import watch_match_request
from oddtrick._codec_protocol import Seen, spectator_event_from_wire
from oddtrick.v1 import arena_pb2_grpc
from oddtrick_referee.replay.json_export import EventsShown

if TYPE_CHECKING:
    import grpc

    from oddtrick_referee.referee import Referee


class LiveSource(Protocol):
    """Where a live page's events come from."""

    def can_follow(self, match_id: str) -> bool:
        """Whether the match is in progress here and open to spectators."""

    def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        """The match's spectator events as JSON, from its start, until it ends."""


class LiveSpectator:
    """The live page as a table's spectator, on the table's own trio thread: it takes the
    events' values, queued for the page to read (what WatchStream is for gRPC)."""

    max_behind = 256

    def __init__(self) -> None:
        self._send, self.receive = trio.open_memory_channel[Sequence[Seen]](math.inf)
        self.closed = False
        self.close_reason = ""

    def show(self, seen: Sequence[Seen]) -> None:
        if self.closed or not seen:
            return
        if self.receive.statistics().current_buffer_used >= self.max_behind:
            self.close(None, "the page fell too far behind the play")
            return
        self._send.send_nowait(seen)

    def close(self, code: grpc.StatusCode | None, details: str) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = details
        self._send.close()


class RefereeLive:
    """Live matches of the referee this page runs beside."""

    def __init__(self, referee: Referee) -> None:
        self._referee = referee

    def can_follow(self, match_id: str) -> bool:
        table = self._referee.live_table(match_id)
        return table is not None and not table.sealed

    async def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        table = self._referee.live_table(match_id)
        if table is None or table.sealed:
            return
        watcher = LiveSpectator()
        shown_as = EventsShown()
        table.watch(watcher)
        try:
            async for batch in watcher.receive:
                for seen in batch:
                    shown = shown_as(seen.number, seen.event)
                    if shown is not None:
                        yield shown
        finally:
            watcher.closed = True


class ArenaLive:
    """Live matches of a referee elsewhere, through its Arena service (WatchMatch)."""

    def __init__(self, server: str) -> None:
        self._server = server

    def can_follow(self, match_id: str) -> bool:
        return True

    async def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        import grpc

        send, receive = trio.open_memory_channel[Any](math.inf)
        channel = grpc.insecure_channel(self._server)
        call = arena_pb2_grpc.ArenaStub(channel).WatchMatch(watch_match_request(match_id))
        token = trio.lowlevel.current_trio_token()

        def pump() -> None:
            try:
                for response in call:
                    token.run_sync_soon(send.send_nowait, response)
            except grpc.RpcError:
                pass
            finally:
                token.run_sync_soon(send.close)

        # The blocking stream is read in a thread of its own, one per viewer, owned by this
        # follow: it ends when the match ends or the call is cancelled (below, when the page
        # goes away), and is joined then, so no reader outlives its viewer.
        shown_as = EventsShown()
        reader = threading.Thread(target=pump, name=f"watch {match_id}")
        reader.start()
        try:
            async for response in receive:
                for event in response.events:
                    value = spectator_event_from_wire(event)
                    shown = None if value is None else shown_as(event.sequence, value)
                    if shown is not None:
                        yield shown
        finally:
            call.cancel()
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(reader.join)
            channel.close()
