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
    """A seat acted out of turn; ``to_act`` is whose turn it is (``None``: nobody's)."""

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
    """An action the match is not waiting for: a call during the play, a card during the
    auction, anything once the match is over, or dealing before the hand is over.
    ``phase`` is the :class:`Phase` value the match is in."""

    reason = Reason.WRONG_PHASE

    def __init__(self, *, seat: Seat | None, action: Card | Call | None, phase: str) -> None:
        what = f"{action} cannot be made" if action is not None else "the next hand cannot be dealt"
        super().__init__(f"{what} now: the match is in the {phase} phase", seat=seat, action=action)
        self.phase = phase


class CardNotHeld(IllegalAction):
    """A card the seat does not hold (any more)."""

    reason = Reason.CARD_NOT_HELD

    def __init__(self, *, seat: Seat, card: Card) -> None:
        super().__init__(f"{seat.name.title()} does not hold {card}", seat=seat, action=card)


class MustFollowSuit(IllegalAction):
    """A card of another suit while the seat still holds one of ``suit``, the suit led."""

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
    """A bid not higher on the ladder than ``highest``, the auction's current bid."""

    reason = Reason.BID_TOO_LOW

    def __init__(self, *, seat: Seat, bid: Call, highest: Call) -> None:
        super().__init__(f"{bid} is not higher than the current bid {highest}", seat=seat, action=bid)
        self.highest = highest


class DoubleNotAllowed(IllegalAction):
    """A double the rules do not allow now; ``why`` says which condition failed (doubling
    off, no bid yet, the bid is the doubler's own side's, already doubled)."""

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
        """The refusal's :class:`Reason`, as for any :class:`IllegalAction`; ``None`` when the
        action's text did not parse (``error`` is then a :class:`ParseError`)."""
        return self.error.reason if isinstance(self.error, IllegalAction) else None
