"""Who plays the seats when a replayed hand is played on from one of its steps.

A shipped bot (``random``, ``heuristic``, ``pimc``) plays a seat exactly as it would in
the referee's process: a :class:`~oddtrick._in_process.BotSide` is told of the match and
answers decision requests made from the rules engine's view of its seat
(``GameState.view``, the rules' one door to hidden information), so it is shown its own
cards and the public play, never another seat's hand. ``dd`` is the double-dummy solver
(DDS, the strong extra): it sees all four hands, as double-dummy analysis does by
definition, and plays a card that keeps its side's best result from there.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Protocol

from oddtrick._bot import Bot
from oddtrick._codec import action_from_wire, hand_state, table_rules_to_wire
from oddtrick._codec_protocol import add_event, fill_request, match_started_to_wire, new_referee_message
from oddtrick._in_process import BotSide
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.bots.random_bot import RandomBot
from oddtrick.rules import Action, Card, GameState, Phase, Seat
from oddtrick_referee._exceptions import ReplayError

BOTS: Mapping[str, str] = {
    "random": "the shipped random bot: a uniformly random legal card",
    "heuristic": "the shipped heuristic bot: the classic maxims of play",
    "pimc": "the shipped strong bot: sampled deals solved double dummy (the strong extra)",
    "dd": "the double-dummy solver: sees all four hands and plays perfectly (the strong extra)",
}
"""The players a seat can be given, by the name the command and the page take."""

NEEDS_EXTRA = "pip install 'oddtrick[strong]'"
DECISION_MS = 5000
"""The time a bot is told it has per card: the referee's default deadline."""


class SeatPlayer(Protocol):
    """One seat's player in a play-on: the card it plays now (it is the seat to play)."""

    def act(self, state: GameState, seat: Seat) -> Action: ...


def bot_names() -> str:
    """The players' names, for messages: ``random, heuristic, pimc or dd``."""
    names = list(BOTS)
    return ", ".join(names[:-1]) + " or " + names[-1]


def _make(kind: str, seed: str, think_seconds: float) -> Callable[[], Bot]:
    """A maker of fresh bots of ``kind``, each seeded with ``seed`` (the same play-on plays
    the same random cards; pimc's samples still depend on the time it has)."""
    if kind == "random":

        def seeded_random() -> Bot:
            bot = RandomBot()
            bot.rng = random.Random(seed)
            return bot

        return seeded_random
    if kind == "heuristic":
        return HeuristicBot
    try:
        from oddtrick.bots.pimc_bot import PimcBot
    except ImportError:
        raise ReplayError(f"the pimc bot needs the strong extra: {NEEDS_EXTRA}") from None
    return lambda: PimcBot(seed=seed, think_seconds=think_seconds)


class InProcessBot:
    """A shipped bot at one seat, asked as the referee asks an in-process bot."""

    def __init__(
        self,
        kind: str,
        seat: Seat,
        state: GameState,
        names: Mapping[Seat, str],
        match_id: str,
        seed: str,
        think: float,
    ) -> None:
        self.kind = kind
        self.match_id = match_id
        self.side = BotSide(_make(kind, seed, think))
        self._requests = 0
        started = match_started_to_wire(
            match_id,
            "",
            state.config,
            table_rules_to_wire(DECISION_MS / 1000, 0.0, False),
            seat,
            [(each, names[each], "") for each in Seat],
            state.commitment,
            0,
        )
        message = new_referee_message()
        add_event(message, {"sequence": 1, "match_started": started})
        self.side.receive(message)

    def act(self, state: GameState, seat: Seat) -> Action:
        """The bot's card: a request made as the table's outbox makes one (the hand's public
        state, the seat's own cards from its view, the legal cards), answered by the bot."""
        self._requests += 1
        request = fill_request(
            new_referee_message(),
            request_id=self._requests,
            auction=state.phase is Phase.AUCTION,
            legal=state.legal_actions,
            time_left_ms=DECISION_MS,
            match_id=self.match_id,
            seat=seat,
            last_sequence=1,
            hand=hand_state(state.view(None)),
            own_cards=state.view(seat).hand,
        )
        answer = self.side.answer(request)
        return action_from_wire(answer.decision.action)


class DoubleDummy:
    """The double-dummy solver as a player: of the cards that keep its side's most tricks
    with every hand known, the lowest (ties go to the cheapest card, as a player would)."""

    def __init__(self) -> None:
        try:
            import oddtrick.double_dummy as double_dummy
        except ImportError:
            raise ReplayError(f"double-dummy play (dd) needs the strong extra: {NEEDS_EXTRA}") from None
        self._solver = double_dummy
        self.kind = "dd"

    def act(self, state: GameState, seat: Seat) -> Action:
        trick = state.current_trick
        hands = tuple(state.hand_of(each) for each in Seat)
        position = self._solver.Position(
            hands,  # type: ignore[arg-type]
            state.trumps,
            trick[0][0] if trick else seat,
            tuple(card for _, card in trick),
        )
        scores = self._solver.solve([position])[0]
        best = max(scores.values())
        return min((card for card, score in scores.items() if score == best), key=_cheapest)


def _cheapest(card: Card) -> tuple[int, int]:
    return (card.rank, card.suit)


def seat_player(
    kind: str, seat: Seat, state: GameState, names: Mapping[Seat, str], match_id: str, seed: str, think: float
) -> SeatPlayer:
    """The player ``kind`` names for ``seat`` (:data:`BOTS`)."""
    if kind not in BOTS:
        raise ReplayError(f"no bot {kind!r}: give one of {bot_names()}")
    if kind == "dd":
        return DoubleDummy()
    return InProcessBot(kind, seat, state, names, match_id, seed, think)
