"""How strong a bot is: points per duplicate deal against others, with a 95% interval.

    python benchmarks/strength.py                       # pimc against heuristic and random, both games
    python benchmarks/strength.py --game classic --opponent heuristic --deals 100 --jobs 2

Each deal is played twice in this process (oddtrick.duplicate: same cards,
partnerships swapped, fresh bots each play) and scored as the standings score
a deal; the interval is the standings' (mean ± t·s/√n over deal pairs). This
is a measurement, not a test: it prints figures, the README quotes them.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.bots.pimc_bot import PimcBot
from oddtrick.bots.random_bot import RandomBot
from oddtrick.duplicate import deal_config, play_pair
from oddtrick_referee.competitions.standings import t_quantile

ROOT = Path(__file__).resolve().parent.parent

OPPONENTS: dict[str, type[Any]] = {"heuristic": HeuristicBot, "random": RandomBot}


def _pimc(think: float) -> type[PimcBot]:
    return type("PimcBot", (PimcBot,), {"think_seconds": think})


def _pair(task: tuple[str, str, float, str]) -> float:
    game, opponent, think, seed = task
    return play_pair(_pimc(think), OPPONENTS[opponent], deal_config(game), seed).score


def interval(scores: list[float]) -> tuple[float, float, float]:
    mean = statistics.fmean(scores)
    half = t_quantile(0.975, len(scores) - 1) * statistics.stdev(scores) / math.sqrt(len(scores))
    return mean, mean - half, mean + half


def measure(
    game: str, opponent: str, deals: int, think: float, jobs: int, prefix: str, out: Path | None
) -> None:
    tasks = [(game, opponent, think, f"{prefix}-{game}-{index}") for index in range(deals)]
    started = time.perf_counter()
    scores: list[float] = []
    with ProcessPoolExecutor(jobs) as pool:
        for score in pool.map(_pair, tasks):
            scores.append(score)
            if len(scores) % 10 == 0 or len(scores) == deals:
                mean = statistics.fmean(scores)
                print(f"  {game} vs {opponent}: {len(scores)}/{deals} deal pairs, {mean:+.2f}", flush=True)
    if out is not None:
        with out.open("a", encoding="utf-8") as file:
            file.write(
                json.dumps({"game": game, "opponent": opponent, "think": think, "scores": scores}) + "\n"
            )
    mean, low, high = interval(scores)
    seconds = time.perf_counter() - started
    print(
        f"pimc vs {opponent}, {game}: {mean:+.2f} points per deal, 95% CI [{low:+.2f}, {high:+.2f}], "
        f"{deals} deal pairs, think {think:g} s, {seconds:.0f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", choices=["classic", "contract"], action="append")
    parser.add_argument("--opponent", choices=sorted(OPPONENTS), action="append")
    parser.add_argument("--deals", type=int, default=100, help="deal pairs per measurement (default 100)")
    parser.add_argument("--think", type=float, default=0.5, help="pimc's seconds per decision (default 0.5)")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--seed", default="strength", help="prefix of the deals' seeds")
    parser.add_argument("--out", type=Path, help="append each run's deal scores to this file (JSON lines)")
    args = parser.parse_args()
    for game in args.game or ["classic", "contract"]:
        for opponent in args.opponent or ["heuristic", "random"]:
            measure(game, opponent, args.deals, args.think, args.jobs, args.seed, args.out)


if __name__ == "__main__":
    main()
