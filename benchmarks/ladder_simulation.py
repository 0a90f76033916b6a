"""Why the ladder plays teams matches and rates them deal by deal: a simulation.

Run ``python benchmarks/ladder_simulation.py``. It prints, for each way of
forming and rating ladder matches, how many deals each entrant must play
before the leaderboard puts five entrants of different strength in their
true order in 90% of simulated ladders (``deals_to_rank_90pct_<format>``),
and the share of ladders in order at a few points on the way.

The model (docs/ladder.md says where its numbers come from): each entrant
has a strength in points per deal it plays at one seat; a table's result on
a deal for North-South is ``luck + strengths(NS) - strengths(EW) + noise``.
``luck`` (the cards) is shared by the two tables of a duplicate deal and
cancels in a teams match; ``noise`` (how the play went) is the table's own.
Five entrants are spaced ``--gap`` points apart, three house bots sit in the
middle, and the pairing and ratings are the ladder's own code
(``choose_lineup``, ``Rater``).

Formats compared:

* ``teams_by_deal`` (what the ladder does): two tables, eight entrants, the
  same cards both ways round; every deal rated as won, drawn or lost.
* ``teams_by_match``: the same matches, rated once per match on the total.
* ``one_table_by_deal``: no duplicate: one table of four entrants, each deal
  rated on its raw result (the luck of the cards included).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys

from oddtrick_referee.competitions.ladder.pairing import Candidate, choose_lineup
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings

ENTRANTS = ["e0", "e1", "e2", "e3", "e4"]
HOUSE = ["h0", "h1", "h2"]


def simulate(
    fmt: str, seed: int, matches: int, deals: int, gap: float, luck: float, noise: float
) -> list[bool]:
    """One ladder: whether the five entrants are in order after each match."""
    rng = random.Random(seed)
    # Rated by the match, openskill's own default beta (one game = one match) fits better.
    rater = Rater(RatingSettings(beta=25.0 / 6) if fmt == "teams_by_match" else RatingSettings())
    strength = {name: i * gap for i, name in enumerate(ENTRANTS)} | dict.fromkeys(HOUSE, 2 * gap)
    ratings = {name: Rating(25.0, 25.0 / 3) for name in strength}
    in_order = []
    for _ in range(matches):
        pool = [
            Candidate(name, 1, ratings[name].mu, 0, None, name in HOUSE)
            for name in rng.sample(sorted(strength), 8)
        ]
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        one = lineup.tables[0]
        if fmt == "one_table_by_deal":
            team_a = [one[s] for s in one if s.side == 0]
            team_b = [one[s] for s in one if s.side == 1]
            edge = sum(strength[n] for n in team_a) - sum(strength[n] for n in team_b)
            scores = [round(edge + rng.gauss(0, luck) + rng.gauss(0, noise)) for _ in range(deals)]
        else:
            team_a, team_b = list(lineup.team_a), list(lineup.team_b)
            edge = sum(strength[n] for n in team_a) - sum(strength[n] for n in team_b)
            scores = [round(edge + rng.gauss(0, noise) - rng.gauss(0, noise)) for _ in range(deals)]
        if fmt == "teams_by_match":
            scores = [sum(scores)]
        new_a, new_b = rater.rate_match([ratings[n] for n in team_a], [ratings[n] for n in team_b], scores)
        ratings.update(zip(team_a, new_a, strict=True))
        ratings.update(zip(team_b, new_b, strict=True))
        order = sorted(ENTRANTS, key=lambda n: rater.conservative(ratings[n]))
        in_order.append(order == ENTRANTS)
    return in_order


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=60, help="simulated ladders per format (default 60)")
    parser.add_argument("--matches", type=int, default=250, help="matches per simulated ladder (default 250)")
    parser.add_argument("--deals", type=int, default=8, help="deals per match (default 8, as the ladder)")
    parser.add_argument(
        "--gap", type=float, default=1.0, help="points per deal between neighbours (default 1)"
    )
    parser.add_argument("--luck", type=float, default=6.5, help="sd of the cards' luck per table-deal")
    parser.add_argument("--noise", type=float, default=5.0, help="sd of the play's noise per table-deal")
    args = parser.parse_args()
    checkpoints = [m for m in (10, 25, 50, 100, 150, 200, 250, 400) if m <= args.matches]
    for fmt in ("teams_by_deal", "teams_by_match", "one_table_by_deal"):
        print(f"simulating {fmt} ...", file=sys.stderr, flush=True)
        runs = [
            simulate(fmt, seed, args.matches, args.deals, args.gap, args.luck, args.noise)
            for seed in range(args.runs)
        ]
        share = [statistics.mean(run[m - 1] for run in runs) for m in range(1, args.matches + 1)]
        # Deals (per entrant) until at least 90% of ladders are in order from then on.
        needed = next((m for m in range(1, args.matches + 1) if min(share[m - 1 :]) >= 0.9), None)
        deals = f"{needed * args.deals}" if needed is not None else f"> {args.matches * args.deals}"
        print(f"deals_to_rank_90pct_{fmt}: {deals}")
        for m in checkpoints:
            print(f"in_order_after_{m}_matches_{fmt}: {share[m - 1]:.2f}")


if __name__ == "__main__":
    main()
