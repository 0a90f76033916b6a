"""Round robins and gauntlets, with duplicate deals by default.

A *match* is one pairing of two entries. Under duplicate it is played in
sets of deals, each set from its own seed and played twice, on two tables,
with the entries swapping partnerships: the same cards, dealer and turned
trump, so the luck of the deal cancels in the difference. Both plays of a
set are *sealed* until both are over (see :meth:`Referee.play_match`), and
every entry plays them under two identities, ``NAME~0`` and ``NAME~1``, each
with its own token: a local entry runs as two processes, one per play, each
given only its own token, so no bot instance can see both plays of a deal; a
remote entry is given two tokens and must connect each play separately.
What the referee cannot see is what an entrant's operator does with both
tokens: a tournament trusts its entrants not to pass information between
their two plays (the ladder, for untrusted entrants, has its own rules).

Every table run is stored when it finishes; re-running the same tournament
plays only what is missing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import os
import secrets
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

import grpc
import rich.progress
import trio
from rich.text import Text

from oddtrick._log_records import log_text
from oddtrick._run import bot_factory
from oddtrick._terminal import console
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee._exceptions import EntryFailed, OptionError, ResultRefused
from oddtrick_referee.command_runner import unwrapped
from oddtrick_referee.competitions.entries import sandbox
from oddtrick_referee.competitions.entries.access import Refusal
from oddtrick_referee.competitions.entries.entrants import (
    BotProcess,
    Identity,
    bot_identity,
    refusal_for,
    run_bot_process,
    walls_warning,
)
from oddtrick_referee.competitions.entries.entry_options import check_entries, declare_options, options_env
from oddtrick_referee.competitions.scoring.counted import (
    bot_entries,
    bot_errors,
    table_result,
    table_standings,
)
from oddtrick_referee.competitions.scoring.publication import PlannedTable, deal_keys, publishable
from oddtrick_referee.competitions.scoring.scored import disagreement, scored_table
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.tournaments.competition import Competition, DuplicateSet, PlayedTable
from oddtrick_referee.competitions.tournaments.page import Page
from oddtrick_referee.competitions.tournaments.resume import announce
from oddtrick_referee.competitions.tournaments.tournament_plan import (
    SLOT_MARK,
    TableRun,
    plan_runs,
    run_deals,
)

# The plan's values are the tournament's public face too: who enters, and how.
from oddtrick_referee.competitions.tournaments.tournament_plan import Entry as Entry
from oddtrick_referee.competitions.tournaments.tournament_plan import TournamentSettings as TournamentSettings
from oddtrick_referee.competitions.tournaments.tournament_plan import parse_entry as parse_entry
from oddtrick_referee.competitions.tournaments.tournament_plan import remote_entry as remote_entry
from oddtrick_referee.front_door import FrontDoor
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.play.clock import time_control
from oddtrick_referee.play.local_seat import bot_entrant
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee
from oddtrick_referee.storage.data_dir import check_writable, storage_errors
from oddtrick_referee.storage.results import TableResult
from oddtrick_referee.storage.tournament_store import TournamentStore

log = logging.getLogger("oddtrick.tournament")


PLAYS_REFUSED = 3
"""Plays of one table whose logs are refused before the tournament stops with the error:
a referee whose every log disagrees with its own record has something wrong with it."""


def _scored_log(path: Path, match_id: str, seats: dict[str, Any]) -> PlayedTable:
    """A table from its log (:func:`.scored.scored_table`), refused if the log cannot be read,
    is not finished (a stop mid-match), or disagrees with the ``seats`` its index kept."""
    try:
        text = log_text(path)
    except OSError as error:
        raise ResultRefused(f"table {match_id}: its log cannot be read: {error}") from error
    played = scored_table(text, match_id)
    if differs := disagreement(played, played.deals, seats, "the match index"):
        raise ResultRefused(f"table {match_id}: {differs}")
    return played


class Progress:
    """Tables done of the total: on a terminal a live bar with the rate, the time elapsed
    and the time left, and the last table's news beside it; otherwise one plain line per
    table, ``[done/total tables, elapsed s] news``, for logs and pipes."""

    def __init__(self, total: int, stream: IO[str] = sys.stderr) -> None:
        self.total = total
        self.done = 0
        self.stream = stream
        self.console = console(stream)
        self.live = self.console.is_terminal
        self._started = time.monotonic()
        self._bar: rich.progress.Progress | None = None
        self._task: rich.progress.TaskID | None = None

    def update(self, text: str, finished_one: bool = True) -> None:
        if finished_one:
            self.done += 1
        if not self.live:
            elapsed = time.monotonic() - self._started
            self.stream.write(f"[{self.done}/{self.total} tables, {elapsed:5.1f} s] {text}\n")
            self.stream.flush()
            return
        if self._bar is None:
            self._bar = rich.progress.Progress(
                rich.progress.BarColumn(),
                rich.progress.MofNCompleteColumn(),
                rich.progress.TextColumn("tables"),
                _RateColumn(),
                rich.progress.TimeElapsedColumn(),
                rich.progress.TextColumn("left"),
                rich.progress.TimeRemainingColumn(),
                rich.progress.TextColumn("{task.description}", markup=False),
                console=self.console,
            )
            self._bar.start()
            self._task = self._bar.add_task(text, total=self.total, completed=self.done)
        assert self._task is not None
        self._bar.update(self._task, total=self.total, completed=self.done, description=text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class _RateColumn(rich.progress.ProgressColumn):
    """Tables per minute, from the recent pace."""

    def render(self, task: rich.progress.Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("- tables/min" if not speed else f"{speed * 60:.1f} tables/min")


class Tournament(Competition):
    def __init__(self, settings: TournamentSettings, referee: FrontDoor, store: TournamentStore) -> None:
        super().__init__(referee)
        self.settings = settings
        self.store = store
        self.id = settings.tournament_id
        self.entries = {entry.name: entry for entry in settings.entries}
        self._forfeited: set[str] = set()

    def entry_of(self) -> dict[str, str]:
        """Bot names at the referee → entry names."""
        return bot_entries(entry.name for entry in self.settings.entries)

    def bot_name(self, entry: str, table_no: int) -> str:
        """Under duplicate, every entry plays table 0 as ``NAME~0`` and table 1 as ``NAME~1``."""
        if self.settings.duplicate:
            return f"{entry}{SLOT_MARK}{table_no}"
        return entry

    def standings(self) -> Standings:
        tables = self.store.table_runs(self.id)
        standings = table_standings(
            [entry.name for entry in self.settings.entries],
            tables,
            self.store.forfeited_matches(self.id),
            self.settings.duplicate,
        )
        if self.settings.deal_set is not None:
            standings = dataclasses.replace(standings, deal_set=self.settings.deal_set.describe())
        rules = self.settings.rules
        standings = dataclasses.replace(standings, time_control=time_control(rules.deadline_s, rules.clock))
        trusted = [f"{e.name} ({e.in_process})" for e in self.settings.entries if e.trusted_file]
        if trusted:
            standings = dataclasses.replace(standings, in_process=", ".join(trusted))
        if options := {e.name: e.options for e in self.settings.entries if e.options}:
            standings = dataclasses.replace(standings, options=options)
        note = self._bot_error_note(tables)
        return dataclasses.replace(standings, notes=(note,)) if note else standings

    def _bot_error_note(self, tables: list[TableResult]) -> str | None:
        """One line saying where the tracebacks behind the E faults are: a local entry's
        process output is kept in DATA/bot-output/NAME.log; a remote one's is its own."""
        bots = sorted(bot_errors(tables))
        if not bots:
            return None
        entry_of = self.entry_of()
        local = [bot for bot in bots if self.entries[entry_of.get(bot, bot)].local]
        in_process = sorted({e for bot in bots if self.entries[e := entry_of.get(bot, bot)].in_process})
        remote = sorted({e for bot in bots if self.entries[e := entry_of.get(bot, bot)].remote})
        where = []
        if local:
            output = self.referee.data_dir / "bot-output"
            where.append(", ".join(str(output / f"{bot}.log") for bot in local))
        if in_process:
            where.append(f"the referee's own output for {', '.join(in_process)} (played in its process)")
        if remote:
            where.append(f"the output of remote {', '.join(remote)} (run by its author)")
        return (
            "E (bot errors): the bot's own code raised and played a fallback; "
            f"tracebacks in {'; '.join(where)}"
        )

    @property
    def sealed(self) -> bool:
        """Whether its tables are sealed when played: under duplicate (the twin plays the same
        cards), and with a deal file (later pairings may deal the same deals)."""
        return self.settings.duplicate or self.settings.deal_set is not None

    def publishable(self, finished: set[tuple[str, int, int]]) -> list[str]:
        """The sets that may be released now (``publication.py``'s rule): every table of the
        plan over (stored, or of a forfeited match) and none of their deals still to be dealt."""
        if not self.sealed:
            return []
        return publishable(
            PlannedTable(
                self.set_id(run),
                deal_keys(self.set_id(run), run_deals(self.settings, run)),
                run.key in finished or run.match_key in self._forfeited,
            )
            for run in plan_runs(self.settings, "")
        )

    def played_sets(self) -> list[str]:
        """Every set whose tables have all been played and stored (a worker thread): once the
        competition will deal nothing more (an SPRT that has decided), they may all go."""
        finished = self.store.finished_runs(self.id)
        by_set: dict[str, list[bool]] = {}
        for run in plan_runs(self.settings, ""):
            by_set.setdefault(self.set_id(run), []).append(run.key in finished)
        return sorted(set_id for set_id, over in by_set.items() if all(over))

    def set_id(self, run: TableRun) -> str:
        return f"{self.id}/{run.match_key}/{run.set_number}"

    def run_id(self, run: TableRun) -> str:
        return f"{self.set_id(run)}/{run.table_no}"

    async def run(self, progress: Progress, master_seed: str) -> Standings:
        runs = plan_runs(self.settings, master_seed)
        finished = await trio.to_thread.run_sync(self.store.finished_runs, self.id)
        self._forfeited = {f.match for f in self.store.forfeited_matches(self.id)}
        for run in runs:
            if run.key not in finished and await self._recover(run):
                finished.add(run.key)
        if self.sealed:
            # Sets decided before a stop whose plays are still sealed (their release was lost).
            await self.publish(self.publishable(finished))
        to_play = [r for r in runs if r.key not in finished and r.match_key not in self._forfeited]
        progress.total = len(runs)
        progress.done = len(runs) - len(to_play)
        if progress.done:
            progress.update(f"resuming: {progress.done} tables already played", finished_one=False)
        elif progress.live:
            progress.update("starting", finished_one=False)
        send, receive = trio.open_memory_channel[TableRun](math.inf)
        for run in to_play:
            send.send_nowait(run)
        send.close()
        async with trio.open_nursery() as nursery:
            for _ in range(self.settings.tables):
                nursery.start_soon(self._worker, receive.clone(), progress)
        return self.standings()

    async def _worker(self, runs: trio.MemoryReceiveChannel[TableRun], progress: Progress) -> None:
        async with runs:
            async for run in runs:
                if run.match_key in self._forfeited:
                    progress.update(f"{run.match_key.replace('|', ' v ')}: skipped (forfeited)")
                    continue
                await self._play(run, progress)

    async def play_run(self, run: TableRun, progress: Progress) -> None:
        """Play one table run not yet stored, and store it (or the forfeit of its match
        when an entry does not connect in time), as :meth:`run` does every run of its plan."""
        await self._play(run, progress)

    async def _play(self, run: TableRun, progress: Progress) -> None:
        settings = self.settings
        config = settings.config
        if settings.duplicate:
            config = dataclasses.replace(config, format=MatchFormat.DEALS, deals=run.deals)
        ns, ew = self.bot_name(run.ns_entry, run.table_no), self.bot_name(run.ew_entry, run.table_no)
        seating = {Seat.NORTH: ns, Seat.SOUTH: ns, Seat.EAST: ew, Seat.WEST: ew}
        deal_set = DuplicateSet(
            config,
            settings.rules,
            run.seed,
            set_id=self.set_id(run),
            table_id=f"{self.id}/{run.match_key}",
            deals=run_deals(settings, run),
        )
        spec = deal_set.table(seating, run_id=self.run_id(run))
        try:
            played = await self._scored_play(spec, progress)
        except trio.TooSlowError:
            absent, present = self._absent(run, config)
            self._forfeited.add(run.match_key)
            await trio.to_thread.run_sync(self.store.record_forfeit, self.id, run.match_key, absent, present)
            if self.sealed:  # a forfeited match is decided: what else waited on its deals may go
                finished = await trio.to_thread.run_sync(self.store.finished_runs, self.id)
                await self.publish(self.publishable(finished))
            progress.update(
                f"{absent} did not connect within {settings.remote_wait_s:g} s: forfeits v {present}"
            )
            return
        await self._record(run, table_result(run, played))
        progress.update(self._summary(run))

    async def _scored_play(self, spec: MatchSpec, progress: Progress) -> PlayedTable:
        """Play the table and read it from its log; a play whose log is refused (it and the
        referee's record disagree) is not counted, and the table is played again (its set
        stays sealed meanwhile), up to :data:`PLAYS_REFUSED` times before the error stands."""
        settings = self.settings
        for attempt in range(1, PLAYS_REFUSED + 1):
            try:
                return await self.play_table(spec, sealed=self.sealed, wait_s=settings.remote_wait_s)
            except ResultRefused as refused:
                if attempt == PLAYS_REFUSED:
                    raise
                log.warning("result refused, not counted: %s; the table is played again", refused)
                progress.update(f"result refused, not counted: {refused}; played again", finished_one=False)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def _record(self, run: TableRun, table: TableResult) -> None:
        """Store a finished table run; once both plays of its set are stored, release the set."""

        def write() -> set[tuple[str, int, int]]:
            with storage_errors(f"storing table run {self.run_id(run)}", self.store.path.parent):
                self.store.record_run(self.id, table, int(time.time() * 1000))
            return self.store.finished_runs(self.id) if self.sealed else set()

        await self.record(write, self.publishable)

    async def _recover(self, run: TableRun) -> bool:
        """Record a run an earlier referee played to its end but stopped before storing
        (its match is in the index, its log complete), rather than play it again."""
        row = await self.referee.played_run(self.run_id(run))
        if row is None or not row["result"]:
            return False
        seats = json.loads(row["result"])["seats"]
        try:
            played = await trio.to_thread.run_sync(_scored_log, Path(row["log_path"]), row["match_id"], seats)
        except ResultRefused as refused:
            log.warning("table run %s, played before the stop, is not counted: %s", self.run_id(run), refused)
            return False
        log.info("table run %s was played before the stop; recording it from its log", self.run_id(run))
        await self._record(run, table_result(run, played))
        return True

    def _absent(self, run: TableRun, config: GameConfig) -> tuple[str, str]:
        for entry, other in ((run.ns_entry, run.ew_entry), (run.ew_entry, run.ns_entry)):
            if self.referee.idle_seats(self.bot_name(entry, run.table_no), config.game) < 2:
                return entry, other
        return run.ew_entry, run.ns_entry

    def _summary(self, run: TableRun) -> str:
        standings = self.standings()
        leader = standings.rows[0] if standings.rows else None
        played = f"{run.match_key.replace('|', ' v ')} set {run.set_number} table {run.table_no + 1}"
        if leader is None or leader.points_per_deal is None:
            return f"{played} done"  # no standings before a deal's second table
        return f"{played} done; leader {leader.entry} {leader.points_per_deal:+.2f}/deal"


