"""Public events of a match, read off a :class:`GameState` as it moves.

The engine keeps no event list (it would slow every playout); instead an
:class:`EventCursor` remembers how much of the public record it has reported
and, when asked, returns what happened since. The referee turns these into
wire events and the in-process runner into bot hooks, so both report the
same things in the same order.
"""

from __future__ import annotations

import dataclasses
from typing import TypeAlias

from oddtrick.rules import (
    Call,
    Card,
    Contract,
    GameResult,
    GameState,
    HandResult,
    MatchResult,
    Phase,
    Seat,
    Trick,
)


@dataclasses.dataclass(frozen=True, slots=True)
class HandStarted:
    hand_number: int


@dataclasses.dataclass(frozen=True, slots=True)
class CallMade:
    seat: Seat
    call: Call


@dataclasses.dataclass(frozen=True, slots=True)
class AuctionEnded:
    contract: Contract | None
    """``None`` when the hand was thrown in."""


@dataclasses.dataclass(frozen=True, slots=True)
class CardPlayed:
    seat: Seat
    card: Card
    trick_number: int


@dataclasses.dataclass(frozen=True, slots=True)
class TrickCompleted:
    trick: Trick
    tricks_won: tuple[int, int]


@dataclasses.dataclass(frozen=True, slots=True)
class HandEnded:
    result: HandResult


@dataclasses.dataclass(frozen=True, slots=True)
class GameEnded:
    result: GameResult


@dataclasses.dataclass(frozen=True, slots=True)
class MatchEnded:
    result: MatchResult


MatchEvent: TypeAlias = (
    HandStarted | CallMade | AuctionEnded | CardPlayed | TrickCompleted | HandEnded | GameEnded | MatchEnded
)


class EventCursor:
    """Reports, in order, the public events of ``state`` not yet reported."""

    def __init__(self, state: GameState) -> None:
        self._state = state
        self._hand = 0
        self._calls = 0
        self._auction_over = False
        self._tricks = 0
        self._cards = 0
        self._hands_scored = 0
        self._games = 0
        self._match_over = False

    def poll(self) -> list[MatchEvent]:
        state = self._state
        events: list[MatchEvent] = []
        new_hand = state.hand_number != self._hand
        if new_hand:
            self._hand = state.hand_number
            self._calls = self._tricks = self._cards = 0
            self._auction_over = False
            events.append(HandStarted(state.hand_number))
        phase = state.phase
        hand_over = phase is Phase.HAND_OVER or phase is Phase.MATCH_OVER
        # The public record only grows; read the (tuple-building) parts of it
        # only when a cheap counter says something new is there.
        if not self._auction_over:
            auction = state.auction
            for seat, call in auction[self._calls :]:
                events.append(CallMade(seat, call))
            self._calls = len(auction)
            if state.contract is not None or (auction and hand_over):
                self._auction_over = True
                events.append(AuctionEnded(state.contract))
        won = state.tricks_won
        if won[0] + won[1] > self._tricks:
            tricks = state.tricks
            for trick in tricks[self._tricks :]:
                for seat, card in trick.plays[self._cards :]:
                    events.append(CardPlayed(seat, card, trick.number))
                self._cards = 0
                events.append(TrickCompleted(trick, _won_after(tricks, trick.number)))
            self._tricks = len(tricks)
        current = state.current_trick
        for seat, card in current[self._cards :]:
            events.append(CardPlayed(seat, card, self._tricks + 1))
        self._cards = len(current)
        if hand_over or new_hand:
            results = state.hand_results
            for result in results[self._hands_scored :]:
                events.append(HandEnded(result))
            self._hands_scored = len(results)
            games = state.game_results
            for game in games[self._games :]:
                events.append(GameEnded(game))
            self._games = len(games)
        if state.match_result is not None and not self._match_over:
            self._match_over = True
            events.append(MatchEnded(state.match_result))
        return events


def _won_after(tricks: tuple[Trick, ...], number: int) -> tuple[int, int]:
    won = [0, 0]
    for trick in tricks[:number]:
        won[trick.winner.side] += 1
    return (won[0], won[1])
