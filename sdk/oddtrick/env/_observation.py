"""What one seat observes, as the flat array a learning library feeds a network.

Made from :meth:`GameState.view` alone, the rules' one door to what a seat may know: its
own hand, every call, every card played and by whom, the trumps and the turned card, the
tricks won and the scores. Nothing else of the state reaches the array, so another
seat's unplayed cards cannot (tests check it by swapping them and comparing).

Seats are written relative to the observer, as a player thinks of the table: 0 the
observer, 1 its left (who plays next), 2 its partner, 3 its right; sides as "us" then
"them". One layout serves both games (the auction's parts stay zero in classic Whist),
so one network can read either. :data:`SEGMENTS` names every part; the docs
(docs/learning-agents.md) describe each element.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

try:
    import numpy as np
    from numpy.typing import NDArray
except ImportError as missing:
    raise ImportError(f'oddtrick.env needs {missing.name}: pip install "oddtrick[env]"') from missing

from oddtrick.env._actions import action_numbers
from oddtrick.rules import DOUBLE, PASS, Action, Call, Phase, Seat, SeatView

MAX_DEAL_POINTS: Final = 26
"""The most one side can score on one deal: 13 tricks of a doubled contract."""


@dataclasses.dataclass(frozen=True)
class Segment:
    """One named part of the observation array."""

    name: str
    start: int
    size: int
    high: float | None
    """The largest value an element takes; ``None``: a score, bounded by the episode's deals."""
    what: str

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)


def _segments(parts: Sequence[tuple[str, int, float | None, str]]) -> tuple[Segment, ...]:
    made, start = [], 0
    for name, size, high, what in parts:
        made.append(Segment(name, start, size, high, what))
        start += size
    return tuple(made)


SEGMENTS: Final = _segments(
    (
        ("hand", 52, 1, "the observer's cards now, by card number"),
        ("played", 4 * 52, 1, "cards played this deal, by relative seat then card"),
        ("trick", 4 * 52, 1, "the trick on the table, by relative seat then card"),
        ("leader", 4, 1, "who led the trick on the table (none before its first card)"),
        ("to_act", 4, 1, "whose turn it is (none once the deal is over)"),
        ("dealer", 4, 1, "the dealer"),
        ("phase", 2, 1, "auction, play (neither once the deal is over)"),
        ("trumps", 5, 1, "clubs, diamonds, hearts, spades, no trumps, once known"),
        ("turned", 52, 1, "the dealer's turned-up card (classic Whist turning trumps)"),
        ("tricks_won", 2, 13, "tricks won this deal: us, them"),
        ("bids", 35 * 4, 1, "who made each bid, by bid (7C … 13NT) then relative seat"),
        ("doubles", 35 * 4, 1, "who doubled each bid, by bid then relative seat"),
        ("passes", 4, 1, "passes in a row since the last bid or double, 0 to 3, in the auction"),
        ("contract", 35, 1, "the contract's bid, once the auction is over"),
        ("declarer", 4, 1, "the declarer, once the auction is over"),
        ("doubled", 1, 1, "the contract is doubled"),
        ("scores", 2, None, "points scored so far in the episode (its deals scored): us, them"),
        ("deals_left", 1, None, "deals still to be dealt after this one"),
    )
)
SIZE: Final = SEGMENTS[-1].start + SEGMENTS[-1].size
_AT: Final = {segment.name: segment.start for segment in SEGMENTS}
HAND, PLAYED, TRICK, LEADER, TO_ACT, DEALER, PHASE, TRUMPS, TURNED = (
    _AT[name]
    for name in ("hand", "played", "trick", "leader", "to_act", "dealer", "phase", "trumps", "turned")
)
TRICKS_WON, BIDS, DOUBLES, PASSES, CONTRACT, DECLARER, DOUBLED, SCORES, DEALS_LEFT = (
    _AT[name]
    for name in (
        "tricks_won",
        "bids",
        "doubles",
        "passes",
        "contract",
        "declarer",
        "doubled",
        "scores",
        "deals_left",
    )
)


