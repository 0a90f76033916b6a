"""Live play for the web page: the spectator events of ``Arena.WatchMatch``, as JSON.

Two sources give the same events: :class:`RefereeLive` subscribes to a table
of the referee the page runs beside (in the same trio run, as WatchMatch's
stream does), :class:`ArenaLive` follows a referee elsewhere through its Arena
service. Either way the page sees exactly what a spectator sees: the table
decides what goes into the spectator events (the four hands live only at an
open table), and a sealed play has no spectators at all.
"""

from __future__ import annotations

import math
import threading
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

import trio

from oddtrick._codec import (
    call_from_wire,
    card_from_wire,
    config_from_wire,
    contract_from_wire,
    hand_result_from_wire,
    seat_from_wire,
    side_from_wire,
    trumps_from_wire,
)
from oddtrick._codec_arena import watch_match_request
from oddtrick.rules import GameKind
from oddtrick.v1 import arena_pb2_grpc, game_pb2, referee_pb2

if TYPE_CHECKING:
    from oddtrick_referee.referee import Referee


class LiveSource(Protocol):
    """Where a live page's events come from."""

    def can_follow(self, match_id: str) -> bool:
        """Whether the match is in progress here and open to spectators."""

    def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        """The match's spectator events as JSON, from its start, until it ends."""


def _hands(hands: Any) -> dict[str, list[str]]:
    return {str(seat_from_wire(h.seat)): [str(card_from_wire(c)) for c in h.cards] for h in hands}


def event_json(event: referee_pb2.Event) -> dict[str, Any] | None:
    """One spectator event as the page's script reads it (``None``: nothing to show)."""
    kind = event.WhichOneof("kind")
    base: dict[str, Any] = {"seq": event.sequence, "type": kind}
    if kind == "match_started":
        started = event.match_started
        base["players"] = {str(seat_from_wire(p.seat)): p.bot_name for p in started.players}
        base["match_id"] = started.match_id
        base["classic"] = config_from_wire(started.config).game is GameKind.CLASSIC
    elif kind == "hand_started":
        started_hand = event.hand_started
        trumps = trumps_from_wire(started_hand.trumps)
        base.update(
            hand=started_hand.hand_number,
            dealer=str(seat_from_wire(started_hand.dealer)),
            trumps=None if trumps is None else trumps.symbol,
            turned=str(card_from_wire(started_hand.turned_card))
            if started_hand.HasField("turned_card")
            else None,
            cut=str(card_from_wire(started_hand.cut_card)) if started_hand.HasField("cut_card") else None,
            hands=_hands(started_hand.hands),
        )
    elif kind == "call_made":
        base.update(
            seat=str(seat_from_wire(event.call_made.seat)), call=call_from_wire(event.call_made.call).pretty
        )
    elif kind == "auction_ended":
        ended = event.auction_ended
        if ended.HasField("contract"):
            contract = contract_from_wire(ended.contract)
            doubled = " doubled" if contract.doubled else ""
            base["contract"] = (
                f"contract {contract.level}{contract.denomination.symbol}{doubled} by "
                f"{contract.declarer.name.title()} ({contract.side})"
            )
        else:
            base["contract"] = None
    elif kind == "card_played":
        played = event.card_played
        base.update(
            seat=str(seat_from_wire(played.seat)),
            card=str(card_from_wire(played.card)),
            trick=played.trick_number,
        )
    elif kind == "trick_completed":
        completed = event.trick_completed
        base.update(
            number=completed.trick.number,
            winner=str(seat_from_wire(completed.trick.winner)),
            tricks=[completed.tricks.north_south, completed.tricks.east_west],
        )
    elif kind == "hand_ended":
        result = hand_result_from_wire(event.hand_ended)
        score = event.hand_ended.score
        base.update(
            result=result.describe(),
            scores=[score.game.north_south, score.game.east_west],
            hands=_hands(event.hand_ended.hands),
        )
    elif kind == "game_ended":
        game = event.game_ended
        base["text"] = f"game {game.game_number} won by {side_from_wire(game.winner)}"
    elif kind == "match_ended":
        final = event.match_ended
        total = final.score.total
        outcome = (
            f"{side_from_wire(final.winner)} won" if final.outcome == game_pb2.MATCH_OUTCOME_WIN else "drawn"
        )
        base["text"] = f"match over: {outcome}, NS {total.north_south} – EW {total.east_west}"
    else:
        return None
    return base


class _TrioWatcher:
    """A spectator of a table, on the table's own trio thread (what WatchStream is for gRPC)."""

    max_behind = 256

    def __init__(self) -> None:
        self._send, self.receive = trio.open_memory_channel[Any](math.inf)
        self.closed = False
        self.close_reason = ""

    def send(self, message: Any) -> None:
        if self.closed:
            return
        if self.receive.statistics().current_buffer_used >= self.max_behind:
            self.close(None, "the page fell too far behind the play")
            return
        self._send.send_nowait(message)

    def close(self, code: Any, details: str) -> None:
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
        table = self._referee.live.get(match_id)
        return table is not None and not table.sealed

    async def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        table = self._referee.live.get(match_id)
        if table is None or table.sealed:
            return
        watcher = _TrioWatcher()
        table.watch(watcher)  # type: ignore[arg-type]
        try:
            async for response in watcher.receive:
                for event in response.events:
                    shown = event_json(event)
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
                    shown = event_json(event)
                    if shown is not None:
                        yield shown
        finally:
            call.cancel()
            channel.close()
