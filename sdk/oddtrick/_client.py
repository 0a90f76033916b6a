"""Run a bot against a referee: one gRPC stream per seat, reconnecting as needed.

The client is plain grpc.aio (asyncio). Each seat is a loop: open ``Play``,
say Hello, then answer every decision request with the bot's choice. A
dropped connection is resumed with the session's resume token, with
backoff; given several referees (a ladder on several), the seats move to the
next one when the one they are at cannot be reached (``_referees.py``). A
refusal that cannot be fixed by retrying (bad token, unsupported protocol)
stops the bot with the referee's reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import logging
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from oddtrick._bot import Bot, BotView, Decision, as_decision, decision_method
from oddtrick._codec import (
    MalformedMessage,
    action_from_wire,
    call_from_wire,
    card_from_wire,
    config_from_wire,
    seat_from_wire,
    seat_to_wire,
)
from oddtrick._codec_protocol import decision_message, hello_message, leave_message, new_hand_state
from oddtrick._in_process import answer_text_limit, chosen_wire, retry_action
from oddtrick._lag import LagMeter
from oddtrick._referees import Referees
from oddtrick._seat_state import IN_HAND_EVENTS, SeatState, dispatch_hooks, listens
from oddtrick._tls import TlsOptions
from oddtrick._worker import Worker
from oddtrick.rules import GameKind
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2, referee_pb2_grpc

log = logging.getLogger("oddtrick.bot")


_FATAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
}

CHANNEL_OPTIONS = [
    # Small messages one at a time: bandwidth-delay probing only adds frames and wake-ups.
    ("grpc.http2.bdp_probe", 0),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    # gRPC's own reconnect backoff (1 s growing to 120 s by default) fails every call at
    # once while it waits, whatever this client's retries do: a referee back after a 3 s
    # outage was reached 6.6 s later, and a bot with a short reconnect window gave up on a
    # referee that was up. The channel retries at most a second apart; the client's own
    # backoff (RETRY_CAP_S) paces the calls.
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1_000),
]

RETRY_CAP_S = 2.0
"""The longest wait between two attempts to reach a referee (jittered ×0.5–1.5): a
referee that restarts is reached within about three seconds of being back."""


class BotRefused(Exception):
    """The referee refused this bot for a reason retrying will not fix."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclasses.dataclass
class ClientOptions:
    server: str
    name: str
    token: str
    version: str = "0"
    games: tuple[GameKind, ...] = (GameKind.CLASSIC, GameKind.CONTRACT)
    seats: int = 1
    max_matches: int | None = None
    """Stop each seat after this many matches (None: play until stopped)."""
    reconnect_for_s: float = 60.0
    """Give up when the referee cannot be reached for this long."""
    tls: TlsOptions | None = None
    """Connect over TLS (None: plaintext, for a referee on your own machine or network)."""
    unseated_hint_s: float = 60.0
    """Say once what to check when no seat has been seated this long after connecting."""
    fallbacks: tuple[str, ...] = ()
    """Further referees (a ladder on several), tried in turn after ``server`` when the one
    in use cannot be reached."""
    stop_on_signals: bool = False
    """The first SIGINT or SIGTERM finishes the matches in play and takes no new one, the
    second stops at once (:func:`run_bot_async`); only on the main thread."""

    @property
    def servers(self) -> tuple[str, ...]:
        """Every referee the bot may play at, in the order it tries them."""
        return (self.server, *self.fallbacks)


class _EventsLost(Exception):
    """Event.sequence skipped a number: events were lost on the way."""


_WRITE_FAILED = "Internal error from Core"
"""What grpc.aio reports for a call on which a write failed, until the peer's status comes."""
STATUS_WAIT_S = 2.0
"""How long a stream whose write failed waits for the referee's own status to replace the
one grpc put in its place (it comes once the messages before it are read: milliseconds)."""
STATUS_POLL_S = 0.02


