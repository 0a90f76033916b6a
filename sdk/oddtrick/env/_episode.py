"""One episode of the learning environments: a match of a few deals, one action at a time.

Both environments (the four seats' and the one seat's) play an episode the same way: a
:class:`GameState` of a fixed number of deals from one seed, stepped with
:meth:`GameState.step`, the next hand dealt by the drive loop's :func:`next_turn` the
moment one is over, and each deal's score read from the rules' own result of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

try:
    import numpy as np
except ImportError as missing:
    raise ImportError(f'oddtrick.env needs {missing.name}: pip install "oddtrick[env]"') from missing

from oddtrick._drive import next_turn
from oddtrick.rules import (
    Action,
    ConfigError,
    GameConfig,
    GameKind,
    GameState,
    HandStarted,
    MatchEvent,
    MatchFormat,
    Phase,
    Seat,
)

HOUSE_RULES: Final = ("trump_selection", "no_trump_every_fifth", "honours", "doubling")
"""The options of docs/rules.md an environment takes in ``rules``."""


def episode_config(game: object, deals: object, rules: Mapping[str, Any] | None) -> GameConfig:
    """The configuration of an episode: ``deals`` deals of ``game`` under ``rules``.

    Every refusal is a ``ValueError`` (the rules' :class:`ConfigError` among them) that
    says what would be accepted.
    """
    try:
        kind = game if isinstance(game, GameKind) else GameKind(game)
    except ValueError:
        raise ValueError(f"game must be 'classic' or 'contract', not {game!r}") from None
    given = dict(rules or {})
    unknown = sorted(set(given) - set(HOUSE_RULES))
    if unknown:
        raise ConfigError(
            f"rules takes the house rules {', '.join(HOUSE_RULES)}; not {', '.join(unknown)} "
            "(the game and the number of deals are arguments of their own)"
        )
    return GameConfig.from_dict(
        {**given, "game": kind.value, "format": MatchFormat.DEALS.value, "deals": deals}
    )


def draw_seed(rng: np.random.Generator) -> str:
    """A deal seed for the rules, drawn from the environment's generator: a seeded
    reset draws the same one, so it deals the same cards."""
    return f"{int(rng.integers(0, 2**63)):016x}"


@dataclasses.dataclass(frozen=True)
class Stepped:
    """What one action did."""

    events: tuple[MatchEvent, ...]
    """The rules' events, then the next hand's ``HandStarted`` if one was dealt."""
    points: tuple[int, int] | None
    """Each side's points (North-South, East-West; honours included) when the action
    ended a deal, else ``None``."""


class Episode:
    """A match of the configuration's deals from ``seed``."""

    def __init__(self, config: GameConfig, seed: str) -> None:
        self.state = GameState(config, seed)

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.MATCH_OVER

    def started(self) -> HandStarted:
        """The first deal's event (the rules report only the later ones)."""
        return self.state.hand_started()

    def play(self, action: Action, seat: Seat | None = None) -> Stepped:
        """Apply ``action`` (for ``seat``, when given, which must be the seat to act).

        A refused action raises the rules' :class:`IllegalAction` and changes nothing.
        """
        state = self.state
        events = state.step(action, seat)
        if state.phase is Phase.PLAY or state.phase is Phase.AUCTION:
            return Stepped(events, None)
        result = state.hand_results[-1]
        points = (result.points[0] + result.honours[0], result.points[1] + result.honours[1])
        dealt = next_turn(state)
        if isinstance(dealt, HandStarted):
            events = (*events, dealt)
        return Stepped(events, points)


def reward(points: tuple[int, int], seat: Seat, zero_sum: bool) -> float:
    """A seat's reward for one deal: its side's points, less the other side's if ``zero_sum``."""
    ours, theirs = points[seat.side], points[1 - seat.side]
    return float(ours - theirs if zero_sum else ours)
