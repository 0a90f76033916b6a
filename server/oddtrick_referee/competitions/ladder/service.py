"""The running ladder: a referee, the house bots, and a scheduler that never stops.

Whenever the lobby changes (a bot connects, leaves, or finishes a match) the
scheduler seats every match it can (:func:`choose_lineup`), each as two
sealed tables of the same deals started together, so either both tables of a
match play or neither does. A finished match is rated and stored in one
transaction before its tables are unsealed; a start unseals the tables of any
match a crash left recorded but sealed.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import hashlib
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import grpc
import trio

from oddtrick import bots
from oddtrick._codec_arena import LADDER_OVER, ladder_match_to_wire, ladder_response
from oddtrick._options import OptionValue
from oddtrick._run import bot_factory
from oddtrick.deal_sets import DealSet, MatchDeals
from oddtrick.rules import (
    GameConfig,
    GameKind,
    MatchFormat,
    commitment,
    new_seed,
)
from oddtrick.v1 import arena_pb2
from oddtrick_referee._exceptions import EntrantExited, HouseBotTaken, LadderError, OptionError, ResultRefused
from oddtrick_referee.command_runner import sole_error
from oddtrick_referee.competitions.entries import sandbox
from oddtrick_referee.competitions.entries.entrants import (
    BotProcess,
    Identity,
    bot_identity,
    refusal_for,
    run_bot_process,
)
from oddtrick_referee.competitions.entries.entry_options import (
    declare_options,
    in_process_problem,
    options_env,
    process_problem,
)
from oddtrick_referee.competitions.ladder.heartbeat import Heartbeat
from oddtrick_referee.competitions.ladder.leaderboard import LeaderRow, leaderboard
from oddtrick_referee.competitions.ladder.pairing import Candidate, Lineup, choose_lineup
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings
from oddtrick_referee.competitions.ladder.web_source import LadderLeaderboard
from oddtrick_referee.competitions.tournaments.competition import Competition, DuplicateSet, PlayedTable
from oddtrick_referee.competitions.tournaments.page import Page
from oddtrick_referee.front_door import FrontDoor
from oddtrick_referee.metrics import Metrics
from oddtrick_referee.play.local_seat import bot_entrant
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import Connection, RefereeSettings, SeatedMatch, running_referee
from oddtrick_referee.storage.analysis_jobs import submit_analyses
from oddtrick_referee.storage.database import open_database
from oddtrick_referee.storage.ladder_store import EntrantRecord, LadderStore, RatingChange

log = logging.getLogger("oddtrick.ladder")

REFRESH_S = 5.0
"""How often the scheduler re-reads the entrants (retirements made while it runs)."""
HOUSE_RESTART_S = 5.0
"""How long after a house bot died it is started again."""
START_WAIT_S = 5.0
"""How long a planned match waits for its entrants' sessions before it is dropped unplayed."""


@dataclasses.dataclass(frozen=True)
class HouseBot:
    """A bot the ladder runs itself: an ordinary entrant, rated like everyone, marked house."""

    name: str
    command: tuple[str, ...]
    """An SDK bot's ``oddtrick bot FILE`` command line, without the connection options
    (empty for a shipped bot, which plays in the referee's process)."""
    cwd: Path
    in_process: str = ""
    """A shipped bot (``FILE.py`` inside the package): a local seat of the referee, with no
    process, sandbox or token."""
    options: Mapping[str, OptionValue] = dataclasses.field(default_factory=dict)
    """Its bot options (``--house-bot NAME=FILE.py option.NAME=VALUE``), checked before the
    ladder starts and written in the logs of its matches."""


def default_house_bots(count: int) -> tuple[HouseBot, ...]:
    """``count`` house bots: the heuristic sample bot, with one random bot among every four;
    the package's own code, so they play in the referee's process."""
    house = []
    for number in range(1, count + 1):
        kind = "random" if number % 4 == 0 else "heuristic"
        house.append(HouseBot(f"house-{kind}-{number}", (), bots.FOLDER, str(bots.bot_file(kind))))
    return tuple(house)


