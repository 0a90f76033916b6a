"""Between a person's page and their seat: the seat's events, its question, the answer.

A :class:`SeatDesk` lives on the page's trio thread. The seat (:mod:`.browser_seat`)
publishes each event it is sent (the one JSON shape of a match) and, at its turn, puts a
question; the page follows the events and the open question and sends an answer, which
the desk checks before the seat ever sees it. An answer that is not one of the seat's
legal actions, or comes when the seat is not asked, is refused with its reason in one
line and changes nothing: the seat goes on waiting for a legal one, so no illegal
decision leaves this process (the referee would refuse it anyway, and log the refusal).
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any, Literal, TypeAlias

import trio

from oddtrick._bot import BotView
from oddtrick._human import parse_answer
from oddtrick.rules import Action, Card, Seat

Shown: TypeAlias = tuple[Literal["event", "asked"], dict[str, Any]]
"""What a page is sent: an event of the match, or the seat's question."""


@dataclasses.dataclass
class _Question:
    shown: dict[str, Any]
    view: BotView
    reply: Callable[[Action], None]


class SeatDesk:
    """One person's seat as their page sees it. ``token`` is the secret in the page's
    address: whoever has it plays the seat, and nobody else can see its hand."""

    def __init__(self, token: str | None = None, seat: Seat = Seat.SOUTH) -> None:
        self.token = token or secrets.token_urlsafe(18)
        self.seat = seat
        """The person's seat: the page puts it at the bottom of the table."""
        self.events: list[dict[str, Any]] = []
        """The seat's events, in the one JSON shape of a match (numbered from 1)."""
        self.match_id = ""
        self.log_path = ""
        self.over = False
        """The match has ended (or stopped): no more events."""
        self.error = ""
        self.end_seen = trio.Event()
        """A page was sent every event up to the end."""
        self._question: _Question | None = None
        self._asked = 0
        """Questions put so far: each one's number, so a page tells a new one from one answered."""
        self._changed = trio.Event()
        self.followers = 0
        """Pages following the seat now."""
        self.left_at = trio.current_time()
        """When the last page stopped following (or the desk was made)."""

    # ----------------------------------------------------------- the seat's side

    def publish(self, event: dict[str, Any]) -> None:
        """An event the seat was sent, for the page."""
        self.events.append(event)
        self._wake()

    def ask(self, shown: dict[str, Any], view: BotView, reply: Callable[[Action], None]) -> None:
        """The seat's turn: ``shown`` is the question as the page reads it."""
        self._asked += 1
        self._question = _Question({**shown, "asked": self._asked}, view, reply)
        self._wake()

    def started(self, match_id: str, log_path: str) -> None:
        self.match_id, self.log_path = match_id, log_path
        self._wake()

    def close(self, error: str = "") -> None:
        """The match is over (``error``: why it stopped instead)."""
        self.over = True
        self.error = error
        self._question = None
        self._wake()

    def _wake(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    # ----------------------------------------------------------- the page's side

    def answer(self, text: str) -> str | None:
        """Play ``text`` (a card such as ``QS``, a call such as ``7NT`` or ``pass``) for the
        seat: None when it was played, else why not, in one line."""
        question = self._question
        if question is None:
            if self.over:
                return "the match is over"
            return "it is not your turn: wait until the page asks you"
        if not text.strip() or len(text) > 10 or text.strip().isdigit():
            if isinstance(question.view.legal_actions[0], Card):
                return f"not a card: {text[:10]!r} (send one such as QS)"
            return f"not a call: {text[:10]!r} (send one such as 7H, pass or double)"
        found = parse_answer(text, question.view)
        if isinstance(found, str):
            return found
        self._question = None
        question.reply(found)
        return None

    async def follow(self, after: int = 0) -> AsyncIterator[Shown]:
        """Every event numbered above ``after``, each with ``("event", it)``, as they come,
        and the open question with ``("asked", it)`` once it is put (or on following, if
        one is open), until the match is over."""
        seen = max(0, after)
        told = 0
        self.followers += 1
        try:
            while True:
                while seen < len(self.events):
                    yield "event", self.events[seen]
                    seen += 1
                question = self._question
                if question is not None and question.shown["asked"] > told:
                    told = question.shown["asked"]
                    yield "asked", question.shown
                if self.over:
                    self.end_seen.set()
                    return
                await self._changed.wait()
        finally:
            self.followers -= 1
            self.left_at = trio.current_time()

    def unfollowed_for(self) -> float:
        """Seconds since any page followed the seat (0 while one does)."""
        return 0.0 if self.followers else trio.current_time() - self.left_at

    @property
    def asked(self) -> dict[str, Any] | None:
        """What the seat is asked now, if anything."""
        return None if self._question is None else self._question.shown


class SeatDesks:
    """The seats being played from pages here, by their tokens."""

    def __init__(self) -> None:
        self._desks: dict[str, SeatDesk] = {}

    def add(self, desk: SeatDesk) -> SeatDesk:
        self._desks[desk.token] = desk
        return desk

    def get(self, token: str) -> SeatDesk | None:
        return self._desks.get(token)

    def playing(self) -> int:
        return sum(not desk.over for desk in self._desks.values())
