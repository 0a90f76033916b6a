"""Page tokens the referee never handed out are refused with INVALID_ARGUMENT, not a crash."""

from __future__ import annotations

from pathlib import Path

import grpc
from referee_support import in_thread, referee_running
from test_arena_listing import leave_behind

from oddtrick.v1 import arena_pb2, arena_pb2_grpc

BAD_TOKENS = ["²", "9" * 5000, str(2**64), "-1", " 1", "1e3", "x"]


def page_statuses(address: str, match_id: str) -> list[tuple[str, grpc.StatusCode, str]]:
    """The status of ListMatches and GetMatchLog for every bad token, then a good page of each."""
    seen = []
    with grpc.insecure_channel(address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        for token in BAD_TOKENS:
            for rpc, request in (
                ("ListMatches", arena_pb2.ListMatchesRequest(page_token=token)),
                ("GetMatchLog", arena_pb2.GetMatchLogRequest(match_id=match_id, page_token=token)),
            ):
                try:
                    getattr(arena, rpc)(request, timeout=5)
                except grpc.RpcError as error:
                    seen.append((rpc, error.code(), error.details() or ""))
                else:
                    seen.append((rpc, grpc.StatusCode.OK, ""))
        listing = arena.ListMatches(arena_pb2.ListMatchesRequest(page_token="0"), timeout=5)
        log = arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id=match_id, page_token="0"), timeout=5)
    assert [m.match_id for m in listing.matches] == [match_id]
    assert log.lines
    return seen


async def test_bad_page_tokens_are_invalid_arguments(tmp_path: Path) -> None:
    leave_behind(tmp_path / "data", "done-1", "finished", sealed=False, started_at=1_000)
    async with referee_running(tmp_path, []) as referee:
        seen = await in_thread(page_statuses, referee.address, "done-1")
    assert len(seen) == 2 * len(BAD_TOKENS)
    for rpc, code, details in seen:
        assert code is grpc.StatusCode.INVALID_ARGUMENT, (rpc, code, details)
        assert "page_token" in details
        assert len(details) < 200  # a 5,000-digit token is not echoed whole
