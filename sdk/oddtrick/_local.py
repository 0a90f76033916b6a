"""Play bots against each other in this process, with the referee's rules.

For trying a bot out and for its unit tests: no server, no network, the same
rules engine, the same views and hooks a real referee gives. An illegal
decision raises at once (with the reason), since here it can only be a bug.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

from oddtrick._bot import Bot, BotView, bot_name, decide_sync, make_bot
from oddtrick._drive import drive
from oddtrick.rules import (
    Action,
    CallMade,
    CardPlayed,
    FixedDeal,
    GameConfig,
    GameEnded,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    Outcome,
    Seat,
    TrickWon,
)


def bot_view(
    state: GameState,
    seat: Seat,
    players: Mapping[Seat, str],
    time_left_ms: int | None = None,
    match_id: str = "",
    request_id: int = 0,
) -> BotView:
    """The :class:`BotView` of ``seat``: its engine view plus names and time."""
    view = state.view(seat)
    fields = {name: getattr(view, name) for name in view.__dataclass_fields__}
    return BotView(
        **fields,
        players=dict(players),
        time_left_ms=time_left_ms,
        match_id=match_id,
        request_id=request_id,
    )


def notify(bot: Bot, view: BotView, event: MatchEvent) -> None:
    """Call the hook of ``bot`` that ``event`` names."""
    if isinstance(event, HandStarted):
        bot.on_hand_start(view)
    elif isinstance(event, CallMade):
        bot.on_call(view, event.seat, event.call)
    elif isinstance(event, CardPlayed):
        bot.on_card(view, event.seat, event.card)
    elif isinstance(event, TrickWon):
        bot.on_trick(view, event.trick)
    elif isinstance(event, HandEnded):
        bot.on_hand_end(view, view.hand_results[event.result.hand_number - 1])
    elif isinstance(event, GameEnded):
        bot.on_game_end(view, event.result)
    elif isinstance(event, MatchEnded):
        bot.on_match_end(view, event.result)


MAX_THROWN_IN = 20
"""Hands in a row thrown in (four passes) after which :func:`play_local` stops."""


class MatchStalled(RuntimeError):
    """The bots keep throwing every hand in: the match would never end."""


def play_local(
    bots: Mapping[Seat, object],
    config: GameConfig | None = None,
    seed: str | None = None,
    max_thrown_in: int | None = MAX_THROWN_IN,
    *,
    deals: Sequence[FixedDeal] | None = None,
) -> GameState:
    """Play a whole match between ``bots`` (one per seat: Bot subclasses, instances
    or functions of a view) and return the finished state.

    Contract Whist to a target never ends if nobody ever bids: after
    ``max_thrown_in`` hands in a row thrown in (None: no limit), this raises
    :class:`MatchStalled`, which says so, rather than deal on without end.

    >>> from oddtrick import Seat, play_local
    >>> first = lambda view: view.legal_actions[0]
    >>> state = play_local({seat: first for seat in Seat}, seed="doc")
    >>> state.match_result is not None
    True
    """
    players_bots = {seat: make_bot(bots[seat]) for seat in Seat}
    state = GameState(config or GameConfig(), seed, deals=deals)
    names = {seat: bot_name(bot) for seat, bot in players_bots.items()}
    for seat, bot in players_bots.items():
        bot.on_match_start(bot_view(state, seat, names))

    def report(events: Sequence[MatchEvent]) -> None:
        if not events:
            return
        for seat, bot in players_bots.items():
            view = bot_view(state, seat, names)
            for event in events:
                notify(bot, view, event)

    report((state.hand_started(),))
    stalled = partial(_check_stalled, max_thrown_in=max_thrown_in)
    for events in drive(state, LocalBots(players_bots, names), before_deal=stalled):
        report(events)
    return state


class LocalBots:
    """The four seats' bots in this process, as the drive loop's :class:`Player`:
    each asked with its own view, its decision taken at once."""

    def __init__(self, bots: Mapping[Seat, Bot], names: Mapping[Seat, str]) -> None:
        self.bots = bots
        self.names = names

    def act(self, state: GameState, seat: Seat) -> Action:
        return decide_sync(self.bots[seat], bot_view(state, seat, self.names)).action


def _check_stalled(state: GameState, max_thrown_in: int | None) -> None:
    if max_thrown_in is None or len(state.hand_results) < max_thrown_in:
        return
    recent = state.hand_results[-max_thrown_in:]
    if all(result.outcome is Outcome.THROWN_IN for result in recent):
        raise MatchStalled(
            f"the last {max_thrown_in} hands were all thrown in (four passes), so this match "
            f"cannot end (scores {state.scores[0]}-{state.scores[1]} after {state.hand_number} hands): "
            "some bot must bid in choose_call; or give play_local max_thrown_in=None to deal on"
        )
