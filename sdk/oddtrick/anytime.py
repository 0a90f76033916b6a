"""Decisions that are always in time: search until the budget, answer with the best so far.

A searching bot (sampling, tree search, a double-dummy solver) cannot simply
check the clock between steps: one step may take longer than the time left
(a DDS solve cannot be interrupted, and its times are heavy-tailed), and on a
busy machine the bot's own process gets the CPU only part of the time. So the
search runs on a worker thread, one step at a time, and the decision is
awaited on the client's event loop with the budget as a timeout; when the
budget is reached the latest result the search yielded is the answer, and the
step still running is abandoned (it finishes on the worker, its result unused).

In a match with a time bank (``view.clock_left_ms``), the budget is also held
to a share of the bank (:func:`clock_share`), so that the bank lasts the match.

The budget comes from the referee's clock, not the bot's: the request's
``time_left_ms`` counts from when the referee sent it, so the budget runs from
when this process received it (:attr:`~oddtrick.BotView.received_at`), less
a margin for what the referee counts beyond the bot's own time, which the
client measures on every answer (:attr:`~oddtrick.BotView.transport_ms`), and
for how late this process has recently woken up at a budget's end::

    import oddtrick
    from oddtrick.anytime import anytime, budget

    class Searcher(oddtrick.Bot):
        async def choose_card(self, view):
            first = view.legal_actions[0]
            return await anytime(budget(view, think_s=1.0), self.search(view), first)

        def search(self, view):  # a generator: runs on the worker thread
            for sample in ...:
                ...  # one step of work
                yield best_so_far

Each ``yield`` is a point where the search may be abandoned, so yield after
every unit of work (one sampled deal solved, one iteration deepened). The
generator runs on the worker thread and must not touch the bot's state that
the event loop may change meanwhile; it may read the view, which is frozen.

A search that finished nothing in time answers with its fallback; a bot that says so
in the decision's comment, beginning it with :data:`FALLBACK_PREFIX` (``return card,
"fallback: 0 samples solved"``), is counted by the referee, and the standings warn when
its fallbacks are more than a tenth of its answers: its results then measure the
fallback, not the search.

All searches of one process share one worker thread, step by step in turn:
several seats of one process take turns fairly, and a library that is not
safe to call from two threads at once (DDS, which the strong sample bot
uses) never is.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any, Final, TypeVar

from oddtrick._bot import BotView
from oddtrick._timing import FALLBACK_PREFIX
from oddtrick._worker import Worker, settle

__all__ = ["FALLBACK_PREFIX", "Budget", "anytime", "budget"]

T = TypeVar("T")

log = logging.getLogger("oddtrick.anytime")

MIN_MARGIN_S: Final = 0.05
"""Held back from every deadline whatever was measured: waking up, building
and sending the answer."""
MARGIN_SHARE: Final = 0.05
"""And this share of the time left, for lag not yet seen."""
COLD_SHARE: Final = 0.25
"""Until a first round trip has been measured (a new connection, the first
request of a match after a resume), this share of the time left more."""
LAG_FACTOR: Final = 2.0
"""The measured transport lag is held back this many times over: it is the
worst of a few recent round trips, and the next may be worse."""
CLOCK_HORIZON: Final = 30
"""With a time bank, the decisions it is spread over: each may take the increment and a
30th of the rest of the bank (chess engines plan the same way, some 30 moves ahead), so
the bank shrinks slowly and is never spent on one decision."""
DEFAULT_THINK_S: Final = 1.0
LATE_S: Final = 0.02
"""An answer ready this long after its budget's end is logged: the process is short of CPU."""


@dataclasses.dataclass(frozen=True, slots=True)
class Budget:
    """When a decision must be answered, on this process's :func:`time.monotonic`."""

    answer_by: float
    """The search is abandoned and the best result so far returned at this time."""
    margin_s: float
    """What was held back from the referee's time left (0 without a deadline)."""

    def left(self) -> float:
        """Seconds until :attr:`answer_by` (negative once past)."""
        return self.answer_by - time.monotonic()


