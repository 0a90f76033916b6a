"""The bot processes a tournament starts: independent of the folder they are started
from, noticed at once when they die, dying with the referee, and kept from its secrets."""

from __future__ import annotations

import io
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import trio
from process_support import reap

from oddtrick.rules import GameConfig
from oddtrick_referee._exceptions import EntrantExited
from oddtrick_referee.competitions.tournaments.tournament import (
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GUARD_S = 60.0
"""Guards against a hang only: a local entry that does not connect is given 120 s."""


def plan(*entries: str, **overrides: object) -> TournamentSettings:
    values: dict[str, object] = {
        "entries": tuple(parse_entry(text) for text in entries),
        "config": GameConfig.classic(),
        "deals": 1,
        "set_size": 1,
        "tables": 1,
        "rules": TableRules(deadline_s=5.0, grace_s=2.0),
        "seed": "entrants",
    }
    values.update(overrides)
    return TournamentSettings(**values)  # type: ignore[arg-type]


def a_clone_named_oddtrick(folder: Path) -> Path:
    """A folder holding a checkout called ``oddtrick``, as after ``git clone … oddtrick``."""
    clone = folder / "oddtrick"
    clone.mkdir(parents=True)
    (clone / "README.md").write_text("a checkout\n")
    (clone / "sdk").mkdir()
    return folder


def test_bots_started_beside_a_clone_named_oddtrick_still_play(tmp_path: Path) -> None:
    folder = a_clone_named_oddtrick(tmp_path / "work")
    bot = folder / "random_bot.py"
    shutil.copy(RANDOM_BOT, bot)
    run = subprocess.run(
        [sys.executable, "-P", "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "1",
         "--tables", "1", "--bot", "one=random_bot.py", "--bot", "two=random_bot.py",
         "--data-dir", "data", "--json"],
        cwd=folder, capture_output=True, text=True, timeout=GUARD_S, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert '"entries"' in run.stdout
    # In a pipe, one progress line per table, each saying the table is done (the first
    # has no leader yet: a deal's standings need both of its tables).
    tables = [line for line in run.stderr.splitlines() if re.match(r"\[[1-9]\d*/2 tables, ", line)]
    assert len(tables) == 2, run.stderr
    assert tables[0].endswith(" set 1 table 1 done"), tables
    assert " done; leader " in tables[1], tables


def test_the_readme_answers_the_error_a_script_beside_a_clone_gets(tmp_path: Path) -> None:
    folder = a_clone_named_oddtrick(tmp_path)
    (folder / "script.py").write_text("from oddtrick import GameConfig\n")
    run = subprocess.run(
        [sys.executable, "script.py"], cwd=folder, capture_output=True, text=True, check=False
    )
    assert run.returncode == 1
    error = run.stderr.strip().splitlines()[-1]
    assert error == "ImportError: cannot import name 'GameConfig' from 'oddtrick' (unknown location)"
    readme = (ROOT / "README.md").read_text()
    assert "cannot import name 'GameConfig' from 'oddtrick' (unknown location)" in readme
    assert "python -P" in readme


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ("def broken(:\n", "SyntaxError"),
        ("import oddtrick\nimport no_such_module_here\n", "No module named 'no_such_module_here'"),
        ("import oddtrick\n\nclass Real(oddtrick.Bot):\n    pass\n", "has no 'Wrong'"),
    ],
)
async def test_a_local_entry_that_dies_at_start_is_reported_at_once_with_its_last_lines(
    tmp_path: Path, source: str, said: str
) -> None:
    bad = tmp_path / "bad_bot.py"
    bad.write_text(source)
    settings = plan(f"good={RANDOM_BOT}", f"bad={bad}:Wrong")
    with trio.fail_after(GUARD_S), pytest.raises(EntrantExited) as failed:
        await run_tournament(settings, tmp_path / "data", progress_stream=io.StringIO())
    message = str(failed.value)
    assert message.startswith("local entry 'bad' (process bad~")
    assert "exited with status" in message
    assert said in message
    assert len(message.splitlines()) == 2
    assert str(tmp_path / "data" / "bot-output") in message.splitlines()[1]


