"""The referee: the gRPC services, the lobby, and matches played on tables.

``async with running_referee(settings) as referee:`` listens, accepts bots
and plays whatever :meth:`Referee.play_match` is asked, each match in its
own nursery, until the block ends; then every bot is told UNAVAILABLE.
Competitions use only the members ``front_door.FrontDoor`` declares; the
lobby, the index and the live tables are the referee's own (its services
and white-box tests read them).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import fcntl
import ipaddress
import logging
import secrets
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import grpc
import trio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from oddtrick._options import OptionValue
from oddtrick.deal_sets import MatchDeals
from oddtrick.rules import GameConfig, GameKind, GameState, MatchResult, Seat, new_seed
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, referee_pb2, referee_pb2_grpc
from oddtrick_referee._exceptions import DataDirInUse, OptionError
from oddtrick_referee.arena import ArenaService, LadderView
from oddtrick_referee.collector import collect_in_steps, collector_off
from oddtrick_referee.command_runner import unwrapped
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.play.local_seat import LocalEntrant, LocalSeat
from oddtrick_referee.play.matchlog import (
    MatchLogWriter,
    compress_log,
    recover_compression,
)
from oddtrick_referee.play.seat import TableSeat
from oddtrick_referee.play.spectators import MAX_WATCHERS, Spectator
from oddtrick_referee.play.table import SeatRecord, Table, TableRules, result_record
from oddtrick_referee.storage.data_dir import check_writable, storage_errors
from oddtrick_referee.storage.log_retention import prune_house_logs
from oddtrick_referee.storage.match_index import MatchStore
from oddtrick_referee.storage.sqlite import owner_only
from oddtrick_referee.transport.bridge import BotStream, CallCount, grpc_server
from oddtrick_referee.transport.sessions import (
    Credentials,
    Lobby,
    SeatLink,
    Session,
    SessionLimits,
)

log = logging.getLogger("oddtrick.referee")

ALL_GAMES = frozenset(GameKind)
UNLIMITED_SEATS = 1 << 30
"""The free seats of a local entrant with no limit: one more is made whenever asked."""
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class RefereeSettings:
    host: str = "127.0.0.1"
    port: int = 0
    """0 picks a free port (see :attr:`Referee.port`)."""
    data_dir: Path = Path("oddtrick-data")
    """Match logs go in ``data_dir/logs``, the index in ``data_dir/oddtrick.sqlite3``."""
    tokens: Mapping[str, str] | None = None
    """Bot name → token, held in memory only (a tournament's, made for its run)."""
    token_hashes: Mapping[str, str] | None = None
    """Bot name → salted token hash, from a tokens file (transport/tokens.py)."""
    allow_any_token: bool = False
    """Without tokens, listen on a non-loopback address all the same (anyone may play)."""
    verify_token: Callable[[str, str], str | None] | None = None
    """Checks a bot's name and token instead of the above (the ladder asks its database):
    the id of the credential that admits it, or None. Called on a worker thread."""
    verify_token_cached: Callable[[str, str], str | None] | None = None
    """What ``verify_token`` admitted before and still would, from memory (no I/O, called
    on trio's thread): the credential's id, or None to ask ``verify_token``."""
    limits: SessionLimits = dataclasses.field(default_factory=SessionLimits)
    games: frozenset[GameKind] = ALL_GAMES
    default_rules: TableRules = dataclasses.field(default_factory=TableRules)
    fold_events: bool = True
    """Events ride with the seat's next decision request (False: each is sent at once)."""
    keepalive_s: tuple[float, float] = (10.0, 5.0)
    """Ping every connection this often; drop it when a ping goes unanswered this long."""
    tls: grpc.ServerCredentials | None = None
    """Serve TLS (see transport/tls.py); None: plaintext."""
    loopback_port: bool = False
    """With TLS, also listen in plaintext on 127.0.0.1 for bots the referee starts itself."""
    compress_logs: bool = False
    """Gzip each finished match's log in place (same name; every reader opens both kinds):
    a busy ladder writes gigabytes of logs a day, and they compress about tenfold."""
    metrics: Metrics | None = None
    """Where the referee counts its decisions, faults and tables in play (None: figures of
    its own, :attr:`Referee.metrics`); a worker passes one that outlives its referees."""


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """A match to play: the game, which bot sits where, the arena's rules."""

    config: GameConfig
    seating: Mapping[Seat, str]
    rules: TableRules = dataclasses.field(default_factory=TableRules)
    seed: str | None = None
    match_id: str | None = None
    table_id: str = ""
    set_id: str = ""
    """The duplicate set a sealed play belongs to: its plays are released together
    (:meth:`Referee.release_set`)."""
    run_id: str = ""
    """What planned this match (a tournament's table run), to find it again after a crash."""
    untimed: frozenset[Seat] = frozenset()
    """Seats a person plays (``oddtrick play``): no decision deadline for them."""
    deals: MatchDeals | None = None
    """The deals from a fixed deal set (``--deals-from``); None: dealt from the seed."""


@dataclasses.dataclass(frozen=True)
class SeatedMatch:
    """A match whose seats are taken and whose table is set, not yet started."""

    spec: MatchSpec
    table: Table
    links: dict[Seat, TableSeat]
    log_path: Path
    log_writer: MatchLogWriter
    sealed: bool

    @property
    def match_id(self) -> str:
        return self.table.match_id

    def explain_stop(self, reason: str) -> None:
        """If this match is cancelled, its seats are told ``reason`` (the ladder's other table failed)."""
        self.table.stop_reason = reason


@dataclasses.dataclass(frozen=True)
class Connection:
    """A bot's open session, as a competition sees it: who it is and what admitted it."""

    name: str
    credential: str
    """The id of the credential that admitted it (``RefereeSettings.verify_token``); "" for a fixed token."""
    _session: Session | None = dataclasses.field(repr=False, compare=False)
    """The session itself, for :meth:`Referee.revoke` alone (None: a local entrant, which
    plays in the referee's process and has no session)."""

    @property
    def leaving(self) -> bool:
        """The bot said Leave on this session: it finishes its match and takes no new one."""
        return self._session is not None and self._session.leaving


def _needs(seating: Mapping[Seat, str]) -> dict[str, int]:
    needs: dict[str, int] = {}
    for name in seating.values():
        needs[name] = needs.get(name, 0) + 1
    return needs


@dataclasses.dataclass
class MatchRecord:
    match_id: str
    state: GameState
    seats: dict[Seat, SeatRecord]
    log_path: Path
    added_latency_s: list[float]


class Referee:
    def __init__(self, settings: RefereeSettings, nursery: trio.Nursery) -> None:
        self.settings = settings
        self._nursery = nursery
        credentials = Credentials(
            settings.tokens, settings.token_hashes, settings.verify_token, settings.verify_token_cached
        )
        self.lobby = Lobby(credentials, settings.limits, settings.games)
        self.log_dir = settings.data_dir / "logs"
        self.store = MatchStore(settings.data_dir / "oddtrick.sqlite3", keep_connections=True)
        self.port = 0
        self.local_address = ""
        """Where bot processes on this machine connect (plaintext on loopback)."""
        self.metrics = settings.metrics or Metrics()
        """Its decisions, faults and tables in play, for ``/metrics`` (:mod:`.metrics`)."""
        self.calls = CallCount()
        """The open Play calls (the transport's count, once listening)."""
        self.live: dict[str, Table] = {}
        """Matches in progress, read by the gRPC thread (replaced, never mutated in place)."""
        self._live_lock = threading.Lock()
        self._watching_next: list[Spectator] = []
        """Spectators waiting for the next match open to them to start (trio's thread)."""
        self.trio_token = trio.lowlevel.current_trio_token()
        self.ladder: LadderView | None = None
        """The ladder this referee runs, if any: the Arena's ladder RPCs read it."""
        self._local: dict[str, LocalEntrant] = {}
        """Entrants seated in this process (``play/local_seat.py``), by name."""
        self._local_busy: collections.Counter[str] = collections.Counter()
        """Seats each local entrant holds now."""
        self._options: dict[str, dict[str, OptionValue]] = {}
        """The bot options each bot started by a competition plays with, by bot name."""
        self._disk = trio.CapacityLimiter(2)
        """Index writes in worker threads, two at a time: SQLite takes one writer anyway, and
        250 tables starting at once would otherwise start dozens of threads."""

    @property
    def address(self) -> str:
        return host_port(self.settings.host, self.port)

    @property
    def data_dir(self) -> Path:
        return self.settings.data_dir

    def _on_stream(self, stream: BotStream) -> None:
        self._nursery.start_soon(self.lobby.serve_stream, stream, name=f"session {stream.peer}")

    async def play_match(
        self,
        spec: MatchSpec,
        wait_s: float | None = None,
        sealed: bool = False,
        on_start: Callable[[str, Path], None] | None = None,
    ) -> MatchRecord:
        """Wait for the seated bots to be connected, then play the match to its end.

        With ``wait_s``, raise :class:`trio.TooSlowError` if the bots are not all
        there in time (nothing is recorded then). A ``sealed`` match keeps its
        seed from the bots, and its progress, result, log and spectating from
        the Arena service until :meth:`release_set`: the two plays of a duplicate
        deal are sealed until both are over, so that neither reveals the cards
        to the other. ``on_start(match_id, log_path)`` is called once the bots are
        seated and the match begins.
        """
        needs = _needs(spec.seating)
        with trio.fail_after(wait_s) if wait_s is not None else contextlib.nullcontext():
            await self.wait_for_seats(needs, spec.config.game)
        return await self.play_seated(self.seat_match(spec, sealed), on_start)

    def seat_match(self, spec: MatchSpec, sealed: bool = False) -> SeatedMatch:
        """Take the seated bots' idle sessions and set the table, without waiting.

        Competitions that play several tables as one match (the ladder) seat
        them all at once, so either every table of the match starts or none
        does. Raises LookupError if a bot has no idle session.
        """
        for name, count in _needs(spec.seating).items():
            if self.idle_seats(name, spec.config.game) < count:
                raise LookupError(f"{name!r} has fewer than {count} idle session(s)")
        match_id = spec.match_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        links = {seat: self._take_seat(seat, spec) for seat in Seat}
        log_path = self.log_dir / f"{match_id}.jsonl"
        seed = spec.seed if spec.seed is not None else new_seed()
        try:
            with storage_errors(f"starting match {match_id}", self.settings.data_dir):
                log_writer = MatchLogWriter(log_path)
        except BaseException:
            self._release(links)
            raise
        table = Table(
            match_id=match_id,
            table_id=spec.table_id or match_id,
            config=spec.config,
            seed=seed,
            rules=spec.rules,
            links=links,
            log_writer=log_writer,
            reveal_seed=not sealed,
            fold_events=self.settings.fold_events,
            close_log=False,
            untimed=spec.untimed,
            deals=spec.deals,
            options={
                seat: self._options[name] for seat, name in spec.seating.items() if name in self._options
            },
            max_attempts=self.settings.limits.max_attempts,
            max_comment_bytes=self.settings.limits.max_comment_bytes,
            on_decided=self.metrics.decided,
        )
        try:
            with storage_errors(f"starting match {match_id}", self.settings.data_dir):
                table.open_log()  # before the index names the log: it is never seen empty
        except BaseException:
            self._release(links)
            raise
        return SeatedMatch(spec, table, links, log_path, log_writer, sealed)

    async def play_seated(
        self, seated: SeatedMatch, on_start: Callable[[str, Path], None] | None = None
    ) -> MatchRecord:
        """Play a match :meth:`seat_match` has set, to its end (see :meth:`play_match`)."""
        spec, table, links, log_path, log_writer, sealed = (
            seated.spec,
            seated.table,
            seated.links,
            seated.log_path,
            seated.log_writer,
            seated.sealed,
        )
        match_id = table.match_id
        players = {str(seat): link.bot_name for seat, link in links.items()}
        data_dir = self.settings.data_dir
        try:
            with storage_errors(f"recording the start of match {match_id}", data_dir):
                await self._on_disk(
                    self.store.match_started,
                    match_id,
                    table.started_at_ms,
                    spec.config.to_dict(),
                    players,
                    log_path,
                    {
                        "table_id": table.table_id,
                        "rules": spec.rules.to_record(),
                        "seed_commitment": table.state.commitment,
                        "sealed": sealed,
                        "set_id": spec.set_id,
                        "run_id": spec.run_id,
                    },
                )
        except BaseException:
            log_writer.close()
            self._release(links)
            raise
        self._set_live(match_id, table)
        if not sealed:
            self._show_waiting_spectators(table)
        if on_start is not None:
            on_start(match_id, log_path)
        log.info("match %s starts: %s — %s", match_id, spec.config.describe(), _seating_text(players))
        try:
            with storage_errors(f"writing the log of match {match_id}", data_dir):
                with self.metrics.tables_in_play.track_inprogress():
                    state = await table.run()
                await self._on_disk(log_writer.close)
        except BaseException:
            # Stopped (shutdown, a full disk, or a bug): keep what was played in the log, and
            # say so in the index rather than leave it "running" (and if the index cannot be
            # written either, the next start marks it aborted).
            with trio.CancelScope(shield=True):
                with contextlib.suppress(OSError):
                    await self._on_disk(log_writer.close)
                try:
                    await self._on_disk(
                        self.store.match_ended, match_id, int(time.time() * 1000), "aborted", {}
                    )
                except sqlite3.Error as error:
                    log.warning("match %s could not be marked aborted: %s", match_id, error)
                self._set_live(match_id, None)
            raise
        finally:
            self._release(links)
        result = state.match_result
        assert result is not None
        await self._record_end(match_id, table, result, sealed)
        log.info("match %s over: %s", match_id, result.reason)
        if self.settings.compress_logs:
            await self._compress(log_path)
        return MatchRecord(match_id, state, table.records, log_path, table.added_latency_s)

    def _take_seat(self, seat: Seat, spec: MatchSpec) -> TableSeat:
        """The seat of ``spec``'s bot at ``seat``: a local seat for an entrant this process
        plays, else the seat link of one of the bot's idle sessions."""
        name = spec.seating[seat]
        local = self._local.get(name)
        if local is not None:
            self._local_busy[name] += 1
            return LocalSeat(seat, local)
        session = self.lobby.take(name, spec.config.game)
        return self.lobby.seat(session, seat, spec.rules.grace_s)

    def _release(self, seats: Mapping[Seat, TableSeat]) -> None:
        """The match is over (or never started): each seat's session is idle again, each
        local seat free again."""
        for table_seat in seats.values():
            if isinstance(table_seat, LocalSeat):
                table_seat.release()
                self._local_busy[table_seat.bot_name] -= 1
            else:
                assert isinstance(table_seat, SeatLink)
                self.lobby.release(table_seat)
        self.lobby.poke()

    async def _record_end(self, match_id: str, table: Table, result: MatchResult, sealed: bool) -> None:
        """Say in the index how the match ended, then let its table go. Live until then: a
        spectator who comes meanwhile is shown the whole match from the table, never told
        it is neither in progress nor logged yet."""
        try:
            with storage_errors(f"recording the end of match {match_id}", self.data_dir):
                await self._on_disk(
                    self.store.match_ended,
                    match_id,
                    int(time.time() * 1000),
                    "sealed" if sealed else "finished",
                    {**result_record(result), "seats": table.seat_records()},
                )
        finally:
            self._set_live(match_id, None)

    def finish(self) -> None:
        """No more matches here: end every session with OK, so bots stop for good."""
        self.lobby.close_all(grpc.StatusCode.OK, "no more matches for this bot here")

    async def _compress(self, log_path: Path) -> None:
        """Compress a finished log; a failure (a full disk) leaves it plain, and readable."""
        try:
            await self._on_disk(compress_log, log_path)
        except OSError as error:
            log.warning("the log %s stays uncompressed: %s", log_path, error)

    async def _on_disk(self, function: Callable[..., T], *args: Any) -> T:
        return await trio.to_thread.run_sync(function, *args, limiter=self._disk)

    async def release_set(self, set_id: str) -> None:
        """The whole duplicate set is decided: publish all its plays (see MatchStore.release_set)."""
        await self._on_disk(self.store.release_set, set_id)

    async def sealed_sets(self) -> set[str]:
        """The sets with a play still sealed (MatchStore.withheld_sets)."""
        return await self._on_disk(self.store.withheld_sets)

    async def played_run(self, run_id: str) -> dict[str, Any] | None:
        """The index's last match of a competition's run (MatchStore.played_run)."""
        return await self._on_disk(self.store.played_run, run_id)

    async def matches_recorded(self) -> int:
        return await self._on_disk(self.store.count)

    async def prune_house_logs(self, house: Collection[str], cutoff_ms: int) -> tuple[int, int]:
        """Delete old logs of an entrant's games against ``house`` bots (storage/log_retention.py)."""
        return await self._on_disk(prune_house_logs, self.store, house, cutoff_ms)

    def explain_stop(self, reason: str) -> None:
        """Every match in progress, if cancelled, tells its seats ``reason``."""
        for table in list(self.live.values()):
            table.stop_reason = reason

    def live_table(self, match_id: str) -> Table | None:
        return self.live.get(match_id)

    def _show_waiting_spectators(self, table: Table) -> None:
        """The spectators waiting for the next match follow ``table``, from its first event."""
        for spectator in self._watching_next:
            if not spectator.closed:
                table.watch(spectator)
        self._watching_next = []

    def watch_next(self, spectator: Spectator) -> None:
        """``spectator`` follows the next match to start that is open to spectators, from
        its first event (``Arena.WatchMatch`` with ``next_to_start``): subscribed before
        the match, it misses none of it, however soon the match is over."""
        waiting = [each for each in self._watching_next if not each.closed]
        if len(waiting) >= MAX_WATCHERS:
            spectator.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_WATCHERS} spectators wait for the next match already; try again later",
            )
            return
        self._watching_next = [*waiting, spectator]

    # -------------------------------------------------------------- entrants

    def add_local(self, entrant: LocalEntrant) -> None:
        """Seat ``entrant`` in this process from now on, whenever a match names it."""
        self._local[entrant.name] = entrant
        self.lobby.poke()

    def declare_options(self, name: str, options: Mapping[str, OptionValue]) -> None:
        """The options bot ``name`` plays with, for the ``match_start`` of its match logs."""
        self._options[name] = dict(options)

    def remove_local(self, name: str) -> None:
        """Seat ``name`` in this process no more (its seats taken now play on to their end)."""
        self._local.pop(name, None)

    def connected(self) -> list[Connection]:
        """Every open session, and every local entrant (from any thread: both are copied
        before they are read)."""
        local = [Connection(name, "", None) for name in list(self._local)]
        return local + [
            Connection(session.name, session.credential, session)
            for session in list(self.lobby.sessions.values())
        ]

    def idle_seats(self, name: str, game: GameKind) -> int:
        local = self._local.get(name)
        if local is None:
            return self.lobby.idle_count(name, game)
        return UNLIMITED_SEATS if local.seats is None else local.seats - self._local_busy[name]

    async def wait_for_seats(self, needs: Mapping[str, int], game: GameKind) -> None:
        """Wait until each named bot has that many idle sessions (a local entrant, that
        many free seats)."""
        remote = {name: count for name, count in needs.items() if name not in self._local}
        while True:
            await self.lobby.wait_for(remote, game)
            changed = self.lobby.change_event
            if all(self.idle_seats(name, game) >= count for name, count in needs.items()):
                return
            await changed.wait()

    def revoke(self, connection: Connection, details: str) -> None:
        """End a session its credential no longer admits: an idle one now, a seated one once its
        match is over. Nothing happens if it has closed, or a newer stream resumed it, meanwhile."""
        session = connection._session
        if session is not None and self.lobby.sessions.get(session.id) is session:
            self.lobby.revoke(session, details)

    @property
    def lobby_changed(self) -> trio.Event:
        return self.lobby.change_event

    def poke(self) -> None:
        self.lobby.poke()

    def serve_ladder(self, ladder: LadderView) -> None:
        """The Arena's ladder RPCs answer from ``ladder`` from now on."""
        self.ladder = ladder

    def _set_live(self, match_id: str, table: Table | None) -> None:
        with self._live_lock:
            live = dict(self.live)
            if table is None:
                live.pop(match_id, None)
            else:
                live[match_id] = table
            self.live = live


