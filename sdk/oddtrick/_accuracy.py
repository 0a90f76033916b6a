"""A player's accuracy, as chess sites grade moves: each card graded by the tricks it lost
double dummy, and the grades counted per seat and per bot.

One trick lost is an *inaccuracy* (``?!``), two a *mistake* (``?``), three or more a
*blunder* (``??``): whist's tricks are coarse, so a single trick is already a real loss,
and the grades follow the marks the replay page puts on cards. A card that kept its
side's double-dummy result is *accurate*; accuracy is the share of such cards.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Final

__all__ = ["GRADES", "accuracy", "add_card", "empty", "grade", "merge"]

GRADES: Final = ("inaccuracies", "mistakes", "blunders")
"""The grades of a costly card, smallest first: one trick lost, two, three or more."""

COUNTED: Final = ("cards", "accurate", "lost", *GRADES)
"""What a tally counts: cards played, those that lost nothing, tricks lost, and each grade."""


def grade(lost: int) -> str | None:
    """The grade of a card that lost ``lost`` tricks double dummy (``None``: it lost none)."""
    if lost <= 0:
        return None
    return GRADES[min(lost, 3) - 1]


def empty() -> dict[str, int]:
    """A tally of no cards."""
    return dict.fromkeys(COUNTED, 0)


def add_card(tally: MutableMapping[str, int], lost: int) -> None:
    """Count one card that lost ``lost`` tricks."""
    tally["cards"] += 1
    tally["lost"] += max(0, lost)
    graded = grade(lost)
    if graded is None:
        tally["accurate"] += 1
    else:
        tally[graded] += 1


def merge(tallies: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """The sum of several tallies (a bot's seats over its matches); a missing count is 0,
    so a tally kept before a count was added still adds up."""
    total = empty()
    for tally in tallies:
        for key in COUNTED:
            total[key] += int(tally.get(key, 0))
    return total


def accuracy(tally: Mapping[str, int]) -> float | None:
    """The share of cards that kept the side's double-dummy result (``None``: no cards)."""
    return tally["accurate"] / tally["cards"] if tally.get("cards") else None
