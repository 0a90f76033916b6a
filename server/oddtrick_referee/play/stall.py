"""The referee's own stalls: how long its event loop was not running when it should have.

A referee whose process is stopped (SIGSTOP, a suspended container) or starved of CPU
does not run while a bot's deadline runs on: when it wakes, the deadline has passed,
and a bot that answered in time would be charged a time-out that is the referee's. So
each event loop has one :class:`LoopLag`, a task that wakes every :data:`BEAT_S` and
adds up how much later than that it woke, beyond :data:`STALL_MIN_S` (ordinary
scheduling jitter is not a stall). A table reads it when a decision is sent and when
it ends: what it grew by in between is time the bot was not given (``table.py``).
"""

from __future__ import annotations

import trio

__all__ = ["BEAT_S", "STALL_MIN_S", "LoopLag", "loop_lag"]

BEAT_S = 0.1
"""How often the loop's heartbeat wakes: a stall is measured to about this much."""
STALL_MIN_S = 0.25
"""A heartbeat this much later than due is a stall: less is a busy loop's usual jitter."""


class LoopLag:
    """The seconds one event loop has stalled so far, from its heartbeat's lateness."""

    def __init__(self, now: float) -> None:
        self._stalled_s = 0.0
        self._last = now

    def stalled(self, now: float) -> float:
        """The seconds stalled up to ``now``, a stall not yet over counted too: the loop has
        just woken and the heartbeat, late, has not run yet (a deadline may fire first)."""
        return self._stalled_s + _excess(now - self._last)

    def beat(self, now: float) -> None:
        """The heartbeat ran at ``now``: count how late it was."""
        self._stalled_s += _excess(now - self._last)
        self._last = now

    async def run(self) -> None:
        """Beat for as long as the loop runs."""
        while True:
            await trio.sleep(BEAT_S)
            self.beat(trio.current_time())


def _excess(gap_s: float) -> float:
    late = gap_s - BEAT_S
    return late if late >= STALL_MIN_S else 0.0


_LAG: trio.lowlevel.RunVar[LoopLag] = trio.lowlevel.RunVar("oddtrick_loop_lag")


def loop_lag() -> LoopLag:
    """This event loop's measure, its heartbeat started on first use (a system task: it
    ends with the loop, whoever started it, so no nursery has to outlive every table)."""
    try:
        return _LAG.get()
    except LookupError:
        lag = LoopLag(trio.current_time())
        _LAG.set(lag)
        trio.lowlevel.spawn_system_task(lag.run, name="oddtrick loop lag")
        return lag
