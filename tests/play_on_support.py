"""Checks of a hand played on, made apart from the code that played it: the continuation is
re-applied after the log's own actions by the rules engine (which refuses an illegal card)
and the finished hand scored again, also by the scoring formulas themselves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oddtrick._log_records import MatchEnd, MatchStart, read_records
from oddtrick.deal_sets import deals_from_log
from oddtrick.rules import Action, Card, GameKind, Phase, Seat, contract_points, odd_tricks, replay
from oddtrick_referee.replay.model import replay_log


def logged_before(log: Path, hand: int, card: int) -> list[tuple[Seat, Action]]:
    """Every action of the log before hand ``hand``'s card ``card`` (its calls included)."""
    match = replay_log(log)
    actions: list[tuple[Seat, Action]] = []
    for each in match.hands[:hand]:
        actions.extend((call.seat, call.call) for call in each.calls)
        plays = each.plays if each.number < hand else each.plays[:card]
        actions.extend((play.seat, play.card) for play in plays)
    return actions


def check_played_on(log: Path, hand: int, card: int, side: dict[str, Any]) -> None:
    """``side`` (the JSON's ``played_on``) is a legal end of hand ``hand`` from card ``card``,
    and its tricks and points are the rules' for that finished hand."""
    records = list(read_records(log))
    start, end = records[0], records[-1]
    assert isinstance(start, MatchStart)
    assert isinstance(end, MatchEnd)
    match = replay_log(log)
    continuation = [(Seat.parse(p["seat"]), Card.parse(p["card"])) for p in side["plays"]]
    assert len(continuation) == 52 - card
    state = replay(
        match.config, match.seed, logged_before(log, hand, card) + continuation, deals_from_log(start, end)
    )
    assert state.phase in (Phase.HAND_OVER, Phase.MATCH_OVER)
    assert state.hand_number == hand
    result = state.hand_results[hand - 1]
    assert list(result.tricks) == side["tricks"]
    assert [result.points[i] + result.honours[i] for i in (0, 1)] == side["points"]
    assert result.describe() == side["text"]
    if match.config.game is GameKind.CONTRACT:
        assert result.contract is not None
        assert contract_points(result.contract, result.tricks)[0] == result.points
    else:
        assert (odd_tricks(result.tricks[0]), odd_tricks(result.tricks[1])) == result.points
    winners = [p["winner"] for p in side["plays"] if p["winner"]]
    assert winners == [str(t.winner) for t in state.tricks[len(state.tricks) - len(winners) :]]


def check_as_played(log: Path, hand: int, card: int, side: dict[str, Any]) -> None:
    """``side`` (the JSON's ``as_played``) is the log's own play of the hand from the step."""
    played = replay_log(log).hands[hand - 1]
    assert [(p["seat"], p["card"]) for p in side["plays"]] == [
        (str(p.seat), str(p.card)) for p in played.plays[card:]
    ]
    assert played.result is not None
    assert side["tricks"] == list(played.result.tricks)
