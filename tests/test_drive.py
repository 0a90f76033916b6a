"""The one drive loop (``oddtrick._drive``): deal, ask the seat to act, apply."""

from __future__ import annotations

import pytest

from oddtrick import Seat
from oddtrick._drive import FirstLegal, drive, next_turn, replay_actions
from oddtrick.rules import (
    Action,
    GameConfig,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchFormat,
    Phase,
    RulesError,
    replay,
)


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


def _whole_match(seed: str) -> GameState:
    state = GameState(GameConfig.classic(format=MatchFormat.DEALS, deals=2), seed)
    list(drive(state, FirstLegal()))
    return state


def _by_seat(state: GameState, line: tuple[Seat, Action]) -> tuple[Seat, Action]:
    return line


def test_until_ends_the_loop_before_any_step_even_a_deal() -> None:
    state = GameState(GameConfig.classic(), "drive-until")
    steps = list(drive(state, FirstLegal(), until=lambda: state.phase is Phase.HAND_OVER))
    assert state.phase is Phase.HAND_OVER
    assert state.hand_number == 1
    assert not any(isinstance(step[0], HandStarted) for step in steps)
    assert not list(drive(GameState(GameConfig.classic(), "drive-until"), FirstLegal(), until=lambda: True))


def test_a_replay_of_a_whole_log_gives_the_same_match_and_events() -> None:
    played = _whole_match("drive-replay")
    lines = list(played.history)
    again = GameState(played.config, "drive-replay")
    replayed = [e for step in replay_actions(again, lines, _by_seat) for e in step]
    driven = GameState(played.config, "drive-replay")
    assert replayed == [e for step in drive(driven, FirstLegal()) for e in step]
    assert again == played


@pytest.mark.parametrize("kept", [52, 52 + 7, 0])
def test_a_replay_ends_where_its_log_ends_without_dealing_a_hand_too_many(kept: int) -> None:
    played = _whole_match("drive-short")
    lines = list(played.history)[:kept]
    state = GameState(played.config, "drive-short")
    dealt: list[int] = []
    steps = list(replay_actions(state, lines, _by_seat, before_deal=lambda s: dealt.append(s.hand_number)))
    assert len([s for s in steps if not isinstance(s[0], HandStarted)]) == kept
    assert state.history == played.history[:kept]
    assert state.hand_number == (1 if kept <= 52 else 2)  # a log ending at a hand's end deals none
    assert dealt == ([1] if kept > 52 else [])
    if kept == 52:
        assert state.phase is Phase.HAND_OVER


def test_a_replay_refuses_an_action_out_of_turn_or_past_the_match_end_as_the_rules_do() -> None:
    played = _whole_match("drive-refused")
    lines = list(played.history)
    seat, action = lines[1]
    wrong = [lines[0], (seat.left, action), *lines[2:]]
    state = GameState(played.config, "drive-refused")
    with pytest.raises(RulesError, match=f"but it is {seat.name.title()}'s turn"):
        list(replay_actions(state, wrong, _by_seat))
    assert state.history == played.history[:1]  # the state as it was
    past = GameState(played.config, "drive-refused")
    with pytest.raises(RulesError):
        list(replay_actions(past, [*lines, lines[-1]], _by_seat))
    assert past.phase is Phase.MATCH_OVER
    assert past == played
