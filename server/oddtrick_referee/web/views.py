"""A finished match's page before its script runs: the heading, and the position the URL
names drawn on the server, so the page reads without JavaScript.

The page's script (``static/viewer.js``) draws every position itself from the match's
one JSON document (``replay/json_export.py``'s events, folded); this module only writes
the first one into the HTML, from the rules engine's own replay.
"""

from __future__ import annotations

from typing import Any

from oddtrick.rules import MatchFormat, Seat
from oddtrick.rules._words import fault_text, match_text, time_text
from oddtrick_referee.replay.model import HandReplay, MatchReplay
from oddtrick_referee.replay.terminal import trumps_line
from oddtrick_referee.storage.match_index import bot_name


def match_head(match: MatchReplay) -> dict[str, Any]:
    """The page's heading and panels: the game, the players, the result."""
    result = match.result
    return {
        "game": match.config.describe(),
        "players": {str(seat): bot_name(name) for seat, name in match.players.items()},
        "identities": {str(seat): name for seat, name in match.players.items()},
        "result": None if result is None else match_text(result).removeprefix("match over: "),
    }


def hand_head(match: MatchReplay, hand: HandReplay) -> dict[str, Any]:
    """The heading of the hand the URL names, and its numbers of calls and cards."""
    return {
        "number": hand.number,
        "dealer": str(hand.dealer),
        "trumps": trumps_line(match, hand),
        "calls": len(hand.calls),
        "plays": len(hand.plays),
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


def auction_rows(hand: HandReplay) -> list[list[dict[str, str]]]:
    """The auction in West, North, East, South columns: each call's text (with its fault, if
    the referee made it for the seat) and its tooltip (the fault in words, the think time)."""
    if not hand.calls:
        return []
    blank = {"text": "", "title": ""}
    cells = [blank] * "WNES".index(str(hand.calls[0].seat)) + [
        {
            "text": c.call.pretty + (f" ({c.fault})" if c.fault else ""),
            "title": " · ".join(
                part for part in (*(f.text for f in c.faults), time_text(c.think_ms, c.bot_think_ms)) if part
            ),
        }
        for c in hand.calls
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
