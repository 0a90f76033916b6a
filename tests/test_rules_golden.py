"""Golden transcripts: whole matches pinned byte for byte in tests/golden/*.txt.

Each golden match is a fixed configuration and seed string, played by
``random.Random(k)`` choosing among ``state.legal_actions``
(``rules_support.random_action``: uniform among legal cards; in the auction
pass with probability 0.6, otherwise one of the three calls above pass). Its
transcript (``oddtrick.rules.transcript``) is compared exactly with the file.

After a deliberate change to the rules or to the transcript layout, regenerate
the files and review the diff before committing:

    python -m pytest tests/test_rules_golden.py --update-golden

The transcript ends with the match's history in machine form, so each file can
also be re-created on its own with ``replay()``; a test checks that too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rules_support import Rig, build_deal, new_state, play_match, rigged

from oddtrick.rules import (
    Call,
    Card,
    GameConfig,
    GameState,
    MatchFormat,
    Outcome,
    Phase,
    Seat,
    TrumpSelection,
    replay,
    transcript,
)

GOLDEN = Path(__file__).parent / "golden"

# name: (configuration, seed string, k of random.Random(k))
MATCHES: dict[str, tuple[GameConfig, str, int]] = {
    "classic_game": (GameConfig.classic(), "golden/classic-game", 0),
    "classic_honours_rubber": (
        GameConfig.classic(honours=True, format=MatchFormat.RUBBER),
        "golden/classic-honours-rubber",
        5,
    ),
    "classic_cut_deals": (
        GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.DEALS, deals=6),
        "golden/classic-cut-deals",
        0,
    ),
    "classic_rotation_no_trumps_10_deals": (
        GameConfig.classic(
            trump_selection=TrumpSelection.FIXED_ROTATION,
            no_trump_every_fifth=True,
            format=MatchFormat.DEALS,
            deals=10,
        ),
        "golden/classic-rotation",
        0,
    ),
    "contract_game_to_50": (GameConfig.contract(target=50), "golden/contract-game-50", 0),
    "contract_doubling_rubber": (
        GameConfig.contract(doubling=True, format=MatchFormat.RUBBER),
        "golden/contract-doubling-rubber",
        1,
    ),
}

_played: dict[str, GameState] = {}


def played(name: str) -> GameState:
    if name not in _played:
        config, seed, k = MATCHES[name]
        _played[name] = play_match(config, seed, k)
    return _played[name]


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.txt"


def read_golden(name: str) -> str:
    path = golden_path(name)
    if not path.exists():
        pytest.fail(f"{path} is missing; create it with --update-golden")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(MATCHES))
def test_transcript_matches_golden_file(name: str, request: pytest.FixtureRequest) -> None:
    text = transcript(played(name))
    path = golden_path(name)
    if request.config.getoption("--update-golden"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    expected = read_golden(name)
    assert text == expected, f"{path} differs; rerun with --update-golden if intended"


def parse_transcript(text: str) -> tuple[GameConfig, str, list[tuple[Seat, Card | Call]]]:
    """The configuration, seed and history written in a transcript."""
    lines = text.splitlines()
    fields = dict(line.split(": ", 1) for line in lines[1:6])
    config = GameConfig.from_dict(json.loads(fields["config"]))
    seed = json.loads(fields["seed"])
    history: list[tuple[Seat, Card | Call]] = []
    start = lines.index("## History")
    for line in lines[start + 1 :]:
        head, _, actions = line.partition(": ")
        kind = head.split()[-1]
        assert kind in ("calls", "cards"), line
        for item in actions.split():
            seat_text, _, action_text = item.partition(":")
            action = Call.parse(action_text) if kind == "calls" else Card.parse(action_text)
            history.append((Seat.parse(seat_text), action))
    return config, seed, history


@pytest.mark.parametrize("name", sorted(MATCHES))
def test_golden_file_replays_to_the_same_match(name: str) -> None:
    config, seed, history = parse_transcript(read_golden(name))
    state = replay(config, seed, history)
    assert state == played(name)
    assert state.phase is Phase.MATCH_OVER
    assert transcript(state) == read_golden(name)


def test_transcript_of_a_match_in_progress_shows_the_current_hand() -> None:
    config, seed, _ = MATCHES["contract_game_to_50"]
    whole = played("contract_game_to_50")
    # Stop in the middle of the second hand's play.
    second = [i for i, (_, action) in enumerate(whole.history) if isinstance(action, Card)]
    cut = second[13 * 4 + 6]
    state = replay(config, seed, whole.history[:cut])
    text = transcript(state)
    assert "(hand in progress)" in text
    assert "(in progress)" in text.split("(hand in progress)")[0].splitlines()[-1]
    assert "## Match" not in text
    assert f"status: hand {state.hand_number}, play, {state.to_act.name.title()} to act" in text
    # Everything before the current hand is exactly as in the finished match.
    finished = transcript(whole)
    prefix = text.split(f"## Hand {state.hand_number} ")[0]
    assert finished.replace("status: match over", text.splitlines()[5]).startswith(prefix)


def test_transcript_after_the_next_hand_is_dealt_shows_the_new_deal() -> None:
    config, seed, _ = MATCHES["classic_game"]
    whole = played("classic_game")
    state = replay(config, seed, whole.history[:52])
    assert state.phase is Phase.HAND_OVER
    state.start_next_hand()
    text = transcript(state)
    assert f"deal: {state.deal}" in text
    assert text.count("## Hand ") == 2


def test_transcript_is_deterministic_and_does_not_change_the_state() -> None:
    state = played("classic_honours_rubber")
    before = replay(state.config, state.seed, state.history)
    assert transcript(state) == transcript(state)
    assert state == before


def test_golden_matches_cover_the_features_they_are_named_for() -> None:
    """Regenerating with other choices must not quietly lose what the files pin."""
    honours = played("classic_honours_rubber")
    assert sorted(honours.games_won) == [1, 2]
    assert any(any(r.honours_barred) for r in honours.hand_results)
    assert any(g.by_honours for g in honours.game_results)
    rotation = played("classic_rotation_no_trumps_10_deals")
    assert [r.trumps is None for r in rotation.hand_results].count(True) == 2
    cut = played("classic_cut_deals")
    assert all(r.cut_card is not None for r in cut.hand_results)
    rubber = played("contract_doubling_rubber")
    outcomes = {r.outcome for r in rubber.hand_results}
    assert outcomes == {Outcome.MADE, Outcome.FAILED, Outcome.THROWN_IN}
    assert any(r.contract is not None and r.contract.doubled for r in rubber.hand_results)
    short = played("contract_game_to_50")
    assert max(short.scores) >= 50
    assert any(r.outcome is Outcome.THROWN_IN for r in short.hand_results)


def test_transcript_refuses_a_state_its_seed_cannot_explain() -> None:
    """The transcript re-deals every hand from the seed, so a state whose deal did not
    come from its seed (here a rigged one) is refused rather than misreported."""
    deal = build_deal({Seat.NORTH: "AS KS QS"})
    with rigged({1: Rig(deal)}):
        state = new_state(GameConfig.classic(), {1: Rig(deal)})
    with pytest.raises(ValueError, match="does not match"):
        transcript(state)
