"""A table stopped before its end tells its seats (and spectators) so, and why.

Real referee on a socket; at the table, an SDK bot as a real process (``oddtrick
bot``) for one partnership and two raw gRPC clients, which record every event,
for the other. The table is stopped mid-match two ways, as the competitions stop
one: its match cancelled with a reason set (the conformance kit, a ladder), and
the referee shutting down under it. The raw seats must get a MatchResult with
MATCH_OUTCOME_ABORTED and the reason; the SDK bot must print that the match was
stopped by the referee and why, not a score.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import grpc
import trio
from process_support import stop_beside_referee
from referee_support import (
    PATIENCE_S,
    RawBot,
    StreamEnded,
    log_records,
    referee_running,
    token_of,
)
from test_referee_watch import Spectator

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import game_pb2, referee_pb2
from oddtrick_referee import MatchSpec

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
SEATING = {Seat.NORTH: "alice", Seat.SOUTH: "alice", Seat.EAST: "bob", Seat.WEST: "bob"}
CONFIG = GameConfig.contract(format=MatchFormat.DEALS, deals=50)  # far longer than the test
ANSWERS_BEFORE_STOP = 6


class Printed:
    """An ``oddtrick bot`` process and the lines it prints, read as they come."""

    def __init__(self, address: str, name: str, starter: str | None = None) -> None:
        """The SDK's ``oddtrick bot`` with the random sample bot, or a ``starter`` command
        from examples/ (configured by its environment, as a tournament runs it)."""
        env = None
        if starter is None:
            command = [sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot"]
            command += ["--server", address, "--name", name, f"--token={token_of(name)}", "--seats", "2"]
        else:
            command = starter.split()
            env = dict(
                os.environ,
                ODDTRICK_SERVER=address,
                ODDTRICK_NAME=name,
                ODDTRICK_TOKEN=token_of(name),
                ODDTRICK_SEATS="2",
            )
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.lines: list[str] = []

    def wait_for(self, text: str) -> str:
        """The first line containing ``text`` (blocking: run in a thread)."""
        assert self.process.stdout is not None
        for line in self.lines:
            if text in line:
                return line
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if text in line:
                return line.rstrip("\n")
        raise AssertionError(f"the bot exited without printing {text!r}: {self.lines}")

    async def stop(self) -> None:
        await stop_beside_referee(self.process)
        assert self.process.stdout is not None
        self.process.stdout.close()


def raw_seat(bot: RawBot, answered: Callable[[], None]) -> referee_pb2.Event | None:
    """Answer with the first legal action until the match ends; its match_ended event."""
    answers = 0
    while True:
        try:
            message = bot.next_message()
        except StreamEnded:
            return None
        if message.WhichOneof("kind") != "update":
            continue
        for event in message.update.events:
            if event.HasField("match_ended"):
                return event
        if message.update.HasField("request"):
            request = message.update.request
            bot.answer(request.request_id, request.legal_actions[0])
            answers += 1
            if answers == ANSWERS_BEFORE_STOP:
                answered()


async def _seated(referee: object, address: str, starter: str | None = None) -> tuple[Printed, list[RawBot]]:
    from oddtrick_referee.referee import Referee

    assert isinstance(referee, Referee)
    alice = Printed(address, "alice", starter)
    raws = [RawBot(address, "bob") for _ in range(2)]
    for raw in raws:
        await trio.to_thread.run_sync(raw.hello)
    with trio.fail_after(PATIENCE_S):
        await referee.lobby.wait_for({"alice": 2, "bob": 2}, CONFIG.game)
    return alice, raws


def _stopped(ended: referee_pb2.Event | None, reason: str) -> None:
    assert ended is not None, "the seat was not told the match ended"
    result = ended.match_ended
    assert result.outcome == game_pb2.MATCH_OUTCOME_ABORTED
    assert result.stop_reason == reason
    assert result.winner == 0  # no winner
    assert not result.seed  # nothing revealed of a match that did not finish


async def test_a_cancelled_table_tells_its_seats_why_and_the_sdk_prints_it(tmp_path: Path) -> None:
    reason = "the conformance kit stopped the scenario: a test says so"
    printed = await stop_a_table(tmp_path, reason)
    assert printed.endswith(f"match m-stop stopped by the referee: {reason}")
    assert "lost" not in printed
    assert "won" not in printed
    stopped = log_records(tmp_path / "data" / "logs" / "m-stop.jsonl", "match_stopped")
    assert [record["reason"] for record in stopped] == [reason]


async def stop_a_table(tmp_path: Path, reason: str, starter: str | None = None) -> str:
    """Seat ``alice`` (the SDK bot, or a ``starter``) against two raw seats, stop the table
    after a few decisions with ``reason``, check what the raw seats were told, and return
    the line alice printed about the match."""
    async with referee_running(tmp_path, ["alice", "bob"]) as referee:
        alice, raws = await _seated(referee, referee.address, starter)
        try:
            ended: list[referee_pb2.Event | None] = [None, None]
            answered = trio.Event()
            token = trio.lowlevel.current_trio_token()

            def signal() -> None:
                trio.from_thread.run_sync(answered.set, trio_token=token)

            async def seat(index: int) -> None:
                ended[index] = await trio.to_thread.run_sync(raw_seat, raws[index], signal)

            with trio.fail_after(PATIENCE_S):
                async with trio.open_nursery() as nursery:
                    for index in range(2):
                        nursery.start_soon(seat, index)
                    with trio.CancelScope() as table_scope:
                        async with trio.open_nursery() as table:
                            table.start_soon(
                                lambda: referee.play_match(MatchSpec(CONFIG, SEATING, match_id="m-stop"))
                            )
                            await answered.wait()
                            spectator = Spectator(referee.address)
                            joined = threading.Event()
                            watching = threading.Thread(
                                target=spectator.watch, args=("m-stop", joined), daemon=True
                            )
                            watching.start()
                            await trio.to_thread.run_sync(joined.wait, PATIENCE_S)
                            referee.live["m-stop"].stop_reason = reason
                            table_scope.cancel()
                    printed = await trio.to_thread.run_sync(alice.wait_for, "match m-stop stopped")
                    await trio.to_thread.run_sync(watching.join, PATIENCE_S)
        finally:
            await alice.stop()
            for raw in raws:
                raw.close()
    for event in ended:
        _stopped(event, reason)
    # The spectator too: the stop as its last event, then the stream's end.
    seen = [event for response in spectator.responses for event in response.events]
    _stopped(seen[-1], reason)
    assert spectator.status is not None
    assert spectator.status[0] is grpc.StatusCode.UNAVAILABLE
    return printed


async def test_a_referee_shutting_down_tells_the_seats_of_a_match_in_progress(tmp_path: Path) -> None:
    shutdown = trio.Event()
    answered = trio.Event()
    ended: list[referee_pb2.Event | None] = [None, None]
    printed = ""

    async def serve(task_status: trio.TaskStatus[tuple[object, Printed, list[RawBot]]]) -> None:
        async with referee_running(tmp_path, ["alice", "bob"]) as referee:
            alice, raws = await _seated(referee, referee.address)
            task_status.started((referee, alice, raws))
            await shutdown.wait()

    with trio.fail_after(PATIENCE_S):
        async with trio.open_nursery() as outer:
            referee, alice, raws = await outer.start(serve)
            try:
                token = trio.lowlevel.current_trio_token()

                def signal() -> None:
                    trio.from_thread.run_sync(answered.set, trio_token=token)

                async def seat(index: int) -> None:
                    ended[index] = await trio.to_thread.run_sync(raw_seat, raws[index], signal)

                async with trio.open_nursery() as seats:
                    for index in range(2):
                        seats.start_soon(seat, index)
                    # Played outside the referee's block, as `oddtrick serve` plays its matches.
                    outer.start_soon(
                        lambda: referee.play_match(MatchSpec(CONFIG, SEATING, match_id="m-down"))  # type: ignore[attr-defined]
                    )
                    await answered.wait()
                    shutdown.set()
                printed = await trio.to_thread.run_sync(alice.wait_for, "match m-down stopped")
            finally:
                await alice.stop()
                for raw in raws:
                    raw.close()
            outer.cancel_scope.cancel()
    for event in ended:
        _stopped(event, "the referee is shutting down")
    assert printed.endswith("match m-down stopped by the referee: the referee is shutting down")
