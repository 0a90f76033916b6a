"""Match logs: one JSON object per line, written as the match goes.

Format ``oddtrick-match-log/1`` (docs/match-log.md): the first line is the
match start (configuration, players, seed commitment), then every action
with its seat and think time, refusals, faults and results, and last the
match end with the revealed seed. Each line is flushed when written, except
plain action lines, which go out with the next other line (at the latest
the hand's result): a crash loses at most the hand in progress, and what is
there stays readable; the file is fsynced when the match ends. Deals are not written:
the seed, revealed on the last line, re-creates them.

A finished log may be compressed in place (:func:`compress_log`): the same name,
gzip inside. Every reader reads a log through the one reader, :mod:`oddtrick._log_records`
(``read_records``), which reads both and bounds what a log may unpack to.

:func:`check_log` replays a log's records through the rules engine and says whether
every action was legal, the seed matches its commitment and the results
are the ones the rules give.
"""

from __future__ import annotations

import dataclasses
import errno
import gzip
import json
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from oddtrick._codec_text import parse_action
from oddtrick._drive import next_turn
from oddtrick._log_records import LOG_FORMAT as LOG_FORMAT
from oddtrick._log_records import (
    ActionRecord,
    GameResultRecord,
    HandResultRecord,
    HandStart,
    MatchEnd,
    MatchStart,
    PlainAction,
    Record,
    is_finished_log,
    plain_action_record,
    read_ends,
    read_log_dicts,
    records_for_check,
    records_from_text,
)
from oddtrick._logfile import is_compressed
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.rules import (
    BIDS,
    DOUBLE,
    PACK,
    PASS,
    Action,
    GameConfig,
    GameEnded,
    GameState,
    HandEnded,
    HandStarted,
    MatchEvent,
    Phase,
    RulesError,
    Seat,
    commitment,
)
from oddtrick_referee.play.clock import ClockRule, replay_bank

read_log = read_log_dicts
"""A log's records as their JSON objects (the one reader's, ``oddtrick_referee.read_log``):
for scripts of one's own that read fields by name."""

_LOGGED_CARDS: dict[str, Action] = {str(card): card for card in PACK}
_LOGGED_CALLS: dict[str, Action] = {str(call): call for call in (PASS, DOUBLE, *BIDS)}
_LOGGED_SEATS = {str(seat): seat for seat in Seat}
_ACTION_TEXT: dict[Action, str] = {
    action: text for text, action in (*_LOGGED_CARDS.items(), *_LOGGED_CALLS.items())
}
_SEAT_TEXT: dict[Seat, str] = {seat: text for text, seat in _LOGGED_SEATS.items()}


def action_text(action: Action) -> str:
    """``str(action)``, as the log writes it, looked up for the canonical actions: the
    table writes one a decision."""
    text = _ACTION_TEXT.get(action)
    return text if text is not None else str(action)


def logged_action(text: str, state: GameState) -> Action:
    """An action as the log writes it (``str(action)``), read in the light of the phase.

    The canonical spellings are looked up (a log has hundreds of thousands of
    them); anything else goes through the general parser, and its errors.
    """
    table = _LOGGED_CALLS if state.phase is Phase.AUCTION else _LOGGED_CARDS
    action = table.get(text)
    return action if action is not None else parse_action(text, state)


def logged_seat(text: str) -> Seat:
    seat = _LOGGED_SEATS.get(text)
    return seat if seat is not None else Seat.parse(text)


class MatchLogWriter:
    """Appends records to a new log file; refuses to overwrite an existing one.

    The file appears with its first line, never before: the line is written to a hidden
    file beside it, which is then linked into place (a link, unlike a rename, fails if
    the log exists). A referee killed at any moment leaves no empty log behind.
    """

    def __init__(self, path: Path) -> None:
        # A log ends with its seed, secret until the match is over: the referee's user only.
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.exists():
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        self.path = path
        self._file: IO[str] | None = None

    def write(self, record: Record | Mapping[str, Any]) -> None:
        """Write one record (a typed one of :mod:`oddtrick._log_records`; a plain mapping is
        written as it is) and flush it (with any action lines before it)."""
        data = record if isinstance(record, Mapping) else record.to_dict()
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        if self._file is None:
            self._create(line)
            return
        self._file.write(line)
        self._file.flush()

    def _create(self, first_line: str) -> None:
        draft = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.new")
        with draft.open("x", encoding="utf-8") as file:
            file.write(first_line)
        try:
            os.link(draft, self.path)
        finally:
            draft.unlink()
        self._file = self.path.open("a", encoding="utf-8")

    def write_action(
        self,
        hand: int,
        seat: Seat,
        action: str,
        think_ms: int | None,
        bot_think_ms: int | None = None,
        clock_ms: int | None = None,
    ) -> None:
        """Write a plain action line (no fault, no comment) without flushing it.

        Actions are most of a log and come hundreds a second per table: they
        are formatted directly (the same text ``json.dumps`` gives, a test
        checks) and reach the file with the next flushed record, at the latest
        the hand's result.
        """
        think = "null" if think_ms is None else str(think_ms)
        own = "" if bot_think_ms is None else f',"bot_think_ms":{bot_think_ms}'
        bank = "" if clock_ms is None else f',"clock_ms":{clock_ms}'
        line = (
            f'{{"type":"action","hand":{hand},"seat":"{_SEAT_TEXT[seat]}","action":"{action}",'
            f'"think_ms":{think}{own}{bank}}}\n'
        )
        if self._file is None:
            self._create(line)
            return
        self._file.write(line)

    def write_events(self, events: Iterable[MatchEvent]) -> None:
        """Write the lines the rules' events make: a hand's start, its result, a game's
        result (calls and cards are written as the table's action lines, with their times)."""
        for event in events:
            if isinstance(event, HandStarted):
                self.write(HandStart(event.hand_number, str(event.dealer)))
            elif isinstance(event, HandEnded):
                result = event.result
                self.write(
                    HandResultRecord(
                        result.hand_number,
                        result.outcome.value,
                        list(result.tricks),
                        list(result.points),
                        list(result.honours),
                        list(result.scores_after),
                        result.describe(),
                    )
                )
            elif isinstance(event, GameEnded):
                game = event.result
                self.write(GameResultRecord(game.game_number, game.winner.short, list(game.scores)))

    def close(self) -> None:
        if self._file is None or self._file.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


