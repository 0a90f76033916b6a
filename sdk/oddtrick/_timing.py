"""Decision times per seat or bot, kept apart: thinking, and what transport added.

The referee measures every answer from sending the request to receiving it
(``think_ms`` in the match log); a bot that reports its own time
(``Decision.bot_think_ms``) splits that into its thinking and the rest,
*lag*: the network both ways and scheduling on either side. Users of other
arenas lose games on time to the second and blame the first, so the
standings and ``oddtrick analyze`` show the two side by side, with their
median and 99th percentile, and the time-outs beside them.

A :class:`Histogram` keeps milliseconds to three significant digits (exact
below one second, to 10 ms below ten seconds), so a tournament's millions
of decisions fit in a few hundred counts per seat, merge by adding, and give
percentiles within 0.5%.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FALLBACK_PREFIX", "DecisionTimes", "Histogram", "bucket", "is_fallback"]

FALLBACK_PREFIX = "fallback:"
"""How a bot's comment (``Decision.comment``) says the decision is its fallback for want
of time, its search having finished nothing in its budget: ``"fallback: 0 samples solved
in 0.21 s"``. The referee counts such answers per seat (:attr:`DecisionTimes.fallbacks`)
and the standings warn when they are many, for then the results measure the fallback,
not the search. A bot's word about itself, kept beside its times: it changes no score."""

FALLBACK_WARNING_SHARE = 0.10
"""The standings warn of an entry whose answers were fallbacks more often than this."""


def is_fallback(comment: str | None) -> bool:
    """Whether a decision's comment says it is a fallback (:data:`FALLBACK_PREFIX`)."""
    return comment is not None and comment.startswith(FALLBACK_PREFIX)


def bucket(ms: int) -> int:
    """``ms`` to three significant digits (0 to 999 exactly)."""
    if ms < 1000:
        return max(0, ms)
    step = int(10 ** (len(str(ms)) - 3))
    return (ms + step // 2) // step * step


@dataclasses.dataclass
class Histogram:
    """Counts of millisecond values, bucketed by :func:`bucket`."""

    counts: dict[int, int] = dataclasses.field(default_factory=dict)

    def add(self, ms: int, count: int = 1) -> None:
        # Most times are under a second, kept exactly: no call to bucket() for them (the
        # referee adds three times a decision).
        key = (ms if ms > 0 else 0) if ms < 1000 else bucket(ms)
        self.counts[key] = self.counts.get(key, 0) + count

    def merge(self, other: Histogram) -> None:
        for value, count in other.counts.items():
            self.counts[value] = self.counts.get(value, 0) + count

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def quantile(self, fraction: float) -> int | None:
        """The nearest-rank quantile: the least value at or below which at least
        ``fraction`` of the values lie; ``None`` when empty."""
        total = self.total
        if not total:
            return None
        rank = max(1, math.ceil(fraction * total))
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen >= rank:
                return value
        return max(self.counts)

    def to_dict(self) -> dict[str, int]:
        """JSON keys are strings: ``{"52": 140, "53": 9}``."""
        return {str(value): count for value, count in sorted(self.counts.items())}

    @classmethod
    def from_dict(cls, data: Mapping[str, int]) -> Histogram:
        return cls({int(value): int(count) for value, count in data.items()})

    def summary(self) -> dict[str, int | None]:
        """Median, 99th percentile and maximum, for people and ``--json``."""
        return {
            "p50": self.quantile(0.5),
            "p99": self.quantile(0.99),
            "max": max(self.counts) if self.counts else None,
        }


@dataclasses.dataclass
class DecisionTimes:
    """One seat's (or bot's) decision times.

    ``answer``: the referee's request-to-answer time of every answered decision;
    ``think``: the bot's own time, and ``lag``: the referee's less it, for the
    decisions where the bot reported its own; ``fallbacks``: the answers the bot's
    comment called fallbacks for want of time (:data:`FALLBACK_PREFIX`).
    """

    answer: Histogram = dataclasses.field(default_factory=Histogram)
    think: Histogram = dataclasses.field(default_factory=Histogram)
    lag: Histogram = dataclasses.field(default_factory=Histogram)
    fallbacks: int = 0

    def add(self, think_ms: int | None, bot_think_ms: int | None, comment: str | None = None) -> None:
        """One decision, as the log has it (``think_ms`` None: no answer came in time)."""
        if think_ms is None:
            return
        self.answer.add(think_ms)
        if is_fallback(comment):
            self.fallbacks += 1
        if bot_think_ms is not None:
            own = min(bot_think_ms, think_ms)
            self.think.add(own)
            self.lag.add(think_ms - own)

    def merge(self, other: DecisionTimes) -> None:
        self.answer.merge(other.answer)
        self.think.merge(other.think)
        self.lag.merge(other.lag)
        self.fallbacks += other.fallbacks

    @property
    def reported(self) -> bool:
        """Whether the bot reported its own time on every answer counted here."""
        return self.think.total == self.answer.total

    @property
    def fallback_share(self) -> float:
        """The share of answered decisions that were fallbacks (0 with none answered)."""
        return self.fallbacks / self.answer.total if self.answer.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        # "fallbacks" only when there were some: the logs of bots that never say so keep
        # their last line as it always was.
        return {
            "answer": self.answer.to_dict(),
            "think": self.think.to_dict(),
            "lag": self.lag.to_dict(),
            **({"fallbacks": self.fallbacks} if self.fallbacks else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DecisionTimes:
        return cls(
            Histogram.from_dict(data.get("answer", {})),
            Histogram.from_dict(data.get("think", {})),
            Histogram.from_dict(data.get("lag", {})),
            int(data.get("fallbacks", 0)),
        )

    @classmethod
    def merged(cls, parts: Iterable[DecisionTimes]) -> DecisionTimes:
        whole = cls()
        for part in parts:
            whole.merge(part)
        return whole

    def summary(self, timeouts: int = 0) -> dict[str, Any]:
        """What the standings' ``--json`` and ``oddtrick analyze --json`` give per bot:
        decisions answered, those with the bot's own time, those its comments called
        fallbacks, each measure's median, 99th percentile and maximum (ms), and the time-outs."""
        return {
            "answered": self.answer.total,
            "reported": self.think.total,
            "fallbacks": self.fallbacks,
            "think_ms": self.think.summary(),
            "lag_ms": self.lag.summary(),
            "answer_ms": self.answer.summary(),
            "timeouts": timeouts,
        }


def time_cells(times: DecisionTimes) -> list[str]:
    """think p50, think p99, lag p50, lag p99 as a table shows them: the bot's own time
    when it reports it, else the referee's whole time marked ``*`` (lag unknown)."""

    def text(value: int | None, mark: str = "") -> str:
        return "n/a" if value is None else f"{value}{mark}"

    if times.think.total:
        return [
            text(times.think.quantile(0.5)),
            text(times.think.quantile(0.99)),
            text(times.lag.quantile(0.5)),
            text(times.lag.quantile(0.99)),
        ]
    return [text(times.answer.quantile(0.5), "*"), text(times.answer.quantile(0.99), "*"), "n/a", "n/a"]


TIME_NOTE = (
    "time per decision in ms: think = the bot's own time (Decision.bot_think_ms), lag = the "
    "referee's request-to-answer time less it (transport and scheduling); * = the bot does not "
    "report its own time: the referee's whole time, lag unknown"
)
