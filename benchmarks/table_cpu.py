"""The referee's own CPU per decision: a table playing whole matches against in-memory seats.

No transport and no other thread: each seat's stream answers every request at once,
inside the table's own send (``benchmarks/raw_bots.py``'s choice: the lowest bid to
open the auction, so every deal is played out, else the first legal action), so what
is timed is the table's work alone: the rules, the codec, the seats' messages, the
match log and the decisions' bookkeeping. It is what ``benchmarks/referee.py``'s
figures hold besides the transport, measured without the noise of six processes on
a shared machine. ``benchmarks/compare.py --same-benchmark`` runs it on two trees.

    python benchmarks/table_cpu.py [--matches N] [--deals D] [--rounds R]

It prints the best round's CPU microseconds per decision (``time.process_time``),
and the decisions in a round.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio
from raw_bots import first_choice

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.matchlog import MatchLogWriter
from oddtrick_referee.play.table import Table, TableRules
from oddtrick_referee.transport.sessions import SeatLink, Session


class InstantSeat:
    """Stands in for a bot's stream: answers each request as it is sent."""

    def __init__(self, seat: Seat) -> None:
        self.peer = f"memory:{seat.name.lower()}"
        self.link: SeatLink | None = None
        self.closed = False
        self.answered = 0

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        if message.WhichOneof("kind") != "update" or not message.update.HasField("request"):
            return
        request = message.update.request
        assert self.link is not None
        self.answered += 1
        self.link.deliver(referee_pb2.Decision(request_id=request.request_id, action=first_choice(request)))

    def close(self, *args: Any) -> None:
        self.closed = True


async def play(config: GameConfig, matches: int, folder: Path) -> int:
    """Play ``matches`` matches one after another; the decisions answered."""
    decisions = 0
    for match in range(matches):
        streams = {seat: InstantSeat(seat) for seat in Seat}
        links = {}
        for seat, stream in streams.items():
            hello = referee_pb2.Hello(bot_name=f"bot-{seat.name.lower()}", bot_version="1")
            session = Session(stream, hello, frozenset())  # type: ignore[arg-type]
            links[seat] = stream.link = SeatLink(seat, session, grace_s=5.0)
        table = Table(
            match_id=f"bench-{match}",
            table_id="memory",
            config=config,
            seed=f"bench-seed-{match}",
            rules=TableRules(deadline_s=5.0),
            links=links,
            log_writer=MatchLogWriter(folder / f"match-{match}.jsonl"),
            max_attempts=8,
            max_comment_bytes=256,
        )
        await table.run()
        decisions += sum(stream.answered for stream in streams.values())
    return decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=4, help="matches per round (default 4)")
    parser.add_argument("--deals", type=int, default=20, help="Contract Whist deals per match (default 20)")
    parser.add_argument("--rounds", type=int, default=7, help="rounds; the best is shown (default 7)")
    args = parser.parse_args()
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=args.deals)
    best, decisions = float("inf"), 0
    with tempfile.TemporaryDirectory(prefix="oddtrick-bench-") as temp:
        for round_number in range(args.rounds):
            folder = Path(temp) / str(round_number)
            folder.mkdir()
            started = time.process_time()
            decisions = trio.run(play, config, args.matches, folder)
            best = min(best, time.process_time() - started)
            print(f"round {round_number + 1}: {decisions} decisions", file=sys.stderr, flush=True)
    print(f"decisions_per_round: {decisions}")
    print(f"table_cpu_us_per_decision: {best / decisions * 1e6:.1f}")


if __name__ == "__main__":
    main()
