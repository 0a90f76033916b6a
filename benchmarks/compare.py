"""Run one benchmark on two source trees, alternating, in one sitting, and print both.

    python benchmarks/compare.py --rounds 2 OLD_TREE NEW_TREE referee.py -- --seconds 2

A shared machine's speed drifts from minute to minute, so figures measured an hour apart
compare nothing: this runs ``benchmarks/NAME`` of each tree (a ``git worktree`` of an
older commit, say, and this one) in turn, ``--rounds`` times each, with that tree's
``sdk`` and ``server`` first on ``PYTHONPATH`` (bot processes the benchmark starts
inherit it), and prints every ``name: value`` figure (and the CPU milliseconds per unit of work that a
benchmark reports for its own process on stderr) as the median of its rounds, old
beside new, with new / old. Benchmark arguments go after ``--``.

``--same-benchmark`` runs the new tree's benchmark file on both trees' code, for a
figure the old tree's copy of the benchmark did not print yet (it must still run
against the old code: the new file is what changed, not the API it calls).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

_CPU_LINE = re.compile(r"^\s+(.+?): cpu per ([\w ]+?): [\d.]+ ms in all, ([\d.]+) ms in this process", re.M)


def run_once(tree: Path, bench: Path, extra: list[str]) -> dict[str, float]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "sdk"), str(tree / "server")])
    done = subprocess.run(
        [sys.executable, str(bench), *extra],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    )
    figures = {}
    # The CPU a phase spent in the benchmark's own process per unit of work (stderr), which
    # a loaded machine moves less than the rates.
    # A label a benchmark reports twice (referee.py's "4 table(s)", folded then unfolded)
    # keeps both, the second as "... #2", rather than the last overwriting the first.
    for label, unit, ms in _CPU_LINE.findall(done.stderr):
        name = f"{label} cpu_ms_per_{unit.replace(' ', '_')}"
        repeat = 2
        while name in figures:
            name = f"{label} #{repeat} cpu_ms_per_{unit.replace(' ', '_')}"
            repeat += 1
        figures[name] = float(ms)
    for line in done.stdout.splitlines():
        name, colon, value = line.partition(":")
        if not colon:
            continue
        try:
            figures[name.strip()] = float(value.split()[0])
        except (ValueError, IndexError):
            continue
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="the tree measured first in each round")
    parser.add_argument("new", type=Path)
    parser.add_argument("bench", help="a benchmark's file name in benchmarks/, e.g. referee.py")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree, alternating (default 2)")
    parser.add_argument(
        "--same-benchmark",
        action="store_true",
        help="run the new tree's benchmark file on both trees (default: each tree's own)",
    )
    parser.add_argument("extra", nargs=argparse.REMAINDER, help="-- then the benchmark's own arguments")
    args = parser.parse_args()
    extra = args.extra[1:] if args.extra[:1] == ["--"] else args.extra
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for round_number in range(1, args.rounds + 1):
        for side in ("old", "new"):
            tree = getattr(args, side).resolve()
            bench = (args.new.resolve() if args.same_benchmark else tree) / "benchmarks" / args.bench
            print(f"round {round_number}: {side} ({tree})", file=sys.stderr, flush=True)
            runs[side].append(run_once(tree, bench, extra))
    # A figure only one tree prints (what the old code cannot do) is shown with "-" beside it.
    names = list(dict.fromkeys(name for run in runs["old"] + runs["new"] for name in run))
    print(f"{'figure':<44} {'old':>12} {'new':>12} {'new/old':>8}")
    for name in names:
        old = _median(runs["old"], name)
        new = _median(runs["new"], name)
        ratio = f"{new / old:.2f}" if old and new is not None else "-"
        print(f"{name:<44} {_shown(old):>12} {_shown(new):>12} {ratio:>8}")


def _median(runs: list[dict[str, float]], name: str) -> float | None:
    """The median of the rounds that printed ``name`` (None: none did)."""
    values = [run[name] for run in runs if name in run]
    return statistics.median(values) if values else None


def _shown(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    main()
