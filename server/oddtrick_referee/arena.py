"""The Arena service: the read-only RPCs for people and tools (docs/protocol.md).

Server information, the matches listed page by page, a finished match's log, a match
followed live, and the ladder's standings and matches. It reads the referee through
:class:`ArenaSource`, the little it needs (its settings, its index, its live tables, its
ladder), and answers in the codec's messages (``oddtrick._codec_arena``); the referee
registers it beside the bots' service.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import grpc
import trio

from oddtrick import __version__
from oddtrick._codec import game_kind_to_wire
from oddtrick._codec_arena import (
    STATUSES,
    ladder_matches_response,
    list_matches_response,
    match_log_response,
    match_summary,
    server_info,
    watch_response,
)
from oddtrick._codec_protocol import Seen
from oddtrick._log_records import log_text_lines
from oddtrick.rules import GameKind
from oddtrick.v1 import arena_pb2, arena_pb2_grpc
from oddtrick_referee.play.matchlog import LOG_FORMAT
from oddtrick_referee.play.spectators import Spectator
from oddtrick_referee.play.table import Table, TableRules
from oddtrick_referee.storage.match_index import MatchStore, log_withheld
from oddtrick_referee.transport.bridge import WatchStream
from oddtrick_referee.transport.sessions import SessionLimits


class StreamSpectator:
    """A WatchMatch stream as a table's spectator: each batch of events goes out as one
    response of wire events (built once per event however many streams send it)."""

    def __init__(self, stream: WatchStream) -> None:
        self._stream = stream

    @property
    def closed(self) -> bool:
        return self._stream.closed

    def show(self, seen: Sequence[Seen]) -> None:
        if seen:
            self._stream.send(watch_response([event.wire() for event in seen]))

    def close(self, code: grpc.StatusCode, details: str) -> None:
        self._stream.close(code, details)


class LadderView(Protocol):
    """The Arena's ladder RPCs, answered by the ladder a referee runs (called on a worker thread)."""

    def get_ladder(self) -> arena_pb2.GetLadderResponse: ...

    def list_ladder_matches(
        self, bot_name: str, page_size: int, offset: int
    ) -> tuple[list[arena_pb2.LadderMatch], bool]:
        """A page of matches, and whether more follow."""


class ArenaSettings(Protocol):
    """What the Arena reads of the referee's settings."""

    @property
    def games(self) -> Collection[GameKind]: ...
    @property
    def default_rules(self) -> TableRules: ...
    @property
    def limits(self) -> SessionLimits: ...


class ArenaSource(Protocol):
    """The referee, as the Arena reads it (from the gRPC thread)."""

    @property
    def settings(self) -> ArenaSettings: ...
    @property
    def store(self) -> MatchStore: ...
    @property
    def live(self) -> Mapping[str, Table]: ...
    @property
    def trio_token(self) -> trio.lowlevel.TrioToken: ...
    @property
    def ladder(self) -> LadderView | None: ...
    def watch_next(self, spectator: Spectator) -> None:
        """Show ``spectator`` the next match to start (called on trio's thread)."""


