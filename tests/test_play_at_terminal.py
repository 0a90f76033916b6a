"""A person plays a match at a terminal: ``oddtrick play`` driven through a pseudo-terminal,
as a person's keyboard and screen would drive it."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from oddtrick_referee import check_log, read_log

GUARD_S = 60.0
"""Guards against a hang only."""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = re.compile(r"your (card|call)> $")


class Terminal:
    """A program on a pseudo-terminal: what it printed so far, and a keyboard."""

    def __init__(self, command: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"}
        env.pop("NO_COLOR", None)
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env)
        os.close(slave)
        self.buffer = ""
        """What was printed and not read yet."""

    def read_until(self, pattern: re.Pattern[str]) -> str:
        """What was printed up to the first match of ``pattern``, colours stripped (or up to
        the program's end, if it ends first)."""
        while True:
            text = ANSI.sub("", self.buffer).replace("\r", "")
            found = pattern.search(text)
            if found:
                self.buffer = text[found.end() :]
                return text[: found.end()]
            ready, _, _ = select.select([self.master], [], [], GUARD_S)
            assert ready, f"the program printed nothing for {GUARD_S} s; last output:\n{text[-2000:]}"
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the program ended and closed the terminal
                chunk = b""
            if not chunk:
                self.buffer = ""
                return text
            self.buffer += chunk.decode("utf-8", "replace")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> int:
        os.close(self.master)
        return self.process.wait(timeout=GUARD_S)


def connections_and_children(pid: int) -> tuple[int, int]:
    """The TCP connections the process holds open (established, its own sockets only) and
    how many processes it started that still run."""
    sockets = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                sockets.add(target[len("socket:[") : -1])
    established = 0
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            established += fields[3] == "01" and fields[9] in sockets
    children = 0
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError):
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                children += 1
    return established, children


def test_a_person_plays_a_whole_match_at_the_terminal_and_cannot_play_illegally(tmp_path: Path) -> None:
    data = tmp_path / "data"
    terminal = Terminal(
        [sys.executable, "-m", "oddtrick", "play", "--game", "contract", "--deals", "2",
         "--seed", "a person plays", "--name", "ada", "--data-dir", str(data)],
        cwd=tmp_path,
    )  # fmt: skip
    asked = {"card": 0, "call": 0}
    refusals: list[str] = []
    try:
        screen = terminal.read_until(PROMPT)
        assert "you sit South; your partner North is heuristic-partner" in screen
        assert "your hand: ♠" in screen
        # The person and the sample bots are seats of the referee in its own process: no
        # connection to itself, no bot process.
        assert connections_and_children(terminal.process.pid) == (0, 0)
        while True:
            kind = PROMPT.search(screen)
            if kind is None:
                break
            asked[kind.group(1)] += 1
            choices = re.findall(r"\[(\d+)\] (\S+)", screen.rsplit(f"your {kind.group(1)}: ", 1)[1])
            assert choices, screen
            if asked[kind.group(1)] == 1:  # the first time, try what a person might mistype
                for wrong in ("QX", str(len(choices) + 1), "double" if kind.group(1) == "call" else "2♣"):
                    terminal.type(wrong)
                    refusal = terminal.read_until(PROMPT)
                    refusals.append(refusal.splitlines()[-2] if "\n" in refusal else refusal)
            terminal.type(choices[-1][1] if kind.group(1) == "card" else "1")
            screen = terminal.read_until(re.compile(r"your (card|call)> $|log: .*check .*\.jsonl\)\n"))
            if "log: " in screen:
                break
    finally:
        status = terminal.close()
    assert status == 0, screen
    assert "match over: you " in screen or "match over: drawn" in screen
    assert asked["call"] >= 1
    assert asked["card"] >= 1
    assert any("not a " in line for line in refusals), refusals
    assert any("is not one of the choices" in line for line in refusals), refusals
    assert len(refusals) >= 3
    assert all("your " not in line.split(">")[-1] for line in refusals)

    (log,) = sorted((data / "logs").glob("*.jsonl"))
    assert check_log(log).ok
    start = next(iter(read_log(log)))
    assert start["players"]["S"]["name"] == "ada"
    assert start["rules"]["untimed_seats"] == ["S"]
    human_actions = [r for r in read_log(log) if r["type"] == "action" and r["seat"] == "S"]
    assert human_actions
    assert all("fault" not in r for r in human_actions)  # nothing illegal got through, nothing timed out


def test_ctrl_d_at_the_prompt_stops_the_match_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    terminal = Terminal(
        [sys.executable, "-m", "oddtrick", "play", "--game", "classic", "--deals", "1",
         "--seed", "a person leaves", "--data-dir", str(data)],
        cwd=tmp_path,
    )  # fmt: skip
    try:
        terminal.read_until(PROMPT)
        os.write(terminal.master, b"\x04")  # Ctrl-D: end of input
        rest = terminal.read_until(re.compile(r"stopped \(end of input\): .*\n"))
    finally:
        status = terminal.close()
    assert status == 130
    assert "the match was abandoned; its log so far: " in rest
    # The match is stopped before the person's seat goes: no seat is seen to drop out of it.
    assert "lost its connection" not in rest, rest
    assert rest.splitlines()[-1].startswith("stopped (end of input)")  # on a line of its own
    (log,) = sorted((data / "logs").glob("*.jsonl"))
    assert str(log) in rest.replace("\n", "")