async def run_tournament(
    settings: TournamentSettings,
    data_dir: Path,
    host: str = "127.0.0.1",
    port: int = 0,
    progress_stream: IO[str] = sys.stderr,
    on_listening: Callable[[str], None] | None = None,
    tls: grpc.ServerCredentials | None = None,
    page: Page | None = None,
    progress: Progress | None = None,
    play: Callable[[Tournament, Progress, str], Awaitable[Standings]] | None = None,
    metrics: Metrics | None = None,
) -> Standings:
    """Start a referee, start the local entries, play every missing table, return the standings.

    ``page`` (``web.server.page_beside``) serves the web page beside the referee while
    the tournament plays. ``progress`` (made here on ``progress_stream`` if not
    given) counts the tables done. ``play(tournament, progress, master_seed)`` plays
    the tables once every local entry is connected (default :meth:`Tournament.run`,
    every table of the plan); the sequential test plays deal pairs until it decides.
    """
    # Who runs each local entry is settled before anything starts (or is written); its
    # warnings wait until the data folder has proved usable (an error there is one line).
    identities, warnings = _identities(settings, bot_identity(settings.bot_user))
    settings, store, master_seed = await _open_tournament(settings, data_dir, identities, progress_stream)
    referee_settings = dataclasses.replace(
        _referee_settings(settings, data_dir, host, port, tls), metrics=metrics
    )
    for warning in warnings:
        print(warning, file=progress_stream, flush=True)
    progress = progress or Progress(0, progress_stream)
    finished = False
    try:
        with unwrapped():
            async with (
                running_referee(referee_settings) as referee,
                page(referee, None) if page is not None else contextlib.nullcontext() as _,
            ):
                if on_listening is not None:
                    on_listening(referee.address)
                tournament = Tournament(settings, referee, store)
                seat_in_process(referee, settings)
                async with trio.open_nursery() as processes:
                    for entry in settings.entries:
                        if entry.local:
                            who = identities[entry.name]
                            # Over loopback, in plaintext even when remote entries use TLS.
                            address = referee.local_address
                            for spec in local_processes(entry, address, settings, data_dir):
                                processes.start_soon(run_bot_process, spec, who, lambda: finished)
                    await _wait_for_local_entries(referee, settings, data_dir)
                    standings = await (play or Tournament.run)(tournament, progress, master_seed)
                    finished = True
                    referee.finish()
                    # Told the tournament is over (OK), the bots finish their last lines and exit
                    # by themselves; whatever is still running after a few seconds is stopped.
                    processes.cancel_scope.deadline = trio.current_time() + LOCAL_EXIT_S
    finally:
        progress.close()
    return standings