def test_the_cli_reports_a_dead_entry_in_two_lines_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad_bot.py"
    bad.write_text("def broken(:\n")
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "tournament", "--deals", "1", "--tables", "1",
         "--bot", f"good={RANDOM_BOT}", "--bot", f"bad={bad}", "--data-dir", str(tmp_path / "d")],
        capture_output=True, text=True, timeout=GUARD_S, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    skip = ("tournament ", "referee listening", "warning:", "  ")  # what it is, where it listens
    errors = [line for line in run.stderr.splitlines() if not line.startswith(skip)]
    assert len(errors) == 1, run.stderr
    assert errors[0].startswith("oddtrick tournament: local entry 'bad'")
    assert "SyntaxError" in errors[0]
    assert "Traceback" not in run.stderr


def _descendants(pid: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        children = {child for child, parent in parents.items() if parent in frontier}
        frontier = children - found
        found |= children
    return found


def test_the_bot_processes_die_with_a_sigkilled_referee(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "30",
        "--set-size", "1", "--tables", "1", "--data-dir", str(tmp_path),
        "--bot", f"one={RANDOM_BOT}", "--bot", f"two={RANDOM_BOT}",
    ]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as referee:
        assert referee.stderr is not None
        for line in referee.stderr:  # once a table is played, every bot is connected
            if "[1/" in line:
                break
        else:
            pytest.fail("the tournament ended before a table was played")
        processes = _descendants(referee.pid)
        assert len(processes) >= 4  # a launcher and a bot for each of the four bot names
        handles = [os.pidfd_open(pid) for pid in processes if Path(f"/proc/{pid}").exists()]
        reap(referee)
    try:
        for handle in handles:
            ready, _, _ = select.select([handle], [], [], GUARD_S)
            assert ready, "a bot process outlived the referee"
    finally:
        for handle in handles:
            os.close(handle)


PROBE = r"""#!/bin/sh
# A bot that looks for the referee's secrets instead of playing, and says what it found.
data="${1#data=}"  # (an argument: its environment has nothing of the referee's)
echo "uid $(id -u)"
for file in "$data/oddtrick.sqlite3" "$data"/logs/*.jsonl; do
    if cat "$file" >/dev/null 2>&1; then
        echo "READ $file"; tr -c '[:print:]' '\n' < "$file" | grep -a seed
    else
        echo "DENIED $file"
    fi
done
ls "$data" >/dev/null 2>&1 && echo "LISTED $data" || echo "DENIED listing $data"
for proc in /proc/[0-9]*; do
    tr '\0' ' ' 2>/dev/null < "$proc/cmdline" | grep -a -- "--token"
    ls -l "$proc/cwd" 2>/dev/null | grep -a "$data" && echo "FOUND THE DATA FOLDER via $proc/cwd"
    ls -l "$proc/fd" 2>/dev/null | grep -a "$data" && echo "FOUND THE DATA FOLDER via $proc/fd"
done
echo "ODDTRICK_TOKEN in my environment: ${ODDTRICK_TOKEN:+yes}"
echo "probe done"
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="bots run as another user only when the referee is root")
async def test_a_bot_that_looks_for_the_referees_secrets_finds_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # The probe itself must be readable by the bots' user: not under pytest's private folder.
    probe = Path(tempfile.mkdtemp(prefix="oddtrick-probe-")) / "probe.sh"
    probe.parent.chmod(0o755)
    probe.write_text(PROBE)
    probe.chmod(0o755)
    settings = plan(  # one process for the probe (not one per play)
        f"good={RANDOM_BOT}", f"prober=cmd:sh {probe} data={data}", seed="the-master-seed-42", duplicate=False
    )
    try:
        with trio.fail_after(GUARD_S), pytest.raises(EntrantExited):
            await run_tournament(settings, data, progress_stream=io.StringIO())
    finally:
        shutil.rmtree(probe.parent)
    report = (data / "bot-output" / "prober.log").read_text()
    assert "probe done" in report
    uid = int(report.split("uid ", 1)[1].split()[0])
    assert uid >= 0x40000000  # a user id of its own
    assert f"DENIED {data}/oddtrick.sqlite3" in report
    assert "DENIED listing" in report
    assert "READ" not in report
    assert "the-master-seed-42" not in report
    for entry in settings.entries:  # (the machine's other command lines are not this test's business)
        assert entry.token not in report.replace(f"ODDTRICK_TOKEN={entry.token}", "")
    assert "FOUND THE DATA FOLDER" not in report
    assert (data / "oddtrick.sqlite3").stat().st_mode & 0o077 == 0
    assert (data / "logs").stat().st_mode & 0o077 == 0


async def test_sdk_bots_get_their_token_through_a_pipe_not_the_command_line(tmp_path: Path) -> None:
    settings = plan(f"one={RANDOM_BOT}", f"two={RANDOM_BOT}")
    entry = settings.entries[0]
    from oddtrick_referee.competitions.tournaments.tournament import local_processes

    for process in local_processes(entry, "127.0.0.1:1", settings, tmp_path):
        assert entry.token not in " ".join(process.command)
        assert "ODDTRICK_TOKEN" not in process.env
        assert process.command[1] == "-P"  # safe-path mode: the working folder is not searched
    standings = await run_tournament(settings, tmp_path / "data", progress_stream=io.StringIO())
    assert sum(row.deals for row in standings.rows) == 2


def test_the_launcher_kills_the_bot_when_the_referees_end_of_its_pipe_closes() -> None:
    from oddtrick_referee.competitions.entries.entrants import LAUNCHER

    watch_read, watch_write = os.pipe()
    launcher = subprocess.Popen(
        [sys.executable, "-I", str(LAUNCHER), str(watch_read), "-", "--",
         "sh", "-c", "echo started; exec sleep 300"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, pass_fds=(watch_read,),
    )  # fmt: skip
    os.close(watch_read)
    assert launcher.stdin is not None
    assert launcher.stdout is not None
    launcher.stdin.write(b"token\n")
    launcher.stdin.close()
    try:
        assert launcher.stdout.readline() == b"started\n"
        bots = _descendants(launcher.pid)
        assert len(bots) == 1
        handle = os.pidfd_open(bots.pop())
        os.close(watch_write)  # as the kernel does when the referee dies
        ready, _, _ = select.select([handle], [], [], GUARD_S)
        os.close(handle)
        assert ready, "the bot outlived its launcher's pipe"
        assert launcher.wait(timeout=GUARD_S) == 137
    finally:
        reap(launcher)
        launcher.stdout.close()


async def test_a_bot_file_imports_the_modules_beside_it(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "strategy.py").write_text("def pick(view):\n    return view.legal_actions[0]\n")
    (folder / "my_bot.py").write_text(
        "import oddtrick\nfrom strategy import pick\n\n"
        "class Mine(oddtrick.Bot):\n    choose_call = choose_card = staticmethod(pick)\n"
    )
    settings = plan(f"mine={folder / 'my_bot.py'}", f"other={RANDOM_BOT}")
    with trio.fail_after(GUARD_S):
        standings = await run_tournament(settings, tmp_path / "data", progress_stream=io.StringIO())
    assert {row.entry: row.deals for row in standings.rows} == {"mine": 1, "other": 1}


async def test_an_sdk_bot_that_looks_for_the_referees_secrets_finds_none(tmp_path: Path) -> None:
    """Where the unprivileged user cannot run Python (installed under /root, as on this
    machine kind), SDK bots run as root: a sandbox must then hide the data folder and the
    referee's processes, since file modes do not stop root."""
    data = tmp_path / "data"
    probe_bot = tmp_path / "secrets_probe_bot.py"
    shutil.copy(Path(__file__).with_name("secrets_probe_bot.py"), probe_bot)
    (tmp_path / "probe_data").write_text(str(data))
    settings = plan(f"good={RANDOM_BOT}", f"prober={probe_bot}", seed="the-master-seed-43", duplicate=False)
    with trio.fail_after(GUARD_S), pytest.raises(EntrantExited):
        await run_tournament(settings, data, progress_stream=io.StringIO())
    report = (data / "bot-output" / "prober.log").read_text()
    assert "probe done" in report
    assert "READ" not in report
    assert "FOUND THE DATA FOLDER" not in report
    assert not [line for line in report.splitlines() if line.startswith("LISTED") and "sqlite3" in line]
    assert "the-master-seed-43" not in report
    for entry in settings.entries:
        assert entry.token not in report
    if "probing as uid 0" in report:  # root: only the sandbox stands between it and the referee
        seen = [line for line in report.splitlines() if line.startswith("SAW")]
        assert seen
        assert all("secrets_probe_bot.py" in line for line in seen), f"the bot saw other processes: {seen}"
