"""Do the numbers we print mean what they say? Simulations on the rules engine.

    python benchmarks/statistics.py            # the full run (a few minutes)
    python benchmarks/statistics.py --quick    # the small version the tests run

Three checks, all in this process (no referee, no sockets):

1. **The standings' 95% interval.** Many A-vs-A tournaments of two identical
   bots (the random bot's policy: uniform over legal actions) on duplicate
   deals, each scored by the standings code itself (compute_standings, as in
   docs/standings.md): the interval of A's points per deal should cover the
   true difference, zero, in about 95% of them.
2. **The sequential test.** Deal scores drawn (with replacement) from a pool
   of real A-vs-A paired deal scores, shifted to a true mean of h0 or h1: the
   share of runs accepting H1 under H0 (false positives, at most alpha) and
   under H1 (the power, at least 1 − beta), with the default min_pairs. The
   runs are split over several seeds of the resampling; each seed's rate is
   printed, and the pooled rate with its 95% Wilson score interval, so that a
   rate is never quoted from one seeded run alone.
3. **What duplicate buys.** The heuristic bot against the random bot with and
   without duplicate: the fewest deals n for which the 95% interval
   mean ± t(0.975, n − 1) · s / √n, with the mean and standard deviation s
   measured, excludes zero; for each, and their ratio.
"""

if __name__ == "statistics":  # pragma: no cover
    # A script in benchmarks/ imported the standard library's statistics and,
    # the script's own directory coming first on sys.path, found this file:
    # hand it the real module instead.
    import sys as _sys
    from pathlib import Path as _Path

    _here = _Path(__file__).resolve().parent
    _path = _sys.path[:]
    _sys.path[:] = [entry for entry in _path if _Path(entry or ".").resolve() != _here]
    del _sys.modules["statistics"]
    import statistics as _real

    _sys.path[:] = _path
    _sys.modules["statistics"] = _real
