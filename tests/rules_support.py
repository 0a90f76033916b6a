"""Helpers for the rules tests: random play, rigged deals and steered hands.

Nothing here knows the rules beyond what a test needs to drive the engine; the
checks themselves live in the test modules.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
from collections.abc import Iterator, Mapping
from typing import Any
from unittest import mock

from oddtrick.rules import (
    PACK,
    PASS,
    Action,
    Call,
    Card,
    Deal,
    GameConfig,
    GameState,
    Phase,
    Seat,
    Side,
    Suit,
    replay,
)
from oddtrick.rules import _state as state_module

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
NS, EW = Side.NORTH_SOUTH, Side.EAST_WEST


def cards(text: str) -> tuple[Card, ...]:
    """``"AS 10H 2C"`` → the three cards."""
    return tuple(Card.parse(word) for word in text.split())


# ------------------------------------------------------------------ random play


def random_action(rng: random.Random, state: GameState, pass_rate: float = 0.6) -> Action:
    """A legal action chosen by ``rng``.

    In play, uniform among the legal cards. In the auction, pass with
    probability ``pass_rate``, otherwise one of the next three calls above pass
    (double when allowed, then the lowest bids), so auctions stay short and
    contracts are sometimes made, as at a real table.
    """
    legal = state.legal_actions
    if state.phase is Phase.AUCTION:
        if rng.random() < pass_rate:
            return PASS
        return rng.choice(legal[1:4] or legal)
    return rng.choice(legal)


def play_match(
    config: GameConfig, seed: str, k: int, pass_rate: float = 0.6, max_hands: int = 10_000
) -> GameState:
    """A whole match of random legal actions from ``random.Random(k)``."""
    rng = random.Random(k)
    state = GameState(config, seed)
    while state.phase is not Phase.MATCH_OVER:
        if state.phase is Phase.HAND_OVER:
            if state.hand_number >= max_hands:
                break
            state.start_next_hand()
            continue
        state.apply(random_action(rng, state, pass_rate))
    return state


def finish_hand(state: GameState, rng: random.Random) -> None:
    """Play the current hand to its end with random legal actions."""
    while state.phase in (Phase.AUCTION, Phase.PLAY):
        state.apply(random_action(rng, state))


def clone(state: GameState) -> GameState:
    """An equal, independent copy, built the public way (by replay)."""
    copy = replay(state.config, state.seed, state.history)
    if copy.phase is Phase.HAND_OVER and state.phase is not Phase.HAND_OVER:
        copy.start_next_hand()
    assert copy == state
    return copy


# ----------------------------------------------------------------- rigged deals


@dataclasses.dataclass(frozen=True)
class Rig:
    """A deal to use instead of the seeded one, with its turned and cut cards.

    ``turned`` defaults to the dealer's highest card (it must be one of the
    dealer's); ``cut`` defaults to the 2♣.
    """

    deal: Deal
    turned: Card | None = None
    cut: Card | None = None


@contextlib.contextmanager
def rigged(rigs: Mapping[int, Rig]) -> Iterator[None]:
    """Within the block, deal numbers in ``rigs`` get the given deal.

    It replaces the engine's dealing function as ``_state`` looks it up; if the
    engine stops dealing through it, :func:`new_state` notices and fails.
    """
    real = state_module.deal_cards

    def fake(seed: str, number: int, dealer: Seat) -> tuple[Deal, Card, Card]:
        rig = rigs.get(number)
        if rig is None:
            return real(seed, number, dealer)
        turned = rig.turned if rig.turned is not None else rig.deal[dealer][-1]
        assert turned in rig.deal[dealer], f"the turned card {turned} is not the dealer's"
        cut = rig.cut if rig.cut is not None else Card.parse("2C")
        return rig.deal, turned, cut

    with mock.patch.object(state_module, "deal_cards", fake):
        yield


def new_state(config: GameConfig, rigs: Mapping[int, Rig], seed: str = "rigged") -> GameState:
    """A match whose first deal is ``rigs[1]`` when given; call inside :func:`rigged`."""
    state = GameState(config, seed)
    if 1 in rigs:
        assert state.deal == rigs[1].deal, (
            "the rigged deal did not reach the engine: _state no longer deals through "
            "deal_cards; update tests/rules_support.py"
        )
    return state


def build_deal(
    fixed: Mapping[Seat, str], voids: Mapping[Seat, str] | None = None, *, rotate: int = 0
) -> Deal:
    """A deal in which each seat holds the cards of ``fixed`` (e.g. ``"AC QS 10H"``)
    and no other cards of the suits in ``voids`` (e.g. ``{S: "SH"}``); the other
    cards go round the table in a fixed order (``rotate`` shifts who gets which)."""
    voids = voids or {}
    hands: dict[Seat, list[Card]] = {seat: list(cards(fixed.get(seat, ""))) for seat in Seat}
    void = {seat: {Suit.parse(letter) for letter in voids.get(seat, "")} for seat in Seat}
    taken = {card for hand in hands.values() for card in hand}
    assert len(taken) == sum(len(hand) for hand in hands.values()), "a card is fixed twice"
    rest = [card for card in PACK if card not in taken]
    # Suits some seat must avoid go first, so the seats that may take them still have room.
    rest.sort(key=lambda card: -sum(card.suit in v for v in void.values()))
    order = [Seat((i + rotate) % 4) for i in range(4)]
    turn = 0
    for card in rest:
        for step in range(4):
            seat = order[(turn + step) % 4]
            if len(hands[seat]) < 13 and card.suit not in void[seat]:
                hands[seat].append(card)
                turn = (turn + step + 1) % 4
                break
        else:
            raise AssertionError(f"no seat can take {card}")
    return Deal(hands)


# --------------------------------------------------------------- steered play


def steer(state: GameState, ns_tricks: int, attempts: int = 500) -> None:
    """Play the current hand out so that North-South take exactly ``ns_tricks``
    (see :func:`try_steer`); fail if no line of play is found."""
    if not try_steer(state, ns_tricks, attempts):
        raise AssertionError(f"no line of play found giving North-South {ns_tricks} tricks")


def try_steer(state: GameState, ns_tricks: int, attempts: int = 500) -> bool:
    """Try to play the current hand out so that North-South take exactly ``ns_tricks``.

    Each attempt plays a copy of the state: for every trick a side is picked to
    win it, and that side plays its strongest legal card, the other side its
    weakest (with a little randomness). The first attempt that lands on the
    count is played on ``state``. Deterministic: attempt ``i`` uses
    ``random.Random(i)``.
    """
    assert state.phase is Phase.PLAY
    for attempt in range(attempts):
        rng = random.Random(attempt)
        trial = clone(state)
        plays: list[Card] = []
        wants: dict[int, Side] = {}
        while trial.phase is Phase.PLAY:
            card = _steered_card(trial, ns_tricks, rng, wants)
            trial.apply(card)
            plays.append(card)
        if trial.tricks_won[0] == ns_tricks:
            for card in plays:
                state.apply(card)
            return True
    return False


def _steered_card(state: GameState, ns_tricks: int, rng: random.Random, wants: dict[int, Side]) -> Card:
    legal = [card for card in state.legal_actions if isinstance(card, Card)]
    if rng.random() < 0.15:
        return rng.choice(legal)
    number = len(state.tricks)
    if number not in wants:
        ns_need = ns_tricks - state.tricks_won[0]
        ew_need = 13 - ns_tricks - state.tricks_won[1]
        wants[number] = NS if rng.random() * (ns_need + ew_need) < ns_need else EW
    trumps = state.trumps
    trick = state.current_trick
    led = trick[0][1].suit if trick else None

    def power(card: Card) -> tuple[int, int]:
        kind = 2 if card.suit is trumps else 1 if led is None or card.suit is led else 0
        return (kind, card.rank)

    seat = state.to_act
    assert seat is not None
    ranked = sorted(legal, key=power)
    return ranked[-1] if seat.side is wants[number] else ranked[0]


# ------------------------------------------------------------- state snapshots


def _freeze(value: object) -> object:
    """An immutable copy: lists become tuples, all the way down."""
    kind = type(value)
    if kind is list or kind is tuple:
        items: Any = value
        if any(type(item) is list or type(item) is tuple for item in items):
            return tuple(_freeze(item) for item in items)
        return tuple(items)
    return value


def snapshot(state: GameState) -> dict[str, object]:
    """Every slot of the state's inside (bar the legal-action cache), frozen.

    Finer than ``==`` (which compares what follows from the history): a refused
    action must not have touched even the bookkeeping.
    """
    slots = [
        name for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ()) if name != "_legal"
    ]
    return {name: _freeze(getattr(state, name)) for name in slots if hasattr(state, name)}


def calls(state: GameState, text: str) -> None:
    """Make the calls of ``text`` (e.g. ``"pass 7C double"``) in turn."""
    for word in text.split():
        state.apply(Call.parse(word))


def honours_rig(number: int, ns_honours: int) -> Rig:
    """Deal ``number`` with hearts turned up (the dealer's 2♥) and North-South
    holding ``ns_honours`` of the A, K, Q, J of hearts, East-West the rest."""
    dealer = Seat((number - 1) % 4)
    fixed: dict[Seat, list[str]] = {seat: [] for seat in Seat}
    fixed[dealer].append("2H")
    ns_seats, ew_seats = (N, S), (E, W)
    for i, honour in enumerate(("AH", "KH", "QH", "JH")):
        seats = ns_seats if i < ns_honours else ew_seats
        fixed[seats[i % 2]].append(honour)
    deal = build_deal({seat: " ".join(held) for seat, held in fixed.items()}, rotate=number)
    return Rig(deal, turned=Card.parse("2H"))
