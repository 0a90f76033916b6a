"""``oddtrick ladder serve``, SIGKILLed at the worst moment a crash can come.

Run as ``python tests/ladder_killed_at_release.py ladder serve ...`` in a new
session (process group). The first time the ladder releases the tables of a
match it has recorded (its result and ratings committed, its tables' logs
still sealed), the whole process group, the house bots with it, is killed
with SIGKILL before the release reaches the disk: what a power cut or the
kernel's OOM killer can do between the two databases.
"""

from __future__ import annotations

import os
import signal
import sys

from oddtrick._cli import main
from oddtrick_referee.referee import Referee


async def _killed_instead(self: Referee, set_id: str) -> None:
    print(f"killed before releasing {set_id}", flush=True)
    os.killpg(0, signal.SIGKILL)


Referee.release_set = _killed_instead  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv[0] = "oddtrick"
    sys.exit(main())
