"""A random bot whose every choice is a function of what it sees, so that two runs of the
same deals play the same cards wherever they run (the distributed tests compare runs)."""

import random

import oddtrick


class SeededRandomBot(oddtrick.Bot):
    name = "seeded-random"

    def _choose(self, view: oddtrick.BotView) -> oddtrick.Action:
        seen = f"{sorted(map(str, view.hand))}|{list(map(str, view.legal_actions))}"
        return random.Random(seen).choice(view.legal_actions)

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self._choose(view)

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self._choose(view)
