"""Bots of clearly different strength for the ladder's tests (each runs as its own process).

From weakest to strongest: Saboteur < Random < Sloppy (heuristic, 70% random
moves) < Careless (heuristic, 35% random moves) < Heuristic (the sample bot).
"""

from __future__ import annotations

import random

import oddtrick
from oddtrick.bots.heuristic_bot import HeuristicBot


class Saboteur(oddtrick.Bot):
    """Bids the highest it may (and fails), then throws its highest card."""

    name = "saboteur"

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return view.legal_actions[-1]

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        return view.legal_actions[-1]


class Random(oddtrick.Bot):
    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random()

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self.rng.choice(view.legal_actions)

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self.rng.choice(view.legal_actions)


class _Blundering(HeuristicBot):
    blunder = 0.0

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random()

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Call:
        if self.rng.random() < self.blunder:
            return self.rng.choice(view.legal_actions)  # type: ignore[return-value]
        return super().choose_call(view)

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Card:
        if self.rng.random() < self.blunder:
            return self.rng.choice(view.legal_actions)  # type: ignore[return-value]
        return super().choose_card(view)


class Sloppy(_Blundering):
    blunder = 0.7


class Careless(_Blundering):
    blunder = 0.35


class Heuristic(HeuristicBot):
    pass
