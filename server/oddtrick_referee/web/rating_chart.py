"""A ladder bot's rating over time as an SVG the server draws (the page runs no script for
it, and nothing comes from another host): the rating axis with round tick values, the
rated matches in order along the other, dated, and each match a point that links to its
replay and shows its date and rating when hovered or focused (a ``<title>`` besides, for
screen readers and browsers' own tooltips).

Matches are spaced evenly rather than by time: a ladder plays in bursts, and a time axis
would pile a burst's points on one another.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
from collections.abc import Sequence
from urllib.parse import quote

from oddtrick_referee.competitions.tournaments.page import RatingPoint

WIDTH, HEIGHT = 480, 250
LEFT, RIGHT, TOP, BOTTOM = 44, 14, 14, 46
"""The plot's margins: the rating's tick values on the left, the dates below."""
_DATES = 4
"""Most dated ticks along the matches' axis."""
_TIP_WIDTH, _TIP_HEIGHT = 240, 54


@dataclasses.dataclass(frozen=True)
class Tick:
    at: float
    """Its x (dates) or y (ratings) in the SVG."""
    label: str


@dataclasses.dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    href: str
    """The match's replay."""
    tip: str
    """What hovering it says, in one line (its ``<title>``)."""
    when: str
    rating: str
    match: str
    tip_x: float
    """Where its hover box starts: kept inside the chart."""
    tip_y: float


@dataclasses.dataclass(frozen=True)
class RatingChart:
    """The rating over time as an SVG's coordinates, drawn on the server (no script)."""

    width: int
    height: int
    points: str
    """The polyline's ``x,y x,y …``."""
    dots: tuple[ChartPoint, ...]
    """Each rated match, in order."""
    low: float
    high: float
    first_ms: int
    last_ms: int
    latest: float
    rating_ticks: tuple[Tick, ...]
    date_ticks: tuple[Tick, ...]
    plot: tuple[float, float, float, float]
    """The plot's box: left, top, right, bottom."""
    tip_size: tuple[int, int] = (_TIP_WIDTH, _TIP_HEIGHT)


def nice_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round values (steps of 1, 2 or 5 times a power of ten) covering ``low``..``high``,
    at most ``most`` of them, as people read an axis."""
    span = max(high - low, 1e-9)
    raw = span / max(1, most - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value < high + step * 0.999:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _when(ms: int, fmt: str) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime(fmt)


def rating_chart(points: Sequence[RatingPoint]) -> RatingChart | None:
    """The chart of the rating after each of ``points`` (oldest first), or None for none."""
    if not points:
        return None
    low = min(p.rating for p in points)
    high = max(p.rating for p in points)
    if math.isclose(low, high):
        low, high = low - 1, high + 1
    ticks = nice_ticks(low, high)
    axis_low, axis_high = ticks[0], ticks[-1]
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    n = len(points)

    def x_of(index: int) -> float:
        return round(LEFT + 8 + (right - LEFT - 16) * (index / (n - 1) if n > 1 else 0.5), 1)

    def y_of(rating: float) -> float:
        return round(TOP + (bottom - TOP) * (axis_high - rating) / (axis_high - axis_low), 1)

    dots = tuple(_point(x_of(i), y_of(p.rating), p) for i, p in enumerate(points))
    dated = sorted({round(i * (n - 1) / (_DATES - 1)) for i in range(_DATES)}) if n > 1 else [0]
    return RatingChart(
        width=WIDTH,
        height=HEIGHT,
        points=" ".join(f"{d.x},{d.y}" for d in dots),
        dots=dots,
        low=min(p.rating for p in points),
        high=max(p.rating for p in points),
        first_ms=points[0].at_ms,
        last_ms=points[-1].at_ms,
        latest=points[-1].rating,
        rating_ticks=tuple(Tick(y_of(t), f"{t:g}") for t in ticks),
        date_ticks=tuple(Tick(x_of(i), _when(points[i].at_ms, "%Y-%m-%d")) for i in dated),
        plot=(LEFT, TOP, right, bottom),
    )


def _point(x: float, y: float, p: RatingPoint) -> ChartPoint:
    when = _when(p.at_ms, "%Y-%m-%d %H:%M UTC")
    tip_x = min(max(x - _TIP_WIDTH / 2, 2), WIDTH - _TIP_WIDTH - 2)
    tip_y = y - _TIP_HEIGHT - 8 if y - _TIP_HEIGHT - 8 >= 2 else y + 8
    return ChartPoint(
        x=x,
        y=y,
        href="/matches/" + quote(p.match_id, safe=""),
        tip=f"{when}: {p.rating:.1f} after match {p.match_id}",
        when=when,
        rating=f"rating {p.rating:.1f} after",
        match=f"match {p.match_id}",
        tip_x=round(tip_x, 1),
        tip_y=round(tip_y, 1),
    )


__all__ = ["ChartPoint", "RatingChart", "Tick", "nice_ticks", "rating_chart"]
