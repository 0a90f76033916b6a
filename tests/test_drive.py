"""The one drive loop (``oddtrick._drive``): deal, ask the seat to act, apply."""

from __future__ import annotations

from oddtrick import Seat
from oddtrick._drive import FirstLegal, drive, next_turn
from oddtrick.rules import Action, GameConfig, GameState, HandEnded, HandStarted, MatchEnded, Phase, replay


def test_drive_plays_a_match_to_its_end_and_reports_every_hand() -> None:
    state = GameState(GameConfig.classic(), "drive")
    steps = list(drive(state, FirstLegal()))
    events = [event for step in steps for event in step]
    assert state.phase is Phase.MATCH_OVER
    assert isinstance(events[-1], MatchEnded)
    started = [e for e in events if isinstance(e, HandStarted)]
    ended = [e for e in events if isinstance(e, HandEnded)]
    assert len(started) == len(ended) - 1  # the first hand's start is the caller's
    assert all(len(step) == 1 for step in steps if isinstance(step[0], HandStarted))
    # The same actions replayed give the same state: drive applied exactly them.
    assert replay(state.config, "drive", state.history) == state


def test_before_deal_sees_every_finished_hand_before_the_next_is_dealt() -> None:
    state = GameState(GameConfig.classic(), "drive-hook")
    seen: list[tuple[Phase, int]] = []
    list(drive(state, FirstLegal(), before_deal=lambda s: seen.append((s.phase, s.hand_number))))
    assert seen == [(Phase.HAND_OVER, number) for number in range(1, state.hand_number)]


def test_stop_at_ends_the_loop_when_that_seat_is_to_act_without_asking_it() -> None:
    state = GameState(GameConfig.classic(), "drive-stop")
    asked: list[Seat] = []

    class Recording(FirstLegal):
        def act(self, state: GameState, seat: Seat) -> Action:
            asked.append(seat)
            return super().act(state, seat)

    target = Seat.WEST if state.to_act is not Seat.WEST else Seat.NORTH
    list(drive(state, Recording(), stop_at=target))
    assert state.to_act is target
    assert target not in asked
    assert asked


def test_next_turn_deals_only_when_a_hand_is_over() -> None:
    state = GameState(GameConfig.classic(), "drive-turn")
    first = state.to_act
    assert next_turn(state) is first
    assert state.hand_number == 1
    while state.phase is not Phase.HAND_OVER:
        state.apply(state.legal_actions[0])
    turn = next_turn(state)
    assert isinstance(turn, HandStarted)
    assert turn.hand_number == 2 == state.hand_number
    assert state.phase is not Phase.HAND_OVER
