"""A local tournament kept running inside a worker between jobs of the same run.

Starting a referee and four bot processes (two entries, one process per play of
a deal) costs a second or two; a set of ten deals plays in a few seconds. So a
worker keeps its local tournament (:func:`run_tournament` in a thread of its
own, with a ``play`` that takes the table runs it is given) for as long as the
jobs it leases are of the same run, game, rules and bots, and starts a new one
when they are not. Each job's runs are played exactly as a fresh tournament
would play them (each set sealed until both its plays are stored); a session
ends after :data:`JOBS_PER_SESSION` jobs, so its store and logs stay small.

A bot that dies ends the session: the job it was playing gets the error (and
is given back), the next job starts a fresh session.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import os
import queue
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import trio

from oddtrick_referee.command_runner import run_command
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.tournaments.tournament import (
    Progress,
    Tournament,
    TournamentSettings,
    run_tournament,
)
from oddtrick_referee.competitions.tournaments.tournament_plan import TableRun
from oddtrick_referee.metrics import Metrics

JOBS_PER_SESSION = 200
"""Jobs one session plays before it is started afresh (its SQLite file and logs grow with them)."""

_Item = tuple[list[TableRun], "concurrent.futures.Future[None]"] | None


class Session:
    """One local tournament in a thread; :meth:`play` hands it a job's runs and waits."""

    def __init__(self, key: str, settings: TournamentSettings, metrics: Metrics | None = None) -> None:
        self.key = key
        self.settings = settings
        self.metrics = metrics
        self.played = 0
        self.keys: set[tuple[str, int, int]] = set()
        """The table runs this session has played (a run is never played twice in one store)."""
        self._folder = tempfile.TemporaryDirectory(prefix="oddtrick-set-")
        self.data_dir = Path(self._folder.name)
        self._items: queue.Queue[_Item] = queue.Queue()
        self._current: concurrent.futures.Future[None] | None = None
        self._ended = threading.Event()
        self._error: BaseException | None = None
        self._cancel: Callable[[], None] | None = None
        """Cancels the session's trio run from another thread (set once the run has begun)."""
        self._thread = threading.Thread(target=self._main, name=f"session-{key[:12]}")
        self._thread.start()

    @property
    def alive(self) -> bool:
        return not self._ended.is_set() and self.played < JOBS_PER_SESSION

    def play(self, runs: list[TableRun]) -> None:
        """Play these runs in the session; raise what stopped it if it ended meanwhile."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._items.put((runs, future))
        self.played += 1
        self.keys.update(run.key for run in runs)
        future.result()

    def close(self, wait: float = 15.0) -> None:
        """End the session (its bots exit) and its thread: after ``wait`` seconds a session
        still playing is cancelled (its bots are stopped) and waited for; remove its folder."""
        self._items.put(None)
        self._thread.join(timeout=wait)
        while self._thread.is_alive():
            with contextlib.suppress(trio.RunFinishedError):
                if self._cancel is not None:
                    self._cancel()
            self._thread.join(timeout=1.0)
        self._folder.cleanup()

    def _main(self) -> None:
        try:
            with Path(os.devnull).open("w") as quiet:
                run_command(self._run, quiet)
        except BaseException as error:  # a bot that died, a referee that could not start
            self._error = error
        finally:
            self._ended.set()
            self._fail_waiting()

    async def _run(self, quiet: TextIO) -> None:
        """The local tournament, until :meth:`close` (or a cancel from it)."""
        token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            self._cancel = functools.partial(token.run_sync_soon, scope.cancel)
            await run_tournament(
                self.settings,
                self.data_dir,
                progress_stream=quiet,
                progress=Progress(0, quiet),
                play=self._play,
                metrics=self.metrics,
            )

    def _fail_waiting(self) -> None:
        error = self._error or RuntimeError("the session ended")
        pending = [self._current] if self._current is not None else []
        while True:
            try:
                item = self._items.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                pending.append(item[1])
        for future in pending:
            if not future.done():
                future.set_exception(error)

    async def _play(self, tournament: Tournament, progress: Progress, master_seed: str) -> Standings:
        while True:
            item = await trio.to_thread.run_sync(self._items.get, abandon_on_cancel=True)
            if item is None:
                return tournament.standings()
            runs, self._current = item
            await _play_runs(tournament, progress, runs, self.settings.tables)
            self._current.set_result(None)
            self._current = None


async def _play_runs(tournament: Tournament, progress: Progress, runs: list[TableRun], tables: int) -> None:
    """These runs, ``tables`` at a time, started in their order."""
    limit = trio.Semaphore(tables)

    async def one(run: TableRun) -> None:
        async with limit:
            await tournament.play_run(run, progress)

    async with trio.open_nursery() as nursery:
        for run in runs:
            nursery.start_soon(one, run)
            await trio.sleep(0)  # each task reaches the semaphore before the next starts


_session: Session | None = None


def session_for(
    key: str, settings: TournamentSettings, runs: list[TableRun], metrics: Metrics | None = None
) -> Session:
    """The session for this key: the running one if it matches, lives and has not played
    these runs already (a set leased again by the worker whose result was refused), else a
    new one."""
    global _session
    again = _session is not None and any(run.key in _session.keys for run in runs)
    if _session is not None and (_session.key != key or not _session.alive or again):
        _session.close()
        _session = None
    if _session is None:
        _session = Session(key, settings, metrics)
    return _session


def close_session(wait: float = 15.0) -> None:
    """End the running session, if any (the worker is stopping)."""
    global _session
    if _session is not None:
        _session.close(wait)
        _session = None
