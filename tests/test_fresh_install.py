"""What a user gets from ``pip install oddtrick``: a wheel built here, in a new virtual environment.

The environment holds the wheel and its core dependencies only (no extras, no
checkout on the path: every command runs from an empty folder), so these tests
fail if a command needs an undeclared package, a file that is not shipped in
the wheel (the sample bots, the web page's templates), or an extra it does not
name when it is missing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from oddtrick._cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


class Installed:
    """A virtual environment with the wheel installed, and a way to run its commands."""

    def __init__(self, venv: Path, home: Path) -> None:
        self.venv = venv
        self.home = home
        self.env = {
            key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "PYTHONHOME"}
        }
        self.env["PATH"] = f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        self.env["VIRTUAL_ENV"] = str(venv)

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def run(
        self, *args: str, stdin: str | None = None, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / "oddtrick"), *args],
            cwd=self.home,
            env=self.env,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(self.venv / "bin" / "oddtrick"), *args],
            cwd=self.home,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    wheels = tmp_path_factory.mktemp("wheels")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(ROOT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert build.returncode == 0, build.stderr
    (wheel,) = wheels.glob("oddtrick-*.whl")
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    install = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert install.returncode == 0, install.stderr
    return Installed(venv, tmp_path_factory.mktemp("home"))


def command_paths(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and subcommand of the command line, as the words a user types for it
    (its usage line's: `tournament status` is read by a parser of its own)."""
    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                paths.append(tuple(child.prog.split()[1:]))
                paths += command_paths(child, (*prefix, name))
    return paths


WHERE_IS_ODDTRICK = (
    "import oddtrick, importlib.util; print(oddtrick.__file__, importlib.util.find_spec('endplay'))"
)


def test_the_environment_has_no_extras_and_no_checkout(installed: Installed) -> None:
    probe = installed.run("--version")
    assert probe.returncode == 0, probe.stderr
    where = subprocess.run(
        [
            installed.python,
            "-c",
            "import oddtrick, importlib.util; print(oddtrick.__file__, importlib.util.find_spec('endplay'))",
        ],
        cwd=installed.home,
        env=installed.env,
        capture_output=True,
        text=True,
        check=True,
    )
    module_file, endplay = where.stdout.split()
    assert "site-packages" in module_file
    assert endplay == "None"


def test_every_command_answers_help(installed: Installed) -> None:
    top = installed.run("--help")
    assert top.returncode == 0, top.stderr
    paths = command_paths(build_parser())
    assert {("demo",), ("tournament",), ("ladder", "serve"), ("bot",), ("conformance",)} <= set(paths)
    for path in paths:
        helped = installed.run(*path, "--help")
        assert helped.returncode == 0, f"oddtrick {' '.join(path)} --help: {helped.stderr}"
        assert helped.stdout.startswith(f"usage: oddtrick {' '.join(path)}"), helped.stdout


def test_the_demo_plays_from_the_wheel(installed: Installed) -> None:
    demo = installed.run("demo", "--deals", "2", "--data-dir", "demo-data")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert demo.stdout.count("Standings (duplicate)") == 2
    assert len(list((installed.home / "demo-data" / "logs").glob("*.jsonl"))) == 8


def test_play_at_the_terminal_finds_its_sample_bots(installed: Installed) -> None:
    # Choice 1 at every turn, for more turns than one deal has.
    played = installed.run(
        "play", "--deals", "1", "--seed", "wheel", "--data-dir", "play-data", stdin="1\n" * 300
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert "match over" in played.stdout


def test_analyze_without_the_strong_extra_says_which_extra_to_install(installed: Installed) -> None:
    demo = installed.run("demo", "--deals", "2", "--data-dir", "analyze-data")
    assert demo.returncode == 0, demo.stderr
    log = sorted((installed.home / "analyze-data" / "logs").glob("*.jsonl"))[0]
    analysed = installed.run("analyze", str(log))
    assert analysed.returncode != 0
    assert analysed.stdout == ""
    assert analysed.stderr.count("\n") == 1, analysed.stderr
    assert "pip install 'oddtrick[strong]'" in analysed.stderr


class Lines:
    """A process's output, line by line, awaited without polling."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.seen: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                self._lines.put(line)
        self._lines.put("")

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        self.reader.join(timeout=60)

    def so_far(self) -> str:
        """Everything the process has printed up to now, without waiting."""
        with contextlib.suppress(queue.Empty):
            while True:
                self.seen.append(self._lines.get_nowait())
        return "".join(self.seen)

    def wait_for(self, pattern: str, timeout: float = 240) -> re.Match[str]:
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no {pattern!r} within {timeout} s:\n{''.join(self.seen)}") from None
            self.seen.append(line)
            assert line, f"exited ({self.process.poll()}) before {pattern!r}:\n{''.join(self.seen)}"
            found = re.search(pattern, line)
            if found:
                return found


@pytest.fixture
def stopped_at_the_end() -> Iterator[list[Lines]]:
    processes: list[Lines] = []
    yield processes
    for process in processes:
        process.stop()


def test_a_ladder_on_sqlite_plays_a_match_with_the_shipped_house_bots(
    installed: Installed, stopped_at_the_end: list[Lines]
) -> None:
    said = Lines(
        installed.popen("ladder", "serve", "--data-dir", "ladder", "--port", "0", "--match-deals", "1")
    )
    stopped_at_the_end.append(said)
    address = said.wait_for(r"ladder listening on (\S+):").group(1)
    registered = installed.run("ladder", "register", "alice", "--data-dir", "ladder")
    assert registered.returncode == 0, registered.stderr
    token = re.search(r"token \(shown once, keep it secret\): (\S+)", registered.stdout)
    assert token, registered.stdout
    folder = subprocess.run(
        [installed.python, "-c", "import oddtrick.bots as b; print(b.bot_file('heuristic'))"],
        cwd=installed.home,
        env=installed.env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    bot = installed.popen(
        "bot", folder, "--server", address, "--name", "alice", "--token", token.group(1), "--seats", "2"
    )
    alice = Lines(bot)
    stopped_at_the_end.append(alice)
    try:
        said.wait_for(r"ladder match \S+ (won by|drawn).*alice")
    except AssertionError as missing:
        raise AssertionError(f"{missing}\nalice's bot said:\n{alice.so_far()}") from None
    standings = installed.run("ladder", "standings", "--data-dir", "ladder")
    assert standings.returncode == 0, standings.stderr
    assert re.search(r"alice\s", standings.stdout), standings.stdout
