"""The sequential test (oddtrick sprt) and the statistics benchmark's checks,
in small fixed-seed versions."""

from __future__ import annotations

import importlib.util
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from oddtrick.sprt import SprtState, bounds, llr, run_sprt

ROOT = Path(__file__).resolve().parents[1]


def _benchmark() -> ModuleType:
    # Loaded under another name than "statistics", which would shadow the standard library's.
    spec = importlib.util.spec_from_file_location(
        "benchmark_statistics", ROOT / "benchmarks" / "statistics.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_bounds_are_from_walds_inequalities():
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05))
    assert upper == pytest.approx(math.log(1 / 0.05))
    lower, upper = bounds(0.01, 0.2)
    assert lower == pytest.approx(math.log(0.2))
    assert upper == pytest.approx(math.log(100))
    with pytest.raises(ValueError, match="between 0 and 1"):
        bounds(0, 0.05)


def test_llr_is_the_normal_log_likelihood_ratio_with_the_sample_variance():
    rng = random.Random(1)
    scores = [rng.gauss(0.3, 2.0) for _ in range(50)]
    mean = sum(scores) / len(scores)
    variance = sum((x - mean) ** 2 for x in scores) / (len(scores) - 1)

    def log_density(x: float, mu: float) -> float:
        return -((x - mu) ** 2) / (2 * variance)

    expected = sum(log_density(x, 0.5) - log_density(x, 0.0) for x in scores)
    got = llr(len(scores), sum(scores), sum(x * x for x in scores), 0.0, 0.5)
    assert got == pytest.approx(expected)


def test_no_decision_without_a_variance_or_before_the_minimum():
    state = SprtState(0.0, 0.5)
    for _ in range(29):
        state.add(1.0)  # every score the same: no variance, no evidence either way
    assert state.llr == 0.0
    assert state.verdict == "undecided"
    state.add(1.0)
    assert state.verdict == "identical"  # the minimum reached, all alike: said at once
    state.add(1.5)
    assert state.verdict != "identical"
    early = SprtState(0.0, 0.5, min_pairs=30)
    for score in (5.0, 6.0, 5.5):
        early.add(score)
    assert early.llr > early.upper
    assert early.verdict == "undecided"
    with pytest.raises(ValueError, match="must differ"):
        SprtState(0.5, 0.5)


def test_decides_for_the_true_hypothesis_and_stops_at_the_cap():
    rng = random.Random(2)
    high = run_sprt((rng.gauss(1.0, 2.0) for _ in range(10_000)), SprtState(0.0, 0.5), 10_000)
    assert high.verdict == "H1"
    low = run_sprt((rng.gauss(-0.5, 2.0) for _ in range(10_000)), SprtState(0.0, 0.5), 10_000)
    assert low.verdict == "H0"
    capped = run_sprt((rng.gauss(0.25, 2.0) for _ in range(10_000)), SprtState(0.0, 0.5), 40)
    assert capped.count == 40


def test_command_finds_the_heuristic_bot_better_than_random():
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "sprt",
            "--bot",
            f"heuristic={ROOT / 'sample_bots' / 'heuristic_bot.py'}",
            "--bot",
            f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--game",
            "classic",
            "--h0",
            "0",
            "--h1",
            "0.5",
            "--max-deals",
            "200",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    lines = result.stdout.splitlines()
    assert "bounds [-2.996, 2.996]" in lines[0]
    assert any("LLR" in line and "deal pairs" in line for line in lines[1:-1])
    assert lines[-1].startswith("H1 accepted (heuristic gains +0.5 rather than +0 points per deal")
    measured = float(lines[-1].split("measured ")[1].split()[0])
    assert measured == pytest.approx(float(lines[-2].split()[4]), abs=0.006)  # the last progress line's mean


def test_a_cap_below_the_minimum_says_why_there_is_no_verdict() -> None:
    result = subprocess.run(
        [
            sys.executable, "-m", "oddtrick", "sprt",
            "--bot", f"heuristic={ROOT / 'sample_bots' / 'heuristic_bot.py'}",
            "--bot", f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--game", "classic", "--max-deals", "3",
        ],
        capture_output=True, text=True, check=True, timeout=300,
    )  # fmt: skip
    last = result.stdout.splitlines()[-1]
    assert last.startswith("no verdict after 3 deal pairs (the cap): the test decides from 30 deal pairs on")
    assert "--max-deals 30 or more" in last


def test_command_says_at_once_that_identical_bots_play_identically():
    """Two copies of the deterministic heuristic bot score 0 on every deal pair:
    the command says so after the minimum of deal pairs, far short of the cap."""
    heuristic = ROOT / "sample_bots" / "heuristic_bot.py"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "sprt",
            "--bot",
            f"a={heuristic}",
            "--bot",
            f"b={heuristic}",
            "--game",
            "classic",
            "--max-deals",
            "2000",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    lines = result.stdout.splitlines()
    assert lines[-2].startswith("    30 deal pairs")
    assert lines[-1].startswith("no verdict: every one of the 30 deal pairs scored exactly 0")
    assert "play identically" in lines[-1]


