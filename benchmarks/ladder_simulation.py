"""How soon the ladder places its entrants: a simulation, old and new rating side by side.

Run ``python benchmarks/ladder_simulation.py`` (about a minute with the
defaults). For each way of rating ladder matches it prints how many deals
each entrant must play before the leaderboard puts five entrants of
different strength in their true order in 90% of simulated ladders and
stays so (``deals_to_rank_90pct_<way>``, with a 90% bootstrap interval over
the simulated ladders), and the share of ladders in order at a few points
on the way; at the end the same figures with the ways side by side, one
column each. Every way is run on the same seeds, so the same simulated
entrants and, as far as the pairing allows, the same luck.

Ways compared (``--ways``):

* ``outcome`` (the ladder before): teams of four at two tables, every deal
  rated as won, drawn or lost by openskill (``RatingSettings(method="outcome")``).
* ``margin`` (what the ladder does): the same matches, every deal's
  duplicate score rated as a measurement of the teams' difference in points
  (``RatingSettings()``).
* ``outcome_by_match``: rated once per match on the total, by openskill.
* ``outcome_one_table``: no duplicate: one table of four entrants, each deal
  rated on its raw result, luck of the cards included.

The model and its assumptions (docs/ladder.md repeats them):

* Each entrant has a fixed strength in points per deal it plays at one seat;
  a table's North-South result on a deal is
  ``luck + strengths(NS) - strengths(EW) + noise``. Strengths add up across
  partners (no partnership is better or worse than its two members) and do
  not change during a ladder (no bot is improved meanwhile; ``tau`` is added
  all the same).
* ``luck`` (the cards, sd ``--luck`` 6.5) is shared by the two tables of a
  duplicate deal and cancels exactly in a teams match; in the real game the
  Contract Whist auction is played afresh at each table, so some luck
  remains and the real ladder is somewhat slower.
* ``noise`` (how the play went, sd ``--noise`` 5 per table and deal) is
  Gaussian and independent between tables and deals. Both figures were
  measured with the sample bots (6.5 is the spread of one table's result
  between identical heuristic bots, where only the cards differ). Real
  scores are whole points between -13 and 13, so they are rounded.
* Five entrants are spaced ``--gap`` points per deal apart (the heuristic
  sample bot is about 4 points per deal and seat better than the random one);
  three house bots of the middle strength fill the other seats, so every
  match seats all eight: the pairing decides only the teams and seats.
* The pairing and the ratings are the ladder's own code (``choose_lineup``,
  ``Rater``); every entrant starts at the ladder's initial rating.
* A ladder is "in order" when the five entrants' conservative ratings
  (``mu - 3 sigma``) are in their true order, whatever their provisional
  marks; the house bots' places are not counted.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

from oddtrick_referee.competitions.ladder.pairing import Candidate, choose_lineup
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings

ENTRANTS = ["e0", "e1", "e2", "e3", "e4"]
HOUSE = ["h0", "h1", "h2"]
WAYS = {
    "outcome": RatingSettings(method="outcome"),
    "margin": RatingSettings(),
    # Rated by the match, openskill's own default beta (one game = one match) fits better.
    "outcome_by_match": RatingSettings(method="outcome", beta=25.0 / 6),
    "outcome_one_table": RatingSettings(method="outcome"),
}


def simulate(
    way: str, seed: int, matches: int, deals: int, gap: float, luck: float, noise: float
) -> list[bool]:
    """One ladder: whether the five entrants are in order after each match."""
    rng = random.Random(seed)
    settings = WAYS[way]
    rater = Rater(settings)
    strength = {name: i * gap for i, name in enumerate(ENTRANTS)} | dict.fromkeys(HOUSE, 2 * gap)
    ratings = {name: Rating(settings.mu, settings.sigma) for name in strength}
    in_order = []
    for _ in range(matches):
        pool = [
            Candidate(name, 1, ratings[name].mu, 0, None, name in HOUSE)
            for name in rng.sample(sorted(strength), 8)
        ]
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        one = lineup.tables[0]
        if way == "outcome_one_table":
            team_a = [one[s] for s in one if s.side == 0]
            team_b = [one[s] for s in one if s.side == 1]
            edge = sum(strength[n] for n in team_a) - sum(strength[n] for n in team_b)
            scores = [round(edge + rng.gauss(0, luck) + rng.gauss(0, noise)) for _ in range(deals)]
        else:
            team_a, team_b = list(lineup.team_a), list(lineup.team_b)
            edge = sum(strength[n] for n in team_a) - sum(strength[n] for n in team_b)
            scores = [round(edge + rng.gauss(0, noise) - rng.gauss(0, noise)) for _ in range(deals)]
        if way == "outcome_by_match":
            scores = [sum(scores)]
        new_a, new_b = rater.rate_match([ratings[n] for n in team_a], [ratings[n] for n in team_b], scores)
        ratings.update(zip(team_a, new_a, strict=True))
        ratings.update(zip(team_b, new_b, strict=True))
        order = sorted(ENTRANTS, key=lambda n: rater.conservative(ratings[n]))
        in_order.append(order == ENTRANTS)
    return in_order


def matches_to_90(runs: list[list[bool]]) -> int | None:
    """Matches until at least 90% of the ladders are in order from then on (None: never)."""
    length = len(runs[0])
    share = [statistics.mean(run[m] for run in runs) for m in range(length)]
    tail_min = share[:]
    for m in range(length - 2, -1, -1):
        tail_min[m] = min(share[m], tail_min[m + 1])
    return next((m + 1 for m in range(length) if tail_min[m] >= 0.9), None)


def interval(runs: list[list[bool]], rng: random.Random, resamples: int = 200) -> tuple[float, float]:
    """A 90% bootstrap interval (over the simulated ladders) of ``matches_to_90``; a
    resample that never gets there counts as the simulation's length."""
    length = len(runs[0])
    found = sorted(matches_to_90([rng.choice(runs) for _ in runs]) or length for _ in range(resamples))
    return found[int(0.05 * resamples)], found[int(0.95 * resamples) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=40, help="simulated ladders per way (default 40)")
    parser.add_argument("--matches", type=int, default=200, help="matches per simulated ladder (default 200)")
    parser.add_argument("--deals", type=int, default=8, help="deals per match (default 8, as the ladder)")
    parser.add_argument(
        "--gap", type=float, default=1.0, help="points per deal between neighbours (default 1)"
    )
    parser.add_argument("--luck", type=float, default=6.5, help="sd of the cards' luck per table-deal")
    parser.add_argument("--noise", type=float, default=5.0, help="sd of the play's noise per table-deal")
    parser.add_argument(
        "--ways",
        default="outcome,margin",
        help=f"comma-separated ways to compare, of {', '.join(WAYS)} (default outcome,margin)",
    )
    args = parser.parse_args()
    ways = [w.strip() for w in args.ways.split(",") if w.strip()]
    unknown = [w for w in ways if w not in WAYS]
    if unknown or args.runs < 1 or args.matches < 1 or args.deals < 1:
        parser.error(
            f"unknown way(s) {', '.join(unknown)}" if unknown else "runs, matches, deals must be >= 1"
        )
    checkpoints = [m for m in (10, 25, 50, 100, 150, 200, 250, 400) if m <= args.matches]
    rng = random.Random(0)
    summary: dict[str, list[str]] = {}
    for way in ways:
        print(f"simulating {way} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        runs = [
            simulate(way, seed, args.matches, args.deals, args.gap, args.luck, args.noise)
            for seed in range(args.runs)
        ]
        needed = matches_to_90(runs)
        low, high = interval(runs, rng)
        shown = f"{needed * args.deals}" if needed is not None else f"> {args.matches * args.deals}"
        spent = time.perf_counter() - started
        between = f"{low * args.deals}-{high * args.deals}{'+' if high >= args.matches else ''}"
        spent_text = f"{args.runs} ladders, {spent:.0f} s"
        print(f"deals_to_rank_90pct_{way}: {shown}  (90% interval {between}, {spent_text})")
        shares = [statistics.mean(run[m - 1] for run in runs) for m in checkpoints]
        for m, share in zip(checkpoints, shares, strict=True):
            print(f"in_order_after_{m}_matches_{way}: {share:.2f}")
        summary[way] = [*(f"{share:.2f}" for share in shares), shown, between]
    print_side_by_side(summary, [*(f"after {m}" for m in checkpoints), "deals to 90%", "interval"])


def print_side_by_side(summary: dict[str, list[str]], rows: list[str]) -> None:
    """The ways as columns, the share in order at each checkpoint and the figure as rows."""
    width = max(12, *(len(way) + 2 for way in summary))
    print()
    print(f"{'share of ladders in order':<26}" + "".join(f"{way:>{width}}" for way in summary))
    for number, label in enumerate(rows):
        print(f"{label:<26}" + "".join(f"{cells[number]:>{width}}" for cells in summary.values()))


if __name__ == "__main__":
    main()
