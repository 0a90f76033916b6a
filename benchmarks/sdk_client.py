"""The SDK client's own time per message, replayed from a real match, with no transport.

Part of a Python bot's time per decision is the SDK's: reading the referee's
update (its events, then the request), building the bot's view, making the
answer. This plays Contract Whist matches through a referee in this process
with four random bots (the SDK's client, on a thread), keeps every update each
seat received, then hands them ``--rounds`` times over to fresh client seats
whose answers go nowhere, and prints the best round's microseconds per update
and per request. It is CPU work in one process, so it is steadier than the load
benchmarks on a shared machine; ``benchmarks/compare.py`` runs it on two trees.

    python benchmarks/sdk_client.py [--deals N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import trio

from oddtrick import _client
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sample_bots"))
from random_bot import RandomBot

NAMES = {seat: f"random-{seat.name.lower()}" for seat in Seat}


class _NoWhere:
    """A writer that drops the answers: what is timed is the client, not the transport."""

    async def send(self, message: referee_pb2.BotMessage) -> None:
        return None


def record_updates(deals: int) -> dict[str, list[bytes]]:
    """Play one match; every update each bot's seat received, as bytes, by bot name."""
    received: dict[str, list[bytes]] = {name: [] for name in NAMES.values()}
    lock = threading.Lock()
    update = _client._Seat._update

    async def recording(self: Any, message: referee_pb2.Update, outbox: Any, arrived: float) -> bool:
        with lock:
            received[self.options.name].append(message.SerializeToString())
        return await update(self, message, outbox, arrived)

    async def play() -> None:
        with tempfile.TemporaryDirectory(prefix="oddtrick-bench-") as temp:
            tokens = {name: f"token-{name}" for name in NAMES.values()}
            settings = RefereeSettings(port=0, data_dir=Path(temp), tokens=tokens)
            async with running_referee(settings) as referee:

                def bots() -> None:
                    async def all_four() -> None:
                        options = [
                            ClientOptions(referee.address, name, tokens[name], max_matches=1)
                            for name in NAMES.values()
                        ]
                        await asyncio.gather(*(run_bot_async(RandomBot, each) for each in options))

                    asyncio.run(all_four())

                config = GameConfig.contract(format=MatchFormat.DEALS, deals=deals)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(trio.to_thread.run_sync, bots)
                    await referee.play_match(MatchSpec(config, NAMES), wait_s=60)

    _client._Seat._update = recording  # type: ignore[method-assign]
    try:
        trio.run(play)
    finally:
        _client._Seat._update = update  # type: ignore[method-assign]
    return received


def replay(updates: dict[str, list[bytes]], rounds: int) -> tuple[float, int, int]:
    """The best round's seconds to feed every seat its updates, with the counts of
    updates and requests in a round."""
    messages = {name: [referee_pb2.Update.FromString(raw) for raw in raws] for name, raws in updates.items()}
    count = sum(len(each) for each in messages.values())
    requests = sum(message.HasField("request") for each in messages.values() for message in each)

    async def one_round() -> float:
        seats = {name: _client._Seat(RandomBot, ClientOptions("nowhere", name, "-"), 0) for name in messages}
        writer = _NoWhere()
        started = time.perf_counter()
        for name, each in messages.items():
            seat = seats[name]
            for message in each:
                await seat._update(message, writer, 0.0)  # type: ignore[arg-type]
        return time.perf_counter() - started

    best = min(asyncio.run(one_round()) for _ in range(rounds))
    return best, count, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=8, help="deals in the recorded match (default 8)")
    parser.add_argument("--rounds", type=int, default=30, help="replays; the best is shown (default 30)")
    args = parser.parse_args()
    print(f"recording a {args.deals}-deal match through a referee ...", file=sys.stderr, flush=True)
    updates = record_updates(args.deals)
    print(f"replaying it {args.rounds} times ...", file=sys.stderr, flush=True)
    best, count, requests = replay(updates, args.rounds)
    print(f"updates_per_round: {count}")
    print(f"requests_per_round: {requests}")
    print(f"sdk_us_per_update: {best / count * 1e6:.1f}")
    print(f"sdk_us_per_request: {best / requests * 1e6:.1f}")


if __name__ == "__main__":
    main()
