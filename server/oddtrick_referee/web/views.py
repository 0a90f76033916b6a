"""A replayed match as the viewer's data: plain JSON the page's script steps through.

The rules engine has already decided everything (who won each trick, the
running count, the scores); the script only removes played cards from the
hands and groups plays into tricks, so what it shows is what the engine said.
"""

from __future__ import annotations

from typing import Any

from oddtrick.rules import Card, MatchFormat, Seat
from oddtrick.rules._words import fault_text, game_text, match_text, time_text
from oddtrick_referee.replay.json_export import fault_json, faults_json
from oddtrick_referee.replay.model import HandReplay, MatchReplay
from oddtrick_referee.replay.terminal import trumps_line
from oddtrick_referee.storage.match_index import bot_name


def card_text(card: Card) -> str:
    return str(card)


def hand_view(match: MatchReplay, hand: HandReplay, scores_before: tuple[int, int]) -> dict[str, Any]:
    result = hand.result
    game = hand.game_result
    return {
        "number": hand.number,
        "dealer": str(hand.dealer),
        "trumps": trumps_line(match, hand),
        "deal": {str(seat): [card_text(c) for c in hand.deal[seat]] for seat in Seat},
        "calls": [
            {
                "seat": str(step.seat),
                "call": step.call.pretty,
                "fault": step.fault,
                "think_ms": step.think_ms,
                "bot_think_ms": step.bot_think_ms,
                "comment": step.comment or None,
                "faults": [fault_json(fault) for fault in step.faults],
            }
            for step in hand.calls
        ],
        "first": None if hand.first_leader is None else str(hand.first_leader),
        "plays": [
            {
                "seat": str(step.seat),
                "card": card_text(step.card),
                "trick": step.trick,
                "winner": None if step.winner is None else str(step.winner),
                "tricks": list(step.tricks),
                "fault": step.fault,
                "think_ms": step.think_ms,
                "bot_think_ms": step.bot_think_ms,
                "comment": step.comment or None,
                "faults": [fault_json(fault) for fault in step.faults],
            }
            for step in hand.plays
        ],
        "result": None if result is None else result.describe(),
        "scores_before": list(scores_before),
        "scores_after": None if result is None else list(result.scores_after),
        "game": None if game is None else game_text(game),
    }


def match_view(match: MatchReplay) -> dict[str, Any]:
    """The whole match for the viewer's script."""
    hands = []
    scores = (0, 0)
    for hand in match.hands:
        hands.append(hand_view(match, hand, scores))
        if hand.result is not None:
            scores = hand.result.scores_after
            if hand.result.game_won_by is not None and match.config.format is MatchFormat.RUBBER:
                scores = (0, 0)
    result = match.result
    return {
        "match_id": match.match_id,
        "game": match.config.describe(),
        "players": {str(seat): bot_name(name) for seat, name in match.players.items()},
        "identities": {str(seat): name for seat, name in match.players.items()},
        "hands": hands,
        "result": None if result is None else match_text(result).removeprefix("match over: "),
        "faults": faults_json(match),
    }


_SUITS = (("S", "♠", "black"), ("H", "♥", "red"), ("D", "♦", "red"), ("C", "♣", "black"))
_RANK_ORDER = "AKQJT98765432"


def suits_view(cards: list[str]) -> list[dict[str, Any]]:
    """A holding by suit, spades first, high cards first (the page's script does the same)."""
    return [
        {
            "suit": letter,
            "symbol": symbol,
            "colour": colour,
            "cards": sorted((c for c in cards if c[1] == letter), key=lambda c: _RANK_ORDER.index(c[0])),
        }
        for letter, symbol, colour in _SUITS
    ]


def score_text(scores: list[int] | tuple[int, int]) -> str:
    return f"NS {scores[0]} · EW {scores[1]}"


def auction_rows(hand: dict[str, Any]) -> list[list[dict[str, str]]]:
    """The auction in West, North, East, South columns: each call's text (with its fault, if
    the referee made it for the seat) and its tooltip (the fault in words, the think time)."""
    calls = hand["calls"]
    if not calls:
        return []
    blank = {"text": "", "title": ""}
    cells = [blank] * "WNES".index(calls[0]["seat"]) + [
        {
            "text": c["call"] + (f" ({c['fault']})" if c["fault"] else ""),
            "title": " · ".join(
                part
                for part in (
                    *(f["text"] for f in c["faults"]),
                    time_text(c["think_ms"], c["bot_think_ms"]),
                )
                if part
            ),
        }
        for c in calls
    ]
    return [cells[i : i + 4] for i in range(0, len(cells), 4)]


def position_view(match: MatchReplay, hand: HandReplay, card: int) -> dict[str, Any]:
    """What the table shows at a position, from the engine's own replay."""
    position = hand.position(card)
    done = [
        {
            "plays": [
                (str(s.seat), str(s.card), s.fault, time_text(s.think_ms, s.bot_think_ms)) for s in steps
            ],
            "winner": str(steps[-1].winner),
        }
        for number, steps in hand.tricks
        if steps[-1].winner is not None and number * 4 <= position.card
    ]
    played = hand.plays[: position.card]
    current = played[len(played) - len(position.trick) :]
    last = played[-1] if played else None
    at_end = position.card == hand.positions and hand.result is not None
    before = match_view_scores(match, hand)
    return {
        "holding": {str(seat): suits_view([str(c) for c in position.holding[seat]]) for seat in Seat},
        "trick": {str(seat): str(c) for seat, c in position.trick},
        "winner": None if position.trick_winner is None else str(position.trick_winner),
        "tricks": list(position.tricks),
        "done": done,
        "result": hand.result.describe() if at_end and hand.result is not None else "",
        "score": score_text(hand.result.scores_after if at_end and hand.result is not None else before),
        "trick_faults": {str(s.seat): " · ".join(f.text for f in s.faults) for s in current if s.faults},
        "last": None
        if last is None
        else {
            "seat": SEAT_NAMES[str(last.seat)],
            "card": str(last.card),
            "think": time_text(last.think_ms, last.bot_think_ms),
            "fault": fault_text(last.fault),
            "faults": [f.text for f in last.faults],
            "comment": last.comment or "",
        },
        "comments": [
            {"where": "auction", "seat": str(c.seat), "action": c.call.pretty, "comment": c.comment}
            for c in hand.calls
            if c.comment
        ]
        + [
            {"where": f"trick {p.trick}", "seat": str(p.seat), "action": p.card.pretty, "comment": p.comment}
            for p in played
            if p.comment
        ],
    }


SEAT_NAMES = {"N": "North", "E": "East", "S": "South", "W": "West"}


def match_view_scores(match: MatchReplay, hand: HandReplay) -> tuple[int, int]:
    """The game's scores before ``hand`` (a rubber starts each game at love)."""
    scores = (0, 0)
    for earlier in match.hands[: hand.number - 1]:
        if earlier.result is not None:
            scores = earlier.result.scores_after
            if earlier.result.game_won_by is not None and match.config.format is MatchFormat.RUBBER:
                scores = (0, 0)
    return scores
