"""Double-dummy solving of whist positions, with Bo Haglund's DDS (bundled by endplay).

Whist's card play is bridge's without a dummy: four hands, follow suit, the
highest trump or card of the suit led wins, the winner leads. So a bridge
double-dummy solver answers exactly the question "with every card known and
perfect play from here, how many more tricks does each side take?". DDS is
the solver every bridge program uses; we only translate positions into its
structures and batch them, so that many positions cost one call.

endplay (and with it numpy and matplotlib) is an optional dependency: install
``oddtrick[strong]``. Importing this module without it raises an ImportError
that says so.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final, TypeAlias

from oddtrick.rules import Card, Denomination, Rank, Seat, Suit

try:
    from endplay import _dds  # DDS itself through ctypes; the typed wrappers add nothing we need
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "double-dummy solving needs endplay: pip install 'oddtrick[strong]' (or pip install endplay)"
    ) from error

__all__ = [
    "BATCH",
    "Hands",
    "Position",
    "analyse_plays",
    "max_tricks",
    "solve",
    "trick_tables",
]

BATCH: Final = _dds.MAXNOOFBOARDS
"""Positions DDS takes in one call (it shares them among its threads)."""
_TABLE_BATCH: Final = _dds.MAXNOOFTABLES

_DDS_SUIT: Final = (3, 2, 1, 0)
"""Our suit (clubs 0 … spades 3) -> DDS's (spades 0 … clubs 3); the same map both ways."""
_NO_TRUMPS: Final = 4

_ONE_CALL_AT_A_TIME: Final = threading.Lock()
"""DDS keeps its search memory per thread index and its batches in globals: two Python
threads in it at once (ctypes lets go of the GIL) corrupt each other's input — "AnalysePlay
input error" from a web page's analysis beside an analyze run in one process. Every call
holds this lock; DDS shares a batch among its own threads inside one call."""


Hands: TypeAlias = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
"""Four hands, North first."""


@dataclasses.dataclass(frozen=True, slots=True)
class Position:
    """A moment of a hand with every card known.

    ``hands`` are the cards each seat still holds (North first); ``leader`` led
    the current trick, whose cards so far are ``trick`` (at most three), or
    leads the next one when ``trick`` is empty.
    """

    hands: Hands
    trumps: Suit | None
    leader: Seat
    trick: tuple[Card, ...] = ()

    @property
    def to_play(self) -> Seat:
        """The seat whose card comes next: ``leader``, or the one after the last card of ``trick``."""
        return Seat((self.leader + len(self.trick)) % 4)


def _strain(trumps: Suit | None) -> int:
    return _NO_TRUMPS if trumps is None else _DDS_SUIT[trumps]


def _fill(target: Any, position: Position) -> None:
    """Write ``position`` into a DDS ``deal`` structure."""
    target.trump = _strain(position.trumps)
    target.first = int(position.leader)
    for index in range(3):
        if index < len(position.trick):
            card = position.trick[index]
            target.currentTrickSuit[index] = _DDS_SUIT[card.suit]
            target.currentTrickRank[index] = int(card.rank)
        else:
            target.currentTrickSuit[index] = 0
            target.currentTrickRank[index] = 0
    for seat in range(4):
        holdings = [0, 0, 0, 0]
        for card in position.hands[seat]:
            holdings[_DDS_SUIT[card.suit]] |= 1 << card.rank
        row = target.remainCards[seat]
        for suit in range(4):
            row[suit] = holdings[suit]


def _chunks(count: int, size: int) -> Iterator[range]:
    for start in range(0, count, size):
        yield range(start, min(start + size, count))


def solve(positions: Sequence[Position]) -> list[dict[Card, int]]:
    """For each position, every legal card of the seat to play and the tricks
    that seat's side then takes from the current trick on (the current trick
    included), both sides playing perfectly afterwards.

    Each position must have between one and thirteen cards per hand,
    consistent with the trick so far. Positions are solved one after another
    on one thread: a caller with a time budget can stop between them, and on a
    busy machine DDS's own threads only contend with each other.
    """
    results: list[dict[Card, int]] = []
    target = _dds.deal()
    future = _dds.futureTricks()
    for position in positions:
        _fill(target, position)
        with _ONE_CALL_AT_A_TIME:
            _dds.SolveBoard(target, -1, 3, 1, future, 0)  # every legal card with its score
        results.append(_card_scores(future))
    return results


