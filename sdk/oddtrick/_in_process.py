"""A bot's side of a seat when it plays in the referee's own process.

A referee seats the bots it trusts (the shipped ones, a person, a bot file the operator
says to trust) without a process, a connection or a token: it hands this class the very
messages it would send a remote bot, and takes back the very answers a remote bot would
send. So a bot in the referee's process is shown exactly what the referee's outbox
decided its seat may see, read by the same :class:`SeatState` a remote bot's client
keeps, and answers through the same codec; only the transport is gone.

Nothing here touches the referee's event loop: :meth:`BotSide.receive` only queues a
message, and :meth:`BotSide.answer` (which the referee runs on a worker thread, under the
decision's deadline) reads what was queued, calls the bot's hooks, then asks the bot.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable

from oddtrick._bot import Bot, BotView, Decision, decide_sync
from oddtrick._codec import MalformedMessage, action_to_wire
from oddtrick._codec_protocol import decision_message
from oddtrick._seat_state import SeatState, dispatch_hooks, listens
from oddtrick.rules import Action
from oddtrick.v1 import cards_pb2, referee_pb2

log = logging.getLogger("oddtrick.bot")


def answer_text_limit(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, at a character boundary."""
    return text.encode("utf-8")[:limit].decode("utf-8", errors="ignore")


def bot_error_text(error: BaseException, limit: int = 256) -> str:
    """``Type: message`` of a bot's exception, at most ``limit`` bytes of UTF-8."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return answer_text_limit(text, limit)


def chosen_wire(
    decision: Decision | BaseException, request: referee_pb2.DecisionRequest, where: str
) -> tuple[cards_pb2.Action, str, str | None]:
    """What to send for the bot's ``decision`` (or the exception it raised): the action
    on the wire, its comment and the bot's error. A bot that raised, or chose what is not
    an action, plays the request's first legal action and says why (its fault is counted
    as a bot error, apart from the referee's refusals)."""
    if isinstance(decision, BaseException):
        log.error(
            "%s: the bot raised while deciding; playing the first legal action", where, exc_info=decision
        )
        return request.legal_actions[0], "", bot_error_text(decision)
    try:
        return action_to_wire(decision.action), decision.comment, None
    except Exception as error:
        log.exception(
            "%s: the bot chose %r, which is not an action; playing the first legal one",
            where,
            decision.action,
        )
        return request.legal_actions[0], decision.comment, bot_error_text(error)


def retry_action(
    refusal: referee_pb2.Refusal, request: referee_pb2.DecisionRequest | None, sent: cards_pb2.Action | None
) -> cards_pb2.Action | None:
    """The answer to send again after ``refusal`` (None: none, the referee acts for the seat):
    the refused action again when the request lists it (a refusal of a listed action is
    not the bot's doing), else the request's first legal action; asking the bot again
    would most often bring back the same illegal action and spend the time left on it."""
    if refusal.reason == referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST or not refusal.attempts_left:
        return None
    if request is None or refusal.request_id != request.request_id:
        return None
    legal = list(request.legal_actions)
    return sent if sent is not None and sent in legal else legal[0]


class BotSide:
    """One seat of one bot, played in the referee's process (see the module's docstring).

    A fresh bot from ``make`` plays each match, as a remote bot's client does, so nothing
    one play of a duplicate deal taught it reaches the other."""

    def __init__(self, make: Callable[[], Bot], max_comment_bytes: int = 256) -> None:
        self._make = make
        self.bot: Bot | None = None
        self._listens = False
        self._state = SeatState()
        self._inbox: collections.deque[referee_pb2.RefereeMessage] = collections.deque()
        self._reading = threading.Lock()
        """Held while the queued messages are read: by one decision's thread at a time."""
        self._max_comment_bytes = max_comment_bytes
        self._request: referee_pb2.DecisionRequest | None = None
        self._sent: cards_pb2.Action | None = None

    # ------------------------------------------------------------ the referee's side

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        """Queue a message the referee sends the seat (called on the referee's loop: cheap)."""
        self._inbox.append(message)

    def answer(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        """The bot's answer to ``request``, after everything queued before it (a worker thread)."""
        arrived = time.monotonic()
        try:
            view = self.view_for(request, arrived)
        except MalformedMessage:
            log.exception("%s: cannot read the request; answering with its first legal action", self.where)
            return self._answered(request, request.legal_actions[0], "", None, arrived)
        assert self.bot is not None
        try:
            decision: Decision | BaseException = decide_sync(self.bot, view)
        except Exception as error:
            decision = error
        action, comment, error_text = chosen_wire(decision, request, self.where)
        return self._answered(request, action, comment, error_text, arrived)

    def view_for(self, request: referee_pb2.DecisionRequest, arrived: float | None = None) -> BotView:
        """The seat's view for ``request``, after everything queued before it: for a player
        that decides by other means than the bot's methods (a person at a page)."""
        self.read_inbox()
        self._request = request
        return self._state.view(request, arrived, 0.0)

    def answer_with(
        self, request: referee_pb2.DecisionRequest, action: Action, arrived: float
    ) -> referee_pb2.BotMessage:
        """The message that answers ``request`` with ``action`` (decided by the caller)."""
        return self._answered(request, action_to_wire(action), "", None, arrived)

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        """The answer to send after ``refusal`` (None: let the referee act for the seat)."""
        retry = retry_action(refusal, self._request, self._sent)
        if retry is None or self._request is None:
            return None
        log.warning(
            "%s: the referee refused request %d (%s); answered again",
            self.where,
            refusal.request_id,
            refusal.message,
        )
        return decision_message(self._request.request_id, retry, None, None, None)

    def read_inbox(self) -> None:
        """Take in every queued message: the seat's state, and the bot's hooks after each event."""
        with self._reading:
            while self._inbox:
                self._take(self._inbox.popleft())

    # ------------------------------------------------------------------ reading

    @property
    def where(self) -> str:
        return f"{self._state.match_id or 'a match'} ({self._state.seat.name.title()})"

    def _take(self, message: referee_pb2.RefereeMessage) -> None:
        if message.WhichOneof("kind") != "update":
            return  # welcome, refusals and resyncs are a connection's: a local seat has none
        for event in message.update.events:
            if event.WhichOneof("kind") == "match_started":
                self.bot = self._make()
                self._listens = listens(self.bot)
            try:
                self._state.apply([event], track_hand=True)
            except MalformedMessage as error:
                log.warning("%s: skipped an event it cannot read: %s", self.where, error)
                continue
            if self._listens and self.bot is not None:
                dispatch_hooks(self.bot, self._state, event)

    def _answered(
        self,
        request: referee_pb2.DecisionRequest,
        action: cards_pb2.Action,
        comment: str,
        error_text: str | None,
        arrived: float,
    ) -> referee_pb2.BotMessage:
        self._sent = action
        kept = answer_text_limit(comment, self._max_comment_bytes) if comment else None
        think_ms = round((time.monotonic() - arrived) * 1000)
        return decision_message(request.request_id, action, kept, error_text, think_ms)
