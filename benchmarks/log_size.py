"""Bytes per deal of match logs, plain and as the referee compresses them (gzip in place).

    python benchmarks/log_size.py [--matches 4] [--deals 8]

Plays real matches on a referee on a local socket between two heuristic house
bots (the ladder's default house bot), for each game, then prints per game the
plain log's bytes per deal, the compressed one's (``compress_log``, gzip level 6,
what the referee writes), gzip level 9's for comparison, and the time
compressing takes. Sizes are exact; times follow the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import shutil
import sys
import tempfile
import time
from pathlib import Path

import trio

from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.rules import GameConfig, Seat
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.matchlog import check_log, compress_log
from oddtrick_referee.referee import MatchSpec

SEATING = {Seat.NORTH: "alice", Seat.SOUTH: "alice", Seat.EAST: "bob", Seat.WEST: "bob"}


def run_bot(address: str, name: str, matches: int) -> None:
    options = ClientOptions(server=address, name=name, token="", seats=2, max_matches=matches)
    asyncio.run(run_bot_async(HeuristicBot, options))


async def play(data_dir: Path, config: GameConfig, matches: int) -> tuple[list[Path], int]:
    paths: list[Path] = []
    deals = 0
    async with (
        running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee,
        trio.open_nursery() as bots,
    ):
        for name in ("alice", "bob"):
            bots.start_soon(trio.to_thread.run_sync, run_bot, referee.address, name, matches)
        for number in range(matches):
            record = await referee.play_match(MatchSpec(config, SEATING, seed=f"size-{number}"))
            paths.append(record.log_path)
            deals += record.state.hand_number
        referee.finish()
    return paths, deals


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--deals", type=int, default=8)
    args = parser.parse_args()
    print("game      deals  plain B/deal  gzip-6 B/deal  gzip-9 B/deal  ratio  compress ms/MB")
    for game in ("classic", "contract"):
        config = GameConfig.from_dict({"game": game, "format": "deals", "deals": args.deals})
        with tempfile.TemporaryDirectory() as folder:
            paths, deals = trio.run(play, Path(folder), config, args.matches)
            plain = sum(p.stat().st_size for p in paths)
            nine = sum(len(gzip.compress(p.read_bytes(), 9, mtime=0)) for p in paths)
            started = time.perf_counter()
            for path in paths:
                compress_log(path)
            elapsed = time.perf_counter() - started
            packed = sum(p.stat().st_size for p in paths)
            assert all(check_log(p).ok for p in paths)
            print(
                f"{game:9} {deals:5}  {plain / deals:12.0f}  {packed / deals:13.0f}  {nine / deals:13.0f}"
                f"  {plain / packed:5.1f}  {elapsed * 1000 / (plain / 1e6):14.1f}",
                flush=True,
            )
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
