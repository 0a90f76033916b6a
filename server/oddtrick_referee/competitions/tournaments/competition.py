"""What a tournament and the ladder do alike, at the referee's front door.

Both play the tables of a duplicate set (the same seed, so the same cards, dealer and
turned trump, at every table; sealed until the set is decided), read the same things off
a finished table for their standings (each deal's points, each bot's faults and
forfeits), and store a result before they publish its set: in that order, so that a stop
in between leaves the set sealed, for the next start to publish (:meth:`Competition.publish`),
never public without its result. How they pair entrants, rate or rank them, and what
they store stay their own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

import trio

from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import GameConfig, Seat

# What a finished table gives the standings is read off its log there, and nowhere else.
from oddtrick_referee.competitions.scoring.scored import DealPoints as DealPoints
from oddtrick_referee.competitions.scoring.scored import PlayedTable as PlayedTable
from oddtrick_referee.competitions.scoring.scored import deal_points as deal_points
from oddtrick_referee.competitions.scoring.scored import scored_record
from oddtrick_referee.front_door import FrontDoor
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, SeatedMatch

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class DuplicateSet:
    """The tables of one set of deals: one seed and one set id for all of them."""

    config: GameConfig
    rules: TableRules
    seed: str
    set_id: str
    """What the referee publishes together (:meth:`Competition.publish`)."""
    table_id: str
    """What the web page groups the tables under (the pairing they belong to)."""
    deals: MatchDeals | None = None
    """Deals from a fixed deal set (``--deals-from``); None: dealt from the seed."""

    def table(self, seating: Mapping[Seat, str], match_id: str | None = None, run_id: str = "") -> MatchSpec:
        """One table of the set, with these bots in these seats."""
        return MatchSpec(
            self.config,
            seating,
            self.rules,
            seed=self.seed,
            match_id=match_id,
            table_id=self.table_id,
            set_id=self.set_id,
            run_id=run_id,
            deals=self.deals,
        )


async def scored(record: MatchRecord) -> PlayedTable:
    """A table just played, read from its log on a worker thread (a replay takes a few
    milliseconds a deal: not on the referee's loop)."""
    return await trio.to_thread.run_sync(
        scored_record, record.match_id, record.log_path, record.state, record.seats
    )


class Competition:
    """The base of the tournament and the ladder: the referee's front door, and the jobs above."""

    def __init__(self, referee: FrontDoor) -> None:
        self.referee = referee

    async def play_table(self, spec: MatchSpec, sealed: bool, wait_s: float | None = None) -> PlayedTable:
        """Wait for the table's bots (``trio.TooSlowError`` after ``wait_s``), play it, read it
        from its log (``ResultRefused`` when the log and the referee's record disagree)."""
        return await scored(await self.referee.play_match(spec, wait_s=wait_s, sealed=sealed))

    def seat_tables(self, specs: Sequence[MatchSpec]) -> list[SeatedMatch]:
        """Seat every table of a set at once, sealed: no checkpoint between them, so that nobody
        takes a seat in between and either every table starts or none does."""
        return [self.referee.seat_match(spec, sealed=True) for spec in specs]

    async def play_seated_tables(self, seated: Sequence[SeatedMatch], failed: str) -> list[PlayedTable]:
        """Play tables :meth:`seat_tables` set, together, each read from its log; when one
        fails (or its log is refused), the others stop and their seats are told ``failed``,
        and the failure is raised."""
        played: list[PlayedTable | None] = [None] * len(seated)

        async def play(index: int) -> None:
            try:
                played[index] = await scored(await self.referee.play_seated(seated[index]))
            except Exception:
                for other in seated:  # cancelled next: its seats are told why
                    other.explain_stop(failed)
                raise

        async with trio.open_nursery() as tables:
            for index in range(len(seated)):
                tables.start_soon(play, index)
        return [table for table in played if table is not None]

    async def record(self, write: Callable[[], T], publish: Callable[[T], Iterable[str]]) -> T:
        """Store a result (``write``, on a worker thread), then publish the sets ``publish``
        names from what ``write`` returned."""
        written = await trio.to_thread.run_sync(write)
        # Stored, it is published too, even by a referee told to stop meanwhile: else its
        # plays stay sealed until this referee starts again (and, if it never does, for good).
        with trio.CancelScope(shield=True):
            await self.publish(publish(written))
        return written

    async def publish(self, set_ids: Iterable[str]) -> None:
        """These sets are decided and their results stored: release their sealed plays."""
        for set_id in set_ids:
            await self.referee.release_set(set_id)
