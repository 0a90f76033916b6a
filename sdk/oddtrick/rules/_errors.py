"""The exceptions the rules raise: one base, split by cause.

Every refusal carries a machine-readable :class:`Reason` so the referee can
forward it to a bot unchanged, and a message that names the offending input,
so a bug report is self-contained.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oddtrick.rules._calls import Call
    from oddtrick.rules._cards import Card, Suit
    from oddtrick.rules._seats import Seat


class RulesError(Exception):
    """Base of every error raised by the rules module."""


class ParseError(RulesError, ValueError):
    """Text that does not spell a card, call, hand, deal or seat."""


class ConfigError(RulesError, ValueError):
    """A game configuration that is invalid or self-contradictory."""


class PositionError(RulesError, ValueError):
    """A starting position (:meth:`GameState.from_deal`) that cannot arise under its
    configuration: a deal that is not a deal, a turned card the dealer does not hold,
    scores past the target, an action the rules refuse…

    The one type every refusal of ``from_deal`` shares, so a harness that builds
    positions catches it alone; the cause of a refusal it wraps (the text that did
    not parse) is its ``__cause__``.
    """


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


class Reason(enum.Enum):
    """Why an action was refused; stable codes shared with the protocol."""

    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    CARD_NOT_HELD = "card_not_held"
    MUST_FOLLOW_SUIT = "must_follow_suit"
    BID_TOO_LOW = "bid_too_low"
    DOUBLE_NOT_ALLOWED = "double_not_allowed"


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
