"""Bot sessions: the Hello handshake, credentials, the lobby of idle sessions,
and the seat links that survive a dropped connection.

A session is one ``Play`` stream. Its reader task is the only thing that
reads the stream: it forwards decisions to the seat the session holds,
counts what the bot sends unasked, and turns a hang-up into a disconnect
that the table handles in one place.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import grpc
import trio

from oddtrick import __version__
from oddtrick._codec import game_kind_from_wire
from oddtrick._codec_protocol import (
    PROTOCOL_NAME,
    UNKNOWN_REQUEST,
    refusal_message,
    refusal_to_wire,
    session_limits_to_wire,
    welcome_message,
)
from oddtrick._names import BOT_NAME_RULE, valid_bot_name
from oddtrick.rules import GameKind, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee._exceptions import Refused
from oddtrick_referee.token_scheme import same_token, verify_token
from oddtrick_referee.transport.bridge import BotStream, Close
from oddtrick_referee.transport.hello_limits import FailedHellos, address_of
from oddtrick_referee.transport.seat_notice import Shortage, WaitNotices

log = logging.getLogger("oddtrick.referee.sessions")

MAX_VERSION_BYTES = 64
"""Hello.bot_version is sent to every seat and logged with each match: bounded, in bytes."""


@dataclasses.dataclass(frozen=True)
class SessionLimits:
    hello_timeout_s: float = 10.0
    max_unsolicited: int = 16
    max_attempts: int = 8
    max_message_bytes: int = 64 * 1024
    max_comment_bytes: int = 256
    max_seats_per_bot: int = 64
    failed_hello_burst: int = 20
    failed_hellos_per_s: float = 2.0
    """Hellos with a bad token one address may send at once, and then per second (see
    transport/hello_limits.py); more are held until there is room and then refused,
    without checking the token."""
    flood_pause_s: float = 1.0
    """A seat whose stream was cut off for too many messages is resumed no sooner than this
    after the cut (the resuming Hello waits): a flooder that reconnects at once costs the
    referee one burst a second, not one burst per round trip."""

    def to_wire(self, max_seats: int) -> referee_pb2.SessionLimits:
        return session_limits_to_wire(
            self.max_unsolicited, self.max_attempts, self.max_message_bytes, self.max_comment_bytes, max_seats
        )


class Credentials:
    """Which bot names may play, and with which token.

    ``tokens`` are held in memory only (a tournament makes them for its run);
    ``hashes`` come from a tokens file (see transport/tokens.py), where no
    token is ever stored in plain text. With neither, the arena is open: any
    token is accepted (the demo and local tests run this way, only on
    loopback unless asked, and the referee says so at start).
    """

    VERIFY_THREADS = 4
    """Tokens checked by ``verify`` at once (each in a worker thread): a flood of Hellos
    waits here, never taking the threads that record finished matches."""

    def __init__(
        self,
        tokens: Mapping[str, str] | None = None,
        hashes: Mapping[str, str] | None = None,
        verify: Callable[[str, str], str | None] | None = None,
        verified: Callable[[str, str], str | None] | None = None,
    ) -> None:
        self._tokens = dict(tokens or {})
        self._hashes = dict(hashes or {})
        self._verify = verify
        self._verified = verified
        self._limiter: trio.CapacityLimiter | None = None

    @property
    def open(self) -> bool:
        return not self._tokens and not self._hashes and self._verify is None

    @property
    def remote(self) -> bool:
        """Whether checking a token may cost I/O (``verify``): failed Hellos are then
        budgeted per address (see transport/hello_limits.py)."""
        return self._verify is not None

    def known(self, name: str, token: str) -> str | None:
        """The credential that admits this name and token if memory alone can say (the
        in-memory tokens, or a token ``verify`` admitted before, as ``verified`` recalls);
        None when it cannot, or when it refuses. Never blocks."""
        if self._verify is None:
            return "" if self._accepts(name, token) else None
        return self._verified(name, token) if self._verified is not None else None

    async def credential(self, name: str, token: str) -> str | None:
        """Which credential admits this name and token (``verify``'s id for it, else ""),
        or None when none does. A session remembers it, so that when the credential is
        revoked (a ladder entrant retired, or its token rotated) the session can be too.

        ``verify`` may read a database: it runs in a worker thread, never on trio's, so a
        slow database or a stream of bad Hellos delays only the Hellos, not the tables."""
        found = self.known(name, token)
        if found is not None or self._verify is None:
            return found
        if self._limiter is None:
            self._limiter = trio.CapacityLimiter(self.VERIFY_THREADS)
        return await trio.to_thread.run_sync(self._verify, name, token, limiter=self._limiter)

    def _accepts(self, name: str, token: str) -> bool:
        if self.open:
            return True
        stored = self._hashes.get(name)
        if stored is not None:
            return verify_token(token, stored)
        expected = self._tokens.get(name)
        return expected is not None and same_token(expected, token)


class Session:
    """One connected stream after a successful Hello."""

    def __init__(self, stream: BotStream, hello: referee_pb2.Hello, games: frozenset[GameKind]) -> None:
        self.id = secrets.token_hex(8)
        self.resume_token = secrets.token_urlsafe(24)
        self.stream = stream
        self.name = hello.bot_name
        self.version = hello.bot_version
        self.games = games
        self.link: SeatLink | None = None
        self.sequence = 0
        """The last event number sent on this session (carried by its seat while seated)."""
        self.leaving = False
        self.connected = True
        self.credential = ""
        """What admitted it (see :meth:`Credentials.credential`)."""
        self.revoked = ""
        """Why its credential was revoked (the session ends once it is not seated)."""
        self.unsolicited_idle = 0

    def __repr__(self) -> str:
        return f"<Session {self.name} {self.id}>"

    def tell(self, message: referee_pb2.RefereeMessage) -> None:
        """Send the bot a message that asks nothing of it (a Waiting notice)."""
        self.stream.send(message)

    def plays(self, game: GameKind) -> bool:
        """Whether it may be seated at ``game`` (it plays it and is not leaving)."""
        return game in self.games and not self.leaving


class NumberedEvents:
    """A seat's numbering of the events sent on it (``Event.sequence``): gapless, each after
    the last sent, whatever kind of seat it is."""

    _sequence = 0

    @property
    def sequence(self) -> int:
        """The last event number sent on this seat."""
        return self._sequence

    def number(self, events: Sequence[referee_pb2.Event]) -> None:
        """Number events about to be sent on this seat, in order, after the last sent."""
        for sequence, event in enumerate(events, self._sequence + 1):
            event.sequence = sequence
        self._sequence += len(events)


class SeatLink(NumberedEvents):
    """A table's hold on one seat, which outlives the stream that holds it.

    Owned here, beside the lobby that reads the seat's stream: the table only asks
    (:meth:`ask`), waits for the answer (:meth:`answer`), numbers what it sends
    (:meth:`number`), sends, and learns of the seat's comings and goings through
    :meth:`bind_table`. The lobby passes the table at most ``max_attempts`` answers to
    the open request (:meth:`offer`), the one place that limit is kept; a disconnect
    wakes a table waiting for an answer at once.
    """

    def __init__(self, seat: Seat, session: Session, grace_s: float, max_attempts: int = 8) -> None:
        self.seat = seat
        self.bot_name = session.name
        self.bot_version = session.version
        self.session: Session | None = session
        self.resume_token = session.resume_token
        self.session_id = session.id
        """The session's id, kept when another stream resumes it."""
        self.grace_s = grace_s
        self.max_attempts = max_attempts
        """Answers to one request passed to the table (SessionLimits.max_attempts)."""
        self.disconnected_at: float | None = None
        self._forfeited = False
        self.reconnected = trio.Event()
        self._sequence = session.sequence
        """Event numbers carry on from the session's: never reset within a session."""
        self.unsolicited = 0
        self._answers = 0
        """Answers received to the open request (the table evaluates max_attempts of them)."""
        self.resume_after = 0.0
        """No resume before this (trio clock): set when the seat's stream is cut off for flooding."""
        self._open_request = 0
        """The request id the table waits on (0: none); only its answers are passed on."""
        self._last_request = 0
        self._decisions: deque[Any] = deque()
        """What the seat's bot answered (and DISCONNECTED marks), not yet taken by the table."""
        self._waiter: trio.lowlevel.Task | None = None
        """The table's task parked in :meth:`answer` until something is delivered."""
        self.on_resume: Callable[[SeatLink], None] = _ignore_link
        self.on_detach: Callable[[SeatLink], None] = _ignore_link
        self.on_unknown: Callable[[SeatLink, referee_pb2.Refusal], None] = _ignore_refusal
        """Told of each UNKNOWN_REQUEST refusal (the table writes it to the match log)."""
        session.link = self

    # ------------------------------------------------------- the table's side

    def bind_table(
        self,
        on_resume: Callable[[SeatLink], None],
        on_detach: Callable[[SeatLink], None],
        on_unknown: Callable[[SeatLink, referee_pb2.Refusal], None],
    ) -> None:
        """The table to tell when the seat is taken back, dropped, or answers an unknown id."""
        self.on_resume, self.on_detach, self.on_unknown = on_resume, on_detach, on_unknown

    @property
    def forfeited(self) -> bool:
        """The seat's grace ran out: the referee decides for it to the end of the match."""
        return self._forfeited

    def forfeit(self) -> None:
        self._forfeited = True

    def ask(self, request_id: int) -> None:
        """A request is open on the seat: its answers (and only its) reach :meth:`answer`,
        and the seat's budget of unsolicited messages starts again."""
        self._open_request = self._last_request = request_id
        self.unsolicited = self._answers = 0

    def asked(self) -> None:
        """The open request is decided (or given up): its late answers are unsolicited."""
        self._open_request = 0

    @property
    def answers_waiting(self) -> bool:
        """Something the bot sent is not taken yet: answers that came before its stream
        ended (a flood cut off, a bot that answered and hung up) are still the table's to
        evaluate, in order, before it waits for the bot to come back."""
        return bool(self._decisions)

    async def answer(self) -> referee_pb2.Decision | None:
        """The next answer to the open request, or ``None`` if the seat's stream ended."""
        await trio.lowlevel.checkpoint_if_cancelled()
        decisions = self._decisions
        while True:
            if not decisions:
                # Parked by hand rather than on a memory channel: one answer a decision,
                # hundreds a second per table, and a channel's receive raises and catches
                # WouldBlock every time it has to wait.
                self._waiter = trio.lowlevel.current_task()
                await trio.lowlevel.wait_task_rescheduled(self._abort_wait)
                continue
            item = decisions.popleft()
            if item is DISCONNECTED:
                return None
            if item.request_id == self._open_request:
                return item  # type: ignore[no-any-return]

    # ------------------------------------------------------- the lobby's side

    def offer(self, decision: referee_pb2.Decision) -> bool:
        """A decision the seat's bot sent: True if passed to the table (an answer to the
        open request, within ``max_attempts`` of them); else False, the caller counting
        it as unsolicited, and an id never issued on the seat refused UNKNOWN_REQUEST."""
        # Request id 0 is never issued: it must not match "no request open".
        if decision.request_id and decision.request_id == self._open_request:
            # More answers than the table evaluates are unsolicited: a flood on the open
            # id is cut off here, before it costs the table anything.
            self._answers += 1
            if self._answers <= self.max_attempts:
                self.deliver(decision)
                return True
        elif decision.request_id == 0 or decision.request_id > self._last_request:
            log.info(
                "%s (%s) answered request %d, never issued on its seat: refused UNKNOWN_REQUEST",
                self.bot_name,
                self.seat.name.title(),
                decision.request_id,
            )
            self.refuse_unknown(decision)
        return False

    def forget_table(self) -> None:
        """Drop the table's callbacks: the match is over.

        They hold the table, and the table holds this link: left in place, that
        cycle keeps the whole match (its state, events and messages) alive until
        a full collection, which at a thousand sessions pauses every table for
        hundreds of milliseconds. Cut, the match is freed when its last
        reference goes.
        """
        self.on_resume = self.on_detach = _ignore_link
        self.on_unknown = _ignore_refusal

    def deliver(self, message: Any) -> None:
        """Hand the table an answer (or DISCONNECTED), waking it if it waits in :meth:`answer`."""
        self._decisions.append(message)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            trio.lowlevel.reschedule(waiter)

    def _abort_wait(self, raise_cancel: Any) -> trio.lowlevel.Abort:
        """The table's wait in :meth:`answer` was cancelled (its deadline, or the match)."""
        self._waiter = None
        return trio.lowlevel.Abort.SUCCEEDED

    def count_unsolicited(self, limit: int) -> bool:
        """Count one message not asked for; False once the budget is exceeded."""
        self.unsolicited += 1
        return self.unsolicited <= limit

    def refuse_unknown(self, decision: referee_pb2.Decision) -> None:
        refusal = refusal_to_wire(
            decision.request_id,
            UNKNOWN_REQUEST,
            f"request {decision.request_id} was never issued on this seat",
            decision.action,
        )
        self.on_unknown(self, refusal)
        self.send(refusal_message(refusal))

    def detach(self, session: Session) -> None:
        """The session's stream ended while holding this seat."""
        if self.session is not session:
            return
        self.session = None
        self.disconnected_at = trio.current_time()
        self.reconnected = trio.Event()
        self.deliver(DISCONNECTED)
        self.on_detach(self)

    def attach(self, session: Session) -> None:
        old = self.session
        if old is not None and old is not session:
            old.link = None
            old.stream.close(grpc.StatusCode.ABORTED, "another stream resumed this session")
        session.link = self
        session.resume_token = self.resume_token
        self.session = session
        self.disconnected_at = None
        self.reconnected.set()
        self.on_resume(self)

    @property
    def connected(self) -> bool:
        """A stream holds the seat now."""
        return self.session is not None

    async def wait_for_return(self) -> bool:
        """Wait (within the caller's deadline) for the seat's bot to come back within its
        grace period: whether it did."""
        if self.grace_over():
            return False
        assert self.disconnected_at is not None
        with trio.move_on_at(self.disconnected_at + self.grace_s):
            await self.reconnected.wait()
        return self.session is not None

    def grace_over(self) -> bool:
        if self.forfeited:
            return True
        if self.session is None and self.disconnected_at is not None:
            return trio.current_time() >= self.disconnected_at + self.grace_s
        return False

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        if self.session is not None:
            self.session.stream.send(message)


DISCONNECTED = object()
"""Put in a seat's decisions when its stream ends."""


def _ignore_link(link: SeatLink) -> None:
    """A seat link's callback with no table to tell."""


def _ignore_refusal(link: SeatLink, refusal: referee_pb2.Refusal) -> None:
    """A seat link's refusal callback with no table to tell."""


class Lobby:
    """Connected sessions: who is idle, who is seated, which seats can be resumed."""

    def __init__(self, credentials: Credentials, limits: SessionLimits, games: frozenset[GameKind]) -> None:
        self.credentials = credentials
        self.limits = limits
        self.games = games
        self._idle: dict[str, list[Session]] = {}
        self._links: dict[str, SeatLink] = {}
        self._changed = trio.Event()
        self.sessions: dict[str, Session] = {}
        self._open: dict[str, set[Session]] = {}
        """Each bot name's sessions with an open stream, idle or seated."""
        self._failed_hellos = FailedHellos(limits.failed_hello_burst, limits.failed_hellos_per_s)

    # ------------------------------------------------------------ handshake

    async def serve_stream(self, stream: BotStream) -> None:
        """Run one stream from its Hello to its end. Never raises."""
        session = None
        try:
            with trio.fail_after(self.limits.hello_timeout_s):
                first = await stream.inbox.receive()
            await self._pause_after_flood(first)
            session = await self._admit(stream, first)
        except trio.TooSlowError:
            log.info("dropped %s: no Hello within %g s", stream.peer, self.limits.hello_timeout_s)
            stream.close(grpc.StatusCode.INVALID_ARGUMENT, "no Hello within the time allowed")
            return
        except trio.EndOfChannel:
            ended = stream.broken or Close(
                grpc.StatusCode.INVALID_ARGUMENT, "the stream ended before its Hello"
            )
            log.info("dropped %s: %s", stream.peer, ended.details)
            stream.close(ended.code, ended.details)
            return
        except Refused as refusal:
            log.info("refused %s: %s", stream.peer, refusal.details)
            stream.close(refusal.code, refusal.details)
            return
        try:
            await self._read(session)
        finally:
            # The handler holds the session, which holds the stream: without this
            # cycle an ended session is freed at once, not at the next full collection.
            stream.on_message = None
            self._drop(session)
        if stream.broken is not None:
            log.info("%s sent what is not a BotMessage; ending its stream", session.name)
            stream.close(stream.broken.code, stream.broken.details)
        else:
            stream.close(
                grpc.StatusCode.CANCELLED,
                "the bot closed its side of the stream: the session is over "
                "(a seat it held is kept for its grace period; resume with the resume token)",
            )

    async def _pause_after_flood(self, message: referee_pb2.BotMessage) -> None:
        """A Hello resuming a seat cut off for flooding waits out the pause (in its own task)."""
        if message.WhichOneof("kind") == "hello" and message.hello.HasField("resume_token"):
            link = self._links.get(message.hello.resume_token)
            if link is not None and link.resume_after > trio.current_time():
                await trio.sleep_until(link.resume_after)

    async def _admit(self, stream: BotStream, message: referee_pb2.BotMessage) -> Session:
        if message.WhichOneof("kind") != "hello":
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a Hello")
        hello = message.hello
        name = hello.bot_name
        if not valid_bot_name(name):
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"bot_name must be {BOT_NAME_RULE}",
            )
        if len(hello.bot_version.encode()) > MAX_VERSION_BYTES:
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"bot_version is {len(hello.bot_version.encode())} bytes of UTF-8; "
                f"at most {MAX_VERSION_BYTES} are allowed",
            )
        if hello.protocol.name != PROTOCOL_NAME:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"protocol {hello.protocol.name!r} is not spoken here; use {PROTOCOL_NAME!r}",
            )
        credential = await self._credential(stream, name, hello.token)
        wanted = {game_kind_from_wire(g) for g in hello.games} - {None}
        games = frozenset(g for g in wanted if g is not None) & self.games
        if not games:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "none of the games in the Hello is played here (this referee plays "
                + ", ".join(sorted(g.value for g in self.games))
                + ")",
            )
        if not hello.HasField("resume_token"):
            held = sum(1 for other in self.sessions.values() if other.name == name)
            if held >= self.limits.max_seats_per_bot:
                raise Refused(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"{name!r} already has {held} sessions, the most this arena allows; "
                    "close one or retry later",
                )
        session = Session(stream, hello, games)
        session.credential = credential
        resumed = False
        link: SeatLink | None = None
        if hello.HasField("resume_token"):
            link = self._links.get(hello.resume_token)
            if link is None or link.grace_over() or link.bot_name != name:
                raise Refused(
                    grpc.StatusCode.NOT_FOUND,
                    "the resume token is unknown or its grace period is over; "
                    "connect without it to start a new session",
                )
            resumed = True
            session.id = link.session_id
        self.sessions[session.id] = session
        self._open.setdefault(name, set()).add(session)
        stream.send(
            welcome_message(
                session.id,
                link.resume_token if link is not None else session.resume_token,
                __version__,
                self.limits.to_wire(self.limits.max_seats_per_bot),
                resumed,
                games,
            )
        )
        if link is not None:
            log.info("%s resumed its seat %s", name, link.seat.name.title())
            link.attach(session)
        else:
            log.info("%s connected from %s", name, stream.peer)
            self._idle.setdefault(name, []).append(session)
            self._notify()
        return session

    async def _credential(self, stream: BotStream, name: str, token: str) -> str:
        """What admits this Hello, checked in memory first, then (within the address's
        budget of failures) by the credentials' ``verify``; else the Hello is refused."""
        credential = self.credentials.known(name, token)
        if credential is not None:
            return credential
        if not self.credentials.remote:  # refused from memory, at no cost to anyone
            raise self._bad_token(name, token)
        address = address_of(stream.peer)
        wait = self._failed_hellos.wait_s(address, trio.current_time())
        if wait > 0:
            # Held until the budget has room again, then refused: a flooder that reconnects
            # at once gets one refusal per stream per wait, not one per round trip (a
            # sleeping task costs the tables nothing; a refused stream's setup does).
            await trio.sleep(wait)
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many Hellos with a bad token from {address}: check the token, "
                f"and send at most {self.limits.failed_hellos_per_s:g} bad ones a second",
            )
        if token:
            credential = await self.credentials.credential(name, token)
        if credential is not None:
            return credential
        self._failed_hellos.failed(address, trio.current_time())
        raise self._bad_token(name, token)

    @staticmethod
    def _bad_token(name: str, token: str) -> Refused:
        if not token:
            return Refused(grpc.StatusCode.UNAUTHENTICATED, f"no token given for bot {name!r} (Hello.token)")
        return Refused(grpc.StatusCode.UNAUTHENTICATED, f"the token for bot {name!r} is not valid")

    # -------------------------------------------------------------- reading

    async def _read(self, session: Session) -> None:
        """Handle the session's messages until its stream ends.

        Messages are handled as they cross from the gRPC thread (no task hop on
        the way to the table); this task only drains what arrived before and
        then waits for the end of the stream.
        """
        stream = session.stream
        while True:
            try:
                early = stream.inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            if not self._handle(session, early):
                return
        stream.on_message = lambda message: self._handle(session, message)
        async for message in stream.inbox:  # only if a message slipped in before the line above
            if not self._handle(session, message):
                return

    def _handle(self, session: Session, message: referee_pb2.BotMessage) -> bool:
        """Act on one message; False once the session has been closed for it."""
        limits = self.limits
        kind = message.WhichOneof("kind")
        link = session.link
        if kind == "decision" and link is not None:
            if link.offer(message.decision):
                return True
            if link.count_unsolicited(limits.max_unsolicited):
                return True
            link.resume_after = trio.current_time() + limits.flood_pause_s
            session.stream.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many answers the referee did not ask for; answer each request once",
            )
            return False
        if kind == "leave" and not session.leaving:
            session.leaving = True
            self._notify()  # a leaving session is no longer one to seat (and a ladder shows it)
            if link is None:
                session.stream.close(grpc.StatusCode.OK, "goodbye")
                return False
            return True
        if kind == "hello":
            session.stream.close(grpc.StatusCode.INVALID_ARGUMENT, "a second Hello was sent")
            return False
        # Seated, the budget is the seat's: it starts again at every request.
        if link is not None:
            within = link.count_unsolicited(limits.max_unsolicited)
        else:
            session.unsolicited_idle += 1
            within = session.unsolicited_idle <= limits.max_unsolicited
        if not within:
            if link is not None:
                link.resume_after = trio.current_time() + limits.flood_pause_s
            session.stream.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many messages the referee did not ask for",
            )
            return False
        return True

    def _drop(self, session: Session) -> None:
        session.connected = False
        if self.sessions.get(session.id) is session:  # a resumed session shares its id
            del self.sessions[session.id]
        streams = self._open.get(session.name)
        if streams is not None:
            streams.discard(session)
            if not streams:
                del self._open[session.name]
        idle = self._idle.get(session.name, [])
        if session in idle:
            idle.remove(session)
        if session.link is not None:
            log.warning(
                "%s lost its connection while seated at %s",
                session.name,
                session.link.seat.name.title(),
            )
            session.link.detach(session)
        self._notify()

    # -------------------------------------------------------------- seating

    @property
    def change_event(self) -> trio.Event:
        """Set at the next change: a session connecting, leaving, or becoming idle again.

        Take it before looking at the lobby, then wait on it: a change while
        looking is not missed.
        """
        return self._changed

    def poke(self) -> None:
        """Wake whoever waits on :attr:`change_event` (something outside the lobby changed)."""
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = trio.Event()

    def idle_count(self, name: str, game: GameKind) -> int:
        return sum(1 for s in self._idle.get(name, []) if s.plays(game))

    def _shortages(self, needs: Mapping[str, int], game: GameKind) -> list[Shortage]:
        """The bots with an idle session that have fewer streams open than ``needs`` says
        (not those whose streams are enough but busy: they are only waited for)."""
        found = []
        for name, needed in needs.items():
            idle = [s for s in self._idle.get(name, []) if s.plays(game)]
            if not idle or len(idle) >= needed:
                continue
            offered = sum(1 for s in self._open.get(name, ()) if s.plays(game))
            if offered < needed:
                found.append(Shortage(name, needed, offered, idle))
        return found

    async def wait_for(self, needs: Mapping[str, int], game: GameKind) -> None:
        """Wait until each named bot has the given number of idle sessions.

        A bot that connected with too few streams is told about in the log, for the
        operator, and told itself, in a Waiting message (transport/seat_notice.py): from
        its side it would just wait, with no way to see why.
        """
        reported = ""
        notices = WaitNotices(game)
        while True:
            short = {name: (self.idle_count(name, game), count) for name, count in needs.items()}
            short = {name: counts for name, counts in short.items() if counts[0] < counts[1]}
            if not short:
                return
            partly = "; ".join(
                f"{name} has {have} of the {want} free streams it needs (oddtrick bot --seats {want})"
                for name, (have, want) in sorted(short.items())
                if have
            )
            if partly and partly != reported:
                log.info("waiting: %s: a bot opens one stream per seat it holds", partly)
                reported = partly
            changed = self._changed
            with trio.move_on_at(notices.tell(self._shortages(needs, game), trio.current_time())):
                await changed.wait()

    def take(self, name: str, game: GameKind) -> Session:
        for session in self._idle.get(name, []):
            if game in session.games and not session.leaving:
                self._idle[name].remove(session)
                return session
        raise LookupError(f"no idle session of {name!r}")

    def seat(self, session: Session, seat: Seat, grace_s: float) -> SeatLink:
        link = SeatLink(seat, session, grace_s, self.limits.max_attempts)
        self._links[link.resume_token] = link
        return link

    def release(self, link: SeatLink) -> None:
        """The match is over: the seat's session (if still here) becomes idle again."""
        self._links.pop(link.resume_token, None)
        link.forget_table()
        session = link.session
        link.session = None
        if session is None or not session.connected:
            return
        session.link = None
        session.sequence = link.sequence
        if session.leaving:
            session.stream.close(grpc.StatusCode.OK, "goodbye: you asked to leave")
            return
        if session.revoked:
            session.stream.close(grpc.StatusCode.UNAUTHENTICATED, session.revoked)
            return
        self._idle.setdefault(session.name, []).append(session)
        self._notify()

    def revoke(self, session: Session, details: str) -> None:
        """Its credential no longer admits it: an idle session is closed now, a seated one
        when its match is over (UNAUTHENTICATED, with ``details``)."""
        if session.revoked:
            return
        session.revoked = details
        idle = self._idle.get(session.name, [])
        if session in idle:
            idle.remove(session)
            session.stream.close(grpc.StatusCode.UNAUTHENTICATED, details)
            self._notify()

    def close_all(self, code: grpc.StatusCode, details: str) -> None:
        for session in list(self.sessions.values()):
            session.stream.close(code, details)
