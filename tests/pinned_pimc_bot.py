"""The strong sample bot held to one CPU: a ``cmd:`` entry of the starvation test.

    python tests/pinned_pimc_bot.py CPU

It pins itself (``os.sched_setaffinity``) before loading anything, then plays
as the tournament says through the variables every ``cmd:`` entry gets
(ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_TOKEN, ODDTRICK_SEATS).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.sched_setaffinity(0, {int(sys.argv[1])})
    import logging

    import oddtrick

    if os.environ.get("PINNED_DEBUG"):
        logging.basicConfig(format="%(relativeCreated)d %(name)s %(message)s")
        logging.getLogger("oddtrick.anytime").setLevel(logging.DEBUG)
    from oddtrick.bots.pimc_bot import PimcBot

    oddtrick.run(
        PimcBot,
        server=os.environ["ODDTRICK_SERVER"],
        name=os.environ["ODDTRICK_NAME"],
        token=os.environ["ODDTRICK_TOKEN"],
        seats=int(os.environ.get("ODDTRICK_SEATS", "1")),
    )


if __name__ == "__main__":
    main()