SLEEPY = ROOT / "tests" / "sleepy_bot.py"


def _sprt(*arguments: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", "sprt", *arguments],
        capture_output=True,
        text=True,
        check=check,
        timeout=600,
    )


def test_command_plays_a_cmd_entry_through_a_referee_and_resumes(tmp_path):
    """A ``cmd:`` entry is a program the referee starts, as a tournament starts it: here a
    Python script of its own (it could be in any language); the test plays through a real
    referee under a clock, says so, and ends with the standings. Run again, it plays
    nothing new."""
    arguments = [
        "--bot",
        f"heuristic=cmd:{sys.executable} {SLEEPY} heuristic 0",
        "--bot",
        f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
        "--game",
        "classic",
        "--max-deals",
        "200",
        "--clock",
        "30+0.5",
        "--data-dir",
        str(tmp_path),
    ]
    first = _sprt(*arguments)
    lines = first.stdout.splitlines()
    assert "classic whist, through a referee" in lines[0]
    verdict = next(line for line in lines if line.startswith("H1 accepted"))
    assert verdict.startswith(
        "H1 accepted (heuristic gains +0.5 rather than +0 points per deal on random): measured +"
    )
    pairs = int(lines[lines.index(verdict) - 1].split()[0])
    assert lines[lines.index(verdict) + 2] == "Standings (duplicate)"
    heuristic_row = next(line for line in lines if line.startswith("1  heuristic"))
    assert f"  {pairs}  " in heuristic_row
    # Every deal pair is two matches at the referee, the cmd: entry's process in each.
    logs = sorted((tmp_path / "logs").rglob("*.jsonl"))
    assert len(logs) == 2 * pairs
    starts = [json.loads(log.read_text().split("\n")[0]) for log in logs]
    names = {player["name"] for start in starts for player in start["players"].values()}
    assert names == {"heuristic~0", "heuristic~1", "random~0", "random~1"}
    assert all(start["rules"]["clock"] == {"initial_ms": 30_000, "increment_ms": 500} for start in starts)
    assert "time control: 5 s a decision; clock 30+0.5" in first.stdout
    again = _sprt(*arguments)
    assert again.stdout.splitlines()[1:] == lines[1:]
    assert len(sorted((tmp_path / "logs").rglob("*.jsonl"))) == 2 * pairs


def test_command_stops_when_a_remote_entry_never_connects(tmp_path):
    result = _sprt(
        "--bot",
        f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
        "--remote",
        "absent",
        "--remote-wait",
        "1",
        "--data-dir",
        str(tmp_path),
        check=False,
    )
    assert result.returncode == 1
    assert "remote entry absent: connect with --server" in result.stderr
    assert (
        result.stdout.splitlines()[-1] == "no verdict after 0 deal pairs: absent did not connect within 1 s"
    )


@pytest.mark.parametrize(
    "arguments",
    [
        ["--bot", "a=sample_bots/random_bot.py"],
        ["--bot", "a=sample_bots/random_bot.py", "--bot", "b"],
        ["--bot", "a=nowhere.py", "--bot", "b=sample_bots/random_bot.py"],
        ["--bot", "a=sample_bots/random_bot.py", "--bot", "b=sample_bots/random_bot.py", "--h1", "0"],
    ],
    ids=["one bot", "no file", "missing file", "h0 equals h1"],
)
def test_command_refuses_bad_arguments(arguments):
    result = subprocess.run(
        [sys.executable, "-m", "oddtrick", "sprt", *arguments], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 2
    assert result.stderr.startswith("oddtrick sprt: ")


# ------------------------------------------------------------ the benchmark, small


@pytest.fixture(scope="module")
def figures() -> dict[str, float]:
    lines: list[str] = []
    result = _benchmark().main(["--quick"], say=lines.append)
    assert len(lines) == 6
    return result


def test_the_standings_interval_covers_zero_between_a_and_a(figures):
    # 100 tournaments of 10 deals: a 95% interval may miss a little either way.
    assert 0.88 <= figures["coverage_classic"] <= 1.0
    assert 0.88 <= figures["coverage_contract"] <= 1.0


def test_the_sprt_errors_stay_near_alpha_and_beta(figures):
    # 100 runs each: allow for the sampling error of a rate near 5%.
    assert figures["false_positive"] <= 0.10
    assert figures["power"] >= 0.88


def test_duplicate_needs_fewer_deals(figures):
    assert figures["ratio_classic"] > 1
    assert figures["ratio_contract"] > 1


@pytest.mark.parametrize("command", ["sprt", "analyze"])
def test_the_commands_have_help(command, capsys):
    from oddtrick._cli import main

    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    assert f"usage: oddtrick {command}" in capsys.readouterr().out
