"""How many deals each measure needs to order bots of known strength: points vs double-dummy loss.

    python benchmarks/dd_skill.py                          # classic Whist, 16 deals a match
    python benchmarks/dd_skill.py --deals 24 --think 0.3 --game contract

Plays one ``oddtrick tournament --dd-skill`` as a user would (a referee on a
socket, every entry its own process, duplicate deals) between three sample
bots whose order of strength is known: random < heuristic < strong (the PIMC
bot, at ``--think`` seconds a card). Then, on the same deals, it compares the
standings' two measures:

* points per deal (the standings' ranking: own points minus the opponent's,
  a duplicate deal's two plays averaged), higher is better;
* the double-dummy loss per deal (``--dd-skill``: the tricks the entry's cards
  lost against the best card with all hands known), lower is better.

For each measure and each number of deals n it draws n of each entry's deals
(with replacement, 1,000 times) and counts how often the three means come
out in the known order; ``deals_to_order_90pct_<measure>`` is the smallest n
from which that happens at least 90% of the time. Where the tournament is too
short for that, ``normal_estimate`` gives the n at which two Gaussian means,
with the spreads and gaps measured here, would be ordered with 90%
probability (both neighbour pairs), and says so. Deals are drawn for each
entry apart, although a deal of a match scores both its entries (one's gain
is the other's loss): the figure is what the standings' per-entry means and
intervals can tell, which is how the standings read.

This is a measurement, not a test: it prints figures (docs/standings.md
quotes them). It needs the ``strong`` extra.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Hashable
from pathlib import Path
from statistics import NormalDist
from typing import Any

from oddtrick_referee.competitions.scoring.dd_skill_logs import missing_extra, tournament_dd_samples
from oddtrick_referee.storage.tournament_store import TournamentStore

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sdk" / "oddtrick" / "bots"
ORDER = ["random", "heuristic", "strong"]
"""Weakest first."""


def points_samples(data_dir: Path, tournament_id: str) -> dict[str, dict[Hashable, float]]:
    """Per entry, per deal (match key, set, deal number): its duplicate deal score."""
    margins: dict[str, dict[Hashable, list[int]]] = {}
    for play in TournamentStore(data_dir / "oddtrick.sqlite3").deal_results(tournament_id):
        deal = (play.match, play.set_number, play.deal_number)
        margin = play.ns_points - play.ew_points
        for entry, sign in ((play.ns_entry, 1), (play.ew_entry, -1)):
            margins.setdefault(entry, {}).setdefault(deal, []).append(sign * margin)
    return {
        entry: {deal: statistics.fmean(values) for deal, values in deals.items()}
        for entry, deals in margins.items()
    }


def in_order_share(samples: dict[str, list[float]], n: int, higher_better: bool, rng: random.Random) -> float:
    """How often n deals drawn per entry put the three means in the known order."""
    hits = 0
    draws = 1000
    for _ in range(draws):
        means = [statistics.fmean(rng.choices(samples[name], k=n)) for name in ORDER]
        ordered = all((b > a) if higher_better else (b < a) for a, b in itertools.pairwise(means))
        hits += ordered
    return hits / draws


def deals_needed(samples: dict[str, list[float]], higher_better: bool, rng: random.Random) -> int | None:
    """The smallest n (up to what every entry played) from which 90% of draws are in order."""
    most = min(len(values) for values in samples.values())
    shares = {n: in_order_share(samples, n, higher_better, rng) for n in range(1, most + 1)}
    return next((n for n in shares if all(shares[m] >= 0.9 for m in shares if m >= n)), None)


def normal_estimate(
    samples: dict[str, list[float]], higher_better: bool, order: list[str] = ORDER
) -> float | None:
    """Deals per entry at which Gaussian means with these spreads and gaps are in ``order``
    with probability 0.9 (None if a gap points the wrong way or is nil)."""
    sign = 1.0 if higher_better else -1.0
    pairs = []
    for a, b in itertools.pairwise(order):
        gap = sign * (statistics.fmean(samples[b]) - statistics.fmean(samples[a]))
        spread = math.hypot(statistics.stdev(samples[a]), statistics.stdev(samples[b]))
        if gap <= 0:
            return None
        pairs.append((gap, spread))

    def chance(n: float) -> float:
        return math.prod(NormalDist().cdf(gap * math.sqrt(n) / spread) for gap, spread in pairs)

    low, high = 1.0, 1e7
    if chance(high) < 0.9:
        return None
    while high - low > 0.5:
        middle = (low + high) / 2
        low, high = (middle, high) if chance(middle) < 0.9 else (low, middle)
    return high


def play(args: argparse.Namespace, work: Path) -> tuple[str, dict[str, Any]]:
    """The tournament, as a user runs it; its id and its JSON standings."""
    strong = work / "strong_entry.py"
    strong.write_text(
        "from oddtrick.bots.pimc_bot import PimcBot\n\n\n"
        f"class Strong(PimcBot):\n    think_seconds = {args.think!r}\n",
        encoding="utf-8",
    )
    command = [
        sys.executable, "-m", "oddtrick", "tournament",
        "--game", args.game, "--deals", str(args.deals), "--tables", str(args.tables),
        "--seed", args.seed, "--name", "dd-skill",
        "--bot", f"random={BOTS / 'random_bot.py'}:RandomBot",
        "--bot", f"heuristic={BOTS / 'heuristic_bot.py'}:HeuristicBot",
        "--bot", f"strong={strong}:Strong",
        "--data-dir", str(work / "data"), "--dd-skill", "--json",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"the tournament failed: {result.stderr.strip().splitlines()[-3:]}")
    return "dd-skill", json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--game", choices=["classic", "contract"], default="classic", help="default classic")
    parser.add_argument(
        "--deals", type=int, default=16, help="deals per match, each played twice (default 16)"
    )
    parser.add_argument(
        "--think", type=float, default=0.2, help="the strong bot's seconds a card (default 0.2)"
    )
    parser.add_argument(
        "--tables", type=int, default=1, help="tables at once (default 1: the machine is shared)"
    )
    parser.add_argument("--seed", default="dd-skill-1", help="the tournament's seed")
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep the tournament's data in DIR (default: a temporary folder); run again with the "
        "same DIR and options and the tournament is resumed, so nothing is played twice",
    )
    args = parser.parse_args()
    if (problem := missing_extra()) is not None:
        raise SystemExit(problem)
    if args.deals < 2 or args.think <= 0 or args.tables < 1:
        parser.error("--deals must be at least 2, --think above 0, --tables at least 1")
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="dd-skill-") as folder:
        work = args.keep or Path(folder)
        work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        tournament_id, standings = play(args, work)
        played = time.perf_counter() - started
        points = points_samples(work / "data", tournament_id)
        lost = tournament_dd_samples(work / "data", tournament_id, ORDER)
    per_measure = {
        "points": ({name: list(points[name].values()) for name in ORDER}, True),
        "dd_loss": ({name: list(lost[name].values()) for name in ORDER}, False),
    }
    print(
        f"{args.game}, {args.deals} deals a match (each twice), strong bot at {args.think:g} s a card; "
        f"tournament {played:.0f} s"
    )
    for row in standings["entries"]:
        skill = row.get("dd_skill") or {}
        ci = skill.get("ci95") or [math.nan, math.nan]
        print(
            f"  {row['entry']:<10} points/deal {row['points_per_deal']:+.2f} "
            f"[{row['ci95'][0]:+.2f}, {row['ci95'][1]:+.2f}]   "
            f"DD lost/deal {skill.get('lost_per_deal', math.nan):.2f} "
            f"[{ci[0]:.2f}, {ci[1]:.2f}]   deals {row['deals']}"
        )
    for measure, (samples, higher_better) in per_measure.items():
        most = min(len(values) for values in samples.values())
        needed = deals_needed(samples, higher_better, rng)
        estimate = normal_estimate(samples, higher_better)
        print(
            f"deals_to_order_90pct_{measure}: {needed if needed is not None else f'> {most}'}"
            f"  (normal_estimate {'wrong order' if estimate is None else f'{estimate:.0f}'}; "
            f"in order with all {most} deals: {in_order_share(samples, most, higher_better, rng):.2f})"
        )
        for a, b in itertools.pairwise(ORDER):
            estimate = normal_estimate(samples, higher_better, [a, b])
            print(
                f"  {a} < {b}: normal_estimate "
                f"{'wrong order' if estimate is None else f'{estimate:.0f}'} deals for 90%"
            )


if __name__ == "__main__":
    main()
