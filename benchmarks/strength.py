"""How strong the strong bot is where bots really play: through the referee, on its clock.

    python benchmarks/strength.py                                   # both games, against the heuristic bot
    python benchmarks/strength.py --game classic --opponent random --deals 100 --tables 2
    python benchmarks/strength.py --think 0.5 --deadline 5          # less thinking, the default deadline

Each measurement is an ``oddtrick tournament`` run, as a user would start
one: a referee on a socket, every entry its own bot process, duplicate deals
(each played twice with the partnerships swapped), the referee's decision
deadline enforced, a time-out played as the referee's fallback. It prints
the strong bot's points per deal against the opponent with the standings' 95%
interval (docs/standings.md), the time-outs of both entries over their
decisions, the slowest answer the referee timed, and the machine's load
(1-minute load average, sampled every 5 s) while it ran. This is a
measurement, not a test: it prints figures, the README quotes them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from oddtrick_referee.play.matchlog import read_log

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sdk" / "oddtrick" / "bots"
OPPONENTS = {"heuristic": BOTS / "heuristic_bot.py:HeuristicBot", "random": BOTS / "random_bot.py:RandomBot"}


class LoadSampler:
    """The 1-minute load average every ``every`` seconds, in a thread, while a run lasts."""

    def __init__(self, every: float = 5.0) -> None:
        self.samples: list[float] = [os.getloadavg()[0]]
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> str:
        mean = sum(self.samples) / len(self.samples)
        low, high = min(self.samples), max(self.samples)
        return f"load {low:.1f}-{high:.1f} (mean {mean:.1f}) on {os.cpu_count()} cores"


def decisions_by_entry(data_dir: Path) -> dict[str, dict[str, int]]:
    """Per entry, over every match log: decisions asked, time-outs, and the slowest
    answer the referee timed (ms)."""
    counts: dict[str, dict[str, int]] = {}
    for path in sorted((data_dir / "logs").rglob("*.jsonl")):
        records = list(read_log(path))
        players = next(r for r in records if r["type"] == "match_start")["players"]
        for record in records:
            if record["type"] != "action":
                continue
            entry = players[record["seat"]]["name"].split("~")[0]
            row = counts.setdefault(entry, {"decisions": 0, "timeouts": 0, "slowest_ms": 0})
            row["decisions"] += 1
            row["timeouts"] += record.get("fault") == "timeout"
            row["slowest_ms"] = max(row["slowest_ms"], record["think_ms"] or 0)
    return counts


def measure(game: str, opponent: str, args: argparse.Namespace, out: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="strength-") as folder:
        work = Path(folder)
        bot = work / "pimc_entry.py"
        bot.write_text(
            "from oddtrick.bots.pimc_bot import PimcBot\n\n\n"
            f"class Pimc(PimcBot):\n    think_seconds = {args.think!r}\n",
            encoding="utf-8",
        )
        command = [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--game",
            game,
            "--deals",
            str(args.deals),
            "--tables",
            str(args.tables),
            "--deadline",
            str(args.deadline),
            "--seed",
            f"{args.seed}-{game}",
            "--bot",
            f"pimc={bot}:Pimc",
            "--bot",
            f"{opponent}={OPPONENTS[opponent]}",
            "--data-dir",
            str(work / "data"),
            "--json",
        ]
        started = time.perf_counter()
        with LoadSampler() as load:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        if result.returncode != 0:
            raise SystemExit(f"the tournament failed: {result.stderr.strip().splitlines()[-1:]}")
        entries = {entry["entry"]: entry for entry in json.loads(result.stdout)["entries"]}
        counts = decisions_by_entry(work / "data")
    pimc = entries["pimc"]
    low, high = pimc["ci95"]
    faults = {name: sum(entry["faults"].values()) for name, entry in entries.items()}
    figures = {
        "game": game,
        "opponent": opponent,
        "deals": pimc["deals"],
        "points_per_deal": pimc["points_per_deal"],
        "ci95": [low, high],
        "think": args.think,
        "deadline": args.deadline,
        "decisions": counts,
        "faults": faults,
        "load": load.samples,
        "seconds": seconds,
    }
    if out is not None:
        with out.open("a", encoding="utf-8") as file:
            file.write(json.dumps(figures) + "\n")
    own, theirs = counts.get("pimc", {}), counts.get(opponent, {})
    print(
        f"pimc vs {opponent}, {game}: {pimc['points_per_deal']:+.2f} points per deal, 95% CI "
        f"[{low:+.2f}, {high:+.2f}], {pimc['deals']} deal pairs through the referee "
        f"(deadline {args.deadline:g} s, think {args.think:g} s a card, {2 * args.think:g} s a call); "
        f"time-outs: pimc {own.get('timeouts', 0)} in {own.get('decisions', 0)} decisions "
        f"(slowest {own.get('slowest_ms', 0)} ms), {opponent} {theirs.get('timeouts', 0)} in "
        f"{theirs.get('decisions', 0)}; all faults {faults}; {load.summary()}; {seconds:.0f} s",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", choices=["classic", "contract"], action="append", help="default: both")
    parser.add_argument("--opponent", choices=sorted(OPPONENTS), action="append", help="default: heuristic")
    parser.add_argument("--deals", type=int, default=40, help="deal pairs per measurement (default 40)")
    parser.add_argument(
        "--think", type=float, default=1.0, help="the strong bot's seconds per card (default 1, its own)"
    )
    parser.add_argument(
        "--deadline", type=float, default=5.0, help="the referee's seconds per decision (default 5)"
    )
    parser.add_argument("--tables", type=int, default=2, help="tables at once (default 2)")
    parser.add_argument("--seed", default="strength", help="the tournaments' master seed prefix")
    parser.add_argument("--out", type=Path, help="append each measurement's figures here (JSON lines)")
    args = parser.parse_args()
    for game in args.game or ["classic", "contract"]:
        for opponent in args.opponent or ["heuristic"]:
            measure(game, opponent, args, args.out)


if __name__ == "__main__":
    main()
