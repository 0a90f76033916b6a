"""The rules say what each action did: the events of ``GameState.step`` and
``start_next_hand`` retell the match exactly as its public record has it."""

from __future__ import annotations

import random

import pytest

from oddtrick.rules import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    GameConfig,
    GameEnded,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    MatchFormat,
    Phase,
    TrickWon,
)


def _play(config: GameConfig, seed: str) -> tuple[GameState, list[MatchEvent]]:
    chooser = random.Random(seed)
    state = GameState(config, seed)
    events: list[MatchEvent] = [state.hand_started()]
    while state.phase is not Phase.MATCH_OVER:
        if state.phase is Phase.HAND_OVER:
            events.append(state.start_next_hand())
        else:
            events.extend(state.step(chooser.choice(state.legal_actions)))
    return state, events


CONFIGS = [
    GameConfig.classic(),
    GameConfig.contract(),
    GameConfig(format=MatchFormat.DEALS, deals=6),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.describe())
@pytest.mark.parametrize("seed", [f"events-{n}" for n in range(8)])
def test_events_retell_the_public_record(config: GameConfig, seed: str) -> None:
    state, events = _play(config, seed)
    public = state.view(None)
    actions = [
        (e.seat, e.call if isinstance(e, CallMade) else e.card)
        for e in events
        if isinstance(e, CallMade | CardPlayed)
    ]
    assert actions == list(state.history)
    assert [e.result for e in events if isinstance(e, HandEnded)] == list(public.hand_results)
    assert [e.result for e in events if isinstance(e, GameEnded)] == list(state.game_results)
    assert [e.result for e in events if isinstance(e, MatchEnded)] == [state.match_result]
    assert isinstance(events[-1], MatchEnded)
    started = [e for e in events if isinstance(e, HandStarted)]
    assert [e.hand_number for e in started] == list(range(1, state.hand_number + 1))
    assert [e.dealer for e in started] == [r.dealer for r in state.hand_results]


@pytest.mark.parametrize("seed", [f"events-{n}" for n in range(8)])
def test_each_hand_tells_its_order(seed: str) -> None:
    """Within a hand: calls, the auction's end, then four cards before each trick, the
    trick's winner leading the next, the hand's result last."""
    state = GameState(GameConfig.contract(), seed)
    chooser = random.Random(seed)
    for _ in range(4):
        events: list[MatchEvent] = []
        while state.to_act is not None:
            events.extend(state.step(chooser.choice(state.legal_actions)))
        ended = [i for i, e in enumerate(events) if isinstance(e, AuctionEnded)]
        assert len(ended) == 1
        auction = events[ended[0]]
        assert isinstance(auction, AuctionEnded)
        assert all(isinstance(e, CallMade) for e in events[: ended[0]])
        hand = events[ended[0] + 1 :]
        if auction.contract is None:
            assert auction.leader is None
            assert isinstance(hand[0], HandEnded)
            assert hand[0].hands is None
        else:
            assert auction.leader is auction.contract.declarer.left
            first = hand[0]
            assert isinstance(first, CardPlayed)
            assert first.seat is auction.leader
            tricks = [e for e in hand if isinstance(e, TrickWon)]
            assert [t.trick.number for t in tricks] == list(range(1, 14))
            assert sum(tricks[-1].tricks_won) == 13
            last = max(i for i, e in enumerate(hand) if isinstance(e, TrickWon))
            assert isinstance(hand[last + 1], HandEnded)
            assert hand[last + 1].hands is not None
        if state.phase is Phase.MATCH_OVER:
            break
        state.start_next_hand()
