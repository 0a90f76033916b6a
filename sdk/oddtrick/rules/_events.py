"""What happened in a match, as the rules report it: frozen values, one per fact.

:meth:`GameState.step` returns the events of one action and
:meth:`GameState.start_next_hand` the start of the next hand, so whoever
drives a match (the referee's table, ``play_local``, a replay) is told what
happened by the rules themselves rather than comparing the state before and
after. Every event is public but :class:`HandStarted`'s ``hands``, the deal
itself: a harness decides who is shown it (the referee's outbox does, in one
place). :meth:`GameState.apply`, the playouts' hot path, builds none of these.
"""

from __future__ import annotations

import dataclasses
from typing import TypeAlias

from oddtrick.rules._calls import Call
from oddtrick.rules._cards import Card, Deal, Suit
from oddtrick.rules._results import Contract, GameResult, HandResult, MatchResult, Trick
from oddtrick.rules._seats import Seat


@dataclasses.dataclass(frozen=True, slots=True)
class HandStarted:
    """A hand is dealt. ``hands`` is the deal, which only its owner may show."""

    hand_number: int
    dealer: Seat
    trumps: Suit | None
    """Classic Whist's trumps (``None``: no trumps, or Contract Whist before its auction)."""
    turned_card: Card | None
    cut_card: Card | None
    hands: Deal | None
    """The four hands as dealt; ``None`` once hidden by whoever passes the event on."""


@dataclasses.dataclass(frozen=True, slots=True)
class CallMade:
    """A seat made a call in Contract Whist's auction."""

    seat: Seat
    call: Call


@dataclasses.dataclass(frozen=True, slots=True)
class AuctionEnded:
    """Contract Whist's auction is over: the contract (its declarer inside) and who leads."""

    contract: Contract | None
    """``None`` when the hand was thrown in (four passes)."""
    leader: Seat | None
    """The declarer's left, who leads to the first trick (``None``: thrown in)."""


@dataclasses.dataclass(frozen=True, slots=True)
class CardPlayed:
    """A seat played a card to trick ``trick_number`` (from 1)."""

    seat: Seat
    card: Card
    trick_number: int


@dataclasses.dataclass(frozen=True, slots=True)
class TrickWon:
    """The fourth card completed a trick: the trick, with its winner, who leads next."""

    trick: Trick
    tricks_won: tuple[int, int]
    """Tricks of each side in this hand, this one included."""


@dataclasses.dataclass(frozen=True, slots=True)
class HandEnded:
    """A hand is scored: its result as everyone may see it, and the four hands."""

    result: HandResult
    """As the views show it: a thrown-in hand's deal is hidden (``result.deal`` is ``None``)."""

    @property
    def hands(self) -> Deal | None:
        """The four hands as dealt, shown once the hand is over (``None``: thrown in)."""
        return self.result.deal


@dataclasses.dataclass(frozen=True, slots=True)
class GameEnded:
    """A game of the match is won; scores start again at 0-0 if the match goes on."""

    result: GameResult


@dataclasses.dataclass(frozen=True, slots=True)
class MatchEnded:
    """The match is over; nothing more can happen."""

    result: MatchResult


MatchEvent: TypeAlias = (
    HandStarted | CallMade | AuctionEnded | CardPlayed | TrickWon | HandEnded | GameEnded | MatchEnded
)
"""Any of the events: what :meth:`GameState.step` and :meth:`GameState.start_next_hand` return."""
