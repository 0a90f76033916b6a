"""Match logs: one JSON object per line, written as the match goes.

Format ``oddtrick-match-log/1`` (docs/match-log.md): the first line is the
match start (configuration, players, seed commitment), then every action
with its seat and think time, refusals, faults and results, and last the
match end with the revealed seed. Each line is flushed when written, except
plain action lines, which go out with the next other line (at the latest
the hand's result): a crash loses at most the hand in progress, and what is
there stays readable; the file is fsynced when the match ends. Deals are not written:
the seed, revealed on the last line, re-creates them.

:func:`check_log` replays a log through the rules engine and says whether
every action was legal, the seed matches its commitment and the results
are the ones the rules give.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from oddtrick._codec_text import parse_action
from oddtrick.rules import (
    BIDS,
    DOUBLE,
    PACK,
    PASS,
    Action,
    GameConfig,
    GameState,
    Phase,
    RulesError,
    Seat,
    commitment,
)
from oddtrick_referee.play.clock import ClockRule, replay_bank

LOG_FORMAT = "oddtrick-match-log/1"

_LOGGED_CARDS: dict[str, Action] = {str(card): card for card in PACK}
_LOGGED_CALLS: dict[str, Action] = {str(call): call for call in (PASS, DOUBLE, *BIDS)}
_LOGGED_SEATS = {str(seat): seat for seat in Seat}


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

    def write(self, record: dict[str, Any]) -> None:
        """Write one record and flush it (with any action lines before it)."""
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
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
            f'{{"type":"action","hand":{hand},"seat":"{seat}","action":"{action}",'
            f'"think_ms":{think}{own}{bank}}}\n'
        )
        if self._file is None:
            self._create(line)
            return
        self._file.write(line)

    def close(self) -> None:
        if self._file is None or self._file.closed:
            return
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()


def read_log(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a log; a torn last line (a crash mid-write) is skipped."""
    with path.open(encoding="utf-8") as file:
        for line in file:
            if not line.endswith("\n"):
                return
            yield json.loads(line)


def load_records(text: str) -> list[dict[str, Any]]:
    """A whole log's records from its text, as :func:`read_log` reads them, in one JSON parse
    (a log has a line per action: parsing them one by one costs more than checking them)."""
    lines = text.split("\n")
    lines.pop()  # what follows the last newline: nothing, or a torn last line
    try:
        records: list[dict[str, Any]] = json.loads("[" + ",".join(lines) + "]")
    except json.JSONDecodeError:
        return [json.loads(line) for line in lines]  # the error names the bad line
    return records


class _Clocks:
    """The seats' time banks replayed from a log whose header has a clock: each action
    line's ``clock_ms`` must be what the clock's rule makes of the one before it."""

    def __init__(self, rule: ClockRule, deadline_ms: int, untimed: set[str]) -> None:
        self.rule = rule
        self.deadline_ms = deadline_ms
        self.banks = {str(seat): rule.initial_ms for seat in Seat if str(seat) not in untimed}

    @classmethod
    def of(cls, start: dict[str, Any]) -> _Clocks | None:
        rules = start.get("rules", {})
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

    def describe(self) -> str:
        if self.ok:
            return (
                f"OK: {self.actions} actions in {self.hands} hands replay exactly; "
                "seed matches its commitment"
            )
        return "FAILED:\n" + "\n".join(f"  - {p}" for p in self.problems)


_PLAIN_ACTION = re.compile(
    r'\{"type":"action","hand":\d+,"seat":"([NESW])","action":"([0-9A-Za-z]+)","think_ms":(\d+|null)'
    r'(?:,"bot_think_ms":\d+)?(?:,"clock_ms":(\d+))?\}'
).fullmatch
"""A plain action line exactly as :meth:`MatchLogWriter.write_action` writes it: the check reads
these without a JSON parse (they are nearly every line of a log)."""


def check_log(path: Path) -> CheckReport:
    """Replay a finished match's log and compare everything it claims."""
    lines = path.read_text(encoding="utf-8").split("\n")
    lines.pop()  # what follows the last newline: nothing, or a torn last line
    if not lines:
        return CheckReport(False, ["the log does not start with a match_start record"], 0, 0)
    start = json.loads(lines[0])
    problems: list[str] = []
    if not isinstance(start, dict) or start.get("type") != "match_start":
        return CheckReport(False, ["the log does not start with a match_start record"], 0, 0)
    if start.get("format") != LOG_FORMAT:
        problems.append(f"unknown log format {start.get('format')!r}")
    end = json.loads(lines[-1])
    if end.get("type") != "match_end":
        return CheckReport(False, ["the match did not finish (no match_end record)"], 0, 0)
    seed = end["seed"]
    if commitment(seed) != start["seed_commitment"]:
        problems.append("the revealed seed does not match the commitment published at the start")
    state = GameState(GameConfig.from_dict(start["config"]), seed)
    clocks = _Clocks.of(start)
    actions = 0
    plain = _PLAIN_ACTION
    for line in lines[1:-1]:
        found = plain(line)
        if found is not None:
            seat_text, action_text, think_text, clock_text = found.groups()
            kind = "action"
            think = None if think_text == "null" else int(think_text)
            fault, clock = None, None if clock_text is None else int(clock_text)
        else:
            record = json.loads(line)
            kind = record["type"]
            seat_text, action_text = record.get("seat", ""), record.get("action", "")
            think, fault, clock = record.get("think_ms"), record.get("fault"), record.get("clock_ms")
        if kind == "hand_start" and state.phase is Phase.HAND_OVER:
            state.start_next_hand()
        if kind == "action":
            actions += 1
            try:
                state.apply(logged_action(action_text, state), logged_seat(seat_text))
            except RulesError as error:
                problems.append(f"action {actions} ({seat_text} {action_text}) is illegal: {error}")
                break
            if clocks is not None and (problem := clocks.check(seat_text, think, fault, clock)):
                problems.append(f"action {actions} ({seat_text} {action_text}): {problem}")
                clocks = None  # one wrong bank makes every later one wrong: said once
        elif kind == "hand_result":
            result = (
                state.hand_results[record["hand"] - 1] if len(state.hand_results) >= record["hand"] else None
            )
            if result is None or list(result.scores_after) != record["scores"]:
                problems.append(
                    f"hand {record['hand']}: the logged scores {record['scores']} are not the rules' scores"
                )
    result = state.match_result
    if result is None:
        problems.append("replaying the actions does not finish the match")
    elif [list(result.totals), result.winner.short if result.winner is not None else None] != [
        end["result"]["totals"],
        end["result"]["winner"],
    ]:
        problems.append(f"the logged result {end['result']} is not the rules' result {result}")
    return CheckReport(not problems, problems, actions, state.hand_number)
