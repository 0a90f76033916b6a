"""What a newcomer runs into in the first hour, each answered in a line or two."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from referee_support import GUARD_S, SeededBot, in_thread, log_records, referee_running, run_sdk_bot, token_of

from oddtrick._client import BotRefused, ClientOptions, run_bot_async
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, RefereeSettings, TableRules, check_log, running_referee
from oddtrick_referee.competitions.scoring.standings import FaultCounts, compute_standings
from oddtrick_referee.play.table import Fault

RANDOM_BOT = Path(__file__).resolve().parents[1] / "sample_bots" / "random_bot.py"


async def test_a_second_referee_on_a_busy_port_fails_at_start(tmp_path):
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path / "one")) as first:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.port}: the port is in use"):
            async with running_referee(RefereeSettings(port=first.port, data_dir=tmp_path / "two")):
                pass


class Clumsy(SeededBot):
    """Raises on every third card it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def choose_card(self, view):
        self.asked += 1
        if self.asked % 3 == 0:
            raise KeyError("QH")
        return super().choose_card(view)


def run_clumsy(address: str, name: str) -> None:
    options = ClientOptions(server=address, name=name, token=token_of(name), seats=2, max_matches=1)
    asyncio.run(asyncio.wait_for(run_bot_async(Clumsy, options), timeout=60))


