"""Live play for the web page: what a spectator is told, as JSON for the page's script.

Two sources give the same events: :class:`RefereeLive` is a spectator of a table
of the referee the page runs beside (in the same trio run, a :class:`LiveSpectator`
shown the events' values), :class:`ArenaLive` follows a referee elsewhere through
its Arena service, whose wire events the codec reads back into the same values.
Either way :func:`event_json` turns values, never messages, into the page's JSON,
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
from oddtrick._events import MatchOpened, MatchStopped, SpectatorEvent
from oddtrick.rules import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    Deal,
    GameEnded,
    GameKind,
    HandEnded,
    HandStarted,
    MatchEnded,
    TrickWon,
)
from oddtrick.v1 import arena_pb2_grpc

if TYPE_CHECKING:
    import grpc

    from oddtrick_referee.referee import Referee


class LiveSource(Protocol):
    """Where a live page's events come from."""

    def can_follow(self, match_id: str) -> bool:
        """Whether the match is in progress here and open to spectators."""

    def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        """The match's spectator events as JSON, from its start, until it ends."""


def _hands(deal: Deal | None) -> dict[str, list[str]]:
    if deal is None:
        return {}
    return {str(seat): [str(card) for card in cards] for seat, cards in deal.items()}


def event_json(number: int, event: SpectatorEvent) -> dict[str, Any] | None:
    """One spectator event as the page's script reads it (``None``: nothing to show)."""
    base: dict[str, Any] = {"seq": number}
    if isinstance(event, MatchOpened):
        base.update(
            type="match_started",
            players={str(seat): name for seat, name in event.players},
            match_id=event.match_id,
            classic=event.config.game is GameKind.CLASSIC,
        )
    elif isinstance(event, HandStarted):
        base.update(
            type="hand_started",
            hand=event.hand_number,
            dealer=str(event.dealer),
            trumps=None if event.trumps is None else event.trumps.symbol,
            turned=None if event.turned_card is None else str(event.turned_card),
            cut=None if event.cut_card is None else str(event.cut_card),
            hands=_hands(event.hands),
        )
    elif isinstance(event, CallMade):
        base.update(type="call_made", seat=str(event.seat), call=event.call.pretty)
    elif isinstance(event, AuctionEnded):
        base.update(type="auction_ended", contract=None, leader=None)
        contract = event.contract
        if contract is not None:
            doubled = " doubled" if contract.doubled else ""
            base["contract"] = (
                f"contract {contract.level}{contract.denomination.symbol}{doubled} by "
                f"{contract.declarer.name.title()} ({contract.side})"
            )
            base["leader"] = None if event.leader is None else str(event.leader)
    elif isinstance(event, CardPlayed):
        base.update(type="card_played", seat=str(event.seat), card=str(event.card), trick=event.trick_number)
    elif isinstance(event, TrickWon):
        base.update(
            type="trick_completed",
            number=event.trick.number,
            winner=str(event.trick.winner),
            tricks=list(event.tricks_won),
        )
    elif isinstance(event, HandEnded):
        result = event.result
        base.update(
            type="hand_ended",
            result=result.describe(),
            scores=list(result.scores_after),
            hands=_hands(event.hands),
        )
    elif isinstance(event, GameEnded):
        base.update(type="game_ended", text=f"game {event.result.game_number} won by {event.result.winner}")
    elif isinstance(event, MatchEnded):
        final = event.result
        outcome = f"{final.winner} won" if final.winner is not None else "drawn"
        base.update(
            type="match_ended", text=f"match over: {outcome}, NS {final.totals[0]} – EW {final.totals[1]}"
        )
    elif isinstance(event, MatchStopped):
        ns, ew = event.totals
        base.update(
            type="match_ended", text=f"match stopped before its end ({event.reason}), NS {ns} – EW {ew}"
        )
    else:
        return None
    return base


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
        table.watch(watcher)
        try:
            async for batch in watcher.receive:
                for seen in batch:
                    shown = event_json(seen.number, seen.event)
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

        # The blocking stream is read in a thread of its own, which ends when the call is
        # cancelled (below, when the page goes away) or the match ends.
        threading.Thread(target=pump, name=f"watch {match_id}", daemon=True).start()
        try:
            async for response in receive:
                for event in response.events:
                    value = spectator_event_from_wire(event)
                    shown = None if value is None else event_json(event.sequence, value)
                    if shown is not None:
                        yield shown
        finally:
            call.cancel()
            channel.close()
