"""The garbage collector's pauses, timed from ``gc.callbacks``, for the load benchmarks.

Each collection is timed twice: by the wall clock (what every table waiting
on the referee's thread feels) and by the thread's CPU clock (what the
collection itself cost). Wall far above CPU means the process was waiting
for a CPU mid-collection, the machine's doing rather than the collector's.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Pause:
    generation: int
    wall_ms: float
    cpu_ms: float
    collected: int
    ended_at: float
    """When it ended (``time.perf_counter()``)."""
    during_play: bool
    """Whether a match was in progress when it started (see :attr:`GcPauses.playing`)."""


@dataclass
class GcPauses:
    """Records every collection while installed (:meth:`install`, :meth:`remove`).

    The summaries count only collections made while a match was in progress
    (``playing()``, default always): one made while no table waits pauses no
    decision, and is reported apart (:meth:`between_matches`).
    """

    playing: Callable[[], bool] = lambda: True
    pauses: list[Pause] = field(default_factory=list)
    _started: tuple[float, float, bool] | None = None

    def install(self) -> None:
        gc.callbacks.append(self._on_gc)

    def remove(self) -> None:
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = (time.perf_counter(), time.thread_time(), self.playing())
        elif self._started is not None:
            wall, cpu, during_play = self._started
            self._started = None
            now = time.perf_counter()
            self.pauses.append(
                Pause(
                    info["generation"],
                    (now - wall) * 1000,
                    (time.thread_time() - cpu) * 1000,
                    info["collected"],
                    now,
                    during_play,
                )
            )

    def summary(self, start: float = float("-inf"), end: float = float("inf")) -> dict[str, Any]:
        """Per generation: collections, the longest pause (wall and CPU), the wall total,
        and the objects found to be garbage (cycles reference counting could not free);
        of the collections that ended between ``start`` and ``end`` (perf_counter)."""
        result: dict[str, Any] = {}
        for generation in range(3):
            pauses = [
                pause
                for pause in self.pauses
                if pause.generation == generation and pause.during_play and start <= pause.ended_at < end
            ]
            result[f"gen{generation}"] = {
                "collections": len(pauses),
                "max_wall_ms": round(max((p.wall_ms for p in pauses), default=0.0), 2),
                "max_cpu_ms": round(max((p.cpu_ms for p in pauses), default=0.0), 2),
                "total_wall_ms": round(sum(p.wall_ms for p in pauses), 1),
                "collected": sum(p.collected for p in pauses),
            }
        return result

    def between_matches(self) -> str:
        """The collections made while no match was in progress: how many, the longest."""
        pauses = [pause for pause in self.pauses if not pause.during_play]
        if not pauses:
            return "none"
        worst = max(pauses, key=lambda pause: pause.wall_ms)
        return (
            f"{len(pauses)}, the longest gen{worst.generation} {worst.wall_ms:.1f} ms wall "
            f"{worst.cpu_ms:.1f} ms CPU, {worst.collected} objects collected"
        )


def pause_lines(summary: dict[str, Any], prefix: str = "referee_gc") -> dict[str, Any]:
    """``name: value`` lines of a :meth:`GcPauses.summary`."""
    lines: dict[str, Any] = {}
    for generation, figures in summary.items():
        for name, value in figures.items():
            lines[f"{prefix}_{generation}_{name}"] = value
    return lines
