"""The exceptions the rules raise: one base, split by cause.

This module holds the base and the errors the values themselves raise (text that
spells nothing, a configuration that contradicts itself), so the cards, calls and
seats can raise them; the refusals of an action, which name those values, are in
:mod:`oddtrick.rules._refusals`, one floor up. Every refusal carries a
machine-readable :class:`Reason` so the referee can forward it to a bot unchanged,
and a message that names the offending input, so a bug report is self-contained.
"""

from __future__ import annotations

import enum


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


class Reason(enum.Enum):
    """Why an action was refused; stable codes shared with the protocol."""

    NOT_YOUR_TURN = "not_your_turn"
    WRONG_PHASE = "wrong_phase"
    CARD_NOT_HELD = "card_not_held"
    MUST_FOLLOW_SUIT = "must_follow_suit"
    BID_TOO_LOW = "bid_too_low"
    DOUBLE_NOT_ALLOWED = "double_not_allowed"
