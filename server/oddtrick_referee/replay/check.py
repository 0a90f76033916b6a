"""``oddtrick check``: replay match logs and verify every action, result and seed.

A data folder a referee is still writing (a tournament or a ladder playing) holds the
log of each match in play, without its ``match_end`` yet. Such a log is skipped, and
said to be; every other log without its end is a failure. Which is which comes from
the data folder's index, never from the log alone: a log cut short by a crash looks
like one still being written.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import os
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path

from oddtrick._log_records import is_finished_log
from oddtrick._terminal import plural
from oddtrick_referee.play.matchlog import check_log
from oddtrick_referee.storage.data_dir import reason
from oddtrick_referee.storage.match_index import recorded_statuses

IN_PLAY_RULE = (
    "A log without its match_end record (the last line, with the seed) fails the check, unless the "
    "index of the data folder it lies in (DATA/oddtrick.sqlite3 beside DATA/logs) records its match "
    "as running: that match is still being played, and its log is skipped and listed as in play. A "
    "match the index records as finished, sealed or aborted, or a log with no index beside it, must "
    "be whole. (A referee that crashed leaves its matches running in the index until it next starts.)"
)

INDEX = "oddtrick.sqlite3"
_SUFFIXES = (".jsonl.gz", ".jsonl")


def add_check_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check",
        help="replay match logs and verify every action, result and the seed",
        description="Re-creates each match from its log with the rules engine and the revealed seed. "
        + IN_PLAY_RULE,
        epilog="example: oddtrick check oddtrick-data/logs (exit status 0: every finished log checks out)",
    )
    check.add_argument(
        "logs",
        nargs="+",
        type=Path,
        metavar="LOG.jsonl",
        help="match logs (.jsonl or .jsonl.gz), or folders of them (oddtrick-data/logs: every log in it)",
    )
    check.set_defaults(handler=run_check)


@dataclasses.dataclass(frozen=True)
class Checked:
    """One log's outcome: its line, and whether it failed or was skipped as in play."""

    line: str
    failed: bool = False
    in_play: bool = False


def logs_in(paths: Iterable[Path]) -> list[Path]:
    """The logs named, a folder standing for every match log under it (in name order)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.name.endswith(_SUFFIXES))
        else:
            found.append(path)
    return found


def _match_id(log: Path) -> str:
    """The match a log is of: the referee names each log after its match."""
    for suffix in _SUFFIXES:
        if log.name.endswith(suffix):
            return log.name.removesuffix(suffix)
    return log.name


def running_logs(logs: list[Path]) -> tuple[set[Path], list[str]]:
    """The logs whose match the index beside them (``DATA/oddtrick.sqlite3`` for a log in
    ``DATA/logs``) records as running, and a line for each index that could not be read.

    Read before any log is: a match that ends meanwhile writes its ``match_end`` before the
    index says so, so it is then found whole rather than failed."""
    by_index: dict[Path, list[Path]] = {}
    for log in logs:
        index = log.parent.parent / INDEX
        if index.is_file():
            by_index.setdefault(index, []).append(log)
    running: set[Path] = set()
    unreadable: list[str] = []
    for index, its_logs in by_index.items():
        try:
            statuses = recorded_statuses(index, [_match_id(log) for log in its_logs])
        except sqlite3.Error as error:
            unreadable.append(
                f"cannot read the index {index} ({reason(error)}): its logs without an end count as failures"
            )
            continue
        running.update(log for log in its_logs if statuses.get(_match_id(log)) == "running")
    return running, unreadable


def check_one(log: Path, running: bool) -> Checked:
    """Check one log; a match the index records as running whose log has no end yet is in play."""
    if not log.exists():
        return Checked(
            f"{log}: no such file (a data folder's logs are in DATA/logs: oddtrick check DATA/logs)",
            failed=True,
        )
    try:
        if running and not is_finished_log(log):
            return Checked(str(log), in_play=True)
        report = check_log(log)
    except (OSError, ValueError, KeyError) as error:
        return Checked(f"{log}: cannot read: {getattr(error, 'strerror', None) or error}", failed=True)
    return Checked(f"{log}: {report.describe()}", failed=not report.ok)


def _check_all(logs: list[Path], running: set[Path]) -> list[Checked]:
    flags = [log in running for log in logs]
    # Logs are independent: many of them are checked on every core, reported in order.
    workers = min(len(logs) // 4, os.cpu_count() or 1, 8)
    if workers > 1:
        with concurrent.futures.ProcessPoolExecutor(workers) as pool:
            return list(pool.map(check_one, logs, flags, chunksize=4))
    return [check_one(log, flag) for log, flag in zip(logs, flags, strict=True)]


def run_check(args: argparse.Namespace) -> int:
    logs = logs_in(args.logs)
    if not logs:
        print("oddtrick check: no match logs (*.jsonl, *.jsonl.gz) in the folders given", file=sys.stderr)
        return 1
    running, unreadable = running_logs(logs)
    for line in unreadable:
        print(f"oddtrick check: {line}", file=sys.stderr)
    checked = _check_all(logs, running)
    for outcome in checked:
        if not outcome.in_play:
            print(outcome.line)
    in_play = [outcome.line for outcome in checked if outcome.in_play]
    if in_play:
        print(f"skipped {plural(len(in_play), 'match', 'matches')} still in play: {', '.join(in_play)}")
    return 1 if any(outcome.failed for outcome in checked) else 0
