"""The one door from the engine to a player: what a seat may see now.

Everything the referee tells a bot is built from a :class:`SeatView`; nothing
else of the engine's state reaches a player. That is the whole of the hidden
information rule, in one place that a property test checks.
"""

from __future__ import annotations

import dataclasses
import functools

from oddtrick.rules._calls import Action, Call, Denomination
from oddtrick.rules._cards import PACK, SUITS, Card, Suit
from oddtrick.rules._config import GameConfig, GameKind
from oddtrick.rules._results import (
    Contract,
    GameResult,
    HandResult,
    MatchResult,
    Phase,
    Trick,
)
from oddtrick.rules._seats import Seat


@dataclasses.dataclass(frozen=True, slots=True)
class SeatView:
    """What ``seat`` knows at one moment. ``seat`` is ``None`` for a spectator,
    who sees what a player holding no cards sees.

    ``hand_results`` reveal the four hands of a finished hand only when all 52
    cards were played (a thrown-in hand's cards are never shown); ``seed`` is
    set only once the match is over.
    """

    seat: Seat | None
    config: GameConfig
    seed_commitment: str
    phase: Phase
    hand_number: int
    dealer: Seat
    to_act: Seat | None
    hand: tuple[Card, ...]
    legal_actions: tuple[Action, ...]
    trumps: Suit | None
    turned_card: Card | None
    turned_card_face_up: bool
    cut_card: Card | None
    auction: tuple[tuple[Seat, Call], ...]
    contract: Contract | None
    current_trick: tuple[tuple[Seat, Card], ...]
    tricks: tuple[Trick, ...]
    tricks_won: tuple[int, int]
    scores: tuple[int, int]
    totals: tuple[int, int]
    games_won: tuple[int, int]
    game_number: int
    hand_results: tuple[HandResult, ...]
    game_results: tuple[GameResult, ...]
    match_result: MatchResult | None
    seed: str | None

    @property
    def played_cards(self) -> tuple[Card, ...]:
        """Every card played this hand, in order, the current trick included."""
        played = [card for trick in self.tricks for card in trick.cards]
        played.extend(card for _, card in self.current_trick)
        return tuple(played)

    def unseen_cards(self) -> tuple[Card, ...]:
        """Cards this seat has not seen: not in its hand, not played, not the
        turned card. These are what the other hands hold between them."""
        known = set(self.hand)
        known.update(self.played_cards)
        if self.turned_card is not None:
            known.add(self.turned_card)
        return tuple(card for card in PACK if card not in known)

    def cards_out(self, suit: Suit) -> tuple[Card, ...]:
        """Cards of ``suit`` not yet played and not in this seat's hand (the turned
        card included while the dealer still holds it)."""
        played = set(self.played_cards)
        mine = set(self.hand)
        return tuple(c for c in PACK if c.suit is suit and c not in played and c not in mine)

    def voids(self) -> dict[Seat, frozenset[Suit]]:
        """Suits each seat has shown out of this hand (failed to follow)."""
        shown: dict[Seat, set[Suit]] = {seat: set() for seat in Seat}
        tricks = [trick.plays for trick in self.tricks]
        if self.current_trick:
            tricks.append(self.current_trick)
        for plays in tricks:
            led = plays[0][1].suit
            for seat, card in plays[1:]:
                if card.suit is not led:
                    shown[seat].add(led)
        return {seat: frozenset(suits) for seat, suits in shown.items()}

    @property
    def denomination(self) -> Denomination | None:
        """What the hand is played in: a suit or ``Denomination.NO_TRUMPS``; ``None``
        only while Contract Whist's auction runs or once it was thrown in. (``trumps``
        is ``None`` both at no trumps and before trumps are known.)"""
        return denomination_of(self.config.game, self.trumps, self.contract)

    def hand_by_suit(self) -> dict[Suit, tuple[Card, ...]]:
        """The hand split by suit, every suit present (an empty tuple for a void), each in
        rank order: a bot's usual first step to count length and honours."""
        return {suit: tuple(c for c in self.hand if c.suit is suit) for suit in SUITS}


def denomination_of(game: GameKind, trumps: Suit | None, contract: Contract | None) -> Denomination | None:
    """The denomination a hand is played in (see :attr:`GameState.denomination`)."""
    if game is GameKind.CONTRACT:
        return None if contract is None else contract.denomination
    return Denomination.NO_TRUMPS if trumps is None else Denomination(trumps)


@functools.lru_cache(maxsize=1024)
def _without_deal(result: HandResult) -> HandResult:
    """A thrown-in hand's result with its cards hidden (they were never shown),
    made once per hand rather than once per view."""
    return dataclasses.replace(result, deal=None)


def shown_result(result: HandResult) -> HandResult:
    """A hand result as the views show it: a thrown-in hand's deal stays hidden."""
    return result if result.all_cards_played else _without_deal(result)
