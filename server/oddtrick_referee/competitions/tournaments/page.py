"""What a competition shows on the web page, as the competition sees it.

The page lives in the web layer above the competitions, so this module is the contract
between them, on the competitions' side: a competition takes a :data:`Page` from the
command that starts it (``web.server.page_beside`` makes one) and holds it open while it
plays; a ladder hands it a :class:`LeaderboardSource`. The page knows nothing of how a
ladder rates its bots: it renders the rows a source gives. Without one the page says
there is no ladder on this server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol, runtime_checkable

from oddtrick_referee.referee import Referee


@dataclasses.dataclass(frozen=True)
class LeaderboardRow:
    """One bot on the ladder, in rank order."""

    rank: int
    bot: str
    rating: float
    """The rating the ranks are sorted by (conservative, e.g. μ − 3σ)."""
    uncertainty: float
    """Shown beside the rating as ±, so nobody reads the rating as exact."""
    matches: int
    last_played_ms: int | None
    """Unix time in milliseconds of the bot's last ladder match (``None``: never)."""
    provisional: bool = False
    """Too few matches, or too uncertain, to be ranked for good yet."""
    inactive: bool = False
    """Has not played for a while: its uncertainty grows."""
    house: bool = False
    """A reference bot the server runs itself."""
    faults: int = 0
    stronger_than_next: float | None = None
    """The chance that this bot is stronger than the next row's (``None``: the last row)."""
    draining: bool = False
    """Stopping gracefully: it finishes the matches it sits in and takes no new one."""


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    title: str
    rows: Sequence[LeaderboardRow]
    note: str = ""
    """How ratings are computed, in a sentence, shown under the table."""


class LeaderboardSource(Protocol):
    """A ladder, as the leaderboard page reads it.

    Called from a worker thread (it may read a database), once per page view.
    """

    def leaderboard(self) -> Leaderboard: ...


@dataclasses.dataclass(frozen=True)
class RatingPoint:
    """A bot's rating just after one rated match, as the leaderboard ranks by it."""

    at_ms: int
    match_id: str
    rating: float


@runtime_checkable
class RatingHistory(Protocol):
    """A leaderboard that also knows each bot's rating over time (the bot page's chart).

    Called from a worker thread, once per bot page view.
    """

    def rating_history(self, name: str) -> Sequence[RatingPoint]: ...


Page = Callable[[Referee, LeaderboardSource | None], AbstractAsyncContextManager[object]]
"""The web page beside a competition's referee: called with the running referee (and the
ladder's leaderboard, if any), it serves the page while the block it opens runs."""