def _seating_text(players: Mapping[str, str]) -> str:
    return ", ".join(f"{seat} {name}" for seat, name in players.items())


async def _recover_logs(log_dir: Path, compress: bool) -> None:
    """What a stop mid-compression left, and finished logs still plain (recover_compression)."""
    removed, compressed = await trio.to_thread.run_sync(recover_compression, log_dir, compress)
    if removed or compressed:
        log.info(
            "logs: %d half-compressed copy(ies) a stop left removed, %d finished log(s) compressed",
            removed,
            compressed,
        )


@contextlib.contextmanager
def _data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Hold the data directory for this referee alone while the block runs.

    The referee marks matches an earlier run left unfinished as aborted when it
    starts: a second referee on the same directory would do that to the first
    one's matches in progress.
    """
    # New data folders are the referee's user's alone: they hold seeds (storage/sqlite.py and
    # play/matchlog.py tighten the files inside, in a folder given with other modes too).
    with storage_errors("taking its lock", data_dir):
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        (data_dir / "logs").mkdir(mode=0o700, exist_ok=True)
        owner_only(data_dir / "logs")
        lock = (data_dir / "referee.lock").open("a")
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DataDirInUse(
                f"another referee is using {data_dir}: stop it, or give this one its own --data-dir"
            ) from None
        check_writable(data_dir)
        yield


def open_arena_problem(settings: RefereeSettings) -> str | None:
    """Why the settings must not be served: no credentials on an address others can reach."""
    if settings.tokens or settings.token_hashes or settings.verify_token or settings.allow_any_token:
        return None
    if _is_loopback(settings.host):
        return None
    return (
        f"refusing to listen on {settings.host} without bot tokens: anyone who can reach it could play "
        "under any bot's name. Give --tokens FILE.json (oddtrick tokens add FILE.json NAME), listen "
        "on 127.0.0.1, or pass --allow-any-token if that is really what you want"
    )


def host_port(host: str, port: int) -> str:
    """``host:port``, with an IPv6 address in brackets as gRPC wants it."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@asynccontextmanager
