"""The time-outs benchmark (benchmarks/timeouts.py), small: its count of time-outs the
bots did not cause agrees with the referee's, and its interval is the exact one. The
figures themselves are the benchmark's to print, never a test's to judge."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def _benchmark() -> ModuleType:
    sys.path.insert(0, str(BENCHMARKS))  # it imports capacity.py and soak.py beside it
    try:
        spec = importlib.util.spec_from_file_location("benchmark_timeouts", BENCHMARKS / "timeouts.py")
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def test_the_interval_is_clopper_pearsons():
    interval = _benchmark().clopper_pearson
    low, high = interval(3, 10)
    assert low == pytest.approx(0.0667, abs=1e-4)
    assert high == pytest.approx(0.6525, abs=1e-4)
    low, high = interval(0, 324_240)
    assert low == 0
    assert high == pytest.approx(1 - 0.025 ** (1 / 324_240), rel=1e-6)


def test_every_time_out_is_counted_by_the_bot_that_answered_it():
    """A 1 ms deadline times out many decisions of bots that answer at once: the bots,
    real processes, count each one with their own time, as many as the referee made."""
    result = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "timeouts.py"),
            "--tables",
            "2",
            "--clients",
            "1",
            "--minutes",
            "0.05",
            "--deadline-ms",
            "1",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    figures = dict(line.split(": ", 1) for line in result.stdout.splitlines())
    timeouts = int(figures["timeouts"])
    assert int(figures["decisions"]) > timeouts > 0
    assert int(figures["timeouts_answered_by_bot"]) + int(figures["timeouts_unanswered"]) == timeouts
    assert figures["client_failures"] == "0"
    assert figures["other_faults"] == "0"
    assert "(95% Clopper-Pearson)" in figures["rate_not_thinking"]
    for name in ("answer_ms", "think_ms", "lag_ms", "referee_loop_lag_ms", "bots_loop_lag_ms"):
        assert figures[name].endswith("ms (p50/p99/p99.9/max)")
