"""DDS from several threads of one process: a web page's analysis beside an ``oddtrick
analyze``, or a tournament's double-dummy skill beside its web page. DDS keeps its
memory per thread index and its batches in globals, so two threads in it at once once
gave "AnalysePlay input error"; every call now takes its turn."""

from __future__ import annotations

import random
import threading

from oddtrick.double_dummy import Position, analyse_plays, max_tricks
from oddtrick.rules import Card, GameConfig, GameState, Seat

THREADS = 3
ROUNDS = 2


def _random_hands(count: int) -> tuple[list[Position], list[list[Card]]]:
    """``count`` classic hands played at random: each first position and its 52 cards."""
    chooser = random.Random(7)
    starts: list[Position] = []
    plays: list[list[Card]] = []
    for number in range(count):
        state = GameState(GameConfig.classic(), f"dds-threads-{number}")
        leader = state.to_act
        assert leader is not None
        hands = tuple(tuple(state.hand_of(seat)) for seat in Seat)
        starts.append(Position(hands, state.trumps, leader, ()))  # type: ignore[arg-type]
        cards: list[Card] = []
        while len(cards) < 52:
            card = chooser.choice(state.legal_actions)
            assert isinstance(card, Card)
            state.apply(card)
            cards.append(card)
        plays.append(cards)
    return starts, plays


def test_threads_solving_at_once_get_what_one_thread_gets() -> None:
    starts, plays = _random_hands(8)
    expected_plays = analyse_plays(starts, plays)
    expected_tricks = max_tricks(starts)
    got: list[object] = []
    errors: list[BaseException] = []

    def solve_again() -> None:
        try:
            for _ in range(ROUNDS):
                got.append(analyse_plays(starts, plays))
                got.append(max_tricks(starts))
        except BaseException as error:  # the test names it below
            errors.append(error)

    threads = [threading.Thread(target=solve_again) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert got.count(expected_plays) == THREADS * ROUNDS
    assert got.count(expected_tricks) == THREADS * ROUNDS