class _Writer:
    """Reads and writes one call: writes quietly do nothing once the call has ended, and a
    write that came too late does not hide how the referee ended it.

    A write on a call the referee has ended fails, and grpc.aio then reports the call
    as ``INTERNAL: Internal error from Core`` in place of the referee's status: at once
    if that status was already in (a decision that held the loop), or until it comes in,
    which grpc's core holds back until the messages sent before it are read (a seat
    still deciding when the referee ended its session has some unread). Read with
    ``call.read()``, which stops at that stand-in, a session the referee ended with OK
    (no more matches, or after a Leave) looked like a lost connection, and the bot
    reconnected. So the call's messages are read through its iterator, which reads on to
    the end; the writer notes an OK as soon as the call reports it, and after a failed
    write waits for the referee's status to replace grpc's."""

    def __init__(self, call: grpc.aio.StreamStreamCall) -> None:
        self._call = call
        self._messages = call.__aiter__()
        self.failed = False
        """A write failed because the call was over at grpc's core."""
        self.ended_ok = False
        """The call reported OK, the referee's status, at some point."""
        self._writing = asyncio.Lock()
        call.add_done_callback(self._status_set)

    @property
    def over(self) -> bool:
        """The call is over (an answer now would go nowhere)."""
        return self.failed or self._call.done()

    def _status_set(self, call: Any) -> None:
        if _status_now(call) is grpc.StatusCode.OK:
            self.ended_ok = True

    async def send(self, message: referee_pb2.BotMessage) -> None:
        # One write at a time: a Leave (from the stop on a signal) may come while the seat
        # writes an answer, and grpc takes one message at a time on a call.
        async with self._writing:
            try:
                await self._call.write(message)
            except asyncio.InvalidStateError:
                pass  # over, and known to be: reading it says how
            except grpc.aio.AioRpcError:
                self.failed = True

    async def read(self) -> Any:
        """The call's next message, or ``grpc.aio.EOF`` once it ended with OK; its error
        when it ended otherwise, as the referee ended it (not as a late write made grpc say)."""
        try:
            return await anext(self._messages)
        except StopAsyncIteration:
            return grpc.aio.EOF
        except grpc.aio.AioRpcError:
            if self.failed and (self.ended_ok or await self._referees_status() is grpc.StatusCode.OK):
                return grpc.aio.EOF
            raise

    async def _referees_status(self) -> grpc.StatusCode:
        """The status the referee ended the call with, once it has replaced the failed
        write's (grpc says nothing when it does: a short poll, at most STATUS_WAIT_S)."""
        waited = 0.0
        while await self._call.details() == _WRITE_FAILED and waited < STATUS_WAIT_S:
            await asyncio.sleep(STATUS_POLL_S)
            waited += STATUS_POLL_S
        return await self._call.code()

    async def ended_with_ok(self) -> bool:
        """Whether the call, over, was ended by the referee with OK."""
        return self.ended_ok or await self._call.code() is grpc.StatusCode.OK


def _status_now(call: Any) -> grpc.StatusCode | None:
    """The status of a call that is done, read at once (from its done callback, before
    anything can replace it), or ``None`` if it cannot be read without waiting."""
    reading = call.code()
    try:
        reading.send(None)
    except StopIteration as done:
        code: grpc.StatusCode = done.value
        return code
    reading.close()  # it would have to wait: not a status set yet
    return None


