"""Whether the unprivileged user can run a local entry is decided before anything starts,
from every part of its command line that matters, and a refusal says in one line what to do.

The folders are real and so are the users: pytest's temporary folders are closed to other
users (mode 0700), as a user's own folders often are; "open" folders are made beside them.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from oddtrick_referee.competitions.entries.access import refusal

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GUARD_S = 120.0

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bots run as another user only under root")
NOBODY = pwd.getpwnam("nobody")


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are closed)."""
    folder = Path(tempfile.mkdtemp(prefix="oddtrick-open-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def refused(command: list[str], cwd: Path, path_env: str | None = None) -> str | None:
    found = refusal(command, cwd, path_env or os.environ.get("PATH"), "nobody", NOBODY.pw_uid, NOBODY.pw_gid)
    return None if found is None else f"{found} -> {found.fix}"


def closed_interpreter(folder: Path) -> Path:
    """An interpreter only root can reach (a Python under /root, say)."""
    closed = folder / "closed"
    closed.mkdir(mode=0o700)
    interpreter = closed / "mypython"
    interpreter.write_text("#!/bin/sh\nexec true\n")
    interpreter.chmod(0o755)
    return interpreter


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_script_that_execs_a_closed_interpreter_is_refused(open_folder: Path) -> None:
    interpreter = closed_interpreter(open_folder)
    run = script(open_folder / "run.sh", f'#!/bin/sh\n# starts the bot\nexec {interpreter} bot.py "$@"\n')
    for command in (["./run.sh"], [str(run)], ["sh", "run.sh"], ["bash", str(run), "--fast"]):
        said = refused(command, open_folder)
        assert said == (
            f"user nobody cannot enter {interpreter.parent} (mode 0700, owner root:root) "
            f"-> chmod o+x {interpreter.parent}"
        ), command


def test_a_shell_command_line_that_runs_a_closed_interpreter_is_refused(open_folder: Path) -> None:
    """``cmd:sh -c '… python bot.py; …'`` (a wrapper, as the conformance kit's tests use)."""
    interpreter = closed_interpreter(open_folder)
    for line in (f"{interpreter} bot.py --fast; echo done", f"exec {interpreter.name} bot.py"):
        path_env = f"{interpreter.parent}:{os.environ.get('PATH', '')}"
        said = refused(["sh", "-c", line], open_folder, path_env)
        assert said is not None, line
        assert f"cannot enter {interpreter.parent}" in said


def test_a_shebang_through_env_is_followed_on_path(open_folder: Path) -> None:
    interpreter = closed_interpreter(open_folder)
    script(open_folder / "bot", "#!/usr/bin/env mypython\nprint('hello')\n")
    path_env = f"{interpreter.parent}:{os.environ.get('PATH', '')}"
    said = refused(["./bot"], open_folder, path_env)
    assert said is not None
    assert f"cannot enter {interpreter.parent}" in said


def test_a_program_by_name_after_exec_is_looked_up_on_path(open_folder: Path) -> None:
    interpreter = closed_interpreter(open_folder)
    script(open_folder / "run.sh", "#!/bin/sh\nexec mypython bot.py\n")
    path_env = f"{interpreter.parent}:{os.environ.get('PATH', '')}"
    said = refused(["./run.sh"], open_folder, path_env)
    assert said is not None
    assert f"cannot enter {interpreter.parent}" in said


def test_files_the_command_line_names_must_be_readable(open_folder: Path) -> None:
    bot = open_folder / "bot.jar"
    bot.write_text("not really a jar")
    bot.chmod(0o600)
    assert refused(["sh", "-c", "true", "--", "bot.jar"], open_folder) == (
        f"user nobody cannot read {bot} (mode 0600, owner root:root) -> chmod o+r {bot}"
    )
    unreadable_script = script(open_folder / "run.sh", "#!/bin/sh\nexec true\n")
    unreadable_script.chmod(0o711)  # runnable bits, but an interpreter must read a script
    assert refused(["./run.sh"], open_folder) == (
        f"user nobody cannot read {unreadable_script} (mode 0711, owner root:root) "
        f"-> chmod o+r {unreadable_script}"
    )


def test_a_bot_file_in_a_closed_folder_is_refused_with_the_folder(tmp_path: Path) -> None:
    bot = tmp_path / "my_bot.py"
    shutil.copy(RANDOM_BOT, bot)
    closed = next(folder for folder in reversed(bot.parents) if folder.stat().st_mode & 0o001 == 0)
    said = refused(["/bin/sh", "-c", "true", f"{bot}:RandomBot"], bot.parent)
    assert said is not None
    assert said.startswith(f"user nobody cannot enter {closed} (mode 07")
    assert said.endswith(f"-> chmod o+x {closed}")


def test_what_nobody_can_run_is_not_refused(open_folder: Path) -> None:
    script(open_folder / "run.sh", '#!/bin/sh\nexec /bin/true "$@"\n')
    (open_folder / "bot.jar").write_text("x")
    assert refused(["./run.sh", "bot.jar", "--server", "127.0.0.1:1"], open_folder) is None
    assert refused(["sh", "run.sh"], open_folder) is None


def oddtrick(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=GUARD_S, check=False,
    )  # fmt: skip


def test_a_tournament_refuses_at_start_a_script_its_bot_user_cannot_follow(open_folder: Path) -> None:
    """Before, the entry started as nobody and died with status 126 in the middle."""
    interpreter = closed_interpreter(open_folder)
    script(open_folder / "run.sh", f'#!/bin/sh\nexec {interpreter} "$@"\n')
    data = open_folder / "data"
    run = oddtrick(
        "tournament", "--deals", "1", "--tables", "1", "--bot-user", "nobody",
        "--bot", "scripted=cmd:./run.sh", "--bot", "other=cmd:sh -c 'exec sleep 60'", "--data-dir", str(data),
        cwd=open_folder,
    )  # fmt: skip
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines == [
        f"oddtrick tournament: local entry 'scripted': user nobody cannot enter {interpreter.parent} "
        f"(mode 0700, owner root:root): open it to other users (chmod o+x {interpreter.parent}) "
        "or choose another --bot-user"
    ], run.stderr
    assert not (data / "bot-output").exists()  # nothing was started


def test_a_tournament_from_a_closed_folder_says_what_to_do(tmp_path: Path) -> None:
    """``oddtrick tournament --bot a=my_bot.py`` from a chmod 700 folder, as root: with
    --bot-user, one line naming the folder; without, the entries play, sandboxed as root,
    after one warning with the same advice."""
    shutil.copy(RANDOM_BOT, tmp_path / "my_bot.py")
    closed = next(folder for folder in reversed(tmp_path.parents) if folder.stat().st_mode & 0o001 == 0)
    entries = ("--bot", "a=my_bot.py", "--bot", "b=my_bot.py", "--deals", "1", "--tables", "1")
    refused_run = oddtrick("tournament", *entries, "--bot-user", "nobody", "--data-dir", "d1", cwd=tmp_path)
    assert refused_run.returncode == 1
    lines = [line for line in refused_run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, refused_run.stderr
    assert lines[0].startswith(f"oddtrick tournament: local entry 'a': user nobody cannot enter {closed} (")
    assert f"(chmod o+x {closed}) or choose another --bot-user" in lines[0]
    assert "PermissionError" not in refused_run.stderr

    from oddtrick_referee.competitions.entries import sandbox

    if sandbox.problem() is not None:  # (the line then says what to install)
        pytest.skip(sandbox.problem() or "")
    played = oddtrick("tournament", *entries, "--json", "--data-dir", "d2", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    warnings = [line for line in played.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, played.stderr
    assert warnings[0].startswith("warning: local entries a, b run as root in a sandbox")
    assert f"an unprivileged user cannot enter {closed} (" in warnings[0]
    assert f"(chmod o+x {closed}) or give --bot-user" in warnings[0]
    assert '"entries"' in played.stdout


def test_without_bubblewrap_an_entry_that_would_run_as_root_is_refused_with_what_to_install(
    tmp_path: Path,
) -> None:
    shutil.copy(RANDOM_BOT, tmp_path / "my_bot.py")
    no_bwrap = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # bwrap is not on it
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "tournament", "--bot", "a=my_bot.py", "--bot", "b=my_bot.py",
         "--deals", "1", "--tables", "1", "--data-dir", "d"],
        cwd=tmp_path, env=no_bwrap, capture_output=True, text=True, timeout=GUARD_S, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("oddtrick tournament: local entry 'a': an unprivileged user cannot enter ")
    assert (
        "bubblewrap is not installed: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
        in lines[0]
    )
    assert lines[0].endswith("or give --bot-user")
    assert not (tmp_path / "d").exists()  # nothing started, nothing written
