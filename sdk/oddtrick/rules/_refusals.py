"""The rules' refusals of an action: which seat tried what, and why not.

They name cards, calls and seats, so they sit above those values (whose own parse
errors, in :mod:`oddtrick.rules._errors`, sit below them).
"""

from __future__ import annotations

from oddtrick.rules._calls import Call
from oddtrick.rules._cards import Card, Suit
from oddtrick.rules._errors import ParseError, PositionError, Reason, RulesError
from oddtrick.rules._seats import Seat


class IllegalAction(RulesError):
    """An action the rules forbid now; the state it was tried on is unchanged."""

    reason: Reason

    def __init__(self, message: str, *, seat: Seat | None, action: Card | Call | None) -> None:
        super().__init__(message)
        self.seat = seat
        self.action = action


class NotYourTurn(IllegalAction):
    reason = Reason.NOT_YOUR_TURN

    def __init__(self, *, seat: Seat, to_act: Seat | None, action: Card | Call) -> None:
        whose = f"{to_act.name.title()}'s" if to_act is not None else "nobody's"
        super().__init__(
            f"{seat.name.title()} tried {action}, but it is {whose} turn",
            seat=seat,
            action=action,
        )
        self.to_act = to_act


class WrongPhase(IllegalAction):
    reason = Reason.WRONG_PHASE

    def __init__(self, *, seat: Seat | None, action: Card | Call | None, phase: str) -> None:
        what = f"{action} cannot be made" if action is not None else "the next hand cannot be dealt"
        super().__init__(f"{what} now: the match is in the {phase} phase", seat=seat, action=action)
        self.phase = phase


class CardNotHeld(IllegalAction):
    reason = Reason.CARD_NOT_HELD

    def __init__(self, *, seat: Seat, card: Card) -> None:
        super().__init__(f"{seat.name.title()} does not hold {card}", seat=seat, action=card)


class MustFollowSuit(IllegalAction):
    reason = Reason.MUST_FOLLOW_SUIT

    def __init__(self, *, seat: Seat, card: Card, suit: Suit) -> None:
        super().__init__(
            f"{seat.name.title()} must follow suit: {suit.name.lower()} were led "
            f"and {seat.name.title()} still holds one, so {card} is not allowed",
            seat=seat,
            action=card,
        )
        self.suit = suit


class BidTooLow(IllegalAction):
    reason = Reason.BID_TOO_LOW

    def __init__(self, *, seat: Seat, bid: Call, highest: Call) -> None:
        super().__init__(f"{bid} is not higher than the current bid {highest}", seat=seat, action=bid)
        self.highest = highest


class DoubleNotAllowed(IllegalAction):
    reason = Reason.DOUBLE_NOT_ALLOWED

    def __init__(self, *, seat: Seat, call: Call, why: str) -> None:
        super().__init__(f"double is not allowed: {why}", seat=seat, action=call)
        self.why = why


class IllegalStartingAction(PositionError):
    """One of :meth:`GameState.from_deal`'s ``actions`` cannot be made in the position
    reached by those before it.

    ``index`` counts from 0 in the list given; ``error`` is the rules' own refusal (an
    :class:`IllegalAction` such as :class:`WrongPhase`, or a :class:`ParseError` for
    text that spells no action), and ``reason`` its :class:`Reason` (``None`` for text
    that does not parse).
    """

    def __init__(self, *, index: int, action: object, error: IllegalAction | ParseError) -> None:
        super().__init__(f"action {index} ({action!s}) of the position is refused: {error}")
        self.index = index
        self.action = action
        self.error = error

    @property
    def reason(self) -> Reason | None:
        return self.error.reason if isinstance(self.error, IllegalAction) else None