class _Seat:
    """One stream's seat. A fresh bot instance plays each match, so nothing a bot
    remembers from one match (say, one play of a duplicate deal) reaches the next."""

    def __init__(
        self, make: Callable[[], Bot], options: ClientOptions, index: int, said: set[str] | None = None
    ) -> None:
        self.make = make
        self.bot = make()
        self.listens = listens(self.bot)
        self.options = options
        self.index = index
        self.state = SeatState()
        self.lag = LagMeter()
        self.worker = Worker(f"oddtrick-seat-{index}")
        """The seat's own thread: its bot's synchronous decisions and hooks run there."""
        self.resume_token: str | None = None
        self.matches = 0
        self.match_id = ""
        """The match this seat sits in (or sat in last)."""
        self.seated = False
        self.connected = False
        self.welcomed = False
        """A Welcome came on the current stream (so a failure now is a new one)."""
        self.draining = False
        """The bot is stopping: this seat finishes its match, if any, and takes no other."""
        self.outbox: _Writer | None = None
        """The current stream's writer, once it is welcomed (None between streams)."""
        self.left = False
        """Leave was sent on the current stream (a second would be a protocol error)."""
        self.peers: list[_Seat] = [self]
        """The process's seats, this one among them (the first welcomed says it connected)."""
        self.at = 0
        """Which of the referees this seat plays at (an index into ``options.servers``)."""
        self.open_request: referee_pb2.DecisionRequest | None = None
        """The latest request answered, so that a refusal of it can be answered again."""
        self.sent: cards_pb2.Action | None = None
        """The action last sent for :attr:`open_request`."""
        self.max_comment_bytes = 256
        """From the Welcome's SessionLimits: the longest comment the referee keeps."""
        self.sequence = 0
        """The session's last Event.sequence: the next must be one more (a gap: resume)."""
        self.said = set() if said is None else said
        """The referee's Waiting notices already logged, shared by the process's seats: each
        is said once, not once per stream."""

    async def run(self, referees: Referees) -> None:
        loop = asyncio.get_running_loop()
        unreachable_since: float | None = None
        backoff = 0.2
        while True:
            if self.draining and not self.seated:
                return  # stopping, and no match of this seat's to finish
            self._follow(referees)
            stub = referee_pb2_grpc.RefereeStub(referees.channel(self.at))
            try:
                finished = await self._session(stub)
                unreachable_since = None
                backoff = 0.2
                if finished:
                    return
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code in _FATAL:
                    raise BotRefused(code, error.details() or "") from None
                if code is grpc.StatusCode.ABORTED:
                    log.warning("seat %d: another connection took this session over", self.index)
                    return
                if code is grpc.StatusCode.NOT_FOUND:
                    self.resume_token = None
                if code is grpc.StatusCode.OK:
                    return
                if self.options.max_matches is not None and self.matches >= self.options.max_matches:
                    # Its matches are played and it has said Leave: a stream that then ends
                    # badly (a referee shutting down) is no reason to connect again and
                    # wait, seatless, for a match that will never come.
                    log.debug("seat %d: its matches played, the stream ended with %s", self.index, code.name)
                    return
                if self.draining:
                    # Stopping: a match whose stream is lost is the referee's to finish (it
                    # waits its grace period), and a referee going away must not keep a
                    # stopping bot alive for the reconnect window.
                    log.info("seat %d: stopping; the stream ended with %s", self.index, code.name)
                    return
                if self.welcomed:
                    # The referee was there until now: the retry window starts afresh, and
                    # the first retry is at the same referee (it may only have been the link).
                    unreachable_since = None
                    self.welcomed = False
                elif not referees.unreachable(self.at):
                    backoff = 0.2  # another referee, not tried yet: at once
                now = loop.time()
                first_failure = unreachable_since is None
                unreachable_since = unreachable_since or now
                server = referees.address(self.at)
                if now - unreachable_since > self.options.reconnect_for_s:
                    raise BotRefused(
                        code,
                        f"no referee answered at {referees.described()} "
                        f"for {self.options.reconnect_for_s:.0f} s "
                        f"({error.details() or code.name}); is the address right, and the referee running?",
                    ) from None
                if first_failure and self.index == 0:
                    why = "cannot reach" if not self.connected else "lost the connection to"
                    log.info(
                        "%s the referee at %s (%s: %s); retrying for up to %.0f s",
                        why,
                        server,
                        code.name,
                        error.details() or "no details",
                        self.options.reconnect_for_s,
                    )
                else:
                    log.debug("seat %d: connection lost (%s); reconnecting", self.index, code.name)
            await asyncio.sleep(backoff * (0.5 + random.random()))
            backoff = min(backoff * 2, RETRY_CAP_S)

    def _follow(self, referees: Referees) -> None:
        """Go where the bot's seats now play: a session is one referee's, so a seat that
        moves forgets its resume token and starts afresh there."""
        if self.at == referees.current:
            return
        self.at = referees.current
        self.resume_token = None
        self.seated = False
        self.connected = False
        log.debug("seat %d: moving to the referee at %s", self.index, referees.address(self.at))

    async def _session(self, stub: referee_pb2_grpc.RefereeStub) -> bool:
        """One stream; True when the bot is done (max matches reached, or told to stop)."""
        hello = hello_message(
            self.options.name,
            self.options.version,
            self.options.token,
            self.options.games,
            self.options.seats,
            resume_token=self.resume_token if self.resume_token and self.seated else None,
        )
        # Writes go straight to the call (no request iterator: one task hop less per answer).
        call = stub.Play()
        outbox = _Writer(call)
        self.left = False
        await outbox.send(hello)
        try:
            return await self._stream(call, outbox)
        except _EventsLost as lost:
            # As the protocol advises: close this stream and resume; the Resync has it all.
            log.warning("seat %d: %s; resuming the session", self.index, lost)
            call.cancel()
            return False
        finally:
            self.outbox = None

    async def drain(self) -> None:
        """Stop after this seat's match, if any: it says Leave on the stream, and the referee
        seats the session in no new match and ends it with OK, at once if it is idle, else
        once its match is over. An idle seat does not simply hang up: the referee may be
        seating it at this very moment (its MatchStarted on the way), and a seat that left
        then would forfeit that match. A seat between streams says it on its next Welcome."""
        self.draining = True
        if self.outbox is not None:
            await self._leave(self.outbox)

    async def _leave(self, outbox: _Writer) -> None:
        if not self.left:
            self.left = True
            await outbox.send(leave_message())

    async def _stream(self, call: grpc.aio.StreamStreamCall, outbox: _Writer) -> bool:
        while True:
            message = await outbox.read()
            arrived = time.monotonic()
            if message is grpc.aio.EOF:
                if await outbox.ended_with_ok():
                    # The referee has no more matches for this bot: stop rather than reconnect.
                    details = await call.details() if await call.code() is grpc.StatusCode.OK else ""
                    if self.index == 0:
                        log.info("the referee is done with %s: %s", self.options.name, details or "OK")
                    self.seated = False
                    return True
                break
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                self.welcomed = True
                if not message.welcome.resumed:
                    self.sequence = 0
                self.resume_token = message.welcome.resume_token
                if message.welcome.limits.max_comment_bytes:
                    self.max_comment_bytes = message.welcome.limits.max_comment_bytes
                if message.welcome.resumed:
                    log.info("seat %d: resumed its session after a dropped connection", self.index)
                else:
                    log.debug("seat %d: welcome to session %s", self.index, message.welcome.session_id)
                if not any(peer.connected for peer in self.peers):
                    log.info(
                        "connected to %s as %s; %d seat(s) waiting for a match",
                        self.options.servers[self.at],
                        self.options.name,
                        self.options.seats,
                    )
                self.connected = True
                self.outbox = outbox
                if self.draining:  # a resumed session is a new one to the referee: say it again
                    await self.drain()
            elif kind == "update":
                done = await self._update(message.update, outbox, arrived)
                if done:
                    await self._leave(outbox)
            elif kind == "refusal":
                await self._refused(message.refusal, outbox)
            elif kind == "waiting":
                self._waiting(message.waiting)
            elif kind == "resync":
                resync = message.resync
                self.lag.forget()
                # The snapshot replaces what the seat knew; without a match it is between matches.
                if resync.HasField("match"):
                    try:
                        self.state.start_match(resync.match)
                    except MalformedMessage as error:
                        log.warning("seat %d: cannot read the resync's match: %s", self.index, error)
                    self.match_id = resync.match.match_id
                    self.seated = True
                if resync.HasField("hand"):
                    self.state.hand = new_hand_state()
                    self.state.hand.CopyFrom(resync.hand)
                self.state.last_sequence = self.sequence = resync.last_sequence
                if resync.HasField("request"):
                    await self._answer(resync.request, outbox, arrived)
        self.seated = False
        return self.options.max_matches is not None and self.matches >= self.options.max_matches

    def _waiting(self, waiting: referee_pb2.Waiting) -> None:
        """The referee says why this seat is not seated (too few streams for its match):
        logged once for the whole process, since every idle stream is told the same."""
        text = waiting.message or (
            f"waiting: a match needs {waiting.seats_needed} seats of {self.options.name} at once "
            f"and {waiting.seats_offered} are open; start the bot with --seats {waiting.seats_needed}"
        )
        if text not in self.said:
            self.said.add(text)
            log.warning("%s", text)

    async def _update(self, update: referee_pb2.Update, outbox: _Writer, arrived: float) -> bool:
        # The bot's own code runs on the seat's thread: its hooks, and the making of a
        # fresh bot at a match's start; the seat's task waits for it, so the state is
        # never touched by two threads at once, and no other seat waits.
        if self.listens or any(event.HasField("match_started") for event in update.events):
            await self.worker.run(lambda: self._events(update))
        else:
            self._events(update)
        if update.HasField("request"):
            await self._answer(update.request, outbox, arrived)
        return self.options.max_matches is not None and self.matches >= self.options.max_matches

    def _events(self, update: referee_pb2.Update) -> None:
        """Apply the update's events to the seat's state, calling the bot's hooks."""
        # The request that may follow carries the whole hand: advancing the seat's copy
        # event by event is only needed for hooks, which see the state after each event.
        # Without hooks, a request's calls and cards cost a check each (this runs for
        # every event of every decision, in the bot's own time).
        has_request = update.HasField("request")
        quiet = has_request and not self.listens
        state = self.state
        own = seat_to_wire(state.seat)
        for event in update.events:
            if event.sequence != self.sequence + 1:
                raise _EventsLost(f"event {event.sequence} came after event {self.sequence}")
            self.sequence = event.sequence
            kind = event.WhichOneof("kind")
            if kind == "card_played" or kind == "call_made":
                action = event.card_played if kind == "card_played" else event.call_made
                if action.seat == own:
                    self.lag.observe_action(action, own)
                    if action.by_referee and (said := fault_line(event, own)) is not None:
                        log.warning("seat %d: %s", self.index, said)
            if quiet and kind in IN_HAND_EVENTS:
                state.last_sequence = event.sequence
                continue
            if kind == "match_started":
                self._seated_at(event.match_started)
            try:
                state.apply([event], track_hand=not has_request or self.listens)
            except MalformedMessage as error:
                # A value from a later version (or a bug): the event is skipped, never fatal;
                # the next request carries the whole hand anyway.
                state.last_sequence = event.sequence
                log.warning(
                    "seat %d: skipped an event this SDK cannot read (%s): %s", self.index, kind, error
                )
                continue
            if kind == "match_started":
                own = seat_to_wire(state.seat)
            if self.listens:
                dispatch_hooks(self.bot, state, event)
            if kind == "match_ended":
                self.matches += 1
                self.seated = False
                log.info("seat %d: %s", self.index, _match_line(state))

    def _seated_at(self, started: referee_pb2.MatchStarted) -> None:
        """A match begins for this seat: a fresh bot for it (after the first), and a line."""
        # Set before ``seated``: a signal handler on the loop's thread reads both while this
        # runs on the seat's worker, before the state has applied the event.
        self.match_id = started.match_id
        self.seated = True
        if self.matches:
            self.bot = self.make()
            self.listens = listens(self.bot)
        with contextlib.suppress(MalformedMessage):  # said below, once, if it matters
            log.info(
                "seat %d: seated at match %s as %s (%s)",
                self.index,
                started.match_id,
                seat_from_wire(started.seat).name.title(),
                config_from_wire(started.config).describe(),
            )

    async def _answer(
        self,
        request: referee_pb2.DecisionRequest,
        outbox: _Writer,
        arrived: float,
    ) -> None:
        if outbox.over:
            return  # read after the call ended: the referee asks no one any more
        self.open_request = request
        self.sent = None
        try:
            view = self.state.view(request, arrived, self.lag.lag_ms)
        except MalformedMessage:
            # Still answer: a request always lists its legal actions, and the first is accepted.
            log.exception(
                "seat %d: cannot read the request; answering with its first legal action", self.index
            )
            await self._send(outbox, request.request_id, request.legal_actions[0], arrived=arrived)
            return
        try:
            decision: Decision | BaseException = await self._decide(view)
        except Exception as error:
            decision = error
        wire, comment, error_text = chosen_wire(decision, request, f"seat {self.index}")
        await self._send(outbox, request.request_id, wire, comment, error_text, arrived)

    async def _decide(self, view: BotView) -> Decision:
        """The bot's decision: an ``async`` method awaited on the loop, a synchronous one
        called on the seat's own thread, so that a slow decision of this seat never
        delays another seat of the process (all of them share the loop)."""
        method = decision_method(self.bot, view)
        if inspect.iscoroutinefunction(method):
            choice: Any = await method(view)
        else:
            choice = await self.worker.run(lambda: method(view))
            if inspect.isawaitable(choice):  # a plain function that returned a coroutine
                choice = await choice
        return as_decision(choice)

    async def _send(
        self,
        outbox: _Writer,
        request_id: int,
        action: cards_pb2.Action,
        comment: str = "",
        error_text: str | None = None,
        arrived: float | None = None,
    ) -> None:
        """Send one answer; ``arrived`` (when the request came) makes it report the bot's
        own think time, which a re-sent answer after a refusal does not have."""
        # The referee keeps at most max_comment_bytes: send no more than it keeps.
        kept = answer_text_limit(comment, self.max_comment_bytes) if comment else None
        self.sent = action
        think_ms = None
        if arrived is not None:
            # The bot's own part ends here: a write that waits on the transport is lag.
            own_s = time.monotonic() - arrived
            think_ms = round(own_s * 1000)
            self.lag.answered(own_s)
        await outbox.send(decision_message(request_id, action, kept, error_text, think_ms))

    async def _refused(self, refusal: referee_pb2.Refusal, outbox: _Writer) -> None:
        """Answer a refused request again at once, so that a refusal never costs the deadline.

        A reason this SDK does not know is taken as REFUSAL_REASON_NOT_LEGAL, as the
        protocol says. The second answer is the refused action again when the request
        lists it (re-sending is allowed, and a refusal of a listed action is not the
        bot's doing), else the request's first legal action: asking the bot again would
        most often bring back the same illegal action and spend the time left on it.
        """
        reason = _enum_name(referee_pb2.RefusalReason, refusal.reason, "REFUSAL_REASON_")
        request = self.open_request
        if refusal.reason == referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST:
            log.warning(
                "seat %d: the referee knows no request %d: %s",
                self.index,
                refusal.request_id,
                refusal.message,
            )
            return
        if request is None or refusal.request_id != request.request_id:
            log.debug(
                "seat %d: a refusal of request %d, not the open one; ignored", self.index, refusal.request_id
            )
            return
        if not refusal.attempts_left:
            log.warning(
                "seat %d: request %d refused (%s: %s) with no attempt left; the referee plays for the seat",
                self.index, refusal.request_id, reason, refusal.message,
            )  # fmt: skip
            return
        retry = retry_action(refusal, request, self.sent)
        assert retry is not None
        log.warning(
            "seat %d: the referee refused the answer to request %d (%s: %s); answered again with %s",
            self.index, refusal.request_id, reason, refusal.message, _action_text(retry),
        )  # fmt: skip
        await self._send(outbox, request.request_id, retry)


