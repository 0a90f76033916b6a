"""A match as JSON, for people's pages and for scripts: the one shape of a match.

``events`` is the match as a spectator is shown it, numbered as the table numbers its
spectators' events (1 is the match opening): :func:`event_json` turns each event's
value into JSON, the same function the live page uses for a match in progress, so a
live match's events are the first ones of its finished document, and the page draws
both from them (``web/static/viewer.js``). The finished match's events also carry what
a spectator is not told during play, on the call or card they belong to: the think
times, the bot's comment, and every fault at that step (:class:`~.model.Fault`).

Beside the events, for scripts (``oddtrick export --json``, docs/match-log.md): the
match re-created by the rules engine (:class:`~oddtrick_referee.replay.model.MatchReplay`):
every hand's deal, calls and cards with the trick each card won and the running
trick count, think times, faults and comments, each hand's result and the match's; and
``faults``, each seat's faults counted by kind. Cards and calls are written as the log
writes them (``QH``, ``7NT``, ``pass``) outside the events, seats as ``N``/``E``/``S``/``W``,
sides as ``NS``/``EW``; the events carry the texts people read (suit symbols, the
contract and result in words, from :mod:`oddtrick.rules._words`).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterator, Mapping
from typing import Any

from oddtrick._events import MatchOpened, MatchStopped, SpectatorEvent
from oddtrick.rules import (
    AuctionEnded,
    Call,
    CallMade,
    Card,
    CardPlayed,
    Deal,
    GameConfig,
    GameEnded,
    GameKind,
    HandEnded,
    HandStarted,
    MatchEnded,
    Seat,
    Side,
    TrickWon,
)
from oddtrick.rules._state import match_outcome
from oddtrick.rules._words import (
    call_text,
    contract_line,
    game_text,
    match_text,
    scores_text,
    seat_name,
    trumps_text,
)
from oddtrick_referee.replay.model import CallStep, Fault, MatchReplay, PlayStep

JSON_FORMAT = 1
"""The version of this document's shape; raised when a field changes meaning (fields are
only added within a version)."""


def match_to_json(match: MatchReplay) -> dict[str, Any]:
    """The match as JSON types, with ``format`` first."""
    plain = _plain(dataclasses.replace(match, events=(), late_faults=()))
    assert isinstance(plain, dict)
    del plain["events"], plain["late_faults"]
    return {
        "format": JSON_FORMAT,
        **plain,
        "events": list(match_events(match)),
        "late_faults": [fault_json(fault) for fault in match.late_faults],
        "faults": faults_json(match),
    }


def faults_json(match: MatchReplay) -> dict[str, dict[str, int]]:
    """The faults panel: each seat's faults by kind, every seat present."""
    counts = match.fault_counts()
    return {str(seat): dict(sorted(counts.get(seat, {}).items())) for seat in Seat}


def fault_json(fault: Fault) -> dict[str, Any]:
    """A fault with its words, as the page shows it."""
    return {
        "kind": fault.kind,
        "seat": str(fault.seat),
        "detail": fault.detail,
        "action": fault.action,
        "text": fault.text,
    }


def match_events(match: MatchReplay) -> Iterator[dict[str, Any]]:
    """The match's events as JSON, each call and card with how it was decided."""
    opened = MatchOpened(match.match_id, match.config, tuple(sorted(match.players.items())))
    opening = event_json(1, opened, match.classic)
    assert opening is not None
    yield opening
    hands = iter(match.hands)
    steps: Iterator[CallStep | PlayStep] = iter(())
    for number, event in enumerate(match.events, 2):
        if isinstance(event, HandStarted):
            hand = next(hands)
            steps = iter((*hand.calls, *hand.plays))
        shown = event_json(number, event, match.classic)
        if shown is None:
            continue
        if isinstance(event, CallMade | CardPlayed):
            shown.update(_decided(next(steps)))
        yield shown


def _decided(step: CallStep | PlayStep) -> dict[str, Any]:
    """How a call or card was decided: what spectators are not told during play."""
    return {
        "think_ms": step.think_ms,
        "bot_think_ms": step.bot_think_ms,
        "clock_ms": step.clock_ms,
        "fault": step.fault,
        "comment": step.comment or None,
        "faults": [fault_json(fault) for fault in step.faults],
    }


