"""The bot API: a class with two decisions, a call and a card.

A bot never sees the wire protocol. The SDK turns what the referee says into
a :class:`BotView` and asks the bot for a decision; the same bot runs against
a real referee (:func:`oddtrick.run`), in-process against other bots
(:func:`oddtrick.play_local`) or under a scripted fake referee in unit tests.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from oddtrick.rules import (
    Action,
    Call,
    Card,
    GameResult,
    HandResult,
    MatchResult,
    Seat,
    SeatView,
    Trick,
)

if TYPE_CHECKING:
    # The types of the fields BotView inherits from SeatView: the __init__ that
    # dataclasses writes for BotView names them here, in this module, and the API
    # reference (pdoc) resolves its signature here.
    from oddtrick.rules import Contract, GameConfig, Phase, Suit  # noqa: F401


@dataclasses.dataclass(frozen=True, slots=True)
class BotView(SeatView):
    """Everything a bot may know when it decides: its :class:`SeatView` (own hand,
    legal actions, the trick so far, tricks, auction, contract, trumps, turned
    card, scores and helpers such as :meth:`~SeatView.cards_out` and
    :meth:`~SeatView.voids`) plus who sits where and the time left.
    """

    players: Mapping[Seat, str]
    """The bot name at each seat."""
    time_left_ms: int | None
    """Time left for this decision, or ``None`` outside a decision."""
    match_id: str = ""
    request_id: int = 0
    received_at: float | None = None
    """:func:`time.monotonic` when this process received the request (``None``
    outside a referee): the referee's ``time_left_ms`` counts from about then, so
    a deadline is reckoned from here, not from when the bot was called."""
    transport_ms: float | None = None
    """The time the referee has recently counted beyond this bot's own on its
    answers (the worst of the last few), in milliseconds: transport both ways and
    scheduling on either side, measured by comparing each answer's ``think_ms``
    as the referee reports it with the time from receipt to sending here.
    ``None`` until measured. :func:`oddtrick.anytime.budget` holds it back."""
    clock_left_ms: int | None = None
    """In a match with a clock (a time bank per seat, docs/rules.md "Time"): the seat's
    bank as the referee sent the request, this decision's increment included. What the
    decision takes comes out of it; :attr:`time_left_ms` is already capped by it.
    ``None`` without a clock. :func:`oddtrick.anytime.budget` spends it over the
    decisions to come."""
    clock_increment_ms: int | None = None
    """The clock's increment per decision, when the match has a clock."""


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """An action with the bot's note on it, for whoever reads the match log.

    Return one from :meth:`Bot.choose_call` or :meth:`Bot.choose_card`
    (``return Decision(card, "finesse")``, or just ``return card, "finesse"``)
    to say why: the comment goes to the referee with the action, is written to
    the match log beside it and shown in replays, and is never sent to any
    seat. The referee keeps at most its ``max_comment_bytes`` (256 by
    default) of UTF-8 and cuts the rest.
    """

    action: Action
    comment: str = ""


Choice: TypeAlias = Action | Decision | tuple[Action, str]
"""What a decision method returns: an action, a :class:`Decision`, or ``(action, comment)``."""

Answer: TypeAlias = Choice | Awaitable[Choice]
"""A :data:`Choice`, or an awaitable of one (from an ``async`` method)."""