class ArenaService(arena_pb2_grpc.ArenaServicer):
    """Read-only RPCs for people and tools; runs on the gRPC thread, reads SQLite
    (and, for WatchMatch, hands the spectator to the table's trio thread)."""

    def __init__(self, referee: ArenaSource) -> None:
        self._referee = referee

    async def GetServerInfo(self, request: Any, context: Any) -> arena_pb2.GetServerInfoResponse:  # noqa: N802
        settings = self._referee.settings
        return server_info(
            __version__,
            settings.games,
            settings.default_rules.to_wire(),
            settings.limits.to_wire(settings.limits.max_seats_per_bot),
            int(LOG_FORMAT.rsplit("/", 1)[1]),
        )

    async def ListMatches(self, request: Any, context: Any) -> arena_pb2.ListMatchesResponse:  # noqa: N802
        page_size = min(request.page_size or 50, 500)
        offset = await _page_offset(request.page_token, context)
        categories = {STATUSES[wire] for wire in request.statuses if wire in STATUSES}
        if request.statuses and not categories:
            return list_matches_response()  # only statuses this referee does not know
        game = next((kind.value for kind in GameKind if game_kind_to_wire(kind) == request.game_kind), "")
        if request.game_kind and not game:
            return list_matches_response()
        rows = await asyncio.to_thread(
            self._referee.store.list_matches, categories, page_size + 1, offset, request.bot_name, game
        )
        live = self._referee.live
        return list_matches_response(
            [_summary(row, live.get(row["match_id"])) for row in rows[:page_size]],
            str(offset + page_size) if len(rows) > page_size else "",
        )

    async def WatchMatch(self, request: Any, context: Any) -> None:  # type: ignore[override]  # noqa: N802
        """Written with context.write (like Play), not as an async generator."""
        if not request.match_id and request.next_to_start:
            await self._watch_next(context)
            return
        table = self._referee.live.get(request.match_id)
        if table is None:
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"no match {request.match_id!r} in progress (ListMatches lists them; "
                "a finished match's log is served by GetMatchLog)",
            )
            raise AssertionError("abort raises")
        if table.sealed:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"match {request.match_id!r} is one play of a duplicate pair: sealed until both "
                "plays are over, then its log is served by GetMatchLog",
            )
        watcher = WatchStream(asyncio.get_running_loop(), context.peer())
        try:
            self._referee.trio_token.run_sync_soon(table.watch, StreamSpectator(watcher))
        except trio.RunFinishedError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        await watcher.serve(context)

    async def _watch_next(self, context: Any) -> None:
        """WatchMatch's ``next_to_start``: the stream waits for the next match open to
        spectators, and follows it from its first event."""
        watcher = WatchStream(asyncio.get_running_loop(), context.peer())
        try:
            self._referee.trio_token.run_sync_soon(self._referee.watch_next, StreamSpectator(watcher))
        except trio.RunFinishedError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        await watcher.serve(context)

    async def GetMatchLog(self, request: Any, context: Any) -> arena_pb2.GetMatchLogResponse:  # noqa: N802
        row = await asyncio.to_thread(self._referee.store.get, request.match_id)
        if row is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            raise AssertionError("abort raises")
        status = row["status"]
        withheld = log_withheld(row)
        if status == "running" and not withheld:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"match {request.match_id!r} is still in progress; its log is served once it ends "
                "(WatchMatch follows it live)",
            )
        if withheld:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"match {request.match_id!r} is sealed: its deals are (or may be) still to be dealt "
                "at another table of its competition; its log is served once none will deal them",
            )
        if json.loads(row["details"] or "{}").get("log_deleted"):
            await context.abort(
                grpc.StatusCode.NOT_FOUND,
                f"match {request.match_id!r}'s log was deleted by the retention policy "
                "(one entrant played it against house bots); its result is still listed",
            )
        lines = await asyncio.to_thread(_log_lines, Path(row["log_path"]))
        page_size = min(request.page_size or 1000, 10_000)
        offset = await _page_offset(request.page_token, context)
        return match_log_response(
            request.match_id,
            int(LOG_FORMAT.rsplit("/", 1)[1]),
            lines[offset : offset + page_size],
            str(offset + page_size) if offset + page_size < len(lines) else "",
        )

    async def GetLadder(self, request: Any, context: Any) -> arena_pb2.GetLadderResponse:  # noqa: N802
        ladder = await self._ladder(context)
        return await asyncio.to_thread(ladder.get_ladder)

    async def ListLadderMatches(  # noqa: N802
        self, request: Any, context: Any
    ) -> arena_pb2.ListLadderMatchesResponse:
        ladder = await self._ladder(context)
        page_size = min(request.page_size or 50, 500)
        offset = await _page_offset(request.page_token, context)
        matches, more = await asyncio.to_thread(
            ladder.list_ladder_matches, request.bot_name, page_size, offset
        )
        return ladder_matches_response(matches, str(offset + page_size) if more else "")

    async def _ladder(self, context: Any) -> LadderView:
        ladder = self._referee.ladder
        if ladder is None:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "this server runs no ladder (start one with `oddtrick ladder serve`)",
            )
            raise AssertionError("abort raises")
        return ladder


_PAGE_TOKEN = re.compile(r"[0-9]{1,12}")
"""What a page token this referee hands out looks like: an offset in ASCII digits. Anything
else ("²" is a digit to Python, 5,000 digits overflow int(), 2⁶⁴ overflows SQLite) is refused."""


async def _page_offset(token: str, context: Any) -> int:
    if not token:
        return 0
    if not _PAGE_TOKEN.fullmatch(token):
        shown = token if len(token) <= 40 else token[:40] + "…"
        await context.abort(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"page_token {shown!r} is not one this RPC returned; start again without it",
        )
    return int(token)


def _summary(row: dict[str, Any], live: Table | None) -> arena_pb2.MatchSummary:
    """A match as ListMatches shows it (see :func:`oddtrick._codec_arena.match_summary`)."""
    details = row["details"]
    rules = TableRules.from_record(details["rules"]).to_wire() if "rules" in details else None
    return match_summary(row, rules, live.progress if live is not None else None)


def _log_lines(path: Path) -> list[str]:
    """The log's lines as written, served as they are (read by the one reader's line iterator,
    which bounds them)."""
    return list(log_text_lines(path))