_FAULT_ADVICE = {
    game_pb2.FAULT_KIND_TIMEOUT: (
        "no answer within the deadline",
        "answer within the request's time left (oddtrick.anytime answers from the best so far)",
    ),
    game_pb2.FAULT_KIND_CLOCK: (
        "the match clock's bank ran out",
        "spend less of the bank on each decision (oddtrick.anytime budgets it)",
    ),
    game_pb2.FAULT_KIND_ILLEGAL: (
        "three refused answers in a row",
        "answer with one of the request's legal_actions",
    ),
}


def fault_line(event: referee_pb2.Event, own_seat: int) -> str | None:
    """What a bot author must hear when the referee acted for this seat because the bot
    did not (a time-out, a spent clock, too many refusals): otherwise only the standings
    would say it. ``None`` for every other event."""
    kind = event.WhichOneof("kind")
    if kind not in ("call_made", "card_played"):
        return None
    action = event.call_made if kind == "call_made" else event.card_played
    if action.seat != own_seat or not action.by_referee or action.fault not in _FAULT_ADVICE:
        return None
    why, advice = _FAULT_ADVICE[action.fault]
    try:
        if isinstance(action, referee_pb2.CallMade):
            what = str(call_from_wire(action.call))
        else:
            what = card_from_wire(action.card).pretty
    except MalformedMessage:
        what = "a fallback"
    return f"the referee played {what} for this seat: {why}; {advice}"


