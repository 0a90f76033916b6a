"""The one drive loop of a match: deal when a hand is over, ask the seat to act, apply.

Everything that plays a match out in order (``play_local``, the fake referee, the
referee's table) walks the same steps: while the match is not over, deal the next
hand if the last one is over, find the seat to act, get its action, apply it with
:meth:`GameState.step`. :func:`next_turn` is that first half, one step at a time;
:func:`drive` is the whole loop for a :class:`Player` that answers at once, yielding
each step's events to whoever consumes them.

A new kind of player (a local bot, a scripted seat, a list of logged actions) is a
:class:`Player`: given the state and the seat to act, it returns that seat's action.
The referee's remote seat is not one: its decision is awaited, has a deadline and may
fault (``oddtrick_referee.play.decide``), so the table runs its own async loop over
:func:`next_turn` instead of :func:`drive`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Protocol

from oddtrick.rules import Action, GameState, HandStarted, MatchEvent, Phase, Seat


class Player(Protocol):
    """Whoever decides for the seats :func:`drive` asks: one seat or all four."""

    def act(self, state: GameState, seat: Seat) -> Action:
        """The action ``seat`` takes now (it is the seat to act in ``state``)."""
        ...


class FirstLegal:
    """A scripted player taking the first legal action (the fake referee's other seats)."""

    def act(self, state: GameState, seat: Seat) -> Action:
        return state.legal_actions[0]


def next_turn(state: GameState) -> Seat | HandStarted | None:
    """The drive loop's step before an action: ``None`` when the match is over; the
    new hand's event after dealing it when the last hand is over; else the seat to act.

    Only a finished hand changes the state here, so calling it at any moment (as a
    replay does on a logged ``hand_start``) deals exactly when the rules expect it.
    """
    phase = state.phase
    if phase is Phase.MATCH_OVER:
        return None
    if phase is Phase.HAND_OVER:
        return state.start_next_hand()
    seat = state.to_act
    assert seat is not None
    return seat


def drive(
    state: GameState,
    player: Player,
    *,
    before_deal: Callable[[GameState], None] | None = None,
    stop_at: Seat | None = None,
) -> Iterator[tuple[MatchEvent, ...]]:
    """Play ``state`` on with ``player``, yielding each step's events: a new hand's
    ``(HandStarted,)`` or what one action did, until the match is over.

    ``before_deal`` sees the state each time a hand is over, before the next is dealt
    (``play_local`` stops a match that would never end there, by raising); with
    ``stop_at``, the loop ends when that seat is to act, without asking it. The
    first hand's ``HandStarted`` (:meth:`GameState.hand_started`) is the caller's:
    a loop may start in the middle of a match.
    """
    while True:
        if before_deal is not None and state.phase is Phase.HAND_OVER:
            before_deal(state)
        turn = next_turn(state)
        if turn is None or turn is stop_at:
            return
        if isinstance(turn, HandStarted):
            yield (turn,)
            continue
        yield state.step(player.act(state, turn), turn)