def segment(name: str) -> Segment:
    """The part of the array called ``name`` (see :data:`SEGMENTS`)."""
    for part in SEGMENTS:
        if part.name == name:
            return part
    raise KeyError(f"no part {name!r} in the observation: {', '.join(s.name for s in SEGMENTS)}")


def highs(deals: int) -> NDArray[np.float32]:
    """Each element's largest value, in an episode of ``deals`` deals."""
    high = np.empty(SIZE, dtype=np.float32)
    for part in SEGMENTS:
        if part.name == "deals_left":
            # Not 0 with one deal: Gymnasium's checker refuses a bound equal to the low one.
            high[part.slice] = max(deals - 1, 1)
        else:
            high[part.slice] = MAX_DEAL_POINTS * deals if part.high is None else part.high
    return high


def observe(view: SeatView, deals: int) -> NDArray[np.float32]:
    """The array of what ``view``'s seat knows (``view`` is the rules' view of one seat)."""
    assert view.seat is not None, "a spectator's view has no observer"
    me = view.seat
    ones = [HAND + card.index for card in view.hand]
    ones.append(DEALER + (view.dealer - me) % 4)
    for trick in view.tricks:
        first = trick.leader - me
        for place, card in enumerate(trick.cards):
            ones.append(PLAYED + 52 * ((first + place) % 4) + card.index)
    if view.current_trick:
        ones.append(LEADER + (view.current_trick[0][0] - me) % 4)
        for seat, card in view.current_trick:
            at = 52 * ((seat - me) % 4) + card.index
            ones.append(PLAYED + at)
            ones.append(TRICK + at)
    if view.to_act is not None:
        ones.append(TO_ACT + (view.to_act - me) % 4)
    if view.phase is Phase.AUCTION:
        ones.append(PHASE)
        ones.extend(_auction(view.auction, me))
    elif view.phase is Phase.PLAY:
        ones.append(PHASE + 1)
    if view.auction:
        ones.extend(_calls(view.auction, me))
    denomination = view.denomination
    if denomination is not None:
        ones.append(TRUMPS + denomination)
    if view.turned_card is not None:
        ones.append(TURNED + view.turned_card.index)
    contract = view.contract
    if contract is not None:
        ones.append(CONTRACT + contract.bid.step)
        ones.append(DECLARER + (contract.declarer - me) % 4)
        if contract.doubled:
            ones.append(DOUBLED)
    array = np.zeros(SIZE, dtype=np.float32)
    array[ones] = 1.0
    us = me.side
    array[TRICKS_WON] = view.tricks_won[us]
    array[TRICKS_WON + 1] = view.tricks_won[1 - us]
    array[SCORES] = view.totals[us]
    array[SCORES + 1] = view.totals[1 - us]
    array[DEALS_LEFT] = deals - view.hand_number
    return array


def _calls(auction: Sequence[tuple[Seat, Call]], me: Seat) -> list[int]:
    """The bids and doubles: each bid's maker, and who doubled it."""
    ones, step = [], -1
    for seat, call in auction:
        if call.is_bid:
            step = call.step
            ones.append(BIDS + 4 * step + (seat - me) % 4)
        elif call is DOUBLE:
            ones.append(DOUBLES + 4 * step + (seat - me) % 4)
    return ones


def _auction(auction: Sequence[tuple[Seat, Call]], me: Seat) -> list[int]:
    """While the auction runs: the passes in a row since the last bid or double."""
    passes = 0
    for _, call in reversed(auction):
        if call is not PASS:
            break
        passes += 1
    return [PASSES + min(passes, 3)]


def action_mask(legal: Sequence[Action], count: int) -> NDArray[np.int8]:
    """1 at the number of each legal action, 0 elsewhere (``int8``, as Gymnasium's
    ``Discrete.sample(mask=...)`` takes it)."""
    mask = np.zeros(count, dtype=np.int8)
    mask[action_numbers(legal)] = 1
    return mask