async def _open_tournament(
    settings: TournamentSettings,
    data_dir: Path,
    identities: dict[str, Identity | None],
    progress_stream: IO[str],
) -> tuple[TournamentSettings, TournamentStore, str]:
    """Check the data folder and every entry's bot options (before anything is stored), open
    the tournament in its store, new or resumed, and say which it is. Returns the settings
    with the entries in the order they joined, the store and the master seed."""
    with storage_errors("opening the tournament", data_dir):
        check_writable(data_dir)
    await check_entries(settings.entries, identities, data_dir)
    with storage_errors("opening the tournament", data_dir):
        store = TournamentStore(data_dir / "oddtrick.sqlite3")
        if not settings.name and await trio.to_thread.run_sync(
            store.has_tournament, settings.legacy_tournament_id
        ):
            settings = dataclasses.replace(settings, name=settings.legacy_tournament_id)
        stored = await trio.to_thread.run_sync(store.tournaments)
        master_seed, order = await trio.to_thread.run_sync(
            store.open_tournament,
            settings.tournament_id,
            settings.describe(),
            settings.seed or secrets.token_hex(16),
            int(time.time() * 1000),
        )
    resumed = any(other.tournament_id == settings.tournament_id for other in stored)
    for line in announce(settings.tournament_id, settings.describe(), resumed, stored, data_dir):
        print(line, file=progress_stream, flush=True)
    by_name = {entry.name: entry for entry in settings.entries}
    return dataclasses.replace(settings, entries=tuple(by_name[name] for name in order)), store, master_seed