async def test_a_bot_that_raises_is_recorded_with_a_fault_of_its_own_and_the_game_goes_on(tmp_path):
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=1)
    seating = {Seat.NORTH: "clumsy", Seat.SOUTH: "clumsy", Seat.EAST: "steady", Seat.WEST: "steady"}
    async with referee_running(tmp_path, ["clumsy", "steady"]) as referee:
        with trio.fail_after(GUARD_S * 2):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(in_thread, run_clumsy, referee.address, "clumsy")
                nursery.start_soon(in_thread, run_sdk_bot, referee.address, "steady", 2, 1)
                record = await referee.play_match(MatchSpec(config, seating, TableRules()), wait_s=GUARD_S)
    errors = sum(record.seats[seat].faults.get(Fault.BOT_ERROR, 0) for seat in (Seat.NORTH, Seat.SOUTH))
    assert errors == 2 * (13 // 3)  # each seat is asked for 13 cards; every third raised
    assert all(Fault.BOT_ERROR not in record.seats[seat].faults for seat in (Seat.EAST, Seat.WEST))
    assert record.state.match_result is not None
    reported = [r for r in log_records(record.log_path, "action") if "bot_error" in r]
    assert len(reported) == errors
    assert {r["bot_error"] for r in reported} == {"KeyError: 'QH'"}
    assert all(r["think_ms"] is not None and "fault" not in r for r in reported)
    end = log_records(record.log_path, "match_end")[0]
    assert sum(end["seats"][s]["faults"].get("bot_error", 0) for s in "NS") == errors
    assert check_log(record.log_path).ok


def test_the_standings_show_bot_errors_as_their_own_kind():
    standings = compute_standings(["a", "b"], [], {"a": FaultCounts(bot_errors=3)}, [], duplicate=True)
    assert "E3" in standings.render()
    assert "E bot errors" in standings.render()
    assert standings.to_json()["entries"][0]["faults"]["bot_errors"] in (0, 3)


def _ignore_ctrl_c() -> None:
    """In the child before it starts: SIGINT ignored, as a script's ``cmd &`` starts it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _stop_with_ctrl_c(
    command: list[str], ready: str, sent: int = signal.SIGINT, in_background: bool = False
) -> tuple[int, list[str]]:
    """Start ``command`` (``in_background``: with SIGINT ignored, as a script's ``&`` does),
    wait for a line of its stderr containing ``ready``, send SIGINT as a terminal's Ctrl-C
    would (or ``sent``), and return its status and the stderr lines after ``ready``."""
    with subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_ignore_ctrl_c if in_background else None,
    ) as process:
        assert process.stderr is not None
        for line in process.stderr:
            if ready in line:
                break
        else:
            pytest.fail(f"{command[3]} ended before {ready!r}")
        process.send_signal(sent)
        rest = process.stderr.read().splitlines()
        return process.wait(timeout=GUARD_S), rest


@pytest.mark.parametrize(
    ("sent", "said", "in_background"),
    [(signal.SIGINT, "Ctrl-C", False), (signal.SIGTERM, "SIGTERM", False), (signal.SIGTERM, "SIGTERM", True)],
    ids=["ctrl-c", "kill", "kill-of-a-background-job"],
)
def test_ctrl_c_of_a_tournament_prints_one_line_saying_what_was_kept_and_how_to_resume(
    tmp_path, sent, said, in_background
):
    status, lines = _stop_with_ctrl_c(
        [sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "20",
         "--set-size", "1", "--tables", "1", "--data-dir", str(tmp_path),
         "--bot", f"one={RANDOM_BOT}", "--bot", f"two={RANDOM_BOT}"],
        ready="[1/40 tables",
        sent=sent,
        in_background=in_background,
    )  # fmt: skip
    assert status == 130
    stopped = [line for line in lines if not line.startswith("[")]
    assert len(stopped) == 1, lines
    assert stopped[0].startswith(f"stopped ({said}): ")
    assert f"of 40 tables finished and kept in {tmp_path}" in stopped[0]
    assert stopped[0].endswith("run the same command to resume")


def test_ctrl_c_of_serve_prints_one_line(tmp_path):
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--data-dir", str(tmp_path)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        for line in process.stdout:
            if "waiting for a, b to connect" in line:
                break
        else:
            pytest.fail("serve ended before waiting for its bots")
        process.send_signal(signal.SIGINT)
        logged = re.compile(r"^\d\d:\d\d:\d\d (INFO|WARNING) ")  # the referee's log, not errors
        errors = [line for line in process.stderr.read().splitlines() if not logged.match(line)]
        assert process.wait(timeout=GUARD_S) == 130
    assert len(errors) == 1, errors
    assert errors[0].startswith("stopped (Ctrl-C) while waiting for bots; 0 finished match(es) kept in ")


def test_sigterm_stops_serve_mid_match_as_ctrl_c_does_and_keeps_what_was_played(tmp_path):
    """SIGTERM is how kill, systemd and Docker stop a program: the referee stops as on Ctrl-C,
    says so in a line, marks the match aborted (no live badge left behind) and its log holds
    every card a spectator saw played."""
    import json
    import sqlite3
    import urllib.request

    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--game", "classic", "--deals", "200", "--web", "0", "--data-dir", str(tmp_path)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        assert process.stderr is not None
        address = url = match_id = None
        bots = []
        for line in process.stdout:
            if line.startswith("referee listening on "):
                address = line.split()[3].rstrip(";")
                bots = [bot_process(address, name) for name in ("a", "b")]
            elif "web page on " in line:
                url = line.split("web page on ", 1)[1].strip().rstrip("/")
            elif line.startswith("match ") and " started: " in line:
                match_id = line.split()[1]
                break
        assert match_id, (address, url)
        assert url
        seen = []
        with urllib.request.urlopen(f"{url}/matches/{match_id}/events", timeout=GUARD_S) as events:
            for raw in events:
                text = raw.decode()
                if text.startswith("data: ") and '"card_played"' in text:
                    event = json.loads(text[6:])
                    seen.append((event["seat"], event["card"]))
                    if len(seen) == 30:
                        break
            process.send_signal(signal.SIGTERM)
        logged = re.compile(r"^\d\d:\d\d:\d\d (INFO|WARNING) ")
        errors = [line for line in process.stderr.read().splitlines() if not logged.match(line)]
        status = process.wait(timeout=GUARD_S)
        for bot in bots:  # they would wait for the referee to come back
            bot.terminate()
            bot.communicate(timeout=GUARD_S)
    assert status == 130
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"stopped (SIGTERM): match {match_id} abandoned and marked aborted")
    with sqlite3.connect(tmp_path / "oddtrick.sqlite3") as db:
        (row,) = db.execute("SELECT status, log_path FROM matches WHERE match_id = ?", (match_id,)).fetchall()
    assert row[0] == "aborted"
    records = log_records(tmp_path / row[1])  # named relative to the data folder
    played = [(r["seat"], r["action"]) for r in records if r["type"] == "action"]
    assert len(played) >= len(seen)
    assert played[: len(seen)] == seen


def bot_process(address: str, name: str, *options: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "oddtrick", "bot", str(RANDOM_BOT), "--server", address,
               "--name", name, "--seats", "2", *options]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def test_serve_says_when_the_match_has_started_and_how_it_ended(tmp_path):
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--game", "classic", "--deals", "1", "--data-dir", str(tmp_path)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as serve:
        assert serve.stdout is not None
        address = serve.stdout.readline().split()[3].rstrip(";")
        bots = [bot_process(address, name) for name in ("a", "b")]
        lines = serve.stdout.read().splitlines()
        assert serve.wait(timeout=GUARD_S) == 0
        said = []
        for bot in bots:
            assert bot.wait(timeout=GUARD_S) == 0  # the referee ends their sessions with OK
            said.append(bot.stderr.read())
            bot.stderr.close()
    events = [line.split(":")[0].split()[-1] for line in lines if line.startswith("match ")]
    assert events == ["1/1", "started", "over"], lines
    started = next(line for line in lines if " started: " in line)
    assert "N a  E b  S a  W b; log " in started

    # Each bot said what it did, a line at a time, without being asked to (-v).
    for name, text in zip(("a", "b"), said, strict=True):
        lines = [line.split(" ", 1)[1] for line in text.splitlines()]
        assert lines[0] == f"connecting to {address} as {name} with 2 seat(s)"
        assert lines[1] == f"connected to {address} as {name}; 2 seat(s) waiting for a match"
        assert sum(" seated at match " in line for line in lines) == 2
        assert (
            sum(re.search(r"match \S+ over: (won|lost|drawn) \d+-\d+", line) is not None for line in lines)
            == 2
        )
        assert lines[-1].startswith(f"the referee is done with {name}: ")


def test_a_bot_pointed_at_no_referee_says_so_at_once():
    with bot_process("127.0.0.1:1", "lost") as bot:
        assert bot.stderr is not None
        first = bot.stderr.readline().split(" ", 1)[1].strip()
        second = bot.stderr.readline().split(" ", 1)[1].strip()
        bot.kill()
    assert first == "connecting to 127.0.0.1:1 as lost with 2 seat(s)"
    assert second.startswith("cannot reach the referee at 127.0.0.1:1 (UNAVAILABLE: ")
    assert second.endswith("retrying for up to 60 s")


def test_oddtrick_bot_without_a_token_is_told_to_give_one(tmp_path):
    tokens = tmp_path / "tokens.json"
    for name in ("a", "b"):  # a tokens file holds hashes, made by oddtrick tokens add
        subprocess.run([sys.executable, "-m", "oddtrick", "tokens", "add", str(tokens), name], check=True,
                       capture_output=True)  # fmt: skip
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--tokens", str(tokens), "--data-dir", str(tmp_path / "data")]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as serve:
        assert serve.stdout is not None
        address = serve.stdout.readline().split()[3].rstrip(";")
        env = {key: value for key, value in os.environ.items() if not key.startswith("ODDTRICK_")}
        run = subprocess.run(
            [sys.executable, "-m", "oddtrick", "bot", str(RANDOM_BOT), "--server", address, "--name", "a"],
            capture_output=True, text=True, check=False, timeout=GUARD_S, env=env,
        )  # fmt: skip
        serve.send_signal(signal.SIGINT)
    assert run.returncode == 1
    assert run.stderr.splitlines()[-1] == (
        f"oddtrick bot: the referee at {address} wants a token for 'a' and none was given: "
        "pass --token TOKEN (or set ODDTRICK_TOKEN)"
    )


async def test_a_referee_with_tokens_says_a_missing_token_is_missing(tmp_path):
    async with referee_running(tmp_path, ["x"]) as referee:
        options = ClientOptions(server=referee.address, name="x", token="")
        with pytest.raises(BotRefused, match="no token given for bot 'x'"):
            await in_thread(lambda: asyncio.run(run_bot_async(SeededBot, options)))


@pytest.mark.parametrize("path", ["oddtrick-data/logs/m.jsonl", "sdk/oddtrick/oddtrick-data/x.sqlite3"])
def test_the_default_data_folder_is_ignored_by_git_wherever_it_is_made(path):
    root = Path(__file__).resolve().parents[1]
    run = subprocess.run(["git", "check-ignore", "-q", path], cwd=root, check=False)
    assert run.returncode == 0


def test_watch_waits_for_the_next_match_follows_match_after_match_and_replays_a_finished_one(tmp_path):
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--game", "classic", "--deals", "1", "--matches", "2", "--forever",
               "--data-dir", str(tmp_path)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as serve:
        assert serve.stdout is not None
        address = serve.stdout.readline().split()[3].rstrip(";")
        watcher = subprocess.Popen(
            [sys.executable, "-m", "oddtrick", "watch", "--server", address, "--follow"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert watcher.stderr is not None
        assert watcher.stdout is not None
        # Nothing has started yet: it says it waits (rather than exit), and only then do bots come.
        assert watcher.stderr.readline().startswith(f"waiting for a match to start on {address}")
        bots = [bot_process(address, name, "--max-matches", "2") for name in ("a", "b")]
        over = []
        for line in watcher.stdout:
            if line.startswith("match over:"):
                over.append(line)
                if len(over) == 2:
                    break
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(timeout=GUARD_S) == 130
        watcher.stdout.close()
        watcher.stderr.close()
        for bot in bots:
            bot.wait(timeout=GUARD_S)
            bot.stderr.close()
        finished: list[str] = []
        for line in serve.stdout:
            if line.startswith("match ") and " over: " in line:
                finished.append(line.split()[1])
                if len(finished) == 2:
                    break
        replay = subprocess.run(
            [sys.executable, "-m", "oddtrick", "watch", finished[0], "--server", address],
            capture_output=True, text=True, timeout=GUARD_S, check=False,
        )  # fmt: skip
        serve.send_signal(signal.SIGINT)
    assert len(over) == 2  # both matches followed, one after the other
    assert replay.returncode == 0, replay.stderr
    shown = replay.stdout.splitlines()
    assert shown[0].startswith(f"match {finished[0]} · ")
    assert shown[0].endswith("(finished: replayed from its log)")
    assert sum(line.lstrip().startswith("trick ") for line in shown) == 13
    assert shown[-1].startswith("match over:")


def test_watch_started_before_a_short_match_shows_all_of_it_though_the_referee_then_stops(tmp_path):
    """``serve`` of one match stops once it is over: a watcher that looked every half
    second could miss a match that short, and then found no referee. Subscribed before
    the match starts, one watcher shows all of it and exits 0; one following says the
    referee stopped, and exits 0 too."""
    command = [sys.executable, "-m", "oddtrick", "serve", "--port", "0", "--ns", "a", "--ew", "b",
               "--game", "classic", "--deals", "1", "--data-dir", str(tmp_path)]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) as serve:
        assert serve.stdout is not None
        address = serve.stdout.readline().split()[3].rstrip(";")
        watch = [sys.executable, "-m", "oddtrick", "watch", "--server", address]
        watchers = [
            subprocess.Popen([*watch, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for extra in ([], ["--follow"])
        ]
        for watcher in watchers:
            assert watcher.stderr is not None
            assert watcher.stderr.readline().startswith(f"waiting for a match to start on {address}")
        bots = [bot_process(address, name, "--max-matches", "1") for name in ("a", "b")]
        outputs = [watcher.communicate(timeout=GUARD_S) for watcher in watchers]
        for bot in bots:
            bot.wait(timeout=GUARD_S)
            bot.stderr.close()
        assert serve.wait(timeout=GUARD_S) == 0
    for watcher, (out, err) in zip(watchers, outputs, strict=True):
        assert watcher.returncode == 0, (watcher.args[-1], err)
        shown = out.splitlines()
        assert shown[0].startswith("match ")
        assert sum(line.lstrip().startswith("trick ") for line in shown) == 13
        assert shown[-1].startswith("match over:") or shown[-2].startswith("match over:")
    assert outputs[1][1].splitlines()[-1] == f"oddtrick watch: the referee at {address} has stopped"


def test_the_readmes_unit_test_example_runs_against_the_readmes_bot(tmp_path, monkeypatch):
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    bot = next(block for block in blocks if block.startswith("# my_bot.py"))
    test = next(block for block in blocks if block.startswith("# test_my_bot.py"))
    (tmp_path / "my_bot.py").write_text(bot)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict[str, object] = {}
    exec(compile(test, "README test_my_bot.py", "exec"), namespace)
    tests = [value for name, value in namespace.items() if name.startswith("test_") and callable(value)]
    assert tests
    for function in tests:
        function()
