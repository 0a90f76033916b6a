"""The strong bot's levels as ladder house bots: ``--house-bot strong:LEVEL``.

A ladder on a real socket runs the level-1 strong bot as a house bot (its own
process, started by the ladder) and an entrant plays it; the match's log shows
the house bot's comments, the samples it solved. A level that does not exist,
or a level that is not a number, stops the ladder before it starts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import trio
from ladder_support import LADDER_BOTS, ladder_serving, ladder_settings, register, stop_all

from oddtrick._argparse import EntryArgument
from oddtrick._log_records import ActionRecord, HandStart, MatchStart, read_records
from oddtrick_referee.competitions.ladder.cli import _house_bot


def _oddtrick(cwd: Path, *words: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "oddtrick", *words]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300, check=False)


async def test_a_strong_house_bot_at_level_one_plays_an_entrant_and_says_what_it_solved(
    tmp_path: Path,
) -> None:
    house = _house_bot(EntryArgument("house-bot", "strong:1"))
    assert house.name == "house-strong-1"
    assert dict(house.options) == {"level": 1}
    settings = ladder_settings(
        tmp_path / "data", trusted=True, house_bots=(house,), house_seats=4, deals=1, compress_logs=False
    )
    token = register(settings, "alice")["alice"]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with ladder_serving(settings) as ladder:
            command = [sys.executable, "-m", "oddtrick", "bot", f"{LADDER_BOTS}:Heuristic", "--seats", "4"]
            command += ["--server", ladder.referee.address, "--name", "alice", f"--token={token}"]
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with trio.fail_after(300):
                [outcome, *_] = await ladder.wait_outcomes(1)
            ladder.referee.finish()
    finally:
        stop_all(processes)
    assert outcome.status == "finished"
    assert outcome.lineup.names == {"alice", "house-strong-1"}
    logs = sorted((tmp_path / "data" / "logs").glob(f"{outcome.match_id}-t*.jsonl"))
    assert len(logs) == 2
    comments = [comment for path in logs for comment in _house_comments(path)]
    # Every decision of the house bot says what it solved: two samples a card and one a
    # call at level 1 (on a busy machine it may have solved none in time, and says so).
    # A hand whose four first calls are passes is thrown in, so there may be no card.
    calls = [comment for kind, comment in comments if kind == "call"]
    cards = [comment for kind, comment in comments if kind == "card"]
    assert len(calls) >= 2
    assert all(re.fullmatch(r"(fallback: )?[01] of 1 samples solved in .*", said) for said in calls), calls
    card_said = r"(fallback: )?[012] of 2 samples solved in .*|the only legal card"
    assert all(re.fullmatch(card_said, said) for said in cards), cards


def _house_comments(path: Path) -> list[tuple[str, str]]:
    """Each house seat's decision in a match log: ``("call" | "card", its comment)``. A
    hand's calls are its actions until its auction ends: three passes after a bid or a
    double, or four passes (the hand thrown in)."""
    house: set[str] = set()
    found: list[tuple[str, str]] = []
    calls: list[str] = []
    for record in read_records(path):
        if isinstance(record, MatchStart):
            house = {seat for seat, player in record.players.items() if player["name"] == "house-strong-1"}
        elif isinstance(record, HandStart):
            calls = []
        elif isinstance(record, ActionRecord):
            in_auction = not _auction_over(calls)
            if in_auction:
                calls.append(record.action)
            if record.seat in house:
                found.append(("call" if in_auction else "card", record.comment or ""))
    assert len(house) == 2
    return found


def _auction_over(calls: list[str]) -> bool:
    if calls == ["pass"] * 4:
        return True
    return len(calls) >= 4 and calls[-3:] == ["pass"] * 3


def test_a_level_that_does_not_exist_stops_the_ladder_before_it_starts(tmp_path: Path) -> None:
    unknown = _oddtrick(tmp_path, "ladder", "serve", "--house-bot", "strong:7", "--data-dir", "lad")
    assert unknown.returncode == 2
    assert "house bot 'house-strong-7': option level of PimcBot is 7: the levels are 1 (" in unknown.stderr
    assert unknown.stderr.strip().endswith("the ladder did not start")
    garbled = _oddtrick(tmp_path, "ladder", "serve", "--house-bot", "strong:two", "--data-dir", "lad2")
    assert garbled.returncode == 2
    assert "strong:LEVEL takes a level number, 1 to 3, e.g. strong:2" in garbled.stderr
    assert not (tmp_path / "lad2").exists()
    assert list((tmp_path / "lad").rglob("*.*")) == []
    # Level 0 is the bot's "no level": as a house bot it would be level 3 under another name.
    none = _oddtrick(tmp_path, "ladder", "serve", "--house-bot", "strong:0", "--data-dir", "lad3")
    assert none.returncode == 2
    assert "strong:LEVEL takes a level number, 1 to 3" in none.stderr
    assert not (tmp_path / "lad3").exists()


def test_the_ladder_s_help_names_the_levels_there_are(tmp_path: Path) -> None:
    helped = _oddtrick(tmp_path, "ladder", "serve", "--help")
    assert helped.returncode == 0
    assert "a level (1 to 3," in " ".join(helped.stdout.split())