def _match_line(state: SeatState) -> str:
    """``match M over: won 7-3 (North-South)`` as the seat saw it end. An aborted match
    does not count, and a sealed one (a play of a duplicate deal set, in a tournament
    or a ladder) is decided with its other table: neither is won or lost here."""
    result = state.match_result
    if result is None:
        return f"match {state.match_id} over"
    if state.match_aborted:  # no score: where it stood is no result
        return f"match {state.match_id} stopped by the referee: {state.stop_reason}"
    side = state.seat.side
    mine, theirs = result.totals[side], result.totals[side.other]
    if not state.seed:
        return (
            f"match {state.match_id} over at this table, {mine}-{theirs}: one play of a duplicate set, "
            "whose result comes from both tables"
        )
    outcome = "drawn" if result.winner is None else ("won" if result.winner is side else "lost")
    return f"match {state.match_id} over: {outcome} {mine}-{theirs} ({side.name.replace('_', '-').title()})"


def _enum_name(enum: Any, value: int, prefix: str) -> str:
    """``NOT_LEGAL`` for a value this SDK knows, ``value 77`` for one a later version added."""
    try:
        name: str = enum.Name(value)
    except ValueError:
        return f"unknown value {value}"
    return name.removeprefix(prefix)


def _action_text(action: cards_pb2.Action) -> str:
    try:
        return str(action_from_wire(action))
    except MalformedMessage:
        return "an action this SDK cannot read"


