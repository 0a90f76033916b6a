"""The rules of classic Whist and Contract Whist: the one source of truth.

Pure and synchronous: no I/O, no networking, no event loop. The referee, the
SDK's bots and the replay checker all use this module, so a game means the
same thing everywhere.

>>> from oddtrick.rules import Card, GameConfig, GameState
>>> state = GameState(GameConfig.classic(), seed="example")
>>> state.phase.value, str(state.to_act), str(state.turned_card)
('play', 'E', 'AS')
"""

from oddtrick.rules._calls import BIDS, DOUBLE, PASS, Action, Call, CallKind, Denomination
from oddtrick.rules._cards import (
    PACK,
    RANKS,
    SUITS,
    Card,
    Deal,
    Rank,
    Suit,
    format_hand,
    parse_hand,
    sort_cards,
)
from oddtrick.rules._config import GameConfig, GameKind, MatchFormat, TrumpSelection
from oddtrick.rules._dealing import commitment, deal_cards, new_seed, shuffled_pack
from oddtrick.rules._errors import ConfigError, ParseError, PositionError, Reason, RulesError
from oddtrick.rules._events import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    GameEnded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    TrickWon,
)
from oddtrick.rules._fixed import FixedDeal
from oddtrick.rules._refusals import (
    BidTooLow,
    CardNotHeld,
    DoubleNotAllowed,
    IllegalAction,
    IllegalStartingAction,
    MustFollowSuit,
    NotYourTurn,
    WrongPhase,
)
from oddtrick.rules._results import (
    Contract,
    GameResult,
    HandResult,
    MatchResult,
    Outcome,
    Phase,
    Trick,
)
from oddtrick.rules._scoring import contract_points, honours_held, honours_points, odd_tricks
from oddtrick.rules._seats import SEATS, Seat, Side
from oddtrick.rules._state import GameState, replay, trumps_for_rotation
from oddtrick.rules._transcript import transcript
from oddtrick.rules._view import SeatView

__all__ = [
    "BIDS",
    "DOUBLE",
    "PACK",
    "PASS",
    "RANKS",
    "SEATS",
    "SUITS",
    "Action",
    "AuctionEnded",
    "BidTooLow",
    "Call",
    "CallKind",
    "CallMade",
    "Card",
    "CardNotHeld",
    "CardPlayed",
    "ConfigError",
    "Contract",
    "Deal",
    "Denomination",
    "DoubleNotAllowed",
    "FixedDeal",
    "GameConfig",
    "GameEnded",
    "GameKind",
    "GameResult",
    "GameState",
    "HandEnded",
    "HandResult",
    "HandStarted",
    "IllegalAction",
    "IllegalStartingAction",
    "MatchEnded",
    "MatchEvent",
    "MatchFormat",
    "MatchResult",
    "MustFollowSuit",
    "NotYourTurn",
    "Outcome",
    "ParseError",
    "Phase",
    "PositionError",
    "Rank",
    "Reason",
    "RulesError",
    "Seat",
    "SeatView",
    "Side",
    "Suit",
    "Trick",
    "TrickWon",
    "TrumpSelection",
    "WrongPhase",
    "commitment",
    "contract_points",
    "deal_cards",
    "format_hand",
    "honours_held",
    "honours_points",
    "new_seed",
    "odd_tricks",
    "parse_hand",
    "replay",
    "shuffled_pack",
    "sort_cards",
    "transcript",
    "trumps_for_rotation",
]
