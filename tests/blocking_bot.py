"""A bot whose North seat blocks its thread once, until South has decided after it
blocked: the first card North is asked for (``BlockingDecision``) or the first card
North hears played (``BlockingHook``). Two seats of one process share it, so South can
decide meanwhile only if North's blocking code does not hold up the other seats.

    oddtrick bot tests/blocking_bot.py:BlockingDecision --seats 2 ...

North gives up waiting after ``BLOCK_S``, far past the tests' deadline: only a bot that
keeps its seats apart gets South's answer in before it.
"""

from __future__ import annotations

import threading
from typing import Any

import oddtrick
from oddtrick import BotView, Seat

BLOCK_S = 12.0

_south_decisions = 0
_changed = threading.Condition()
_blocked = threading.Event()


def _block_north_once(view: BotView) -> None:
    """Block North, the first time only, until South has decided after this moment."""
    if view.seat is not Seat.NORTH or _blocked.is_set():
        return
    _blocked.set()
    with _changed:
        seen = _south_decisions
        _changed.wait_for(lambda: _south_decisions > seen, timeout=BLOCK_S)


def _count_south(view: BotView) -> None:
    global _south_decisions
    if view.seat is Seat.SOUTH:
        with _changed:
            _south_decisions += 1
            _changed.notify_all()


class BlockingDecision(oddtrick.Bot):
    name = "blocking-decision"

    def choose_call(self, view: BotView) -> Any:
        _count_south(view)
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        _block_north_once(view)
        _count_south(view)
        return view.legal_actions[0]


class BlockingHook(BlockingDecision):
    name = "blocking-hook"

    def choose_card(self, view: BotView) -> Any:
        _count_south(view)
        return view.legal_actions[0]

    def on_card(self, view: BotView, seat: Seat, card: oddtrick.Card) -> None:
        _block_north_once(view)
