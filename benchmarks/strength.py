"""How strong the strong bot's levels are where bots really play: through the referee, on its clock.

    python benchmarks/strength.py                          # levels 1-3, Contract Whist, 24 deal pairs each
    python benchmarks/strength.py --quick                  # a smoke run: levels 1-2, 2 deal pairs
    python benchmarks/strength.py --levels 3 --game classic --deals 40
    python benchmarks/strength.py --levels 2,3 --deadline 2 --out figures.jsonl
    python benchmarks/strength.py --levels 3 --against heuristic --hogs 2   # starved of CPU

For each level (``option.level=N`` of sample_bots/pimc_bot.py) it measures the level
against the heuristic bot and against the level below. Each measurement is an
``oddtrick tournament`` run, as a user would start one: a referee on a socket, every
entry its own bot processes, duplicate deals (each played twice with the partnerships
swapped), the referee's decision deadline enforced, a time-out played as the referee's
fallback. It prints the higher level's points per deal with the standings' 95% interval
(docs/standings.md), its decisions' think time (median and 99th percentile, the bot's
own measure), the share of its decisions that fell back for want of time (its comments
say so), the time-outs, and the machine's load: the 1-minute load average before and
after, and its range while the run lasted (sampled every 5 s). On a shared machine the
load is the context of every figure: quote it with them. Last, where the points are: the
deal pairs whose two tables reached the same contract (the card play decided them) and
those whose tables did not (the auction did), with the points of each. This is a
measurement, not a test: it prints figures, the README and docs/strong-bot.md quote them.
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

from oddtrick._terminal import plural
from oddtrick.bots import STRONG_LEVELS, strong_levels_text
from oddtrick.rules import Contract, Seat
from oddtrick_referee.replay.model import replay_log

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "sdk" / "oddtrick" / "bots"
PIMC = BOTS / "pimc_bot.py"
HEURISTIC = BOTS / "heuristic_bot.py"


class CpuHogs:
    """``count`` processes spinning on the CPU while a run lasts: the strong bot starved,
    as on a machine shared with other work (each hog a plain busy loop at normal priority)."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> CpuHogs:
        spin = "while True: pass"
        self._processes = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(self._count)]
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self._processes:
            process.kill()
            process.wait()


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
        ordered = sorted(self.samples)
        median = ordered[len(ordered) // 2]
        return (
            f"load {self.samples[0]:.1f} before, {self.samples[-1]:.1f} after, "
            f"{ordered[0]:.1f}-{ordered[-1]:.1f} (median {median:.1f}) during, {os.cpu_count()} cores"
        )


def entry_words(level: int | None) -> tuple[str, list[str]]:
    """An entry's name and its ``--bot`` words: a level of the strong bot, or the heuristic bot."""
    if level is None:
        return "heuristic", [f"heuristic={HEURISTIC}"]
    return f"level{level}", [f"level{level}={PIMC}", f"option.level={level}"]


def measure(level: int, against: int | None, args: argparse.Namespace) -> dict[str, Any]:
    """One tournament: ``level`` against the level ``against`` (None: the heuristic bot)."""
    deals = ["--seed", f"{args.seed}-{args.game}"]
    return run_matchup(entry_words(level), entry_words(against), deals, args)


def run_matchup(
    entry: tuple[str, list[str]],
    opponent: tuple[str, list[str]],
    deals: list[str],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """One tournament of two entries (each a name and its ``--bot`` words) on the deals that
    ``deals`` names (``--seed S`` or ``--deals-from FILE.pbn``), and what it found."""
    name, words = entry
    other, other_words = opponent
    with tempfile.TemporaryDirectory(prefix="strength-") as folder:
        command = [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--game",
            args.game,
            "--deals",
            str(args.deals),
            "--tables",
            str(args.tables),
            "--deadline",
            str(args.deadline),
            *deals,
            "--bot",
            *words,
            "--bot",
            *other_words,
            "--data-dir",
            str(Path(folder) / "data"),
            "--json",
        ]
        started = time.perf_counter()
        with CpuHogs(args.hogs), LoadSampler() as load:
            result = subprocess.run(command, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        if result.returncode != 0:
            said = "\n  ".join(result.stderr.strip().splitlines()[-3:])
            raise SystemExit(f"the tournament failed:\n  {said}")
        split = contract_split(Path(folder) / "data" / "logs", name)
    entries = {entry["entry"]: entry for entry in json.loads(result.stdout)["entries"]}
    return {**figures(name, other, entries, load, seconds, args), "contracts": split}


def contract_split(logs: Path, name: str) -> dict[str, list[float]]:
    """Where ``name``'s points came from: each deal pair's score (its two tables' margins
    from ``name``'s side, halved, as the standings count it), filed under ``same`` when both
    tables reached the same contract (the card play decided) or ``different`` (the auction
    did). Classic Whist has no auction: every deal pair is ``same``. The two tables of a
    deal pair share the seed and the hand number; each log is read by the replay model,
    whose contracts are the rules' own."""
    tables: dict[tuple[str, int], list[tuple[Contract | None, float]]] = {}
    for path in sorted(logs.rglob("*.jsonl*")):
        match = replay_log(path)
        side = 0 if match.players[Seat.NORTH].split("~")[0] == name else 1
        for hand in match.hands:
            if hand.result is not None:
                margin = hand.result.points[side] - hand.result.points[1 - side]
                tables.setdefault((match.seed, hand.number), []).append((hand.contract, margin))
    split: dict[str, list[float]] = {"same": [], "different": []}
    for plays in tables.values():
        if len(plays) == 2:
            kind = "same" if plays[0][0] == plays[1][0] else "different"
            split[kind].append((plays[0][1] + plays[1][1]) / 2)
    return split


def split_text(split: dict[str, list[float]]) -> str:
    """``same contract at both tables: 22 deal pairs, +3.0 points; different: 38, +70.5``."""
    same, different = split["same"], split["different"]
    return (
        f"same contract at both tables: {plural(len(same), 'deal pair')}, {sum(same):+.1f} points; "
        f"different: {len(different)}, {sum(different):+.1f}"
    )


def figures(
    name: str,
    other: str,
    entries: dict[str, Any],
    load: LoadSampler,
    seconds: float,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """What one measurement found, as a JSON line keeps it."""
    row = entries[name]
    time_of = row["time"]
    return {
        "game": args.game,
        "entry": name,
        "opponent": other,
        "deal_pairs": row["deals"],
        "points_per_deal": row["points_per_deal"],
        "ci95": row["ci95"],
        "deadline_s": args.deadline,
        "hogs": args.hogs,
        "think_ms": time_of["think_ms"],
        "answered": time_of["answered"],
        "fallbacks": time_of.get("fallbacks", 0),
        "opponent_fallbacks": entries[other]["time"].get("fallbacks", 0),
        "opponent_answered": entries[other]["time"]["answered"],
        "timeouts": {entry: value["faults"]["timeouts"] for entry, value in entries.items()},
        "faults": {entry: sum(value["faults"].values()) for entry, value in entries.items()},
        "load": load.samples,
        "load_text": load.summary(),
        "seconds": round(seconds),
    }


def hogs_text(hogs: int) -> str:
    """``, 2 CPU hogs beside it``, or nothing."""
    return f", {hogs} CPU hog{'s' if hogs != 1 else ''} beside it" if hogs else ""


def by_entry(counts: dict[str, int]) -> str:
    """``level3 0, heuristic 0``: a count for each entry."""
    return ", ".join(f"{entry} {count}" for entry, count in counts.items())


def line(found: dict[str, Any]) -> str:
    """One measurement for people."""
    low, high = found["ci95"] or (float("nan"), float("nan"))
    think = found["think_ms"]
    share = found["fallbacks"] / found["answered"] if found["answered"] else 0.0
    other = found["opponent_answered"]
    other_share = found["opponent_fallbacks"] / other if other else 0.0
    return (
        f"{found['entry']} vs {found['opponent']}, {found['game']}: {found['points_per_deal']:+.2f} points "
        f"a deal, 95% CI [{low:+.2f}, {high:+.2f}], {plural(found['deal_pairs'], 'deal pair')}, deadline "
        f"{found['deadline_s']:g} s{hogs_text(found.get('hogs', 0))}; "
        f"think p50 {think['p50']} ms, p99 {think['p99']} ms; fell back "
        f"{share:.0%} ({found['opponent']} {other_share:.0%}); time-outs {by_entry(found['timeouts'])}, "
        f"all faults {by_entry(found['faults'])}; {found['load_text']}; {found['seconds']} s"
        f"\n  where the points are: {split_text(found['contracts'])}"
    )


def add_tournament_arguments(parser: argparse.ArgumentParser, levels: str, deals: int, seed: str) -> None:
    """The options every measurement takes (strength.py's and ceiling.py's)."""
    parser.add_argument(
        "--levels", default=levels, help=f"the levels measured, comma-separated (default {levels})"
    )
    parser.add_argument(
        "--game", choices=["classic", "contract"], default="contract", help="default: contract"
    )
    parser.add_argument(
        "--deals", type=int, default=deals, help=f"deal pairs per measurement (default {deals})"
    )
    parser.add_argument(
        "--deadline", type=float, default=5.0, help="the referee's seconds per decision (default 5)"
    )
    parser.add_argument("--tables", type=int, default=2, help="tables at once (default 2)")
    parser.add_argument("--seed", default=seed, help=f"where the deals come from (default {seed!r})")
    parser.add_argument("--out", type=Path, help="append each measurement's figures here (JSON lines)")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_tournament_arguments(parser, levels="1,2,3", deals=24, seed="strength")
    parser.add_argument(
        "--against",
        choices=["both", "heuristic", "below"],
        default="both",
        help="each level against the heuristic bot, the level below, or both (default)",
    )
    parser.add_argument(
        "--hogs",
        type=int,
        default=0,
        help="processes spinning on the CPU while each tournament runs: the bots starved (default 0)",
    )
    parser.add_argument("--quick", action="store_true", help="a smoke run: levels 1-2, 2 deal pairs")
    args = parser.parse_args()
    if args.quick:
        args.levels, args.deals = "1,2", 2
    check_levels_and_deals(parser, args)
    return args


def check_levels_and_deals(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``args.level_list`` from ``--levels`` (``1,2,3``; empty: none); a bad list, or fewer
    deal pairs than an interval needs, is the parser's error."""
    try:
        args.level_list = sorted({int(word) for word in args.levels.split(",") if word.strip()})
    except ValueError:
        parser.error(f"--levels takes numbers separated by commas (e.g. 1,2,3), not {args.levels!r}")
    unknown = [level for level in args.level_list if level not in STRONG_LEVELS]
    if unknown:
        parser.error(f"no level {unknown[0]}: the strong bot's levels are {strong_levels_text()}")
    if args.deals < 2:
        parser.error("--deals must be at least 2: an interval needs two deal pairs")


def main() -> None:
    args = parse_args()
    levels = ", ".join(str(level) for level in args.level_list)
    print(f"strength of the strong bot at level {levels}: {os.getloadavg()[0]:.1f} load now", flush=True)
    for level in args.level_list:
        matchups: list[int | None] = [] if args.against == "below" else [None]
        if level - 1 >= 1 and args.against != "heuristic":
            matchups.append(level - 1)
        for against in matchups:
            found = measure(level, against, args)
            print(line(found), flush=True)
            if args.out is not None:
                with args.out.open("a", encoding="utf-8") as file:
                    file.write(json.dumps(found) + "\n")


if __name__ == "__main__":
    main()
