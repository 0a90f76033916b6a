"""A sequential probability ratio test on duplicate deal scores (docs/sprt.md).

The sample is the paired deal score of docs/standings.md: bot A's points less
bot B's on one deal, averaged over its two plays with the partnerships
swapped. The test weighs H0 "A gains ``h0`` points per deal on B" against H1
"A gains ``h1``", with the normal (generalised) SPRT that fishtest uses on
game pairs: the scores are taken as independent draws from a distribution with
mean μ and a variance estimated from the scores so far, and

    LLR = (h1 − h0) / s² · Σ (x_i − (h0 + h1) / 2)

is compared after every deal pair with the bounds log(β) and log(1 / α).
Crossing the upper bound accepts H1, the lower one H0; reaching the cap of
deal pairs first decides nothing. Scores that are all the same (two
deterministic bots that play alike score exactly 0 on every deal pair) have
no variance and carry no evidence either way: after ``min_pairs`` of them
the test stops at once with the verdict "identical" rather than play on to
the cap.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor
from typing import Literal

from oddtrick.deal_sets import DealSet
from oddtrick.duplicate import BotSource, play_pair
from oddtrick.rules import FixedDeal, GameConfig

__all__ = ["SprtState", "Verdict", "bounds", "llr", "run_sprt", "scores_of"]

Verdict = Literal["H0", "H1", "identical", "undecided"]
"""What a test concludes: H0 or H1 accepted, ``identical`` (every score the same, no
evidence either way), or ``undecided`` (too few scores yet, or the cap reached first)."""


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """The lower and upper bounds on the log-likelihood ratio: log(β) and
    log(1/α), from Wald's inequalities (the error rates are at most
    e^lower and e^-upper), rather than his usual approximation
    log(β/(1 − α)) and log((1 − β)/α), whose rates deal scores' small steps
    reach exactly, so that any error in the estimated variance pushes them
    over α and β (docs/sprt.md)."""
    if not (0 < alpha < 1 and 0 < beta < 1):
        raise ValueError("alpha and beta must be between 0 and 1 (e.g. 0.05)")
    return math.log(beta), math.log(1 / alpha)


def llr(count: int, total: float, squares: float, h0: float, h1: float) -> float:
    """The log-likelihood ratio of H1 against H0 after ``count`` scores with this
    sum and sum of squares (0 while the variance is unknown or zero)."""
    if count < 2:
        return 0.0
    mean = total / count
    variance = (squares - count * mean * mean) / (count - 1)
    if variance <= 0:
        return 0.0
    return (h1 - h0) / variance * (total - count * (h0 + h1) / 2)


@dataclasses.dataclass
class SprtState:
    """A test in progress: feed it scores with :meth:`add`, read :attr:`verdict`."""

    h0: float
    h1: float
    alpha: float = 0.05
    beta: float = 0.05
    min_pairs: int = 30
    """No decision before this many scores: the variance of a handful is too
    rough to stop on (the statistics benchmark checks the error rates with it)."""
    count: int = 0
    total: float = 0.0
    squares: float = 0.0
    first: float | None = None
    """The first score, and whether every score since was the same."""
    constant: bool = True

    def __post_init__(self) -> None:
        if self.h1 == self.h0:
            raise ValueError("h0 and h1 must differ (e.g. --h0 0 --h1 0.5)")
        self.lower, self.upper = bounds(self.alpha, self.beta)

    def add(self, score: float) -> None:
        """Count one more paired deal score; read :attr:`verdict` after each."""
        if self.first is None:
            self.first = score
        elif score != self.first:
            self.constant = False
        self.count += 1
        self.total += score
        self.squares += score * score

    @property
    def llr(self) -> float:
        """The log-likelihood ratio of H1 against H0 so far (see :func:`llr`)."""
        return llr(self.count, self.total, self.squares, self.h0, self.h1)

    @property
    def mean(self) -> float:
        """The mean score so far (0 before the first): A's estimated gain per deal pair."""
        return self.total / self.count if self.count else 0.0

    @property
    def verdict(self) -> Verdict:
        """``H1`` or ``H0`` once the ratio crosses a bound, ``identical`` when every score
        was the same, otherwise ``undecided``; never decided before ``min_pairs`` scores."""
        if self.count < self.min_pairs:
            return "undecided"
        if self.constant:
            return "identical"
        value = self.llr
        if value >= self.upper:
            return "H1"
        if value <= self.lower:
            return "H0"
        return "undecided"


def scores_of(
    a: BotSource,
    b: BotSource,
    config: GameConfig,
    seed: str,
    executor: Executor | None = None,
    deal_set: DealSet | None = None,
) -> Iterator[float]:
    """A's paired deal scores against B on the deals ``seed-0``, ``seed-1``, …,
    endlessly, in that order (with an ``executor``, as many at a time as it has workers).
    With a ``deal_set``, pair ``i`` plays the set's deal ``i`` instead, cycling past its end."""

    def deal(index: int) -> FixedDeal | None:
        return None if deal_set is None else deal_set.deals[index % len(deal_set.deals)]

    if executor is None:
        index = 0
        while True:
            yield play_pair(a, b, config, f"{seed}-{index}", deal(index)).score
            index += 1
    index = 0
    width = max(1, getattr(executor, "_max_workers", 1))
    while True:
        tasks = [(a, b, config, f"{seed}-{i}", deal(i)) for i in range(index, index + width)]
        index += width
        yield from executor.map(_pair_score, tasks)


def _pair_score(task: tuple[BotSource, BotSource, GameConfig, str, FixedDeal | None]) -> float:
    a, b, config, seed, deal = task
    return play_pair(a, b, config, seed, deal).score


def run_sprt(
    scores: Iterable[float],
    state: SprtState,
    max_pairs: int,
    report: Callable[[SprtState], None] | None = None,
) -> SprtState:
    """Feed ``scores`` to ``state`` until it decides or ``max_pairs`` are used;
    ``report`` is called after every score."""
    for score in scores:
        state.add(score)
        if report is not None:
            report(state)
        if state.verdict != "undecided" or state.count >= max_pairs:
            break
    return state
