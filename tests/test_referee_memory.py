"""A finished match and an ended session are freed by reference counting alone.

At a thousand sessions the collector's full pass walks every live object for
hundreds of milliseconds, stalling every table: what a match or a session
leaves behind must not wait for it. The collector is switched off here, so
anything kept alive by a reference cycle stays, and the test sees it.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from referee_support import connect_and_play, first_legal, in_thread, referee_running

from oddtrick.rules import GameConfig, GameKind, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules


@pytest.fixture
def no_collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.usefixtures("no_collector")
async def test_a_finished_match_and_its_sessions_are_freed_without_the_collector(tmp_path: Path) -> None:
    names = {seat: f"freed-{seat.name.lower()}" for seat in Seat}
    config = GameConfig(game=GameKind.CONTRACT, format=MatchFormat.DEALS, deals=1)
    tables: list[weakref.ref[object]] = []
    sessions: list[weakref.ref[object]] = []
    async with referee_running(tmp_path, names.values()) as referee:

        def started(match_id: str, log_path: Path) -> None:
            tables.append(weakref.ref(referee.live[match_id]))
            sessions.extend(weakref.ref(session) for session in referee.lobby.sessions.values())

        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                for name in names.values():
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
                spec = MatchSpec(config, names, TableRules(deadline_s=5.0, grace_s=5.0))
                record = await referee.play_match(spec, wait_s=20, on_start=started)
            await referee.calls.wait_until_at_most(0)
        assert record.state.match_result is not None
        assert len(tables) == 1
        assert len(sessions) == 4
        assert tables[0]() is None, "the finished match's table is still alive"
        assert [ref() for ref in sessions] == [None] * 4, "ended sessions are still alive"
