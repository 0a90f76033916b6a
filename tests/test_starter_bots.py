"""The starter bots of examples/ (Go, Rust, Java, TypeScript, JavaScript) build and play.

Each is built with its language's own tools (tests/starter_builds.py, all
builds at once), then, as a separate process on a real socket:
- plays a duplicate tournament against a Python bot (Contract Whist for some,
  Classic Whist for others) with no fault, logs that `oddtrick check`
  verifies, and one log line per match, reporting its own think time on
  every decision (Decision.bot_think_ms: its lag is known, not "unknown");
- says why it waits when started with too few seats for its match (the
  referee's Waiting notice), and plays once given enough;
- passes `oddtrick conformance`, and was shown no card it could not know;
- exits with status 0 on SIGINT and on SIGTERM while seated and waiting.
A missing toolchain skips its bot with the reason, except under CI=true.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from process_support import reap, stop_beside_referee
from referee_support import (
    PATIENCE_S,
    check_hidden_information,
    connect_and_play,
    first_legal,
    in_thread,
    referee_running,
    token_of,
)
from starter_builds import BUILDS_KEY, STARTERS, Build, start_builds
from test_stopped_table import stop_a_table

from oddtrick._codec import seat_from_wire
from oddtrick.rules import GameConfig, GameKind, MatchFormat, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee import MatchRecord, MatchSpec, TableRules
from oddtrick_referee.conformance.runner import Options, conformance_run

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
LANGUAGES = list(STARTERS)


@pytest.fixture(scope="module")
def builds(pytestconfig: pytest.Config) -> dict[str, Build]:
    """Every starter's build, started together when the run was collected (tests/conftest.py)."""
    started = pytestconfig.stash.get(BUILDS_KEY, None)
    return started if started is not None else start_builds()


@pytest.fixture(params=LANGUAGES)
def starter(request: pytest.FixtureRequest, builds: dict[str, Build]) -> str:
    """The command that runs one starter bot, once it is built."""
    build = builds[request.param]
    assert build.done.wait(1500), f"the {request.param} build did not finish"
    if build.problem and build.missing_tool and os.environ.get("CI") != "true":
        pytest.skip(build.problem)
    assert not build.problem, build.problem
    return build.starter.command


def run(*command: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, timeout=timeout)


def bot_output(data_dir: Path, entry: str) -> str:
    return "".join(path.read_text() for path in sorted((data_dir / "bot-output").glob(f"{entry}~*.log")))


# Each bot plays both games in the conformance check; here one game each, both games overall.
TOURNAMENT_GAME = {"go": "contract", "rust": "classic", "java": "contract", "typescript": "classic"}


def test_a_starter_plays_a_tournament_without_faults(starter: str, tmp_path: Path) -> None:
    language = next(name for name, s in STARTERS.items() if s.command == starter)
    game = TOURNAMENT_GAME.get(language, "contract")
    result = run(
        sys.executable, "-m", "oddtrick", "tournament",
        "--game", game, "--deals", "2", "--set-size", "1", "--tables", "1", "--seed", "starter-test",
        "--data-dir", str(tmp_path),
        "--bot", f"starter=cmd:{starter}",
        "--bot", f"random={RANDOM_BOT}",
        "--json",
    )  # fmt: skip
    output = bot_output(tmp_path, "starter")
    assert result.returncode == 0, f"tournament failed:\n{result.stderr}\n--- bot output ---\n{output}"
    standings: dict[str, Any] = json.loads(result.stdout)
    entries = {row["entry"]: row for row in standings["entries"]}
    assert entries["starter"]["deals"] == 2
    assert set(entries["starter"]["faults"].values()) == {0}, output

    # Duplicate: 2 sets of 1 deal, each played at 2 tables with the partnerships swapped.
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 4
    check = run(sys.executable, "-m", "oddtrick", "check", *map(str, logs))
    assert check.returncode == 0, check.stdout + check.stderr

    # One line per match, even though each process holds both seats of its partnership.
    reported = re.findall(r"^(?:\S+ )?match (\S+) over: NS \d+ EW \d+$", output, re.M)
    assert sorted(reported) == sorted(log.stem for log in logs), output

    # The bot's own time on every answer of its seats: thinking and lag apart.
    answered = sum(starter_answers(log) for log in logs)
    time = entries["starter"]["time"]
    assert time["reported"] == time["answered"] == answered, time
    assert entries["random"]["time"]["reported"] == entries["random"]["time"]["answered"]


