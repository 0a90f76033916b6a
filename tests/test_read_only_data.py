"""A data folder that cannot be written: `serve` and `tournament` say so in one line, exit 1,
and leave the index as it was (no match left "running")."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_arena_listing import leave_behind

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def _as_an_ordinary_user(command: list[str]) -> list[str]:
    """Root ignores file modes: run ``command`` without the capabilities that let it, so a
    read-only folder is read-only to the referee as it would be to any user.

    setpriv (util-linux) drops them from the bounding set and execs the command. Not a
    ``preexec_fn``: that forces a plain fork() of this process, which holds gRPC's
    threads from earlier tests, and gRPC's fork handlers then restart a poller in the
    child whose epoll descriptor ``close_fds`` closes: the child aborts with
    "epoll_wait error: Bad file descriptor" before it can exec (grpc/grpc#43055).
    Without ``preexec_fn`` the child is started by vfork, and no fork handler runs.
    """
    if os.geteuid() != 0:
        return command
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (Debian's util-linux) drops root's capabilities for these tests"
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--", *command]


def _set_writable(folder: Path, writable: bool, files_too: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755 if writable else 0o555)
        elif files_too:
            path.chmod(0o644 if writable else 0o444)


def _rows(data_dir: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        return sorted(db.execute("SELECT match_id, status FROM matches").fetchall())


@pytest.mark.parametrize("files_too", [False, True], ids=["folders read-only", "files too"])
def test_a_read_only_data_folder_is_one_line_and_changes_nothing(tmp_path: Path, files_too: bool) -> None:
    data_dir = tmp_path / "data"
    leave_behind(data_dir, "kept-1", "finished", sealed=False, started_at=1_000)
    (data_dir / "referee.lock").touch()
    before = _rows(data_dir)
    oddtrick = [sys.executable, "-m", "oddtrick"]
    commands = {
        "serve": [*oddtrick, "serve", "--port", "0", "--data-dir", str(data_dir), "--ns", "a", "--ew", "b"],
        "tournament": [
            *oddtrick, "tournament", "--data-dir", str(data_dir), "--deals", "1",
            "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}",
        ],
    }  # fmt: skip
    _set_writable(data_dir, False, files_too)
    try:
        results = {
            name: subprocess.run(_as_an_ordinary_user(command), capture_output=True, text=True, timeout=60)
            for name, command in commands.items()
        }
    finally:
        _set_writable(data_dir, True, files_too)
    for name, result in results.items():
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 1, (name, result.stderr)
        assert len(lines) == 1, (name, result.stderr)
        assert lines[0].startswith(f"oddtrick {name}: cannot write to the data folder {data_dir}")
        assert "make it writable" in lines[0]
    assert _rows(data_dir) == before == [("kept-1", "finished")]
    assert sorted(path.name for path in (data_dir / "logs").iterdir()) == ["kept-1.jsonl"]


def test_a_folder_made_read_only_mid_tournament_keeps_what_was_played(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    command = [
        sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "4",
        "--set-size", "1", "--tables", "1", "--seed", "read-only", "--data-dir", str(data_dir),
        "--bot", f"one={RANDOM_BOT}", "--bot", f"two={RANDOM_BOT}",
    ]  # fmt: skip
    lines = []
    with subprocess.Popen(
        _as_an_ordinary_user(command), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as tournament:
        assert tournament.stderr is not None
        for line in tournament.stderr:
            lines.append(line.rstrip("\n"))
            if line.startswith("[1/8 tables"):
                (data_dir / "logs").chmod(0o555)  # no new match log can be created from now on
        tournament.wait(timeout=120)
    (data_dir / "logs").chmod(0o755)
    assert tournament.returncode == 1, lines
    assert not any("Traceback" in line for line in lines), lines
    assert lines[-1].startswith(f"oddtrick tournament: cannot write to the data folder {data_dir}"), lines
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        stored = db.execute("SELECT COUNT(*) FROM table_runs").fetchone()[0]
        statuses = {row[0] for row in db.execute("SELECT status FROM matches")}
    assert 1 <= stored < 8
    assert "running" not in statuses
    assert "while starting match" in lines[-1]
