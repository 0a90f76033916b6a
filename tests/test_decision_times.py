"""Think time and lag apart, where users look: the standings (text and ``--json``) of a
real tournament and ``oddtrick analyze``, with a bot that sleeps a known time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oddtrick._timing import DecisionTimes, Histogram, bucket

ROOT = Path(__file__).resolve().parents[1]
SLEEPY = ROOT / "tests" / "sleepy_bot.py"
SLEEP_MS = 50
DECISIONS = 2 * 2 * 2 * 13
"""Per entry: two tables (duplicate), two deals each, two seats, 13 cards a seat (classic)."""


def test_buckets_keep_three_significant_digits():
    assert [bucket(ms) for ms in (0, 7, 999, 1000, 1004, 1005, 12_345, 98_765)] == [
        0,
        7,
        999,
        1000,
        1000,
        1010,
        12_300,
        98_800,
    ]


def test_quantiles_are_nearest_rank_and_histograms_merge():
    first, second = Histogram(), Histogram()
    for ms in range(1, 51):
        first.add(ms)
    for ms in range(51, 101):
        second.add(ms)
    first.merge(second)
    assert first.total == 100
    assert (first.quantile(0.5), first.quantile(0.99), first.quantile(1.0)) == (50, 99, 100)
    assert Histogram.from_dict(first.to_dict()) == first
    assert Histogram().quantile(0.5) is None


def test_lag_is_the_referees_time_less_the_bots_own():
    times = DecisionTimes()
    times.add(55, 50)
    times.add(None, None)  # a time-out: nothing answered
    times.add(20, None)  # a bot that does not report its time
    assert (times.answer.total, times.think.total, times.lag.total) == (2, 1, 1)
    assert (times.think.quantile(0.5), times.lag.quantile(0.5)) == (50, 5)
    assert DecisionTimes.from_dict(json.loads(json.dumps(times.to_dict()))) == times


def _oddtrick(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *arguments],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def tournament(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, object]], str]:
    """A real tournament: a cmd: bot that sleeps SLEEP_MS before every answer against the
    random sample bot; its --json standings, then (the same command again, which plays
    nothing more) the text ones."""
    data = tmp_path_factory.mktemp("times")
    arguments = [
        "tournament",
        "--game",
        "classic",
        "--deals",
        "2",
        "--set-size",
        "2",
        "--bot",
        f"sleepy=cmd:{sys.executable} {SLEEPY} random {SLEEP_MS}",
        "--bot",
        f"quick={ROOT / 'sample_bots' / 'random_bot.py'}",
        "--data-dir",
        str(data),
    ]
    standings = json.loads(_oddtrick(*arguments, "--json").stdout)
    text = _oddtrick(*arguments).stdout
    entries = {entry["entry"]: entry for entry in standings["entries"]}
    return data, entries, text


def test_the_standings_json_has_think_time_and_lag_apart(tournament):
    _, entries, _ = tournament
    sleepy, quick = entries["sleepy"]["time"], entries["quick"]["time"]
    for figures in (sleepy, quick):
        assert figures["answered"] == figures["reported"] == DECISIONS
        assert figures["timeouts"] == 0
        assert figures["lag_ms"]["p50"] >= 0
        assert figures["answer_ms"]["p50"] >= figures["think_ms"]["p50"]
    # The sleep is the bot's own time, not lag; the quick bot thinks for far less.
    assert SLEEP_MS <= sleepy["think_ms"]["p50"] <= sleepy["think_ms"]["p99"]
    assert quick["think_ms"]["p50"] < SLEEP_MS
    assert sleepy["lag_ms"]["p50"] < SLEEP_MS


def test_the_standings_text_shows_the_time_columns(tournament):
    _, entries, text = tournament
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("entry") and "think p50" in line)
    assert header.split() == [
        "entry",
        "answered",
        "think",
        "p50",
        "think",
        "p99",
        "lag",
        "p50",
        "lag",
        "p99",
        "time-outs",
    ]
    rows = lines[lines.index(header) + 2 : lines.index(header) + 4]
    sleepy = next(row for row in rows if row.startswith("sleepy")).split()
    time = entries["sleepy"]["time"]
    assert sleepy == [
        "sleepy",
        str(DECISIONS),
        str(time["think_ms"]["p50"]),
        str(time["think_ms"]["p99"]),
        str(time["lag_ms"]["p50"]),
        str(time["lag_ms"]["p99"]),
        "0",
    ]
    assert any(line.startswith("time per decision in ms: think = the bot's own time") for line in lines)


def test_analyze_shows_think_time_and_lag_per_bot(tournament):
    pytest.importorskip("endplay")
    data, entries, _ = tournament
    logs = sorted(str(path) for path in (data / "logs").rglob("*.jsonl"))
    assert len(logs) == 2
    analysis = json.loads(_oddtrick("analyze", *logs, "--json", "--no-par").stdout)
    assert set(analysis["time"]) == {"sleepy", "quick"}
    # The logs hold every decision's times, the standings their buckets: the same figures here.
    assert analysis["time"]["sleepy"] == entries["sleepy"]["time"]
    text = _oddtrick("analyze", *logs, "--no-par").stdout.splitlines()
    header = text.index("Time per decision (ms)")
    assert text[header + 1].split()[:3] == ["bot", "answered", "think"]
    assert any(line.split()[:2] == ["sleepy", str(DECISIONS)] for line in text[header + 2 :])
