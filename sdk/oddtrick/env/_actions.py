"""The learning environments' action numbers: one number per card and per call.

A learning library sees a fixed, discrete action space, so every action a game has gets
a number, the same in every state: the 52 cards by :attr:`Card.index` (clubs 2 … clubs
ace, then diamonds, hearts, spades), then, in Contract Whist, pass, double and the 35
bids from 7♣ to 13NT. Classic Whist has no calls, so its space is the 52 cards alone.
Which numbers are legal now is the mask, made from the rules' own legal actions.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any, Final

from oddtrick.rules import BIDS, DOUBLE, PACK, PASS, Action, GameKind

CARDS: Final = 52
PASS_NUMBER: Final = 52
DOUBLE_NUMBER: Final = 53
FIRST_BID_NUMBER: Final = 54
"""7♣ is 54, 7♦ 55 … 13NT 88: ``54 + 5 * (level - 7) + denomination``."""

ACTIONS: Final[tuple[Action, ...]] = (*PACK, PASS, DOUBLE, *BIDS)
"""Every action, at its number."""

_NUMBERS: Final[dict[Action, int]] = {action: number for number, action in enumerate(ACTIONS)}


def action_count(game: GameKind) -> int:
    """The size of the game's action space: 52 in classic Whist, 89 in Contract Whist."""
    return CARDS if game is GameKind.CLASSIC else len(ACTIONS)


def action_number(action: Action) -> int:
    """The number of a card or call."""
    return _NUMBERS[action]


def action_numbers(actions: Iterable[Action]) -> list[int]:
    return [_NUMBERS[action] for action in actions]


def action_of(number: Any, game: GameKind) -> Action:
    """The card or call numbered ``number`` (an int or a NumPy integer) in ``game``.

    A number outside the game's space is a ``ValueError``, anything but an integer a
    ``TypeError``, each saying what the space is: the caller's mistake, not a move of the game.
    """
    count = action_count(game)
    value: int | None
    try:
        value = None if isinstance(number, bool) else operator.index(number)  # True is no action
    except TypeError:
        value = None
    if value is None:
        raise TypeError(f"an action is a whole number from 0 to {count - 1}, not {number!r}")
    if not 0 <= value < count:
        raise ValueError(
            f"action {value} is outside {game.value} whist's actions, 0 to {count - 1} "
            "(docs/learning-agents.md numbers them)"
        )
    return ACTIONS[value]


def describe(number: int) -> str:
    """The action numbered ``number`` as people write it (``QH``, ``pass``, ``8NT``)."""
    return str(ACTIONS[number])
