"""A person's seat played from a web page: a local seat whose decisions come from clicks.

To the table it is a seat like any other (``play/local_seat.py``): it is sent what the
outbox decides that seat may see, read into a :class:`~oddtrick.BotView` by the SDK's
own seat state, and its answers are refereed and logged as any bot's.

What it tells the page is the one JSON shape of a match (``replay/json_export.py``):
each event the table sends the seat, read back by the codec into the value a spectator
is given and turned into JSON by :func:`event_json`, numbered as the table numbers its
spectators' events. So the seat's events are the replay's and the live page's, from
the seat's chair: the hand's start holds the seat's own cards and no other seat's (the
four hands come with the hand's end, as to every seat), and nothing says how a decision
was made. The page folds them as the replay does (``web/static/viewer.js``). Beside
them, only what a seat alone needs: at its turn, the question, with its legal actions
and, for each card it holds but may not play (or each call of the bidding box it may not
make), the rules' reason.

The page, the desk and the table all live in the referee's trio run: events reach the
desk as the seat receives them, and a decision awaits the page's answer there.
"""

from __future__ import annotations

import time
from typing import Any

import trio

from oddtrick._bot import Bot, BotView
from oddtrick._codec import cards_from_wire, seat_from_wire
from oddtrick._codec_protocol import spectator_event_from_wire
from oddtrick._events import MatchOpened
from oddtrick._human import parse_answer
from oddtrick._in_process import BotSide
from oddtrick.rules import BIDS, DOUBLE, PASS, Action, Call, Card, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.competitions.people.seat_desk import SeatDesk
from oddtrick_referee.replay.json_export import EventsShown


class SeatEvents:
    """The events one seat is sent, as the page's JSON: numbered from the match's opening
    (1), as the table numbers its spectators' events and the finished match's document."""

    def __init__(self) -> None:
        self.number = 0
        self.seat: Seat | None = None
        self._shown = EventsShown()

    def shown(self, event: referee_pb2.Event) -> dict[str, Any] | None:
        """``event`` as the page reads it (None: a kind a spectator is not told of)."""
        value = spectator_event_from_wire(event)
        if value is None:
            return None
        if isinstance(value, MatchOpened):
            self.number = 0
            self.seat = seat_from_wire(event.match_started.seat)
        self.number += 1
        shown = self._shown(self.number, value)
        if shown is not None and shown["type"] == "hand_started" and self.seat is not None:
            shown["hands"] = {
                str(self.seat): [str(card) for card in cards_from_wire(event.hand_started.cards)]
            }
        return shown


BIDDING_BOX: tuple[Call, ...] = (*BIDS, PASS, DOUBLE)
"""The calls the page's bidding box offers: every bid, pass and double."""


def question(view: BotView, after: int) -> dict[str, Any]:
    """What the page needs at the seat's turn: the legal actions and why each card held,
    or each call of the bidding box, is not one (the rules' own words,
    :func:`oddtrick._human.parse_answer`); ``after`` is the number of the last event before it."""
    legal = view.legal_actions
    cards = isinstance(legal[0], Card)
    offered: tuple[Card | Call, ...] = view.hand if cards else BIDDING_BOX
    why_not = {str(action): parse_answer(str(action), view) for action in offered if action not in legal}
    return {
        "after": after,
        "kind": "card" if cards else "call",
        "legal": [str(action) for action in legal],
        "why_not": {action: why for action, why in why_not.items() if isinstance(why, str)},
    }


class _Person(Bot):
    """The seat's bot, for the seat state alone: the person decides through the desk."""

    name = "person"


class PagePlayer:
    """The person's local seat (a :class:`~oddtrick_referee.play.local_seat.LocalPlayer`):
    every event reaches the page as it comes, and each decision waits, without a deadline
    (the referee lifts it for this seat), for the page's answer through ``desk``."""

    def __init__(self, desk: SeatDesk) -> None:
        self._desk = desk
        self._side = BotSide(_Person)
        self._events = SeatEvents()

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        self._side.receive(message)
        self._side.read_inbox()  # the seat's state kept current, as a bot's client keeps it
        if message.WhichOneof("kind") == "update":
            for event in message.update.events:
                shown = self._events.shown(event)
                if shown is not None:
                    self._desk.publish(shown)  # the page is told at once, not with the next request

    async def decide(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        arrived = time.monotonic()
        view = self._side.view_for(request, arrived)
        answered = trio.Event()
        chosen: list[Action] = []

        def reply(action: Action) -> None:  # the desk checked it is legal
            chosen.append(action)
            answered.set()

        self._desk.ask(question(view, self._events.number), view, reply)
        await answered.wait()
        return self._side.answer_with(request, chosen[0], arrived)

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        return self._side.again(refusal)

    def finish(self) -> None:
        self._side.read_inbox()