_COMPRESSING = ".gz-new"
"""How a log being compressed is named while it is written: ``.NAME.RANDOM.gz-new`` beside it."""


def compress_log(path: Path) -> int:
    """Compress a finished log in place; returns the bytes it saved (0 if it was compressed).

    The compressed copy is written under a hidden temporary name beside the log,
    fsynced, then renamed over the log in one step (``os.replace``): at every moment
    the name holds either the whole plain log or the whole compressed one, so a crash
    never loses a finished game. A crash mid-way leaves the plain log and a stray
    temporary file, which :func:`recover_compression` removes.
    """
    if is_compressed(path):
        return 0
    before = path.stat().st_size
    draft = path.with_name(f".{path.name}.{secrets.token_hex(4)}{_COMPRESSING}")
    try:
        with path.open("rb") as plain, draft.open("xb") as raw:
            # mtime=0: the same log always compresses to the same bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0) as packed:
                shutil.copyfileobj(plain, packed, 1 << 20)
            raw.flush()
            os.fsync(raw.fileno())
        os.chmod(draft, path.stat().st_mode & 0o777)
        os.replace(draft, path)
    except BaseException:
        draft.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return before - path.stat().st_size


def _fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` survive a power cut."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def recover_compression(log_dir: Path, compress_finished: bool) -> tuple[int, int]:
    """At start-up: remove what a crash mid-compression left (the plain log beside it is
    whole), and with ``compress_finished`` compress every finished log still plain (one
    whose match ended just before a stop). Returns (temporary files removed, logs compressed).
    """
    removed = compressed = 0
    if not log_dir.is_dir():
        return 0, 0
    for entry in os.scandir(log_dir):
        name = entry.name
        if name.startswith(".") and name.endswith(_COMPRESSING):
            Path(entry.path).unlink(missing_ok=True)
            removed += 1
        elif compress_finished and name.endswith(".jsonl") and not name.startswith("."):
            path = Path(entry.path)
            try:
                if not is_compressed(path) and is_finished_log(path):
                    compress_log(path)
                    compressed += 1
            except OSError:
                continue  # deleted meanwhile, or unreadable: left as it is
    return removed, compressed


class _Clocks:
    """The seats' time banks replayed from a log whose header has a clock: each action
    line's ``clock_ms`` must be what the clock's rule makes of the one before it."""

    def __init__(self, rule: ClockRule, deadline_ms: int, untimed: set[str]) -> None:
        self.rule = rule
        self.deadline_ms = deadline_ms
        self.banks = {str(seat): rule.initial_ms for seat in Seat if str(seat) not in untimed}

    @classmethod
    def of(cls, start: MatchStart) -> _Clocks | None:
        rules = start.rules
        if not rules.get("clock"):
            return None
        return cls(
            ClockRule.from_record(rules["clock"]), rules["deadline_ms"], set(rules.get("untimed_seats", ()))
        )

    def check(self, seat: str, think_ms: int | None, fault: str | None, logged: int | None) -> str | None:
        """What is wrong with one decision's bank, or None."""
        if seat not in self.banks:
            return None if logged is None else "a seat without a clock has a clock_ms"
        before = self.banks[seat]
        allowed = min(self.deadline_ms, before + self.rule.increment_ms)
        if fault is None and think_ms is not None and think_ms > allowed:
            return f"answered in {think_ms} ms, more than the {allowed} ms its clock allowed"
        if fault == "clock" and allowed >= self.deadline_ms:
            return "a clock fault on a decision that its deadline, not its bank, bounded"
        expected = replay_bank(self.rule, self.deadline_ms, think_ms, fault, before)
        self.banks[seat] = expected
        if logged != expected:
            return f"the bank after it is logged as {logged} ms; the clock's rule makes it {expected} ms"
        return None


@dataclasses.dataclass
class CheckReport:
    ok: bool
    problems: list[str]
    actions: int
    hands: int
    deal_set: str | None = None
    """The fixed deal set the match was dealt from (name and SHA-256), if any."""

    def describe(self) -> str:
        if self.ok:
            if self.deal_set is not None:
                return (
                    f"OK: {self.actions} actions in {self.hands} hands replay exactly; "
                    f"deals from the deal set {self.deal_set} match their commitment"
                )
            return (
                f"OK: {self.actions} actions in {self.hands} hands replay exactly; "
                "seed matches its commitment"
            )
        return "FAILED:\n" + "\n".join(f"  - {p}" for p in self.problems)


@dataclasses.dataclass
class ReplayedLog:
    """A log as the rules engine replayed it: the check's report, and the rules' own state
    at its end (what a finished table's figures are read from), with its first and last records."""

    report: CheckReport
    state: GameState | None = None
    start: MatchStart | None = None
    end: MatchEnd | None = None


def check_log(path: Path) -> CheckReport:
    """Replay a finished match's log and compare everything it claims.

    The log is read twice, as a stream, rather than held: its ends first (the seed the
    replay needs is on the last line), then every record.
    """
    start, end = read_ends(path)
    return _replayed(start, end, lambda: records_for_check(path)).report


def replay_log(text: str) -> ReplayedLog:
    """:func:`check_log` of a log's whole text (a worker's result carries its logs so),
    keeping the rules' state and the log's ends: the figures a finished table is counted by."""
    records = list(records_from_text(text))
    if not records:
        return _replayed(None, None, lambda: iter(()))
    return _replayed(records[0], records[-1], lambda: iter(records))


def _replayed(
    start: Record | None, end: Record | None, records: Callable[[], Iterable[Record | PlainAction]]
) -> ReplayedLog:
    """The replay of a log given its first and last records and every record in order."""
    if not isinstance(start, MatchStart):
        return ReplayedLog(CheckReport(False, ["the log does not start with a match_start record"], 0, 0))
    problems: list[str] = []
    if start.format != LOG_FORMAT:
        problems.append(f"unknown log format {start.format!r}")
    if not isinstance(end, MatchEnd):
        return ReplayedLog(CheckReport(False, ["the match did not finish (no match_end record)"], 0, 0))
    if commitment(end.seed) != start.seed_commitment:
        problems.append("the revealed seed does not match the commitment published at the start")
    try:
        fixed = deals_from_log(start, end)
    except DealSetError as error:
        return ReplayedLog(CheckReport(False, [*problems, str(error)], 0, 0), None, start, end)
    state = GameState(GameConfig.from_dict(start.config), end.seed, deals=fixed)
    actions = _replay_checked(state, records(), _Clocks.of(start), problems)
    result = state.match_result
    if result is None:
        problems.append("replaying the actions does not finish the match")
    elif [list(result.totals), result.winner.short if result.winner is not None else None] != [
        end.result["totals"],
        end.result["winner"],
    ]:
        problems.append(f"the logged result {end.result} is not the rules' result {result}")
    deal_set = start.extra.get("deal_set")
    source = None
    if fixed is not None and isinstance(deal_set, dict):
        source = f"{deal_set.get('name', '?')}, sha256 {deal_set.get('sha256', '')}"
    report = CheckReport(not problems, problems, actions, state.hand_number, source)
    return ReplayedLog(report, state, start, end)


def _replay_checked(
    state: GameState,
    records: Iterable[Record | PlainAction],
    clocks: _Clocks | None,
    problems: list[str],
) -> int:
    """Apply a log's actions to ``state``, checking each one, its clock and each hand's
    logged scores; the problems found go to ``problems``. Returns the actions applied."""
    actions = 0
    for record in records:
        if isinstance(record, tuple):  # a plain action line, as the reader's fast path gives it
            seat, action = record[1], record[2]
        elif type(record) is ActionRecord:
            seat, action = record.seat, record.action
        else:
            _check_between_actions(state, record, problems)
            continue
        actions += 1
        try:
            state.apply(logged_action(action, state), logged_seat(seat))
        except RulesError as error:
            problems.append(f"action {actions} ({seat} {action}) is illegal: {error}")
            break
        if clocks is not None:
            timed = plain_action_record(record) if isinstance(record, tuple) else record
            assert isinstance(timed, ActionRecord)
            if problem := clocks.check(seat, timed.think_ms, timed.fault, timed.clock_ms):
                problems.append(f"action {actions} ({seat} {action}): {problem}")
                clocks = None  # one wrong bank makes every later one wrong: said once
    return actions


def _check_between_actions(state: GameState, record: Record, problems: list[str]) -> None:
    """A record other than an action: a hand's start deals it, a hand's result is checked."""
    if isinstance(record, HandStart):
        next_turn(state)  # deals the next hand if the last one is over
    elif isinstance(record, HandResultRecord):
        results = state.hand_results
        result = results[record.hand - 1] if len(results) >= record.hand else None
        if result is None or list(result.scores_after) != record.scores:
            problems.append(
                f"hand {record.hand}: the logged scores {record.scores} are not the rules' scores"
            )
