"""The referee's front door: all a competition may ask of a running referee.

A tournament, the ladder, ``oddtrick play`` and the conformance kit hold the referee as a
:class:`FrontDoor` (``running_referee`` yields a :class:`~oddtrick_referee.referee.Referee`,
which is one). They seat matches and await their records, learn who is connected, publish a
sealed set, and hear when the lobby changes; they never reach the lobby, the match index or
the tables behind it. So the referee may change how it keeps sessions, rows and tables
without a competition noticing, and a new competition format has one short list to learn.

``tests/test_front_door.py`` reads the code with ``ast`` and fails naming the file and
line where anything outside the referee's own modules touches a member of ``Referee`` that
is not declared here, or any private one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any, Protocol

import trio

from oddtrick._options import OptionValue
from oddtrick.rules import GameKind
from oddtrick_referee.arena import LadderView
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.play.local_seat import LocalEntrant
from oddtrick_referee.play.table import Table
from oddtrick_referee.referee import Connection, MatchRecord, MatchSpec, SeatedMatch


class FrontDoor(Protocol):
    """A running referee, as a competition uses it (see the module's docstring)."""

    # ------------------------------------------------------------ where it is

    @property
    def address(self) -> str:
        """Where remote bots connect (``host:port``)."""

    @property
    def local_address(self) -> str:
        """Where bot processes on this machine connect (plaintext on loopback)."""

    @property
    def data_dir(self) -> Path:
        """The data folder: the index, ``logs/``, and beside them a competition's own files."""

    @property
    def log_dir(self) -> Path:
        """Where the match logs are written."""

    @property
    def metrics(self) -> Metrics:
        """Its figures for ``/metrics``: a competition adds its own waits and queue to them."""

    # ---------------------------------------------------------------- matches

    async def play_match(
        self,
        spec: MatchSpec,
        wait_s: float | None = None,
        sealed: bool = False,
        on_start: Callable[[str, Path], None] | None = None,
    ) -> MatchRecord:
        """Wait for the seated bots, play the match, return its record (``trio.TooSlowError``
        when the bots are not all there within ``wait_s``)."""

    def seat_match(self, spec: MatchSpec, sealed: bool = False) -> SeatedMatch:
        """Take the bots' idle sessions and set the table now (several tables start together)."""

    async def play_seated(
        self, seated: SeatedMatch, on_start: Callable[[str, Path], None] | None = None
    ) -> MatchRecord:
        """Play a match :meth:`seat_match` set, to its end."""

    async def release_set(self, set_id: str) -> None:
        """The duplicate set is decided and recorded: publish its sealed plays."""

    async def sealed_sets(self) -> set[str]:
        """The sets with a play still sealed (a stop came between a record and its release)."""

    async def played_run(self, run_id: str) -> dict[str, Any] | None:
        """The last match the index holds for a competition's run id (a crash's leftovers)."""

    async def matches_recorded(self) -> int:
        """How many matches the index holds."""

    async def prune_house_logs(self, house: Collection[str], cutoff_ms: int) -> tuple[int, int]:
        """Delete old logs of an entrant's matches against ``house`` bots: (logs, bytes)."""

    def explain_stop(self, reason: str) -> None:
        """Matches in progress, when cancelled from now on, tell their seats ``reason``."""

    def finish(self) -> None:
        """No more matches: every bot is told so (OK) and may stop for good."""

    # --------------------------------------------------------------- entrants

    def add_local(self, entrant: LocalEntrant) -> None:
        """Seat ``entrant`` in the referee's own process whenever a match names it (a shipped
        bot, a person, a trusted bot file: ``play/local_seat.py``)."""

    def remove_local(self, name: str) -> None:
        """Seat ``name`` in the referee's process no more (a person whose sitting is over)."""

    def declare_options(self, name: str, options: Mapping[str, OptionValue]) -> None:
        """The bot options the bot ``name`` was started with (``option.NAME=VALUE``), written
        beside its name in the ``match_start`` of every match it plays from now on."""

    def connected(self) -> list[Connection]:
        """Every open session now (safe to call from any thread)."""

    def idle_seats(self, name: str, game: GameKind) -> int:
        """How many of ``name``'s sessions wait for a seat at ``game``."""

    async def wait_for_seats(self, needs: Mapping[str, int], game: GameKind) -> None:
        """Wait until each named bot has that many idle sessions."""

    def revoke(self, connection: Connection, details: str) -> None:
        """Its credential no longer admits it: end the session (when idle, or after its match)."""

    # -------------------------------------------------------------- listening

    @property
    def lobby_changed(self) -> trio.Event:
        """Set at the next change of who is connected or idle: take it, look, then wait on it."""

    def poke(self) -> None:
        """Set :attr:`lobby_changed` now (something the referee cannot see changed)."""

    def serve_ladder(self, ladder: LadderView) -> None:
        """Answer the Arena's ladder RPCs from ``ladder``."""

    def live_table(self, match_id: str) -> Table | None:
        """A match in progress, for spectators (None once it is over)."""
