"""A bot whose first decision waits until the test opens a gate: a FIFO named by
``ODDTRICK_TEST_GATE``, read to its end (it ends when the test has written to it and
closed it). Every later decision is the first legal action at once.

    ODDTRICK_TEST_GATE=/tmp/gate oddtrick bot tests/gated_bot.py:Gated ...

It holds a match open, mid-play, for as long as a test needs to look at it.
"""

from __future__ import annotations

import os
from typing import Any

import oddtrick
from oddtrick import BotView

_opened = False


def _wait_for_the_gate() -> None:
    global _opened
    if not _opened:
        _opened = True
        with open(os.environ["ODDTRICK_TEST_GATE"], "rb") as gate:
            gate.read()


class Gated(oddtrick.Bot):
    name = "gated"

    def choose_call(self, view: BotView) -> Any:
        _wait_for_the_gate()
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        _wait_for_the_gate()
        return view.legal_actions[0]