class BotStopped(Exception):
    """The bot was stopped at once, by a second signal while it finished its matches."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signal_number).name}")
        self.signal_number = signal_number


async def run_bot_async(make: Callable[[], Bot], options: ClientOptions) -> None:
    """Play ``options.seats`` seats with fresh bots from ``make`` until done.

    With ``options.stop_on_signals``, the first SIGINT or SIGTERM finishes the matches
    the seats are in and takes no new one (the run then returns), and a second stops at
    once (:class:`BotStopped`)."""
    referees = Referees(options.servers, options.tls, CHANNEL_OPTIONS)
    log.info("connecting to %s as %s with %d seat(s)", referees.described(), options.name, options.seats)
    said: set[str] = set()
    seats = [_Seat(make, options, index, said) for index in range(options.seats)]
    for seat in seats:
        seat.peers = seats
    hint = asyncio.ensure_future(_hint_when_never_seated(seats, options))
    stop = _Stop(seats, asyncio.ensure_future(asyncio.gather(*(seat.run(referees) for seat in seats))))
    try:
        with stop.on_signals(options.stop_on_signals):
            await stop.playing
    except asyncio.CancelledError:
        if stop.signal_number is None:
            raise
        raise BotStopped(stop.signal_number) from None
    finally:
        stop.playing.cancel()
        hint.cancel()
        await referees.close()


class _Stop:
    """A bot's stop on a signal: the first finishes the matches in play, the second
    stops at once. Killing the process mid-match cost each of its matches a forfeit and
    faults; a bot's operator who wants it gone at once has the second signal."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, seats: list[_Seat], playing: asyncio.Future[Any]) -> None:
        self.seats = seats
        self.playing = playing
        self.signal_number: int | None = None
        """The signal that stopped the bot at once (None: not stopped so)."""
        self._draining = False
        self._tasks: set[asyncio.Task[None]] = set()

    @contextlib.contextmanager
    def on_signals(self, wanted: bool) -> Iterator[None]:
        """Handle SIGINT and SIGTERM while in the block, if ``wanted`` and on the main thread
        (the only one signals reach); their handlers as they were after it."""
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        if wanted and threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                loop.add_signal_handler(number, self._signalled, number)
                installed.append(number)
        try:
            yield
        finally:
            for each in installed:
                loop.remove_signal_handler(each)

    def _signalled(self, number: int) -> None:
        if self._draining:
            log.warning("stopping now (%s)", signal.Signals(number).name)
            self.signal_number = number
            self.playing.cancel()
            return
        self._draining = True
        matches = {seat.match_id for seat in self.seats if seat.seated}
        if matches:
            count = f"{len(matches)} match{'es' if len(matches) > 1 else ''}"
            log.warning("finishing %s; Ctrl-C again to stop now", count)
        else:
            log.warning("stopping: no match in play")
        for seat in self.seats:
            task = asyncio.ensure_future(seat.drain())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)


async def _hint_when_never_seated(seats: list[_Seat], options: ClientOptions) -> None:
    """A referee seats a bot by the name it expects and only with as many sessions as a
    match needs: a wrong --name or too few --seats waits forever, and the referee's own
    log, which says so, is on someone else's machine. Say what to check, once."""
    while not any(seat.connected for seat in seats):
        await asyncio.sleep(1.0)
    await asyncio.sleep(options.unseated_hint_s)
    if any(seat.connected for seat in seats) and not any(seat.matches or seat.seated for seat in seats):
        log.warning(
            "no match yet after %.0f s connected: a referee seats a bot by the name it expects "
            "(this one is %r) once it has as many free sessions as the match needs (this bot opened "
            "%d, --seats); if either may be wrong, ask the referee's operator (a ladder may just be "
            "between matches)",
            options.unseated_hint_s,
            options.name,
            options.seats,
        )
