"""A sample bot that takes a known time over every decision: a ``cmd:`` entry for the
tests of think time, lag and the sequential test through a referee.

    python tests/sleepy_bot.py heuristic|random SLEEP_MS

It plays the SDK's heuristic or random bot, sleeping SLEEP_MS before each
answer (asyncio's sleep: the bot's own time, reported to the referee as its
think time), as the tournament says through the variables every ``cmd:``
entry gets (ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_TOKEN, ODDTRICK_SEATS).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import oddtrick
from oddtrick import BotView
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.bots.random_bot import RandomBot


def sleepy(base: type[oddtrick.Bot], sleep_s: float) -> type[oddtrick.Bot]:
    """``base`` with ``sleep_s`` spent before each decision."""

    class Sleepy(base):  # type: ignore[valid-type,misc]
        async def choose_call(self, view: BotView) -> Any:
            await asyncio.sleep(sleep_s)
            return super().choose_call(view)

        async def choose_card(self, view: BotView) -> Any:
            await asyncio.sleep(sleep_s)
            return super().choose_card(view)

    return Sleepy


def main() -> None:
    base = {"heuristic": HeuristicBot, "random": RandomBot}[sys.argv[1]]
    oddtrick.run(
        sleepy(base, float(sys.argv[2]) / 1000),
        server=os.environ["ODDTRICK_SERVER"],
        name=os.environ["ODDTRICK_NAME"],
        token=os.environ["ODDTRICK_TOKEN"],
        seats=int(os.environ.get("ODDTRICK_SEATS", "1")),
    )


if __name__ == "__main__":
    main()