def _hands(deal: Deal | None) -> dict[str, list[str]]:
    if deal is None:
        return {}
    return {str(seat): [str(card) for card in cards] for seat, cards in deal.items()}


def _hand_started(event: HandStarted, classic: bool) -> dict[str, Any]:
    what = trumps_text(event.trumps, event.turned_card, event.cut_card) if classic else "auction"
    return {
        "type": "hand_started",
        "hand": event.hand_number,
        "dealer": str(event.dealer),
        "title": f"Hand {event.hand_number} · dealer {seat_name(event.dealer)} · {what}",
        "trumps": None if event.trumps is None else event.trumps.symbol,
        "turned": None if event.turned_card is None else str(event.turned_card),
        "cut": None if event.cut_card is None else str(event.cut_card),
        "hands": _hands(event.hands),
    }


class EventsShown:
    """The events of one match in progress as the page's JSON, in their order: it remembers
    the game the opening names (a hand's heading needs it), and gives a match's end read
    back from the wire, which holds its totals and games but not its reason in words, the
    rules' own reason, as the finished document has it."""

    def __init__(self) -> None:
        self.config: GameConfig | None = None

    def __call__(self, number: int, event: SpectatorEvent) -> dict[str, Any] | None:
        if isinstance(event, MatchOpened):
            self.config = event.config
        config = self.config
        if isinstance(event, MatchEnded) and not event.result.reason and config is not None:
            _, reason = match_outcome(config, event.result.totals, event.result.games_won)
            event = MatchEnded(dataclasses.replace(event.result, reason=reason))
        return event_json(number, event, config is None or config.game is GameKind.CLASSIC)


def event_json(number: int, event: SpectatorEvent, classic: bool) -> dict[str, Any] | None:
    """One spectator event as the page's script reads it (``None``: nothing to show);
    ``classic`` is the game (the match opening says it), which a hand's heading needs."""
    base: dict[str, Any] = {"seq": number}
    if isinstance(event, MatchOpened):
        base.update(
            type="match_started",
            players={str(seat): name for seat, name in event.players},
            match_id=event.match_id,
            classic=event.config.game is GameKind.CLASSIC,
            game=event.config.describe(),
        )
    elif isinstance(event, HandStarted):
        base.update(_hand_started(event, classic))
    elif isinstance(event, CallMade):
        base.update(type="call_made", seat=str(event.seat), call=call_text(event.call))
    elif isinstance(event, AuctionEnded):
        contract = event.contract
        base.update(
            type="auction_ended",
            contract=None if contract is None else contract_line(contract),
            text=contract_line(contract),
            leader=None if contract is None or event.leader is None else str(event.leader),
        )
    elif isinstance(event, CardPlayed):
        base.update(type="card_played", seat=str(event.seat), card=str(event.card), trick=event.trick_number)
    elif isinstance(event, TrickWon):
        base.update(
            type="trick_completed",
            number=event.trick.number,
            winner=str(event.trick.winner),
            tricks=list(event.tricks_won),
        )
    elif isinstance(event, HandEnded):
        result = event.result
        base.update(
            type="hand_ended",
            result=result.describe(),
            scores=list(result.scores_after),
            score=scores_text(result.scores_after),
            hands=_hands(event.hands),
        )
    elif isinstance(event, GameEnded):
        base.update(type="game_ended", text=game_text(event.result))
    elif isinstance(event, MatchEnded):
        base.update(type="match_ended", text=match_text(event.result))
    elif isinstance(event, MatchStopped):
        ns, ew = event.totals
        base.update(
            type="match_ended", text=f"match stopped before its end ({event.reason}), NS {ns} – EW {ew}"
        )
    else:
        return None
    return base


def _plain(value: Any) -> Any:
    if isinstance(value, Card | Call | Seat | Side):  # before int: seats and sides are IntEnums
        return str(value)
    if isinstance(value, Fault):
        return fault_json(value)
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, GameConfig):
        return value.to_dict()
    if isinstance(value, Deal):
        return {str(seat): [str(card) for card in value[seat]] for seat in Seat}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(_plain(key)): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")  # as json.dumps says it: a bug here
