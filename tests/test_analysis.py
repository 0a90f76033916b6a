"""oddtrick analyze: the double-dummy analysis of real match logs.

The logs come from real tournaments (the referee on a socket, the sample bots
as separate processes). What the analysis says is checked against the rules
engine's own replay and against DDS asked position by position, a different
entry point of the solver from the one the analysis uses.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tournament_support import match_logs, run_tournament

from oddtrick._codec_text import parse_action
from oddtrick.analysis import analyze_logs, contract_par, render
from oddtrick.double_dummy import Position, solve
from oddtrick.rules import Card, Denomination, GameConfig, GameState, Phase, Seat, Side


def _tournament(directory: Path, game: str) -> list[Path]:
    run_tournament(directory, game=game)
    return match_logs(directory)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Path]]:
    return {game: _tournament(tmp_path_factory.mktemp(game), game) for game in ("classic", "contract")}


Before = tuple[Position, tuple[int, int]]
"""A position before a card, and the tricks each side had won by then."""


def _replayed_hands(path: Path) -> list[list[tuple[Seat, Card, Before]]]:
    """Each hand of a log as the rules engine replays it: each card, its player
    and the position it was played in."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    state = GameState(GameConfig.from_dict(records[0]["config"]), records[-1]["seed"])
    hands: list[list[tuple[Seat, Card, Before]]] = []
    for record in records[1:-1]:
        if record["type"] == "hand_start":
            if state.phase is Phase.HAND_OVER:
                state.start_next_hand()
            hands.append([])
        elif record["type"] == "action":
            seat = Seat.parse(record["seat"])
            action = parse_action(record["action"], state)
            if isinstance(action, Card):
                hands[-1].append((seat, action, _positions_now(state)))
            state.apply(action, seat)
    return [plays for plays in hands if plays]


def _positions_now(state: GameState) -> Before:
    trick = state.current_trick
    leader = trick[0][0] if trick else state.to_act
    assert leader is not None
    hands = tuple(tuple(state.hand_of(seat)) for seat in Seat)
    position = Position(hands, state.trumps, leader, tuple(card for _, card in trick))  # type: ignore[arg-type]
    return position, state.tricks_won


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_every_card_matches_the_solver_position_by_position(logs, game):
    """Before and after each card of the first hand of each log: the tricks the
    player's side has won plus DDS's best (before) and the card's (after)."""
    result = analyze_logs(logs[game])
    for path, log in zip(logs[game], result["logs"], strict=True):
        plays = _replayed_hands(path)[0]
        analysed = log["hands"][0]["cards"]
        assert len(analysed) == len(plays) == 52
        for (seat, card, (position, won)), entry in zip(plays, analysed, strict=True):
            scores = solve([position])[0]
            side = seat.side
            assert entry["seat"] == seat.name[0]
            assert entry["card"] == str(card)
            assert entry["before"] == won[side] + max(scores.values())
            assert entry["after"] == won[side] + scores[card]
            assert entry["lost"] == entry["before"] - entry["after"]


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_the_last_card_leaves_the_actual_result_and_totals_add_up(logs, game):
    result = analyze_logs(logs[game])
    per_bot: dict[str, int] = {}
    hands = 0
    for log in result["logs"]:
        for hand in log["hands"]:
            hands += 1
            last = hand["cards"][-1]
            side = Side.NORTH_SOUTH if last["seat"] in "NS" else Side.EAST_WEST
            assert last["after"] == hand["tricks"][side]
            assert sum(card["lost"] for card in hand["cards"]) == sum(hand["lost"].values())
            for seat, lost in hand["lost"].items():
                name = log["players"][seat].rpartition("~")[0]
                per_bot[name] = per_bot.get(name, 0) + lost
    assert result["hands"] == hands == 4  # 2 deals, each played twice
    assert {name: totals["lost"] for name, totals in result["bots"].items()} == per_bot
    for totals in result["bots"].values():
        assert totals["hands"] == 2 * hands  # each bot holds two seats at every hand
        assert totals["per_hand"] == totals["lost"] / totals["hands"]


def test_classic_par_is_the_double_dummy_result(logs):
    for log in analyze_logs(logs["classic"])["logs"]:
        for hand in log["hands"]:
            ns = hand["double_dummy_tricks"][0]
            expected = [ns - 6, 0] if ns >= 7 else [0, 7 - ns]
            assert hand["par"]["points"] == expected


def _table(tricks: dict[Denomination, tuple[int, int]]) -> dict[tuple[Denomination, Seat], int]:
    """A trick table from each denomination's (North-South, East-West) tricks."""
    return {
        (denomination, seat): tricks[denomination][seat.side]
        for denomination in Denomination
        for seat in Seat
    }


def test_contract_par_when_one_side_owns_the_deal():
    """North-South take ten tricks in spades and at least seven in everything:
    East-West cannot make any contract, so North-South play the cheapest spade
    contract (the score is the tricks taken, so a higher level only risks)."""
    tricks = dict.fromkeys(Denomination, (8, 5))
    tricks[Denomination.SPADES] = (10, 3)
    par = contract_par(_table(tricks), Seat.NORTH)
    assert par["contract"] in ("7S by N", "7S by S")
    assert par["points"] == [10, 3]


def test_contract_par_when_both_sides_have_a_fit():
    """North-South make 8 spades, East-West 9 hearts (and 7 elsewhere). Spades
    over hearts only push East-West up to where hearts still make, and 9
    spades would fail by one (NS 0 EW 5, no better for North-South than NS 4
    EW 9): East-West's hearts stand, at the lowest level that gets there."""
    tricks = dict.fromkeys(Denomination, (6, 7))
    tricks[Denomination.SPADES] = (8, 5)
    tricks[Denomination.HEARTS] = (4, 9)
    par = contract_par(_table(tricks), Seat.NORTH)
    assert par["points"] == [4, 9]
    assert par["contract"].endswith(("by E", "by W"))
    assert par["contract"].startswith("7H")


def test_command_prints_text_and_json(logs):
    paths = [str(path) for path in logs["contract"]]
    text = subprocess.run(
        [sys.executable, "-m", "oddtrick", "analyze", *paths], capture_output=True, text=True, check=True
    ).stdout
    assert "Tricks lost to double-dummy play, 4 hands" in text
    assert "heuristic" in text
    assert "random" in text
    data = json.loads(
        subprocess.run(
            [sys.executable, "-m", "oddtrick", "analyze", "--json", *paths],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert data == json.loads(json.dumps(analyze_logs(paths)))
    assert render(data).startswith(paths[0])


def test_a_classic_hand_names_its_trumps_with_a_suit_symbol(logs):
    lines = [line.strip() for line in render(analyze_logs([str(p) for p in logs["classic"]])).splitlines()]
    heads = [line.split(",")[0] for line in lines if line.startswith("hand ")]
    assert heads
    assert all(re.fullmatch(r"hand \d+: trumps ([♣♦♥♠]|no trumps)", head) for head in heads), heads


def test_command_refuses_what_it_cannot_analyse(tmp_path):
    missing = subprocess.run(
        [sys.executable, "-m", "oddtrick", "analyze", str(tmp_path / "none.jsonl")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2
    assert "no such log" in missing.stderr
    bogus = tmp_path / "bogus.jsonl"
    bogus.write_text('{"type": "hand_start"}\n')
    refused = subprocess.run(
        [sys.executable, "-m", "oddtrick", "analyze", str(bogus)], capture_output=True, text=True
    )
    assert refused.returncode == 1
    assert "not a match log" in refused.stderr
