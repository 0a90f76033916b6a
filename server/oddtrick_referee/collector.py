"""The garbage collector, run in small timed steps so that its pauses stay short.

Every table runs on the referee's one trio thread, so a collection pauses
them all. CPython's own trigger does not bound that pause at load: it counts
allocations *minus deallocations*, and in a busy referee the matches ending
free about as many objects as the matches in progress make, so the count
hardly moves while the young generation grows to tens of thousands of
objects; the collection that finally comes takes tens of milliseconds, and a
full one walks every session and every match in progress (230,000 objects
and 170 ms of CPU at 1,000 sessions). So, while the referee listens:

* what start-up loaded is frozen out of the collector's reach (it lives as
  long as the process);
* the automatic collector is off; :func:`collect_in_steps` collects the young
  generation every :data:`STEP_S`, so each collection walks only what was
  made in a fraction of a second and is still alive (at 1,000 sessions,
  mostly gRPC's reads in flight: about 8,000 objects, 1 to 3 ms);
* what survives that is collected only with the whole heap: when no match is
  in progress (at most every :data:`FULL_WHEN_IDLE_S`), or after
  :data:`FULL_AT_LEAST_EVERY_S` of unbroken play. Finished matches and ended
  sessions are freed by reference counting (no cycles hold them), so little
  is left for it: collecting the middle generation every second during play
  found no garbage at all at 1,000 sessions, for pauses of up to 50 ms.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import trio

STEP_S = 0.1
"""How often the young generation is collected."""
FULL_WHEN_IDLE_S = 60.0
"""A full collection when no match is in progress, at most this often."""
FULL_AT_LEAST_EVERY_S = 3600.0
"""A full collection even during play once this long has passed without one: a bound on
what garbage in cycles can pile up, at the price of one long pause an hour."""


@contextmanager
def collector_off() -> Iterator[None]:
    """Freeze what is loaded so far and switch the automatic collector off (for
    :func:`collect_in_steps` to do its work); as it was on leaving."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


async def collect_in_steps(
    idle: Callable[[], bool],
    step_s: float = STEP_S,
    full_when_idle_s: float = FULL_WHEN_IDLE_S,
    full_at_least_every_s: float = FULL_AT_LEAST_EVERY_S,
) -> None:
    """Collect garbage in small steps until cancelled; ``idle()`` says that no match is
    in progress, when a full collection pauses nobody's decision."""
    last_full = trio.current_time()
    while True:
        await trio.sleep(step_s)
        now = trio.current_time()
        since_full = now - last_full
        if (idle() and since_full >= full_when_idle_s) or since_full >= full_at_least_every_s:
            gc.collect()
            last_full = now
        else:
            gc.collect(0)
