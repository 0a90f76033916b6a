"""A bot that plays a uniformly random legal action, in both games.

Copy this file to start your own bot: change the two methods, then play it:

    oddtrick bot my_bot.py:MyBot --server localhost:50051 --name me --token TOKEN

Every decision gets a view of what the seat knows (``view.hand``,
``view.legal_actions``, ``view.current_trick``, ``view.contract``,
``view.trumps``, ``view.scores`` and more); return one of the legal actions.
"""

import random

import oddtrick


class RandomBot(oddtrick.Bot):
    """Any legal action, uniformly at random: the baseline every other bot should beat,
    and the smallest bot that plays both games."""

    name = "random"

    def __init__(self) -> None:
        self.rng = random.Random()

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self.rng.choice(view.legal_actions)

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        return self.rng.choice(view.legal_actions)
