"""A scripted fake referee for a bot's unit tests: no network, no threads.

>>> from oddtrick import Card, FakeReferee, GameConfig, Seat
>>> lowest = lambda view: view.legal_actions[0]
>>> fake = FakeReferee(lowest, seat=Seat.EAST, config=GameConfig.classic(), seed="doc")
>>> fake.ask() in fake.state.legal_actions
True

A bot's own tests choose the position with :meth:`GameState.from_deal` (see
:class:`FakeReferee`).
"""

from __future__ import annotations

from typing import Any

from oddtrick._bot import Bot, BotView, Decision, decide_sync, make_bot
from oddtrick._codec_text import parse_action
from oddtrick._drive import FirstLegal, drive, next_turn
from oddtrick._local import bot_view
from oddtrick.rules import Action, GameConfig, GameState, Seat


class FakeReferee:
    """Puts one bot in chosen situations and records what it decides.

    The other three seats are scripted: :meth:`play` applies their actions
    (or any actions) directly; :meth:`ask` asks the bot at its seat and
    returns its choice without applying it; :meth:`step` asks and applies.

    To choose the cards, give a ``state`` made by :meth:`GameState.from_deal`
    (a deal in PBN, the dealer, the turned card, the scores, and the actions
    already made in the hand); otherwise the deals come from ``seed``:

    >>> from oddtrick import Card, FakeReferee, GameConfig, GameState, Seat
    >>> deal = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"
    >>> position = GameState.from_deal(
    ...     GameConfig.classic(), deal, dealer=Seat.WEST, turned_card="2S", actions=["AS", "7S"]
    ... )
    >>> lowest = lambda view: view.legal_actions[0]
    >>> fake = FakeReferee(lowest, seat=Seat.SOUTH, state=position)
    >>> fake.ask()  # South must follow to spades with the lowest it holds
    Card.parse('3S')
    """

    def __init__(
        self,
        bot: Any,
        *,
        seat: Seat = Seat.SOUTH,
        config: GameConfig | None = None,
        seed: str = "fake-referee",
        players: dict[Seat, str] | None = None,
        time_left_ms: int = 5000,
        state: GameState | None = None,
    ) -> None:
        self.bot: Bot = make_bot(bot)
        self.seat = seat
        if state is not None and config is not None and state.config != config:
            raise ValueError("give either config or a state (which has its own config), not both")
        self.state = state if state is not None else GameState(config or GameConfig.classic(), seed)
        self.players = players or {s: ("bot" if s is seat else f"scripted-{s}") for s in Seat}
        self.time_left_ms = time_left_ms
        self.decisions: list[tuple[BotView, Action]] = []

    def play(self, *actions: Action | str) -> None:
        """Apply actions for whoever is to act (text such as ``"QH"`` or ``"7C"`` is parsed)."""
        for action in actions:
            next_turn(self.state)  # deals the next hand if this one is over
            self.state.apply(parse_action(action, self.state) if isinstance(action, str) else action)

    def play_until_bot_turn(self) -> None:
        """Let the other seats play their first legal action until the bot must decide."""
        for _ in drive(self.state, FirstLegal(), stop_at=self.seat):
            pass
        if self.state.to_act is not self.seat:
            raise RuntimeError("the match ended before the bot's turn")

    def view(self) -> BotView:
        """The :class:`BotView` the bot's seat would be given now, exactly as :meth:`ask`
        builds it: to check what a bot sees, or to call a helper of the bot directly."""
        return bot_view(self.state, self.seat, self.players, self.time_left_ms)

    def ask(self) -> Action:
        """The bot's decision now (it must be its turn); not applied."""
        return self.ask_decision().action

    def ask_decision(self) -> Decision:
        """The bot's decision now with its comment (``""`` when it gave none); not applied."""
        self.play_until_bot_turn()
        view = self.view()
        decision = decide_sync(self.bot, view)
        self.decisions.append((view, decision.action))
        return decision

    def step(self) -> Action:
        """Ask the bot and apply its decision; raises IllegalAction if it is illegal."""
        action = self.ask()
        self.state.apply(action, self.seat)
        return action
