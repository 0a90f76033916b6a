"""Duplicate deal pairs played in this process, scored as the standings score them.

A deal pair is one deal played twice with the same cards, dealer and turned
trump: first with bot A's partnership North-South, then with bot B's; each
play starts with fresh bot instances, so nothing is remembered from the first
play (as in duplicate bridge and ACPC poker). A's *paired deal score* is

    ((A − B at the first table) + (A − B at the second)) / 2

exactly the deal score of docs/standings.md, so figures from here (the
sequential test, the statistics benchmark, the strength tables in the README)
mean what a tournament's points per deal mean. Without duplicate a deal is
played once, A North-South, and scored A − B.
"""

from __future__ import annotations

import dataclasses

from oddtrick._local import play_local
from oddtrick.rules import FixedDeal, GameConfig, GameKind, GameState, MatchFormat, Seat, Side

__all__ = ["BotSource", "PairResult", "deal_config", "play_deal", "play_pair"]

BotSource = object
"""A Bot subclass (each play gets a fresh instance) or a function of a view."""


def _fresh(source: BotSource) -> object:
    return source() if isinstance(source, type) else source


def deal_config(game: GameKind | str, **options: object) -> GameConfig:
    """A one-deal match of ``game`` (``classic`` or ``contract``) with ``options``."""
    kind = GameKind(game)
    return GameConfig(game=kind, format=MatchFormat.DEALS, deals=1, **options)  # type: ignore[arg-type]


def _margin(state: GameState, side: Side) -> int:
    """``side``'s points on the deal less the other side's, honours included."""
    (result,) = state.hand_results
    points = [result.points[index] + result.honours[index] for index in (0, 1)]
    return points[side] - points[side.other]


def play_deal(
    a: BotSource, b: BotSource, config: GameConfig, seed: str, a_side: Side, deal: FixedDeal | None = None
) -> int:
    """Play one deal with A's partnership at ``a_side``; A's points less B's. The deal is
    the seed's, or ``deal`` (from a fixed deal set) when given."""
    bots = {seat: _fresh(a if seat.side is a_side else b) for seat in Seat}
    return _margin(play_local(bots, config, seed, deals=None if deal is None else (deal,)), a_side)


@dataclasses.dataclass(frozen=True, slots=True)
class PairResult:
    """One deal pair: A's margin at each table and A's paired deal score."""

    seed: str
    first: int  # A − B with A North-South
    second: int  # A − B with A East-West

    @property
    def score(self) -> float:
        """A's paired deal score: the mean of its two margins, which cancels the luck of
        the cards (both partnerships held both hands)."""
        return (self.first + self.second) / 2


def play_pair(
    a: BotSource, b: BotSource, config: GameConfig, seed: str, deal: FixedDeal | None = None
) -> PairResult:
    """Play the deal of ``seed`` (or the fixed ``deal``) twice, partnerships swapped.
    ``config`` must be a one-deal match (see :func:`deal_config`)."""
    if config.format is not MatchFormat.DEALS or config.deals != 1:
        raise ValueError("a deal pair is played as two one-deal matches: use deal_config()")
    return PairResult(
        seed,
        play_deal(a, b, config, seed, Side.NORTH_SOUTH, deal),
        play_deal(a, b, config, seed, Side.EAST_WEST, deal),
    )