def _referee_settings(
    settings: TournamentSettings, data_dir: Path, host: str, port: int, tls: grpc.ServerCredentials | None
) -> RefereeSettings:
    """The tournament's referee: its entries' tokens, or, when every entry plays in its
    process, no way in for anyone (never an open arena)."""
    tokens = _tokens(settings)
    return RefereeSettings(
        host=host,
        port=port,
        data_dir=data_dir,
        tokens=tokens,
        verify_token=None if tokens else _admit_nobody,
        tls=tls,
        loopback_port=True,
    )


def _admit_nobody(name: str, token: str) -> str | None:
    """The credentials of a tournament no bot connects to: every Hello is refused."""
    return None


def _tokens(settings: TournamentSettings) -> dict[str, str]:
    """Each bot name that connects, with its token: no one connects as an entry played in
    the referee's own process."""
    tokens = {}
    for entry in settings.entries:
        if not entry.in_process:
            tokens.update(entry.identities(settings.duplicate))
    return tokens


def seat_in_process(referee: FrontDoor, settings: TournamentSettings) -> None:
    """The entries played in the referee's own process, under each of their names; and every
    entry's bot options, for its match logs."""
    for entry in settings.entries:
        declare_options(referee, list(entry.identities(settings.duplicate)), entry.options)
        if entry.in_process:
            make = bot_factory(entry.in_process, entry.options)
            for name in entry.identities(settings.duplicate):
                referee.add_local(
                    bot_entrant(name, make, trusted_file=entry.in_process if entry.trusted_file else "")
                )