def starter_answers(log: Path) -> int:
    """How many answers the starter's seats gave in ``log``; fails on one without its own
    think time (``bot_think_ms``)."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    players = records[0]["players"]
    seats = {seat for seat, player in players.items() if player["name"].startswith("starter~")}
    assert len(seats) == 2, players
    answers = [
        r for r in records if r["type"] == "action" and r["seat"] in seats and r["think_ms"] is not None
    ]
    for answer in answers:
        assert "bot_think_ms" in answer, f"{log.name}: an answer without the bot's own time: {answer}"
    return len(answers)


def seat_messages(run: Any, scenario: str, seat: int) -> list[referee_pb2.RefereeMessage]:
    """What the referee sent to ``seat`` in ``scenario``, as delivered to the bot."""
    held: dict[int, int] = {}
    messages = []
    for entry in run.proxy.entries:
        if entry.scenario != scenario or entry.direction != "down" or not entry.note.startswith("forwarded"):
            continue
        message = entry.message
        if message.WhichOneof("kind") == "update":
            for event in message.update.events:
                if event.HasField("match_started"):
                    held[entry.connection] = event.match_started.seat
        if held.get(entry.connection) == seat:
            messages.append(message)
    return messages


def test_a_starter_passes_the_conformance_check_and_sees_no_hidden_card(starter: str, tmp_path: Path) -> None:
    report, checked = trio.run(conformance_run, Options(command=starter, data_dir=tmp_path))
    text = "\n".join(
        f"{c.name}: expected {c.expected}; actual {c.actual}" for c in report.checks if not c.passed
    )
    assert report.passed, f"{text}\n{report.notes}"
    cards = 0
    for outcome in checked.outcomes:
        # Events missed while away (a drop, or a stream closed on a gap) are not sent again.
        if outcome.scenario.name in ("resume", "event-gap"):
            continue
        assert outcome.record is not None
        for seat in (1, 3):  # North and South: the bot's seats
            messages = seat_messages(checked, outcome.scenario.name, seat)
            cards += check_hidden_information(seat_from_wire(seat), messages, outcome.record.log_path)
    assert cards > 0


async def test_a_starter_reports_a_match_the_referee_stopped_as_stopped(starter: str, tmp_path: Path) -> None:
    reason = "the conformance kit stopped the scenario: a test says so"
    printed = await stop_a_table(tmp_path, reason, starter)
    assert printed.endswith(f"match m-stop stopped by the referee: {reason}"), printed


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
async def test_a_starter_exits_cleanly_on_a_signal(starter: str, signal_number: int, tmp_path: Path) -> None:
    name = "starter"
    async with referee_running(tmp_path, [name]) as referee:
        env = dict(
            os.environ,
            ODDTRICK_SERVER=referee.address,
            ODDTRICK_NAME=name,
            ODDTRICK_TOKEN=token_of(name),
            ODDTRICK_SEATS="2",
        )
        with (tmp_path / "bot.log").open("w") as log:
            process = subprocess.Popen(starter.split(), cwd=ROOT, env=env, stdout=log, stderr=log)
            try:
                with trio.fail_after(PATIENCE_S):
                    await referee.lobby.wait_for({name: 2}, GameKind.CLASSIC)
                process.send_signal(signal_number)
                code = await trio.to_thread.run_sync(process.wait, 15)
            finally:
                reap(process)
    assert code == 0, (tmp_path / "bot.log").read_text()


def start_starter(command: str, address: str, name: str, seats: int, output: Path) -> subprocess.Popen[bytes]:
    """A starter as a tournament starts a `cmd:` entry, with ``seats`` streams."""
    env = dict(
        os.environ,
        ODDTRICK_SERVER=address,
        ODDTRICK_NAME=name,
        ODDTRICK_TOKEN=token_of(name),
        ODDTRICK_SEATS=str(seats),
    )
    with output.open("wb") as sink:
        return subprocess.Popen(command.split(), cwd=ROOT, env=env, stdout=sink, stderr=sink)


async def ended(process: subprocess.Popen[bytes]) -> int:
    return await stop_beside_referee(process)


async def test_a_starter_with_too_few_seats_says_why_then_plays(starter: str, tmp_path: Path) -> None:
    names = {Seat.NORTH: "starter", Seat.EAST: "east", Seat.SOUTH: "starter", Seat.WEST: "west"}
    config = GameConfig.classic(format=MatchFormat.HAND)
    spec = MatchSpec(config, names, TableRules(deadline_s=5.0, grace_s=5.0), seed="seats")
    records: list[MatchRecord] = []
    played = trio.Event()

    async def play() -> None:
        records.append(await referee.play_match(spec, wait_s=PATIENCE_S))
        played.set()

    async with referee_running(tmp_path, set(names.values())) as referee, trio.open_nursery() as nursery:
        nursery.start_soon(play)
        for name in ("east", "west"):
            nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
        one_seat = tmp_path / "one-seat.log"
        process = start_starter(starter, referee.address, "starter", 1, one_seat)
        try:
            # The bot's output can only be polled (with a deadline).
            with trio.fail_after(PATIENCE_S):
                while "waiting:" not in one_seat.read_text():
                    await trio.sleep(0.1)
        finally:
            await ended(process)
        told = [line for line in one_seat.read_text().splitlines() if "waiting:" in line]
        assert len(told) == 1, told
        assert "needs 2 seats of starter at once, and starter has 1 stream open" in told[0], told
        assert told[0].endswith("start the bot with --seats 2"), told

        process = start_starter(starter, referee.address, "starter", 2, tmp_path / "two-seats.log")
        try:
            with trio.fail_after(PATIENCE_S):
                await played.wait()
        finally:
            await ended(process)
    (record,) = records
    assert record.seats[Seat.NORTH].decisions == record.seats[Seat.SOUTH].decisions == 13
    assert not record.seats[Seat.NORTH].faults, (tmp_path / "two-seats.log").read_text()