@dataclasses.dataclass(frozen=True)
class LadderSettings:
    config: GameConfig
    """The game; every ladder match plays ``deals`` deals of it."""
    deals: int = 8
    rules: TableRules = dataclasses.field(default_factory=TableRules)
    data_dir: Path = Path("oddtrick-data")
    database: str | None = None
    """``postgresql://…``; None for SQLite in ``data_dir``."""
    host: str = "127.0.0.1"
    port: int = 0
    trusted: bool = False
    """The trusted-pairs format (see docs/ladder.md): only for entrants who do not cheat."""
    house_bots: tuple[HouseBot, ...] = ()
    house_seats: int = 2
    """Matches each house bot plays at once."""
    rating: RatingSettings = dataclasses.field(default_factory=RatingSettings)
    explore: float = 0.25
    recent_lineups: int = 4
    seed: int | None = None
    """Seeds the pairing's random choices (tests); deals always come from fresh secret seeds."""
    tls: grpc.ServerCredentials | None = None
    """Serve TLS (transport/tls.py); the house bots then use a plaintext port on 127.0.0.1."""
    compress_logs: bool = True
    """Gzip each finished table's log in place (see RefereeSettings.compress_logs)."""
    keep_house_logs_s: float | None = None
    """Delete the logs of an entrant's matches against house bots once this old (None: keep them all)."""
    deal_set: DealSet | None = None
    """``--deals-from``: matches play these deals in order (cycling) instead of fresh seeds'."""
    analyse: bool = False
    """``--analyse``: once a match's tables are released, submit each table's log as an
    ``analysis`` job to the work queue in ``database`` (PostgreSQL) for ``oddtrick worker``."""
    heartbeat_s: float = 3.0
    """How often this referee beats its heartbeat row in the database (heartbeat.py)."""
    metrics: Metrics | None = None
    """``--metrics``: its referee's figures, its seat waits and its matches waiting for bots."""
    heartbeat_missed: int = 4
    """Beats a referee may miss before a live one records its running matches aborted: long
    enough that a busy moment is not taken for a death, short enough that a dead referee's
    match is over within half a minute."""

    @property
    def referee_id(self) -> str:
        """Who this ladder's referee is in a shared database, as a data folder is first used
        (host and folder); :func:`stable_referee_id` keeps it from then on."""
        return f"{socket.gethostname()}:{self.data_dir.resolve()}"

    @property
    def match_config(self) -> GameConfig:
        return dataclasses.replace(self.config, format=MatchFormat.DEALS, deals=self.deals)

    @property
    def game(self) -> GameKind:
        return self.config.game


REFEREE_ID_FILE = "ladder-referee-id"


def stable_referee_id(settings: LadderSettings) -> str:
    """Who claims this ladder's matches and runs its house bots in a shared database: the
    same across restarts, so that a restart aborts its own unfinished matches and takes back
    its own house bots, never another referee's. Kept in the data folder (one referee holds
    it at a time), so a new host name or a moved folder does not change it."""
    path = settings.data_dir / REFEREE_ID_FILE
    try:
        found = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        found = ""
    if found:
        return found
    path.write_text(settings.referee_id + "\n", encoding="utf-8")
    return settings.referee_id


def house_bot_tag(referee_id: str) -> str:
    """Six characters naming a referee: appended to a house bot name another referee runs."""
    return hashlib.sha256(referee_id.encode()).hexdigest()[:6]


def open_store(settings: LadderSettings) -> LadderStore:
    database = open_database(settings.database, settings.data_dir, "ladder.sqlite3")
    return LadderStore(database, settings.rating.mu, settings.rating.sigma)


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclasses.dataclass
class MatchOutcome:
    """What the scheduler learns from one match (the tests and the benchmark read these)."""

    match_id: str
    status: str
    lineup: Lineup
    score_a: int = 0
    winner: str = ""
    cause: str = ""