def max_tricks(positions: Sequence[Position]) -> list[int]:
    """For each position, the most tricks the side to play takes from the
    current trick on: one search, cheaper than :func:`solve`'s one per card."""
    results: list[int] = []
    target = _dds.deal()
    future = _dds.futureTricks()
    for position in positions:
        _fill(target, position)
        with _ONE_CALL_AT_A_TIME:
            _dds.SolveBoard(target, -1, 1, 1, future, 0)
        results.append(future.score[0])
    return results


def _card_scores(future: Any) -> dict[Card, int]:
    """DDS's answer (one entry per group of equal cards) spread over every card."""
    scores: dict[Card, int] = {}
    for entry in range(future.cards):
        score = future.score[entry]
        if score < 0:
            continue
        suit = Suit(_DDS_SUIT[future.suit[entry]])
        holding = (1 << future.rank[entry]) | future.equals[entry]
        for rank in Rank:
            if holding >> rank & 1:
                scores[Card(suit, rank)] = score
    return scores


def analyse_plays(starts: Sequence[Position], plays: Sequence[Sequence[Card]]) -> list[list[int]]:
    """For each hand, the double-dummy tricks of the side that did *not* lead
    its first trick (the dealer's side in classic Whist, the declarer's in
    Contract Whist), counted over the whole hand: before any card, then after
    each card of ``plays`` (so ``len(play) + 1`` numbers, the tricks already
    won included). DDS walks each play keeping its search between consecutive
    cards, and shares the hands among its threads.

    Each start must be a full hand's first position (empty trick).
    """
    if len(starts) != len(plays):
        raise ValueError("one play per starting position")
    results: list[list[int]] = []
    for chunk in _chunks(len(starts), BATCH):
        boards = _dds.boards()
        boards.noOfBoards = len(chunk)
        traces = _dds.playTracesBin()
        traces.noOfBoards = len(chunk)
        for slot, index in enumerate(chunk):
            if starts[index].trick:
                raise ValueError("analyse_plays needs positions at the start of a trick")
            _fill(boards.deals[slot], starts[index])
            boards.target[slot] = -1
            boards.solutions[slot] = 3
            boards.mode[slot] = 0
            trace = traces.plays[slot]
            trace.number = len(plays[index])
            for step, card in enumerate(plays[index]):
                trace.suit[step] = _DDS_SUIT[card.suit]
                trace.rank[step] = int(card.rank)
        solved = _dds.solvedPlays()
        with _ONE_CALL_AT_A_TIME:
            _dds.AnalyseAllPlaysBin(boards, traces, solved, 1)
        for slot in range(len(chunk)):
            answer = solved.solved[slot]
            results.append([answer.tricks[step] for step in range(answer.number)])
    return results


def trick_tables(hands: Sequence[Hands]) -> list[dict[tuple[Denomination, Seat], int]]:
    """For each full deal (four hands of thirteen, North first), the tricks the
    side of each declarer takes in each denomination, the declarer's left
    leading: the table a par calculation starts from."""
    tables: list[dict[tuple[Denomination, Seat], int]] = []
    for chunk in _chunks(len(hands), _TABLE_BATCH):
        deals = _dds.ddTableDeals()
        deals.noOfTables = len(chunk)
        for slot, index in enumerate(chunk):
            for seat in range(4):
                holdings = [0, 0, 0, 0]
                for card in hands[index][seat]:
                    holdings[_DDS_SUIT[card.suit]] |= 1 << card.rank
                for suit in range(4):
                    deals.ddTableDeal[slot].cards[seat][suit] = holdings[suit]
        results = _dds.ddTablesRes()
        pars = _dds.allParResults()
        with _ONE_CALL_AT_A_TIME:
            _dds.CalcAllTables(deals, -1, [0, 0, 0, 0, 0], results, pars)
        for slot in range(len(chunk)):
            table = results.results[slot].resTable
            tables.append(
                {
                    (denomination, seat): table[_strain(denomination.suit)][seat]
                    for denomination in Denomination
                    for seat in Seat
                }
            )
    return tables
