"""The referee's collector steps: young garbage goes within a step, the whole heap only
when no match is in progress (or after a long stretch of play)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
import trio

from oddtrick_referee.collector import STEP_S, collect_in_steps, collector_off


class Node:
    """Something a reference cycle can be made of (and a weak reference point at)."""

    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> weakref.ref[Node]:
    """A reference cycle nothing else holds: only a collection frees it."""
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


def old_cycle() -> weakref.ref[Node]:
    """A cycle that became garbage after it had reached the oldest generation."""
    first, second = Node(), Node()
    first.other, second.other = second, first
    gc.collect(0)
    gc.collect(1)  # survived both young collections: now in the oldest generation
    reference = weakref.ref(first)
    del first, second
    return reference


@pytest.fixture
def collector_is_off() -> Iterator[None]:
    with collector_off():
        yield


def test_collector_off_switches_automatic_collection_off_and_back() -> None:
    assert gc.isenabled()
    with collector_off():
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_is_off")
async def test_young_garbage_is_collected_within_a_step(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect_in_steps, lambda: False)
        await trio.sleep(STEP_S / 2)
        young = cycle()
        assert young() is not None
        await trio.sleep(STEP_S)
        assert young() is None
        nursery.cancel_scope.cancel()


@pytest.mark.usefixtures("collector_is_off")
async def test_the_whole_heap_is_collected_only_when_idle(autojump_clock: trio.testing.MockClock) -> None:
    idle = False
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect_in_steps, lambda: idle, STEP_S, 5.0, 3600.0)
        old = old_cycle()
        await trio.sleep(10)
        assert old() is not None, "a full collection ran while a match was in progress"
        idle = True
        await trio.sleep(2 * STEP_S)
        assert old() is None
        nursery.cancel_scope.cancel()


@pytest.mark.usefixtures("collector_is_off")
async def test_a_long_stretch_of_play_gets_a_full_collection(autojump_clock: trio.testing.MockClock) -> None:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(collect_in_steps, lambda: False, STEP_S, 5.0, 20.0)
        old = old_cycle()
        await trio.sleep(15)
        assert old() is not None
        await trio.sleep(6)
        assert old() is None
        nursery.cancel_scope.cancel()