else:
    import argparse
    import math
    import random
    import time
    from collections.abc import Callable
    from pathlib import Path

    ROOT = Path(__file__).resolve().parent.parent

    from oddtrick.bots.heuristic_bot import HeuristicBot
    from oddtrick.bots.random_bot import RandomBot
    from oddtrick.duplicate import deal_config, play_deal, play_pair
    from oddtrick.rules import GameConfig, GameState, Side
    from oddtrick.sprt import SprtState
    from oddtrick_referee.competitions.scoring.standings import DealResult, compute_standings, t_quantile

    def random_points(config: GameConfig, seed: str, rng: random.Random) -> list[tuple[int, int]]:
        """One deal played twice by four random players (the rules engine alone,
        no views: the fastest way to play): each table's NS and EW points."""
        points = []
        for _table in (0, 1):
            state = GameState(config, seed)
            while state.match_result is None:
                state.apply(rng.choice(state.legal_actions))
            (result,) = state.hand_results
            points.append((result.points[0] + result.honours[0], result.points[1] + result.honours[1]))
        return points

    def a_vs_a_tournament(
        config: GameConfig, number: int, pairs: int
    ) -> tuple[tuple[float, float], list[float]]:
        """A duplicate match between two identical random bots, scored by the
        standings code: A's 95% interval, and A's paired deal scores."""
        rng = random.Random(f"a-vs-a-{number}")
        results = []
        scores = []
        for deal in range(1, pairs + 1):
            seed = f"a-vs-a-{number}-{deal}"
            first, second = random_points(config, seed, rng)
            # Table 0: A North-South; table 1: A East-West.
            results.append(DealResult("A|B", "A", "B", 1, deal, 0, "A", "B", *first))
            results.append(DealResult("A|B", "A", "B", 1, deal, 1, "B", "A", *second))
            scores.append(((first[0] - first[1]) + (second[1] - second[0])) / 2)
        standings = compute_standings(["A", "B"], results, {}, [], duplicate=True)
        row = standings.row("A")
        assert row.ci_low is not None
        assert row.ci_high is not None
        return (row.ci_low, row.ci_high), scores

    def interval_coverage(config: GameConfig, tournaments: int, pairs: int) -> tuple[float, list[float]]:
        covered = 0
        pool: list[float] = []
        for number in range(tournaments):
            (low, high), scores = a_vs_a_tournament(config, number, pairs)
            covered += low <= 0 <= high
            pool.extend(scores)
        return covered / tournaments, pool

    def wilson(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
        """The 95% Wilson score interval of a binomial proportion (good near 0 and 1,
        where the normal approximation's interval runs past them)."""
        share = successes / n
        centre = (share + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
        return centre - half, centre + half

    def sprt_runs(
        centred: list[float],
        truth: float,
        seed: str,
        runs: int,
        h0: float,
        h1: float,
        alpha: float,
        beta: float,
        cap: int,
    ) -> tuple[int, int]:
        """Runs accepting H1, and deal pairs used, when the true mean is ``truth``."""
        rng = random.Random(f"sprt-{seed}-{truth}")
        accepted = used = 0
        for _ in range(runs):
            state = SprtState(h0, h1, alpha, beta)
            while state.verdict == "undecided" and state.count < cap:
                state.add(truth + rng.choice(centred))
            accepted += state.verdict == "H1"
            used += state.count
        return accepted, used

    def sprt_rates(
        pool: list[float],
        runs: int,
        seeds: int,
        h0: float,
        h1: float,
        alpha: float,
        beta: float,
        cap: int,
    ) -> dict[float, tuple[list[float], int, int, float]]:
        """For H0's and H1's true mean: each seed's share of runs accepting H1, then
        the pooled count accepting it, the runs in all, and the mean deal pairs used."""
        mean = sum(pool) / len(pool)
        centred = [score - mean for score in pool]
        outcome: dict[float, tuple[list[float], int, int, float]] = {}
        for truth in (h0, h1):
            shares, accepted, used = [], 0, 0
            for seed in range(seeds):
                yes, pairs = sprt_runs(centred, truth, str(seed), runs, h0, h1, alpha, beta, cap)
                shares.append(yes / runs)
                accepted += yes
                used += pairs
            outcome[truth] = (shares, accepted, runs * seeds, used / (runs * seeds))
        return outcome

    class SeededRandom(RandomBot):
        """The random sample bot, reproducible: a fresh instance per play, each
        with the next seed of a shared counter."""

        counter = 0

        def __init__(self) -> None:
            super().__init__()
            SeededRandom.counter += 1
            self.rng = random.Random(f"random-{SeededRandom.counter}")

    def deals_to_separate(game: str, deals: int) -> tuple[int, int, float, float, float]:
        """Heuristic against random, with and without duplicate: the fewest deals
        each needs, the ratio of (s / mean)² (what the deals needed for any
        interval width scale with), and the means."""
        config = deal_config(game)
        paired = [
            play_pair(HeuristicBot, SeededRandom, config, f"dup-{game}-{n}").score for n in range(deals)
        ]
        single = [
            float(play_deal(HeuristicBot, SeededRandom, config, f"one-{game}-{n}", Side(n % 2)))
            for n in range(2 * deals)
        ]

        def needed(scores: list[float]) -> int:
            """The fewest deals whose 95% interval, mean ± t·s/√n with this mean
            and standard deviation, excludes zero."""
            mean = sum(scores) / len(scores)
            spread = _stdev(scores)
            n = 2
            while t_quantile(0.975, n - 1) * spread / math.sqrt(n) >= abs(mean):
                n += 1
            return n

        def relative_variance(scores: list[float]) -> float:
            return (_stdev(scores) / (sum(scores) / len(scores))) ** 2

        return (
            needed(paired),
            needed(single),
            relative_variance(single) / relative_variance(paired),
            sum(paired) / deals,
            sum(single) / (2 * deals),
        )

    def main(argv: list[str] | None = None, say: Callable[[str], None] = print) -> dict[str, float]:
        parser = argparse.ArgumentParser(
            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
        )
        parser.add_argument("--quick", action="store_true", help="the small version the tests run")
        args = parser.parse_args(argv)
        tournaments, pairs, runs, seeds, deals = (
            (100, 10, 50, 2, 40) if args.quick else (1000, 30, 2000, 5, 200)
        )
        figures: dict[str, float] = {}
        started = time.perf_counter()
        pool: list[float] = []
        for game in ("classic", "contract"):
            coverage, scores = interval_coverage(deal_config(game), tournaments, pairs)
            if game == "contract":
                pool.extend(scores)
            figures[f"coverage_{game}"] = coverage
            say(
                f"A-vs-A, {game}: the 95% interval covered zero in {coverage:.1%} of {tournaments} "
                f"tournaments of {pairs} duplicate deals (target 93-97%)"
            )
        h0, h1, alpha, beta = 0.0, 0.5, 0.05, 0.05
        rates = sprt_rates(pool, runs, seeds, h0, h1, alpha, beta, cap=20_000)
        (fp_seeds, fp, total, n0), (power_seeds, accepted, _, n1) = rates[h0], rates[h1]
        fp_low, fp_high = wilson(fp, total)
        power_low, power_high = wilson(accepted, total)
        figures.update(
            false_positive=fp / total,
            false_positive_low=fp_low,
            false_positive_high=fp_high,
            power=accepted / total,
            power_low=power_low,
            power_high=power_high,
        )

        def shares(values: list[float]) -> str:
            return ", ".join(f"{value:.1%}" for value in values)

        say(
            f"SPRT h0 {h0:g} h1 {h1:g} alpha {alpha:g} beta {beta:g} on contract A-vs-A scores "
            f"(pool of {len(pool)}, s = {_stdev(pool):.2f}), {seeds} seeds x {runs} runs under each: "
            f"false positives {fp / total:.1%} [{fp_low:.1%}, {fp_high:.1%}] (at most {alpha:.0%}; "
            f"by seed {shares(fp_seeds)}), power {accepted / total:.1%} [{power_low:.1%}, "
            f"{power_high:.1%}] (at least {1 - beta:.0%}; by seed {shares(power_seeds)}); "
            f"mean deal pairs {n0:.0f} under H0, {n1:.0f} under H1; 95% Wilson intervals"
        )
        for game in ("classic", "contract"):
            duplicate, single, ratio, paired_mean, single_mean = deals_to_separate(game, deals)
            figures[f"ratio_{game}"] = ratio
            say(
                f"heuristic vs random, {game}: {paired_mean:+.2f} per duplicate deal, {single_mean:+.2f} "
                f"per single play; fewest deals for a 95% interval above zero: {duplicate} duplicate "
                f"({2 * duplicate} plays) vs {single} without; deals needed for a given precision, "
                f"without / with duplicate: ratio {ratio:.1f} ({ratio / 2:.1f} counting both plays)"
            )
        say(f"({time.perf_counter() - started:.0f} s)")
        return figures

    def _stdev(values: list[float]) -> float:
        mean = sum(values) / len(values)
        return math.sqrt(sum((value - mean) ** 2 for value in values) / (len(values) - 1))

    if __name__ == "__main__":
        main()