LOCAL_EXIT_S = 5.0
"""How long local entries may take to exit by themselves once the tournament is over."""
LOCAL_START_S = 120.0
"""How long the local entries' processes may take to connect (the remote wait is for remote ones)."""


async def _wait_for_local_entries(referee: FrontDoor, settings: TournamentSettings, data_dir: Path) -> None:
    needs = {}
    for entry in settings.entries:
        if entry.local:
            for name in entry.identities(settings.duplicate):
                needs[name] = 2 * settings.tables
    with trio.move_on_after(LOCAL_START_S):
        await referee.wait_for_seats(needs, settings.config.game)
        return
    late = [name for name, count in needs.items() if referee.idle_seats(name, settings.config.game) < count]
    raise EntryFailed(
        f"local entries did not connect within {LOCAL_START_S:g} s: {', '.join(late)}; "
        f"their output is in {data_dir / 'bot-output'}"
    )


def _identities(
    settings: TournamentSettings, identity: Identity | None
) -> tuple[dict[str, Identity | None], list[str]]:
    """The user each local entry's processes run as, decided before anything starts.

    The unprivileged user must be able to run the entry: its program and interpreter,
    its files and every folder above them (see ``access.py``). If it cannot, the entry
    runs as root in the sandbox (``sandbox.py``), with one warning that says how to run it
    as that user instead; when ``--bot-user`` named the user, or no sandbox can be made
    here, the tournament does not start, with one line saying what to do. Returns the
    users and the warnings to print."""
    chosen: dict[str, Identity | None] = {}
    warnings: list[str] = []
    closed: dict[str, Refusal] = {}
    for entry in settings.entries:
        if entry.command is None:
            continue
        chosen[entry.name] = identity
        if identity is None:
            continue
        assert entry.cwd is not None
        refused = refusal_for(entry.command, entry.cwd, identity)
        if refused is None:
            continue
        if settings.bot_user:
            raise OptionError(
                f"local entry {entry.name!r}: {refused}: open it to other users ({refused.fix}) "
                "or choose another --bot-user"
            )
        if problem := sandbox.problem():
            raise OptionError(
                f"local entry {entry.name!r}: {refused}, and it cannot run as root in a sandbox: "
                f"{problem}; or open the path to other users ({refused.fix}), or give --bot-user"
            )
        chosen[entry.name] = None
        closed[entry.name] = refused
    problem = sandbox.problem() if os.geteuid() == 0 and identity is None and chosen else None
    if problem:
        warnings.append(f"warning: local entries run as root without a sandbox (--bot-user root): {problem}")
    if chosen and (unwalled := walls_warning()):
        warnings.append(unwalled)
    if identity is not None and closed:
        first = next(iter(closed.values()))
        warnings.append(
            f"warning: local entries {', '.join(closed)} run as root in a sandbox that shows them "
            f"only their own files: {first}; to run them as {identity.user}, open it to other "
            f"users ({first.fix}) or give --bot-user"
        )
    return chosen, warnings


def local_processes(
    entry: Entry, address: str, settings: TournamentSettings, data_dir: Path
) -> list[BotProcess]:
    """The processes of a local entry: one per play of a duplicate deal (two names), else one."""
    assert entry.command is not None
    assert entry.cwd is not None
    seats = 2 * settings.tables
    processes = []
    for name, token in entry.identities(settings.duplicate).items():  # each process: its own token only
        command = list(entry.command)
        env = {"ODDTRICK_SERVER": address, "ODDTRICK_NAME": name, "ODDTRICK_SEATS": str(seats)}
        env.update(options_env(entry.options))
        if entry.sdk:
            # "--name=…" in one word: a name may begin with "-", which would read as an option.
            command += ["--server", address, f"--name={name}", "--seats", str(seats)]
        processes.append(
            BotProcess(
                entry=entry.name,
                name=name,
                command=tuple(command),
                env=env,
                cwd=entry.cwd,
                token=token,
                output=data_dir / "bot-output" / f"{name}.log",
                token_in_env=not entry.sdk,
                hide=(data_dir,),
            )
        )
    return processes