def margin(view: BotView) -> float:
    """Seconds to hold back from the referee's time left: a floor, a share of the
    time left, the measured transport lag (twice over), and how late this
    process's recent answers were ready after their budgets."""
    left_s = (view.time_left_ms or 0) / 1000
    lag = COLD_SHARE * left_s if view.transport_ms is None else LAG_FACTOR * view.transport_ms / 1000
    return MIN_MARGIN_S + MARGIN_SHARE * left_s + lag + _lateness.worst()


def clock_share(view: BotView) -> float | None:
    """Seconds of the time bank this decision may spend (None without a clock): the
    increment, which the referee gives back at every decision, and a
    :data:`CLOCK_HORIZON`-th of the rest of the bank."""
    if view.clock_left_ms is None:
        return None
    increment = (view.clock_increment_ms or 0) / 1000
    bank = view.clock_left_ms / 1000
    return min(bank, increment) + max(0.0, bank - increment) / CLOCK_HORIZON


def budget(view: BotView, think_s: float | None = None) -> Budget:
    """The budget of the decision ``view`` asks for: ``think_s`` seconds (1 by
    default) from when the request was received, but never past the referee's
    deadline less :func:`margin`, and in a match with a clock never more than
    :func:`clock_share` of the bank. Without a referee's clock (in-process play,
    unit tests) it is ``think_s`` from now."""
    think = DEFAULT_THINK_S if think_s is None else think_s
    start = time.monotonic() if view.received_at is None else view.received_at
    if view.time_left_ms is None:
        return Budget(start + think, 0.0)
    share = clock_share(view)
    if share is not None:
        think = min(think, share)
    held = margin(view)
    return Budget(start + min(think, view.time_left_ms / 1000 - held), held)


async def anytime(limit: Budget, search: Iterator[T], fallback: T) -> T:
    """Step ``search`` on the worker thread until it ends or ``limit`` is reached;
    the last value it yielded, or ``fallback`` if it yielded none in time.

    Awaited on asyncio (the loop the SDK's client runs bots on; a synchronous
    caller can use :func:`asyncio.run`). An exception raised by the search is
    raised here. The search is closed on the worker thread once the step in
    flight, if any, is over.
    """
    loop = asyncio.get_running_loop()
    # Lateness counts from the budget's end, or from now if it has passed already: a
    # budget spent before the search began is no sign of a slow process, and counting
    # it would feed the margin back into itself until no budget is left at all.
    end = max(limit.answer_by, time.monotonic())
    best = fallback
    steps = 0
    try:
        while (left := limit.left()) > 0:
            waiter: asyncio.Future[tuple[bool, Any]] = loop.create_future()
            _WORKER.submit(lambda: next(search, _END), settle(loop, waiter))
            try:
                ok, value = await asyncio.wait_for(asyncio.shield(waiter), left)
            except TimeoutError:
                break
            if not ok:
                raise value
            if value is _END:
                break
            best = value
            steps += 1
    finally:
        close = getattr(search, "close", None)  # a generator's; a plain iterator has none
        if close is not None:
            _WORKER.submit(close, None)  # after the step in flight, on the same thread
    late = time.monotonic() - end
    _lateness.note(late)
    log.debug("%d step(s) done; %+.0f ms after the budget's end", steps, late * 1000)
    if late > LATE_S:
        log.info(
            "answered %.0f ms after the budget's end (%.0f ms were held back)",
            late * 1000,
            limit.margin_s * 1000,
        )
    return best


# ------------------------------------------------------------------ internals

_END: Final = object()


class _Lateness:
    """How late recent decisions were ready after their budgets' end: a process
    whose CPU is shared wakes up late, and a margin must allow for it."""

    def __init__(self, window: int = 256) -> None:
        self._late: collections.deque[float] = collections.deque(maxlen=window)
        self._lock = threading.Lock()

    def note(self, seconds: float) -> None:
        with self._lock:
            self._late.append(max(0.0, seconds))

    def worst(self) -> float:
        with self._lock:
            return max(self._late, default=0.0)


_lateness = _Lateness()

_WORKER = Worker("oddtrick-anytime")