async def running_referee(settings: RefereeSettings) -> AsyncIterator[Referee]:
    """Listen and referee until the block ends."""
    problem = open_arena_problem(settings)
    if problem:
        raise OptionError(problem)
    with _data_dir_lock(settings.data_dir), unwrapped():
        async with _serving(settings) as referee:
            yield referee


@asynccontextmanager
async def _serving(settings: RefereeSettings) -> AsyncIterator[Referee]:
    async with trio.open_nursery() as nursery:
        referee = Referee(settings, nursery)
        aborted = await trio.to_thread.run_sync(referee.store.abort_unfinished)
        if aborted:
            log.warning("%d match(es) an earlier run left unfinished are marked aborted", aborted)
        # In the background: a folder of a million logs is read file by file, and matches
        # need not wait for that (a log being compressed stays readable throughout).
        nursery.start_soon(_recover_logs, referee.log_dir, settings.compress_logs, name="log recovery")
        health_servicer = health.aio.HealthServicer()

        def register(server: grpc.aio.Server, play_handler: Any) -> None:
            referee_pb2_grpc.add_RefereeServicer_to_server(play_handler, server)
            arena_pb2_grpc.add_ArenaServicer_to_server(ArenaService(referee), server)
            health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
            names = (
                referee_pb2.DESCRIPTOR.services_by_name["Referee"].full_name,
                arena_pb2.DESCRIPTOR.services_by_name["Arena"].full_name,
                health.SERVICE_NAME,
                reflection.SERVICE_NAME,
            )
            reflection.enable_server_reflection(names, server)

        address = host_port(settings.host, settings.port)
        async with grpc_server(
            address,
            referee._on_stream,
            register,
            inbox_size=settings.limits.max_unsolicited,
            keepalive_s=settings.keepalive_s,
            credentials=settings.tls,
            loopback_port=settings.loopback_port and settings.tls is not None,
        ) as endpoint:
            referee.port = endpoint.port
            referee.local_address = (
                f"127.0.0.1:{endpoint.loopback_port}"
                if endpoint.loopback_port != endpoint.port
                else referee.address
            )
            referee.calls = endpoint.calls
            endpoint.loop.call_soon_threadsafe(
                lambda: asyncio.ensure_future(health_servicer.set("", health_pb2.HealthCheckResponse.SERVING))
            )
            if referee.lobby.credentials.open:
                log.warning("no bot tokens configured: any token is accepted (fine on a private machine)")
            # Debug only: the commands print where they listen themselves, once.
            log.debug("referee listening on %s; logs in %s", referee.address, referee.log_dir)
            # Collection pauses stop every table: kept short (see collector.py).
            with collector_off():
                nursery.start_soon(collect_in_steps, lambda: not referee.live, name="collector")
                try:
                    yield referee
                finally:
                    # Seated bots learn why their match ends here before their streams close.
                    for table in list(referee.live.values()):
                        table.tell_stopped("the referee is shutting down")
                    referee.lobby.close_all(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
                    nursery.cancel_scope.cancel()