class Bot:
    """Subclass this and override :meth:`choose_call` and :meth:`choose_card`.

    Either may be ``async``: it is then awaited on asyncio, the loop gRPC's client
    runs on and all the seats of a process share, so use asyncio libraries inside it
    and never block there. A plain method runs on its seat's own thread (against a
    referee), as do the hooks (``on_…``): one seat's slow decision delays no other
    seat. The hooks are called after the event they name, with the view as it is
    then; override the ones you need.
    One instance plays one seat: keep whatever memory you like on ``self``.
    """

    name: ClassVar[str] = "bot"
    """What the other seats' views call this bot in in-process play (:func:`play_local`).
    Against a referee the name is the one registered there, given by ``--name`` (or
    ``run(name=...)``)."""
    version: ClassVar[str] = "0"
    options: ClassVar[tuple[str, ...]] = ()
    """The names of the class attributes a run may set without a subclass file: each
    holds its default, whose type (bool, int, float or str) is the option's. Given
    ``option.NAME=VALUE`` after the bot on a command line (or in ``ODDTRICK_OPTIONS``),
    the bot played is a subclass holding the value (see :func:`oddtrick.with_options`).
    A subclass inherits its bases' options and may name more."""

    def choose_call(self, view: BotView) -> Answer:
        """Contract Whist auction: return one of ``view.legal_actions`` (all Calls), alone or
        with a comment for the match log: ``return call, "why"`` or a :class:`Decision`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement choose_call")

    def choose_card(self, view: BotView) -> Answer:
        """Play: return one of ``view.legal_actions`` (all Cards), alone or with a comment
        for the match log: ``return card, "finesse"`` or a :class:`Decision`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement choose_card")

    def on_match_start(self, view: BotView) -> None:
        """A match begins: ``view.config``, ``view.seat`` and ``view.players`` are set."""

    def on_hand_start(self, view: BotView) -> None:
        """A hand is dealt: ``view.hand`` holds the new cards."""

    def on_call(self, view: BotView, seat: Seat, call: Call) -> None:
        """Someone (possibly this bot) made a call."""

    def on_card(self, view: BotView, seat: Seat, card: Card) -> None:
        """Someone (possibly this bot) played a card."""

    def on_trick(self, view: BotView, trick: Trick) -> None:
        """A trick was completed."""

    def on_hand_end(self, view: BotView, result: HandResult) -> None:
        """A hand was scored (``result.deal`` shows all four hands once all were played)."""

    def on_game_end(self, view: BotView, result: GameResult) -> None:
        """A game was won."""

    def on_match_end(self, view: BotView, result: MatchResult) -> None:
        """The match is over; ``view.seed`` now reveals the deals."""


class FunctionBot(Bot):
    """Wraps a plain function ``f(view) -> action`` as a bot for both decisions."""

    def __init__(self, function: Callable[[BotView], Answer], name: str = "") -> None:
        self._function = function
        self.display_name = name or getattr(function, "__name__", "bot")

    def choose_call(self, view: BotView) -> Answer:
        return self._function(view)

    def choose_card(self, view: BotView) -> Answer:
        return self._function(view)


def make_bot(target: Any) -> Bot:
    """A bot instance from a Bot subclass, a Bot instance or a plain function."""
    if isinstance(target, Bot):
        return target
    if inspect.isclass(target) and issubclass(target, Bot):
        return target()
    if callable(target):
        return FunctionBot(target)
    raise TypeError(f"not a bot: {target!r} (expected a Bot subclass or a function of a view)")


def as_decision(choice: object) -> Decision:
    """A :class:`Decision` from whatever a decision method returned; TypeError for anything else."""
    if isinstance(choice, Decision):
        return choice
    if isinstance(choice, Card | Call):
        return Decision(choice)
    if isinstance(choice, tuple) and len(choice) == 2 and isinstance(choice[0], Card | Call):
        comment = choice[1]
        if not isinstance(comment, str):
            raise TypeError(f"the comment of {choice!r} is a {type(comment).__name__}, not a str")
        return Decision(choice[0], comment)
    raise TypeError(
        f"the bot returned {choice!r}: expected one of view.legal_actions, (action, comment) "
        "or oddtrick.Decision(action, comment)"
    )


def decision_method(bot: Bot, view: BotView) -> Callable[[BotView], Answer]:
    """The method of ``bot`` that makes the decision ``view`` asks for."""
    first = view.legal_actions[0] if view.legal_actions else None
    return bot.choose_call if isinstance(first, Call) else bot.choose_card


def decide_sync(bot: Bot, view: BotView) -> Decision:
    """Ask ``bot`` for the decision ``view`` needs, from a synchronous caller (a worker
    thread of the referee's): an async decision is run to completion."""
    choice = decision_method(bot, view)(view)
    if inspect.isawaitable(choice):
        return as_decision(_run_awaitable(choice))
    return as_decision(choice)


def _run_awaitable(awaitable: Awaitable[Choice]) -> Choice:
    import asyncio

    async def wait() -> Choice:
        return await awaitable

    return asyncio.run(wait())


def bot_name(bot: Bot) -> str:
    return getattr(bot, "display_name", None) or type(bot).name
