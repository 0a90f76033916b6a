"""A person plays from a web page against bots: ``oddtrick play --web`` and the page's
Play button (``oddtrick web --play``).

As at the terminal (:mod:`.at_terminal`), the person's seat is a real seat of a real
referee: a local seat (``play/local_seat.py``, :class:`.browser_seat.PagePlayer`) whose
decisions come from the page through a :class:`.seat_desk.SeatDesk`, all in the page's
trio run; the other seats are bots (shipped ones in the referee's process, bot files as
processes). So the match log and ``oddtrick check`` are those of any match, and the
person's seat alone has no deadline.

:class:`Sittings` holds the referee (on a free localhost port, in the page's trio run)
and the matches people are playing on it. Each match's names are admitted with its own
tokens only (and the person's with none: nobody connects as the person), and under the
Play button each gets names of its own, so two people's bots can never take each
other's seats.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import IO

import trio

from oddtrick.rules import GameConfig, Seat
from oddtrick_referee._exceptions import SittingRefused
from oddtrick_referee.competitions.people.at_terminal import Opponent, seat_table, start_opponents
from oddtrick_referee.competitions.people.browser_seat import PagePlayer
from oddtrick_referee.competitions.people.seat_desk import SeatDesk, SeatDesks
from oddtrick_referee.play.local_seat import LocalEntrant
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, Referee, RefereeSettings, running_referee
from oddtrick_referee.token_scheme import same_token

log = logging.getLogger("oddtrick.play")

SEEN_END_S = 10.0
"""After the match, how long the page is given to receive its last message."""


@dataclasses.dataclass(frozen=True)
class Sitting:
    """One match a person asked for: the game, their seat and name, and the bots."""

    config: GameConfig
    seat: Seat
    partner: Opponent
    opponents: Opponent
    name: str
    seed: str | None = None
    deadline_s: float = 5.0
    """The bots' seconds per decision (the person has no deadline)."""


class Sittings:
    """The referee people play on from their pages, and their matches."""

    def __init__(self, data_dir: Path, out: IO[str], limit: int = 4, abandon_s: float | None = None) -> None:
        self.data_dir = data_dir
        self.out = out
        self.limit = limit
        """Matches played at once: each starts bot processes."""
        self.abandon_s = abandon_s
        """A match whose seat no page has followed this long is stopped (None: never), so
        visitors who close the page do not keep the bots, and the places, for good."""
        self.desks = SeatDesks()
        self.referee: Referee | None = None
        self._tokens: dict[str, str] = {}
        self._nursery: trio.Nursery | None = None

    def _verify(self, name: str, token: str) -> str | None:
        expected = self._tokens.get(name)
        return name if expected is not None and same_token(expected, token) else None

    async def run(self, *, task_status: trio.TaskStatus[Referee] = trio.TASK_STATUS_IGNORED) -> None:
        """Referee the sittings until cancelled."""
        settings = RefereeSettings(
            port=0, data_dir=self.data_dir, verify_token=self._verify, fold_events=False
        )  # each event reaches the person's page as it happens, not with their next turn
        async with running_referee(settings) as referee, trio.open_nursery() as nursery:
            self.referee, self._nursery = referee, nursery
            task_status.started(referee)
            await trio.sleep_forever()

    def start(
        self, sitting: Sitting, on_end: Callable[[SeatDesk, MatchRecord | None], None] | None = None
    ) -> SeatDesk:
        """Seat ``sitting`` on the referee; its page follows the desk returned.

        Raises SittingRefused when :attr:`limit` matches are being played already, or a
        bot's name is playing here already.
        """
        if self._nursery is None or self.referee is None:
            raise SittingRefused("the referee for play from the page is not running")
        if self.desks.playing() >= self.limit:
            raise SittingRefused(f"{self.limit} matches are being played here already: try again later")
        opponents, _, tokens, seating = seat_table(
            sitting.seat, sitting.partner, sitting.opponents, sitting.name
        )
        busy = set(tokens) & set(self._tokens)
        if busy:
            raise SittingRefused(f"{', '.join(sorted(busy))} is playing here already")
        self._tokens.update(tokens)
        desk = self.desks.add(SeatDesk(seat=sitting.seat))
        sitting = dataclasses.replace(sitting, opponents=opponents)
        self._nursery.start_soon(self._play, sitting, seating, desk, on_end, name=f"sitting {sitting.name}")
        return desk

    async def _play(
        self,
        sitting: Sitting,
        seating: dict[Seat, str],
        desk: SeatDesk,
        on_end: Callable[[SeatDesk, MatchRecord | None], None] | None,
    ) -> None:
        record: MatchRecord | None = None
        try:
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    if self.abandon_s is not None:
                        nursery.start_soon(_stop_when_unfollowed, desk, self.abandon_s, scope)
                    record = await play_sitting(self.referee, sitting, seating, desk, self.data_dir, self.out)
                    nursery.cancel_scope.cancel()
            if scope.cancelled_caught and record is None:
                desk.close(f"the match was stopped: no page followed the seat for {self.abandon_s:g} s")
        except Exception as error:  # one person's match failing must not stop the others'
            log.exception("a match played from the page failed")
            desk.close(f"the match stopped: {error}")
        finally:
            for name in seating.values():
                self._tokens.pop(name, None)
            if on_end is not None:
                on_end(desk, record)


async def _stop_when_unfollowed(desk: SeatDesk, abandon_s: float, scope: trio.CancelScope) -> None:
    while desk.unfollowed_for() < abandon_s:
        await trio.sleep(max(0.05, min(30.0, abandon_s - desk.unfollowed_for())))
    scope.cancel()


async def play_sitting(
    referee: Referee | None,
    sitting: Sitting,
    seating: dict[Seat, str],
    desk: SeatDesk,
    data_dir: Path,
    out: IO[str],
) -> MatchRecord:
    """Seat the bots and the person, and play the match on ``referee``."""
    assert referee is not None
    spec = MatchSpec(
        sitting.config,
        seating,
        TableRules(deadline_s=sitting.deadline_s),
        seed=sitting.seed,
        untimed=frozenset({sitting.seat}),
    )
    referee.add_local(LocalEntrant(sitting.name, lambda: PagePlayer(desk)))
    try:
        return await _play_with_person(referee, spec, sitting, desk, data_dir, out)
    finally:
        referee.remove_local(sitting.name)


async def _play_with_person(
    referee: Referee, spec: MatchSpec, sitting: Sitting, desk: SeatDesk, data_dir: Path, out: IO[str]
) -> MatchRecord:
    over = False
    async with trio.open_nursery() as nursery:
        start_opponents(nursery, referee, sitting.partner, sitting.opponents, data_dir, lambda: over, out)
        record = await referee.play_match(spec, on_start=lambda m, p: desk.started(m, str(p)))
        over = True
        desk.close()
        with trio.move_on_after(SEEN_END_S):  # the page receives the last word
            await desk.end_seen.wait()
        nursery.cancel_scope.cancel()
    return record