class Ladder(Competition):
    """The scheduler and the match runner over one referee and one store."""

    def __init__(
        self, settings: LadderSettings, referee: FrontDoor, store: LadderStore, referee_id: str
    ) -> None:
        super().__init__(referee)
        self.settings = settings
        self.store = store
        self.rater = Rater(settings.rating)
        self.referee_id = referee_id
        self.heartbeat = Heartbeat(store, referee_id, settings.heartbeat_s, settings.heartbeat_missed)
        self._rng = random.Random(settings.seed)
        self._entrants: dict[str, EntrantRecord] = {}
        self._reserved: collections.Counter[str] = collections.Counter()
        self._busy: collections.Counter[str] = collections.Counter()
        self._recent: collections.deque[frozenset[str]] = collections.deque(maxlen=settings.recent_lineups)
        self.outcomes: list[MatchOutcome] = []
        self._outcome_event = trio.Event()
        self._next_deal = 0
        """With a deal set: the index of the next match's first deal (see :meth:`resume_deals`)."""
        self.pruned = trio.Event()
        """Set once the retention policy's first pass is over (:meth:`keep_house_logs`)."""
        self.logs_pruned = (0, 0)
        """Logs the retention policy deleted since the start, and their bytes."""

    async def keep_house_logs(self, keep_s: float) -> None:
        """The retention policy (``--keep-house-logs``): at start and then hourly, until the
        ladder stops, delete the logs of matches against house bots older than ``keep_s``."""
        while True:
            entrants = await trio.to_thread.run_sync(self.store.entrants)
            house = {entrant.name for entrant in entrants if entrant.house}
            cutoff = now_ms() - int(keep_s * 1000)
            deleted, freed = await self.referee.prune_house_logs(house, cutoff)
            self.logs_pruned = (self.logs_pruned[0] + deleted, self.logs_pruned[1] + freed)
            if deleted:
                log.info(
                    "retention: deleted %d log(s) of matches against house bots, %d bytes", deleted, freed
                )
            self.pruned.set()
            await trio.sleep(PRUNE_EVERY_S)

    def resume_deals(self, tables_played: int) -> None:
        """Go on through the deal set where the matches already played (two tables each,
        counted in the referee's index) left it, rather than from its first deal."""
        if self.settings.deal_set is not None:
            self._next_deal = (tables_played // 2 * self.settings.deals) % len(self.settings.deal_set.deals)

    def _match_deals(self) -> MatchDeals | None:
        deal_set = self.settings.deal_set
        if deal_set is None:
            return None
        deals = deal_set.take(self._next_deal, self.settings.deals)
        self._next_deal = (self._next_deal + self.settings.deals) % len(deal_set.deals)
        return deals

    # ---------------------------------------------------------- reading

    def leaderboard(self) -> list[LeaderRow]:
        """For a worker thread (it reads the database)."""
        return leaderboard(self.store.entrants(), self.rater, now_ms(), self.presence())

    def connected_names(self) -> set[str]:
        """Entrants with a session on this referee now (read from any thread)."""
        return {connection.name for connection in self.referee.connected()}

    def presence(self) -> dict[str, bool]:
        """Each entrant with a session on this referee now, and whether it is draining: every
        session it has here said Leave (a bot stopping gracefully finishes the matches it sits
        in and takes no new one). Read from any thread."""
        leaving: dict[str, bool] = {}
        for connection in self.referee.connected():
            leaving[connection.name] = leaving.get(connection.name, True) and connection.leaving
        return leaving

    def get_ladder(self) -> arena_pb2.GetLadderResponse:
        """GetLadder (a worker thread)."""
        settings = self.settings
        return ladder_response(
            self.leaderboard(),
            settings.trusted,
            settings.match_config,
            settings.rules.to_wire(),
            settings.rating.z,
            settings.rating.provisional_sigma,
            settings.rating.inactive_after_s,
        )

    def list_ladder_matches(
        self, bot_name: str, page_size: int, offset: int
    ) -> tuple[list[arena_pb2.LadderMatch], bool]:
        """ListLadderMatches (a worker thread): filtered by a name, only the matches that
        are over (a running one would say where that entrant sits)."""
        statuses = LADDER_OVER if bot_name else ()
        rows = self.store.matches(bot_name or None, page_size + 1, offset, statuses)
        after: dict[str, float] = {}
        if bot_name:
            for point in self.store.rating_history(bot_name):
                after[point["match_id"]] = self.rater.conservative(Rating(point["mu"], point["sigma"]))
        matches = [ladder_match_to_wire(row, after.get(row.match_id)) for row in rows[:page_size]]
        return matches, len(rows) > page_size

    async def wait_outcomes(self, count: int) -> list[MatchOutcome]:
        """Wait until ``count`` matches have been recorded since start (tests and benchmarks
        follow the ladder this way); returns them all."""
        while len(self.outcomes) < count:
            await self._outcome_event.wait()
        return self.outcomes

    # ------------------------------------------------------- scheduling

    async def run(self) -> None:
        """Seat matches whenever the lobby allows, until cancelled.

        The entrants' records are kept in memory (updated as matches are rated),
        so nothing is read from the database between a seat coming free and the
        next match; a background task re-reads them for registrations and
        retirements made by the ladder commands meanwhile.
        """
        await self.refresh()
        async with trio.open_nursery() as matches:
            await matches.start(self.heartbeat.run)  # beaten before this referee claims a match
            matches.start_soon(self._refresh_periodically)
            while True:
                changed = self.referee.lobby_changed
                if self._unknown_connected():
                    await self.refresh()
                for lineup in self._plan():
                    matches.start_soon(self._play, lineup, name=f"ladder match {sorted(lineup.names)}")
                await changed.wait()

    def _unknown_connected(self) -> bool:
        return any(connection.name not in self._entrants for connection in self.referee.connected())

    async def refresh(self) -> None:
        """Re-read the entrants (registrations, retirements and new tokens made meanwhile)."""
        # Only sessions already open when the read begins are judged by it: one opened
        # while it runs (an entrant registered a moment ago) was verified against records
        # the read may not see yet, and would be taken for a retired entrant's.
        open_before = self.referee.connected()
        entrants = await trio.to_thread.run_sync(self.store.entrants)
        self._entrants = {entrant.name: entrant for entrant in entrants}
        self._revoke_stale_sessions(open_before)

    def _revoke_stale_sessions(self, connections: list[Connection]) -> None:
        """A retired entrant, or one whose token was rotated, loses the sessions its old
        token opened: idle ones now, seated ones once their match is over (one closed, or
        resumed by a newer session, meanwhile is left alone: see FrontDoor.revoke)."""
        for connection in connections:
            name = connection.name
            entrant = self._entrants.get(name)
            if entrant is None:
                self.referee.revoke(connection, f"{name!r} is retired from this ladder")
            elif connection.credential and connection.credential != entrant.token_id:
                replaced = f"the token of {name!r} was replaced; connect with the new one"
                self.referee.revoke(connection, replaced)

    async def _refresh_periodically(self) -> None:
        while True:
            await trio.sleep(REFRESH_S)
            await self.refresh()
            self.referee.poke()

    def _plan(self) -> list[Lineup]:
        free = {
            name: self.referee.idle_seats(name, self.settings.game) - self._reserved[name]
            for name in self._entrants
        }
        planned: list[Lineup] = []
        while True:
            candidates = [
                Candidate(
                    name=name,
                    free_seats=free[name],
                    mu=entrant.mu,
                    matches=entrant.matches + self._busy[name],
                    last_played_ms=entrant.last_played_ms,
                    house=entrant.house,
                )
                for name, entrant in self._entrants.items()
                if free[name] > 0
            ]
            lineup = choose_lineup(
                candidates, self._rng, self.settings.trusted, self.settings.explore, tuple(self._recent)
            )
            if lineup is None:
                return planned
            for name, count in lineup.seats_needed().items():
                free[name] -= count
                self._reserved[name] += count
                self._busy[name] += 1
            self._recent.append(lineup.names)
            planned.append(lineup)

    # ------------------------------------------------------------ a match

    async def _play(self, lineup: Lineup) -> None:
        match_id = time.strftime("L%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        seed = new_seed()
        needs = lineup.seats_needed()
        try:
            claimed = await trio.to_thread.run_sync(
                self.store.open_match,
                match_id,
                commitment(seed),
                lineup.to_record(),
                self.settings.match_config.to_dict(),
                [f"{match_id}-t{number}" for number in (1, 2)],
                self.referee_id,
                now_ms(),
            )
            seated = None
            if claimed:
                seated = await self._seat_when_there(match_id, seed, lineup)
        finally:
            self._reserved.subtract(needs)
            self._reserved = +self._reserved
        try:
            if seated is not None:
                await self._run_tables(match_id, seed, lineup, seated)
        finally:
            for name in lineup.names:
                self._busy[name] -= 1
            self._busy = +self._busy

    async def _seat_when_there(self, match_id: str, seed: str, lineup: Lineup) -> list[SeatedMatch] | None:
        """Seat the match once its entrants' streams are free; None (recorded aborted, and
        said in the log, or a ladder that stops planning would never say why) if they are
        not within :data:`START_WAIT_S`. Stopped meanwhile, the match is recorded aborted."""
        needs = lineup.seats_needed()
        metrics, planned = self.referee.metrics, time.monotonic()
        try:
            with trio.fail_after(START_WAIT_S), metrics.queue_depth.track_inprogress():
                await self.referee.wait_for_seats(needs, self.settings.game)
            metrics.lease_wait.observe(time.monotonic() - planned)
        except trio.TooSlowError:
            game = self.settings.game
            short = {name: f"{self.referee.idle_seats(name, game)}/{count}" for name, count in needs.items()}
            cause = "an entrant left before the match started"
            await trio.to_thread.run_sync(self.store.abort_match, match_id, cause, now_ms())
            log.warning("ladder match %s not started: %s (free streams: %s)", match_id, cause, short)
            return None
        except BaseException:  # the ladder stopping: a clean stop leaves no match running
            with trio.CancelScope(shield=True):
                cause = "the ladder stopped before the match started"
                await trio.to_thread.run_sync(self.store.abort_match, match_id, cause, now_ms())
            raise
        return self._seat(match_id, seed, lineup)

    def _seat(self, match_id: str, seed: str, lineup: Lineup) -> list[SeatedMatch]:
        """Both tables at once: no checkpoint between them, so nobody can take a seat in between."""
        deal_set = DuplicateSet(
            self.settings.match_config,
            self.settings.rules,
            seed,
            set_id=match_id,
            table_id=match_id,
            deals=self._match_deals(),
        )
        return self.seat_tables(
            [
                deal_set.table(table, match_id=f"{match_id}-t{number}")
                for number, table in enumerate(lineup.tables, start=1)
            ]
        )

    async def _run_tables(self, match_id: str, seed: str, lineup: Lineup, seated: list[SeatedMatch]) -> None:
        try:
            played = await self.play_seated_tables(seated, "the other table of this ladder match failed")
        except Exception as error:  # a failure at one table: the match cannot be rated
            refused = sole_error(error)
            if isinstance(refused, ResultRefused):  # a log that does not bear out its table
                await self._abort(match_id, seed, lineup, f"its result was refused, not rated: {refused}")
                return
            log.exception("ladder match %s failed", match_id)
            await self._abort(match_id, seed, lineup, f"the referee failed: {error!r}")
            return
        except BaseException:
            with trio.CancelScope(shield=True):
                await self._abort(match_id, seed, lineup, "the ladder stopped during the match")
            raise
        await self._record(match_id, seed, lineup, played)
        if self.settings.analyse and self._publishable(match_id):
            await self._submit_analyses(match_id, [table.log_path for table in seated])

    async def _submit_analyses(self, match_id: str, logs: list[Path]) -> None:
        """``--analyse``: the released tables' logs, one analysis job each, submitted on a
        worker thread; a failure is one line in the log, and the ladder plays on."""
        assert self.settings.database is not None
        try:
            jobs = await trio.to_thread.run_sync(submit_analyses, self.settings.database, logs)
        except Exception as error:  # a database down, a log gone: the match stands, unanalysed
            cause = " ".join(str(error).split()) or type(error).__name__
            log.warning("ladder match %s: its logs were not submitted for analysis: %s", match_id, cause)
            return
        log.info(
            "ladder match %s: %d log(s) submitted for analysis (job %s)",
            match_id,
            len(jobs),
            ", ".join(str(job) for job in jobs),
        )

    async def _abort(self, match_id: str, seed: str, lineup: Lineup, cause: str) -> None:
        await self.record(
            lambda: self.store.abort_match(match_id, cause, now_ms(), seed), lambda _: [match_id]
        )
        log.warning("ladder match %s aborted: %s", match_id, cause)
        self._announce(MatchOutcome(match_id, "aborted", lineup, cause=cause))

    async def _record(
        self,
        match_id: str,
        seed: str,
        lineup: Lineup,
        tables: list[PlayedTable],
    ) -> None:
        deals = team_a_scores(tables)
        score_a = sum(score for _, score in deals)
        faults: collections.Counter[str] = sum((table.faults() for table in tables), collections.Counter())
        absent: set[str] = set().union(*(table.forfeited() for table in tables))
        deal_scores = [score for _, score in deals]
        if absent:
            status, outcome = "forfeit", ""
            cause: str | None = f"{', '.join(sorted(absent))} did not come back within the grace period"
            unrated = {name: faults[name] for name in lineup.names - absent}
        else:
            status, cause = "finished", None
            outcome = self.rater.outcome(score_a / max(1, len(deals)))
            unrated = {}
        rater = self.rater
        at = now_ms()

        def rate(current: dict[str, EntrantRecord]) -> list[RatingChange]:
            ratings = {
                name: rater.with_inactivity(Rating(e.mu, e.sigma), e.last_played_ms, at)
                for name, e in current.items()
            }
            if absent:
                return forfeit_changes(rater, lineup, ratings, absent, faults, deal_scores)
            return match_changes(rater, lineup, ratings, deal_scores, outcome, faults)

        try:
            changes = await self.record(
                lambda: self.store.finish_match(
                    match_id, status, seed, score_a, outcome, deals, rate, unrated, at, cause
                ),
                lambda _: self._publishable(match_id),
            )
        except LadderError as refused:
            await self._refused(match_id, lineup, refused)
            return
        for change in changes:
            entrant = self._entrants.get(change.name)
            if entrant is not None:
                self._entrants[change.name] = dataclasses.replace(
                    entrant, mu=change.mu, sigma=change.sigma, matches=entrant.matches + 1, last_played_ms=at
                )
        log.info(
            "ladder match %s %s: A %s v B %s, %+d over %d deals",
            match_id,
            status if absent else f"won by {outcome}" if outcome != "draw" else "drawn",
            "+".join(lineup.team_a),
            "+".join(lineup.team_b),
            score_a,
            len(deals),
        )
        self._announce(MatchOutcome(match_id, status, lineup, score_a, outcome, cause or ""))

    async def _refused(self, match_id: str, lineup: Lineup, refused: LadderError) -> None:
        """A result the store refused: the match is no longer running (a live referee
        recorded it aborted while this one was silent past its heartbeat's expiry). Nothing
        is rated; the match is over, so its tables are released as a restart would."""
        with trio.CancelScope(shield=True):
            over = await trio.to_thread.run_sync(self.store.over, [match_id])
            await self.publish(self._publishable(match_id) if over else [])
        log.warning("ladder match %s: its result was refused, not rated: %s", match_id, refused)
        self._announce(MatchOutcome(match_id, "refused", lineup, cause=str(refused)))

    def _publishable(self, match_id: str) -> list[str]:
        """The match's tables may be released once it is over (publication.py's rule): at
        once when it dealt from its seed; never while the ladder deals from a deal file,
        which it cycles, so every deal of it will be dealt again."""
        return [] if self.settings.deal_set is not None else [match_id]

    def _announce(self, outcome: MatchOutcome) -> None:
        self.outcomes.append(outcome)
        self._outcome_event.set()
        self._outcome_event = trio.Event()


def match_changes(
    rater: Rater,
    lineup: Lineup,
    ratings: dict[str, Rating],
    deal_scores: list[int],
    outcome: str,
    faults: collections.Counter[str],
) -> list[RatingChange]:
    """Every entrant of a played match, rated deal by deal; ``outcome`` is the match's, for W-D-L."""
    new_a, new_b = rater.rate_match(
        [ratings[n] for n in lineup.team_a], [ratings[n] for n in lineup.team_b], deal_scores
    )
    result_a = {"a": "win", "b": "loss", "draw": "draw"}[outcome]
    result_b = {"a": "loss", "b": "win", "draw": "draw"}[outcome]
    return [
        RatingChange(name, r.mu, r.sigma, result_a, faults[name])
        for name, r in zip(lineup.team_a, new_a, strict=True)
    ] + [
        RatingChange(name, r.mu, r.sigma, result_b, faults[name])
        for name, r in zip(lineup.team_b, new_b, strict=True)
    ]


def forfeit_changes(
    rater: Rater,
    lineup: Lineup,
    ratings: dict[str, Rating],
    absent: set[str],
    faults: collections.Counter[str],
    deal_scores: list[int],
) -> list[RatingChange]:
    """Only an absent entrant moves: rated as its team losing every deal; the others are unchanged."""
    changes = []
    for name in sorted(absent):
        own, other = lineup.team_a, lineup.team_b
        if name in other:
            own, other = other, own
        lost = [rater.lost_deal()] * max(1, len(deal_scores))
        new_own, _ = rater.rate_match([ratings[n] for n in own], [ratings[n] for n in other], lost)
        rating = new_own[list(own).index(name)]
        changes.append(RatingChange(name, rating.mu, rating.sigma, "forfeit", faults[name]))
    return changes


def team_a_scores(tables: list[PlayedTable]) -> list[tuple[int, int]]:
    """(deal number, team A's net points) for each deal both tables played.

    Team A is North-South at table 1 and East-West at table 2, so its net on a
    deal is (NS − EW) at table 1 plus (EW − NS) at table 2: the same cards
    played both ways round, the luck of the deal cancelled.
    """
    if len(tables) != 2:
        return []
    one = {deal: ns - ew for deal, ns, ew in tables[0].deals}
    two = {deal: ew - ns for deal, ns, ew in tables[1].deals}
    return [(deal, one[deal] + two[deal]) for deal in sorted(one) if deal in two]


# ------------------------------------------------------------------ running


async def run_ladder(
    settings: LadderSettings,
    on_ready: Callable[[Ladder], None] | None = None,
    output_dir: Path | None = None,
    page: Page | None = None,
) -> None:
    """Open the store, start the referee and the house bots (and the web ``page``, with the
    ladder's leaderboard), and schedule until cancelled."""
    store = await trio.to_thread.run_sync(open_store, settings)
    referee_settings = RefereeSettings(
        host=settings.host,
        port=settings.port,
        data_dir=settings.data_dir,
        verify_token=store.verify,
        verify_token_cached=store.verified,
        games=frozenset({settings.game}),
        default_rules=settings.rules,
        tls=settings.tls,
        loopback_port=settings.tls is not None,
        compress_logs=settings.compress_logs,
        metrics=settings.metrics,
    )
    try:
        async with running_referee(referee_settings) as referee:
            # Only now, holding the data folder, may this run touch what an earlier one left:
            # a second ladder started on a folder in use stops above without changing anything.
            referee_id = await trio.to_thread.run_sync(stable_referee_id, settings)
            aborted = await trio.to_thread.run_sync(
                store.abort_unfinished,
                "the ladder stopped before the match ended",
                now_ms(),
                referee_id,
            )
            if aborted:
                log.warning(
                    "%d ladder match(es) an earlier run left unfinished are recorded aborted", len(aborted)
                )
            house = await trio.to_thread.run_sync(_claim_house_bots, store, settings.house_bots, referee_id)
            ladder = Ladder(settings, referee, store, referee_id)
            ladder.resume_deals(await referee.matches_recorded())
            referee.serve_ladder(ladder)
            await _release_decided(ladder, store)
            board = LadderLeaderboard(
                store,
                ladder.rater,
                f"Ladder: {settings.match_config.describe()}"
                + (f" · deals from {settings.deal_set.describe()}" if settings.deal_set else ""),
                ladder.presence,
            )
            serving = page(referee, board) if page is not None else contextlib.nullcontext()
            async with serving, trio.open_nursery() as nursery:
                for bot, token in house:
                    declare_options(referee, [bot.name], bot.options)
                    if bot.in_process:
                        make = bot_factory(bot.in_process, bot.options)
                        referee.add_local(bot_entrant(bot.name, make, seats=settings.house_seats))
                        continue
                    nursery.start_soon(
                        _run_house_bot,
                        bot,
                        token,
                        referee.local_address or referee.address,
                        settings.house_seats,
                        output_dir or settings.data_dir / "bot-output",
                        settings.data_dir,
                    )
                if settings.keep_house_logs_s is not None:
                    nursery.start_soon(ladder.keep_house_logs, settings.keep_house_logs_s)
                if on_ready is not None:
                    on_ready(ladder)
                await ladder.run()
    finally:
        store.db.close()


def _claim_house_bots(
    store: LadderStore, bots: tuple[HouseBot, ...], referee_id: str
) -> list[tuple[HouseBot, str]]:
    """This referee's house bots with their fresh tokens (a worker thread).

    A name another referee on the same database already runs is left to it: this one runs
    its bot under the name with its own tag appended (``house-heuristic-1-3fa2c1``), the
    same at every restart, so two ladders on one database never replace each other's tokens.
    """
    claimed = []
    for bot in bots:
        try:
            token = store.ensure_house(bot.name, now_ms(), referee_id)
        except HouseBotTaken as taken:
            own = dataclasses.replace(bot, name=f"{bot.name}-{house_bot_tag(referee_id)}")
            log.warning(
                "house bot %s is run by %s; this ladder runs its own as %s", bot.name, taken.owner, own.name
            )
            bot, token = own, store.ensure_house(own.name, now_ms(), referee_id)
        claimed.append((bot, token))
    return claimed


async def _release_decided(ladder: Ladder, store: LadderStore) -> None:
    """Publish the tables of every match that is over but whose logs are still sealed.

    The match's record (the ladder's database, perhaps PostgreSQL) and its tables' logs
    (this referee's own index) are in two databases, so no one transaction covers both: a
    stop between the match's commit and the release of its tables (a SIGKILL, a power cut)
    leaves them sealed. Every start therefore releases every sealed set of this referee
    whose match the ladder records as over (the matches just aborted included); their deals
    are never dealt again.
    """
    if ladder.settings.deal_set is not None:
        log.info("the logs of matches dealt from a deal file stay sealed while the ladder deals from one")
        return
    sealed = await ladder.referee.sealed_sets()
    decided = await trio.to_thread.run_sync(store.over, sealed)
    await ladder.publish(sorted(decided))
    if decided:
        log.info("published the logs of %d ladder match(es) that were over but still sealed", len(decided))


PRUNE_EVERY_S = 3600.0
"""How often the retention policy (``--keep-house-logs``) looks for old house-only logs."""


def _sandbox_note() -> str:
    problem = sandbox.problem()
    return " in a sandbox" if problem is None else f", not sandboxed ({problem})"


def _house_identity(bot: HouseBot, command: Sequence[str], warn: bool = True) -> Identity | None:
    """Who runs a house bot: a user of its own as root, unless that user cannot run it
    (said in a warning when ``warn``)."""
    identity = bot_identity(None)
    if identity is not None and (refused := refusal_for(command, bot.cwd, identity)) is not None:
        # The house bots are the operator's own programs: as root, sandboxed where it can be.
        if warn:
            log.warning("house bot %s runs as root%s: %s", bot.name, _sandbox_note(), refused)
        identity = None
    return identity


async def check_house_bots(settings: LadderSettings) -> None:
    """ValueError naming the house bot whose bot options it does not take, before the ladder
    starts (a bot file checks them itself, behind its walls: ``entry_options``)."""
    for bot in settings.house_bots:
        if bot.in_process:
            problem = in_process_problem(bot.in_process, bot.options)
        elif bot.options:
            settings.data_dir.mkdir(parents=True, exist_ok=True)  # (covered while the bot checks)
            who = _house_identity(bot, bot.command, warn=False)
            problem = await process_problem(bot.command, bot.cwd, bot.options, who, settings.data_dir)
        else:
            problem = None
        if problem is not None:
            raise OptionError(f"house bot {bot.name!r}: {problem}; the ladder did not start")


async def _run_house_bot(
    bot: HouseBot, token: str, address: str, seats: int, output_dir: Path, data_dir: Path
) -> None:
    """Run a house bot for as long as the ladder runs, as tournaments run their local entries
    (token through a pipe, killed with the ladder, as an unprivileged user where it can be);
    one that dies is logged with its last words and started again."""
    command = [*bot.command, "--server", address, f"--name={bot.name}", "--seats", str(seats)]
    env = {key: value for key, value in os.environ.items() if not key.startswith("ODDTRICK_")}
    env.update(options_env(bot.options))
    identity = _house_identity(bot, command)
    spec = BotProcess(
        entry=bot.name,
        name=bot.name,
        command=tuple(command),
        env=env,
        cwd=bot.cwd,
        token=token,
        output=output_dir / f"{bot.name}.log",
        hide=(data_dir,),
    )
    while True:
        try:
            await run_bot_process(spec, identity, lambda: False)
        except EntrantExited as exited:
            log.warning("house bot %s", exited)
        await trio.sleep(HOUSE_RESTART_S)
