"""A referee whose own process stops (SIGSTOP, a starved machine) does not charge the
bots for it: a decision whose deadline passed while the referee was not running is
extended by the time it stalled, and the match log has no time-out and checks out.

A real tournament (the referee) plays two ``cmd:`` bots as processes that take a
known time over each decision; the test stops the referee's process, not the bots',
for three times the deadline in the middle of the match, and lets it go on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_support import child

from oddtrick_referee.play.stall import BEAT_S, STALL_MIN_S, LoopLag

ROOT = Path(__file__).resolve().parents[1]
SLEEPY = ROOT / "tests" / "sleepy_bot.py"
SLEEP_MS = 100
"""Each bot's time per decision: the referee waits on a bot nearly all the time, so the
stop lands while a decision is open."""
DEADLINE_S = 1.0
STOP_S = 3 * DEADLINE_S
"""How long the referee's process is stopped: well past the open decision's deadline."""
HAND = 52
"""Decisions in a hand of classic whist: the log reaches the disk a hand at a time, so
the referee is stopped once the first hand is there, during the second."""
WAIT_S = 120.0
"""The bound on each wait for the referee process (a loaded machine is slow)."""


def _actions(data: Path) -> list[dict[str, object]]:
    """Every action line of every match log so far (a line being written is skipped)."""
    found = []
    for path in sorted((data / "logs").rglob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") == "action":
                found.append(record)
    return found


def _wait_for_actions(data: Path, process: subprocess.Popen[str], count: int) -> None:
    """Poll (the referee is another process) until its log has ``count`` actions."""
    give_up = time.monotonic() + WAIT_S
    while len(_actions(data)) < count:
        assert process.poll() is None, f"the tournament ended early: {process.communicate(timeout=WAIT_S)}"
        assert time.monotonic() < give_up, f"no {count} actions logged within {WAIT_S} s"
        time.sleep(0.05)


def test_a_stopped_referee_charges_no_time_out_and_its_log_checks(tmp_path: Path) -> None:
    data = tmp_path / "data"
    bot = f"cmd:{sys.executable} {SLEEPY} random {SLEEP_MS}"
    command = [
        sys.executable,
        "-m",
        "oddtrick",
        "tournament",
        "--game",
        "classic",
        "--deals",
        "2",
        "--no-duplicate",
        "--deadline",
        str(DEADLINE_S),
        "--clock",
        "30+0.5",
        "--bot",
        f"one={bot}",
        "--bot",
        f"two={bot}",
        "--data-dir",
        str(data),
        "--json",
    ]
    with child(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        _wait_for_actions(data, process, HAND)
        os.kill(process.pid, signal.SIGSTOP)  # the referee's process only: the bots run on
        try:
            time.sleep(STOP_S)  # the stall itself: what the test is about
        finally:
            os.kill(process.pid, signal.SIGCONT)
        out, err = process.communicate(timeout=WAIT_S)
        assert process.returncode == 0, err
    actions = _actions(data)
    assert len(actions) == 2 * HAND, f"two deals of classic whist are 104 decisions: {len(actions)}"
    faults = [action for action in actions if action.get("fault")]
    assert faults == [], f"the referee's own stall was charged to the bots: {faults}"
    assert "stalled" in err, f"the referee's log does not say it stalled: {err}"
    standings = json.loads(out)
    assert [entry["time"]["timeouts"] for entry in standings["entries"]] == [0, 0]
    check = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(data / "logs")],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_heartbeat_counts_a_stall_and_not_jitter() -> None:
    """A heartbeat a little late is jitter; one seconds late is a stall, counted from the
    moment the loop wakes, before the late heartbeat has run."""
    lag = LoopLag(now=10.0)
    lag.beat(10.0 + BEAT_S + STALL_MIN_S / 2)  # jitter
    assert lag.stalled(10.3) == 0.0
    last = 10.0 + BEAT_S + STALL_MIN_S / 2
    assert lag.stalled(last + 3.0) == pytest.approx(3.0 - BEAT_S)  # woken, not beaten yet
    lag.beat(last + 3.0)
    assert lag.stalled(last + 3.0) == pytest.approx(3.0 - BEAT_S)
    assert lag.stalled(last + 3.05) == pytest.approx(3.0 - BEAT_S)
