"""`oddtrick check` on a data folder a referee is still writing: the match in play is
skipped and said to be, and a finished match whose log is cut short still fails.

The referee runs on a real socket in this process and the check runs as the command a
person types, while a match is being played.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import threading
from pathlib import Path

import trio
from referee_support import PATIENCE_S, in_thread, referee_running
from test_arena_listing import leave_behind

import oddtrick
from oddtrick._cli import main
from oddtrick.bots.random_bot import RandomBot
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules
from oddtrick_referee.play.local_seat import bot_entrant
from oddtrick_referee.storage.match_index import MatchStore

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST


def held(released: threading.Event) -> type[oddtrick.Bot]:
    """A bot that thinks, on its seat's worker thread, until ``released``: its match stays in play."""

    class Held(oddtrick.Bot):
        def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
            return oddtrick.PASS

        def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
            released.wait(PATIENCE_S)
            return view.legal_actions[0]

    return Held


def check(logs: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(logs)],
        capture_output=True,
        text=True,
        timeout=PATIENCE_S,
    )


async def test_check_skips_the_match_in_play_and_fails_a_finished_one_cut_short(tmp_path: Path) -> None:
    config = GameConfig.classic(format=MatchFormat.HAND)
    released = threading.Event()
    try:
        async with referee_running(tmp_path, []) as referee:
            for name in ("east", "south", "west", "north"):
                referee.add_local(bot_entrant(name, RandomBot))
            referee.add_local(bot_entrant("held", held(released)))
            everyone = {N: "north", E: "east", S: "south", W: "west"}
            with trio.fail_after(PATIENCE_S):
                done = await referee.play_match(MatchSpec(config, everyone, seed="done", match_id="done"))
                started = trio.Event()
                async with trio.open_nursery() as nursery:
                    spec = MatchSpec(
                        config, {**everyone, N: "held"}, TableRules(deadline_s=PATIENCE_S), match_id="live"
                    )
                    nursery.start_soon(
                        functools.partial(referee.play_match, spec, on_start=lambda *_: started.set())
                    )
                    await started.wait()
                    logs = referee.data_dir / "logs"
                    assert (
                        MatchStore(referee.data_dir / "oddtrick.sqlite3").get("live")["status"] == "running"
                    )
                    while_playing = await in_thread(check, logs)
                    whole = done.log_path.read_text(encoding="utf-8")
                    done.log_path.write_text("".join(whole.splitlines(keepends=True)[:-1]))  # no match_end
                    cut_short = await in_thread(check, logs)
                    released.set()
                referee.finish()
            done.log_path.write_text(whole)
            after = await in_thread(check, logs)
    finally:
        released.set()

    live = logs / "live.jsonl"
    assert while_playing.returncode == 0, while_playing.stdout + while_playing.stderr
    assert while_playing.stdout.splitlines()[-1] == f"skipped 1 match still in play: {live}"
    assert f"{done.log_path}: OK: " in while_playing.stdout
    assert "did not finish" not in while_playing.stdout

    assert cut_short.returncode == 1, cut_short.stdout
    assert f"{done.log_path}: FAILED:\n  - the match did not finish (no match_end record)" in cut_short.stdout
    assert cut_short.stdout.splitlines()[-1] == f"skipped 1 match still in play: {live}"

    assert after.returncode == 0, after.stdout  # over now: checked like any other
    assert f"{live}: OK: " in after.stdout
    assert "skipped" not in after.stdout


def test_only_the_match_the_index_records_running_is_skipped(tmp_path: Path, capsys) -> None:
    """Aborted, sealed and finished matches must have whole logs; so must a log with no index."""
    data = tmp_path / "data"
    played = sorted((Path(__file__).parent / "data" / "match_logs").glob("*.jsonl"))[0]
    first_line = played.read_text(encoding="utf-8").splitlines(keepends=True)[0]
    for number, status in enumerate(("running", "aborted", "sealed", "finished")):
        leave_behind(data, status, status, sealed=status == "sealed", started_at=number)
        (data / "logs" / f"{status}.jsonl").write_text(first_line)  # a played match's start, and no more
    index = data / "oddtrick.sqlite3"
    before = index.read_bytes()
    elsewhere = tmp_path / "copied" / "running.jsonl"  # a running match's log, away from its index
    elsewhere.parent.mkdir()
    elsewhere.write_bytes((data / "logs" / "running.jsonl").read_bytes())

    assert main(["check", str(data / "logs"), str(elsewhere)]) == 1
    said = capsys.readouterr().out
    for status in ("aborted", "sealed", "finished"):
        assert f"{data / 'logs' / status}.jsonl: FAILED:\n  - the match did not finish" in said
    assert f"{elsewhere}: FAILED:\n  - the match did not finish" in said
    assert said.splitlines()[-1] == f"skipped 1 match still in play: {data / 'logs' / 'running.jsonl'}"
    assert index.read_bytes() == before  # read, not written
