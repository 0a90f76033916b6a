"""The one drive loop of a match: deal when a hand is over, ask the seat to act, apply.

Everything that plays a match out in order (``play_local``, the fake referee, the
referee's table, a replay of a log) walks the same steps: while the match is not over,
deal the next hand if the last one is over, find the seat to act, get its action,
apply it with :meth:`GameState.step`. :func:`next_turn` is that first half, one step at a time;
:func:`drive` is the whole loop for a :class:`Player` that answers at once, yielding
each step's events to whoever consumes them.

A new kind of player (a local bot, a scripted seat, a list of logged actions) is a
:class:`Player`: given the state and the seat to act, it returns that seat's action.
A log's actions are one (:class:`Logged`), driven by :func:`replay_actions`, which
ends where the log does: no hand is dealt after the last logged action.
The referee's remote seat is not one: its decision is awaited, has a deadline and may
fault (``oddtrick_referee.play.table``), so the table runs its own async loop over
:func:`next_turn` instead of :func:`drive`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Generic, Protocol, TypeVar

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


Line = TypeVar("Line")


class Logged(Generic[Line]):
    """A log's actions as a player: each logged line read (``read``: the seat the line
    names and its action, in the light of the state) when the rules ask for it, so a
    line is read only once every line before it is applied."""

    def __init__(self, lines: Sequence[Line], read: Callable[[GameState, Line], tuple[Seat, Action]]) -> None:
        self._lines = lines
        self._read = read
        self._next = 0

    @property
    def done(self) -> bool:
        """Every line has been read."""
        return self._next == len(self._lines)

    def act(self, state: GameState, seat: Seat) -> Action:
        logged, action = self._read(state, self._lines[self._next])
        self._next += 1
        if logged is not seat:
            state.apply(action, logged)  # refused, not being that seat's turn: the rules say why
        return action

    def past_the_end(self, state: GameState) -> None:
        """A line left once the match is over is read and refused by the rules (the match
        is over), as any action would be; none left, nothing happens."""
        if not self.done:
            logged, action = self._read(state, self._lines[self._next])
            self._next += 1
            state.apply(action, logged)


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
    until: Callable[[], bool] | None = None,
) -> Iterator[tuple[MatchEvent, ...]]:
    """Play ``state`` on with ``player``, yielding each step's events: a new hand's
    ``(HandStarted,)`` or what one action did, until the match is over.

    ``before_deal`` sees the state each time a hand is over, before the next is dealt
    (``play_local`` stops a match that would never end there, by raising); with
    ``stop_at``, the loop ends when that seat is to act, without asking it; with
    ``until``, it ends before any step (a deal too) once that says so (a replay's log
    has ended). The first hand's ``HandStarted`` (:meth:`GameState.hand_started`) is
    the caller's: a loop may start in the middle of a match.
    """
    while True:
        if until is not None and until():
            return
        if before_deal is not None and state.phase is Phase.HAND_OVER:
            before_deal(state)
        turn = next_turn(state)
        if turn is None or turn is stop_at:
            return
        if isinstance(turn, HandStarted):
            yield (turn,)
            continue
        yield state.step(player.act(state, turn), turn)


def replay_actions(
    state: GameState,
    lines: Sequence[Line],
    read: Callable[[GameState, Line], tuple[Seat, Action]],
    *,
    before_deal: Callable[[GameState], None] | None = None,
) -> Iterator[tuple[MatchEvent, ...]]:
    """:func:`drive` with a log's actions (:class:`Logged`), yielding each step's events,
    ending where the log ends: after its last action, even mid-match, no hand is dealt
    (nor ``before_deal`` called, as :func:`drive` has it).

    The rules refuse what the log holds against them (``RulesError``, the state as it
    was): an action out of turn, an illegal one, one past the match's end.
    """
    player = Logged(lines, read)
    yield from drive(state, player, before_deal=before_deal, until=lambda: player.done)
    player.past_the_end(state)
