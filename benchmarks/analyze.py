"""How fast oddtrick analyze is, and what batching and reuse buy.

    python benchmarks/analyze.py                 # plays a small tournament for its logs
    python benchmarks/analyze.py LOG.jsonl ...   # or analyse these logs

Prints hands per second for the whole analysis (with and without Contract
Whist's par) and for three ways of getting the double-dummy value of every
card: what ``oddtrick analyze`` does (DDS's AnalyseAllPlays: many hands per
call, each hand's search kept from one card to the next), one hand per call
(AnalysePlay) and one position per card (SolveBoard from scratch).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from endplay import _dds

from oddtrick import analysis
from oddtrick.double_dummy import Position, _fill, analyse_plays, trick_tables

ROOT = Path(__file__).resolve().parent.parent


def tournament_logs(directory: Path, game: str, deals: int) -> list[Path]:
    print(f"playing a {game} tournament of {deals} duplicate deals for its logs…", flush=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "tournament",
            "--game",
            game,
            "--deals",
            str(deals),
            "--bot",
            f"random={ROOT / 'sample_bots' / 'random_bot.py'}",
            "--bot",
            f"heuristic={ROOT / 'sample_bots' / 'heuristic_bot.py'}",
            "--data-dir",
            str(directory / game),
        ],
        check=True,
        capture_output=True,
    )
    return sorted((directory / game / "logs").glob("*.jsonl"))


def timed(label: str, hands: int, action: object) -> None:
    started = time.perf_counter()
    action()  # type: ignore[operator]
    seconds = time.perf_counter() - started
    print(f"  {label:<52} {seconds:7.2f} s  {hands / seconds:8.1f} hands/s", flush=True)


def main() -> None:
    paths = [Path(arg) for arg in sys.argv[1:]]
    with tempfile.TemporaryDirectory() as temporary:
        if not paths:
            paths = tournament_logs(Path(temporary), "classic", 20) + tournament_logs(
                Path(temporary), "contract", 20
            )
        hands = [hand for index, path in enumerate(paths) for hand in analysis._replay(path, index)[1]]
        count = len(hands)
        print(f"{len(paths)} logs, {count} hands played out")
        starts = [Position(hand.hands, hand.trumps, hand.leader) for hand in hands]
        plays = [[card for _, card in hand.plays] for hand in hands]

        def one_hand_per_call() -> None:
            for start, play in zip(starts, plays, strict=True):
                analyse_plays([start], [play])

        timed("oddtrick analyze, with par", count, lambda: analysis.analyze_logs(paths))
        timed("oddtrick analyze --no-par", count, lambda: analysis.analyze_logs(paths, par=False))
        timed(
            "every card: many hands per DDS call (analyze's way)", count, lambda: analyse_plays(starts, plays)
        )
        timed("every card: one hand per DDS call", count, one_hand_per_call)
        sample = max(1, count // 4)
        print(f"  (the naive way on {sample} hands only)")
        timed("every card: each position solved from scratch", sample, lambda: _naive(starts, plays, sample))
        contract_deals = {hand.hands for hand in hands if hand.contract is not None}
        if contract_deals:
            deals = list(contract_deals)
            timed(
                f"par: trick tables of {len(deals)} Contract Whist deals",
                len(deals),
                lambda: trick_tables(deals),
            )


def _naive(starts: list[Position], plays: list[list[object]], count: int) -> None:
    target = _dds.deal()
    future = _dds.futureTricks()
    for start, play in zip(starts[:count], plays[:count], strict=True):
        held = [list(hand) for hand in start.hands]
        leader, trick = start.leader, []  # type: ignore[var-annotated]
        for card in play[:48]:
            seat = (leader + len(trick)) % 4
            position = Position(tuple(tuple(h) for h in held), start.trumps, leader, tuple(trick))  # type: ignore[arg-type]
            _fill(target, position)
            _dds.SolveBoard(target, -1, 1, 0, future, 0)
            held[seat].remove(card)
            trick.append(card)
            if len(trick) == 4:
                leader = _winner(leader, trick, start.trumps)
                trick = []


def _winner(leader, trick, trumps):  # type: ignore[no-untyped-def]
    from oddtrick.rules import Seat

    best = 0
    for index in range(1, 4):
        card, winning = trick[index], trick[best]
        if (card.suit is winning.suit and card.rank > winning.rank) or (
            card.suit is trumps and winning.suit is not trumps
        ):
            best = index
    return Seat((leader + best) % 4)


if __name__ == "__main__":
    main()
