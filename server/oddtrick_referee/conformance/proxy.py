"""The probing proxy: a Referee service that sits between the bot under test and a real referee.

The bot connects here; each of its ``Play`` calls is relayed to the referee on
a call of its own. Every message both ways is recorded, with the time and the
scenario it belongs to, and the scenario's probes may change what the bot sees:
refuse an answer the referee never saw, send a stale refusal, add fields and
enum values the bot cannot know, drop the connection. The referee itself stays
the real one, so whatever the bot does is judged by the real rules.

It runs on grpc's synchronous API in its own threads: two pumps per call, one
each way, so that nothing it does can stall the referee's trio loop. The pumps are
the proxy's own pool's, shut down (every pump ended) when the proxy stops. What the
bot sends is read as bytes and relayed as it came, so that bytes that are no
BotMessage get the referee's own answer (INVALID_ARGUMENT), as they would on
a real arena.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import queue
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message

from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2, referee_pb2_grpc
from oddtrick_referee._exceptions import CannotListen

_CLOSE = object()
CALLS_AT_ONCE = 32
"""Play calls the proxy serves at once (grpc's handler threads); each has two pumps."""
UNKNOWN_ENUM = 77
"""An enum value no version of oddtrick.v1 defines: a bot must tolerate it."""


def unknown_field_bytes() -> bytes:
    """A varint field 1999 and a length-delimited field 2000: numbers no message uses."""
    return b"\xf8\x7c\x2a" + b"\x82\x7d\x05probe"


def with_unknown_fields(message: Message) -> None:
    """Add fields from a later version (unknown to every bot) to ``message``, in place."""
    message.MergeFromString(unknown_field_bytes())


@dataclasses.dataclass
class Entry:
    """One message on one connection, as it crossed the proxy."""

    scenario: str
    at: float
    connection: int
    direction: str
    """"down" (to the bot) or "up" (from the bot)."""
    message: Any
    """A RefereeMessage going down, a BotMessage going up."""
    note: str = ""
    """What the proxy did with it: "forwarded", "held back (probe)", "injected (probe)"."""


@dataclasses.dataclass
class Connection:
    """One ``Play`` call from the bot."""

    number: int
    opened_at: float
    hello: referee_pb2.Hello | None = None
    welcome: referee_pb2.Welcome | None = None
    status: tuple[grpc.StatusCode, str] | None = None
    """How the referee (or a probe) ended the call, as the bot was told."""
    ended_at: float | None = None
    ended_by: str = ""
    closed_by_bot: bool = False
    closed_in: str = ""
    """The scenario in progress when the bot closed the stream."""
    seat: int = 0
    """The seat (wire value) of the match in progress, from match_started or a resync."""
    last_request: referee_pb2.DecisionRequest | None = None
    last_request_number: int = 0
    """Which request of the scenario it was (0: one from a resync)."""
    request_sent_at: float = 0.0
    match_scenario: str = ""
    """The scenario whose match this call is playing, from its match_started to its
    match_ended: what it carries is recorded under that scenario even when the relay
    passes the match's last messages on after the next scenario has begun."""


@dataclasses.dataclass
class Probes:
    """What the proxy does to the current scenario's traffic (all off by default)."""

    refuse_request_number: int = 0
    """Refuse the bot's first answer to its n-th request of the scenario (1-based), as
    the referee would refuse an illegal action, without telling the referee."""
    refusal_reason: int = referee_pb2.REFUSAL_REASON_NOT_LEGAL
    stale_refusal_after: int = 0
    """After forwarding the bot's n-th answer, tell it that this id is unknown."""
    drop_request_number: int = 0
    """Drop the connection instead of sending the n-th request (the seat's grace begins)."""
    empty_update_before: int = 0
    """Send an Update with no events and no request before the n-th request."""
    unknown_message_before: int = 0
    """Send a RefereeMessage of a kind added later (no member known) before the n-th request."""
    unknown_kind_request: int = 0
    """Give the n-th request a DecisionKind no version defines (legal actions unchanged)."""
    unknown_fields: bool = False
    """Add fields from a later version to every message, event and nested hand state."""
    unknown_enums: bool = False
    """Put an enum value no version defines in every enum field whose values may grow
    without a new protocol minor (see :func:`with_unknown_enums`)."""
    gap_request_number: int = 0
    """Leave the first event out of the Update that carries the n-th request: the bot
    sees a gap in Event.sequence, and should close the stream and resume."""
    allowed_faults: frozenset[int] = frozenset()
    """FaultKind values the scenario expects (a dropped stream's), not counted as the bot failing."""


STOP_AFTER_FAULTS = 2
"""Fallbacks in a row on one of the bot's seats after which a scenario's verdict is known."""


def _serialize(message: Message | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def with_unknown_enums(message: referee_pb2.RefereeMessage) -> list[str]:
    """Set UNKNOWN_ENUM in every enum field of ``message`` whose set of values may grow
    within oddtrick.v1 without a new minor (so any bot may receive a new value); the
    fields changed, by name. Not touched: seats, sides, suits, ranks and
    denominations (fixed by the game), and the game options of a GameConfig (a new
    one needs a new minor, so a bot is never sent one it did not ask for)."""
    changed = []
    kind = message.WhichOneof("kind")
    if kind == "welcome":
        message.welcome.games.append(UNKNOWN_ENUM)  # type: ignore[arg-type]
        changed.append("Welcome.games")
    elif kind == "update":
        for event in message.update.events:
            member = event.WhichOneof("kind")
            if member in ("call_made", "card_played"):
                getattr(event, member).fault = UNKNOWN_ENUM
                changed.append(f"{'CallMade' if member == 'call_made' else 'CardPlayed'}.fault")
            elif member == "hand_ended":
                event.hand_ended.outcome = UNKNOWN_ENUM  # type: ignore[assignment]
                changed.append("HandResult.outcome")
                if event.hand_ended.HasField("honours"):
                    event.hand_ended.honours.status = UNKNOWN_ENUM  # type: ignore[assignment]
                    changed.append("Honours.status")
            elif member == "game_ended":
                event.game_ended.reason = UNKNOWN_ENUM  # type: ignore[assignment]
                changed.append("GameResult.reason")
            elif member == "match_ended":
                event.match_ended.outcome = UNKNOWN_ENUM  # type: ignore[assignment]
                changed.append("MatchResult.outcome")
                for record in event.match_ended.seats:
                    record.faults.add(kind=UNKNOWN_ENUM, count=1)
                changed.append("FaultCount.kind")
        if message.update.HasField("request"):
            message.update.request.hand.phase = UNKNOWN_ENUM  # type: ignore[assignment]
            for made in message.update.request.hand.auction:
                made.fault = UNKNOWN_ENUM  # type: ignore[assignment]
            changed.append("HandState.phase")
    return changed


class ProbingProxy(referee_pb2_grpc.RefereeServicer):
    """Relays ``Referee.Play`` calls to ``upstream`` and records them."""

    def __init__(self, upstream: str, candidate: str) -> None:
        self.upstream = upstream
        self.candidate = candidate
        self.entries: list[Entry] = []
        self.connections: list[Connection] = []
        self.scenario = "connect"
        self.began: dict[str, float] = {"connect": time.monotonic()}
        """When each scenario (and "end", the sessions ending with OK) began."""
        self.probes = Probes()
        self.fault_streak: dict[int, int] = {}
        """Per seat (wire value): fallbacks in a row the referee made for it in this scenario."""
        self.stopped_answering = ""
        """Set once a seat's streak reaches STOP_AFTER_FAULTS: what happened, in words."""
        self.requests_seen = 0
        self.answers_forwarded = 0
        self._lock = threading.RLock()
        self._numbers = itertools.count(1)
        self._channel = grpc.insecure_channel(upstream)
        self._play = self._channel.stream_stream(
            "/oddtrick.v1.Referee/Play",
            request_serializer=_serialize,
            response_deserializer=referee_pb2.RefereeMessage.FromString,
        )
        self._server: grpc.Server | None = None
        self._pumps = futures.ThreadPoolExecutor(max_workers=2 * CALLS_AT_ONCE, thread_name_prefix="pump")
        """Two for each call grpc serves at once: a pump waits for a thread only while the
        pumps of a call just ended finish, which they do at once."""
        self._stopping = False
        self.port = 0
        self.connected = threading.Condition(self._lock)

    # --------------------------------------------------------------- control

    def start(self, host: str, port: int) -> int:
        # grpc logs a traceback for every call a bot breaks off; the report says what matters.
        logging.getLogger("grpc._server").setLevel(logging.CRITICAL)
        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=CALLS_AT_ONCE, thread_name_prefix="probe")
        )
        play = grpc.stream_stream_rpc_method_handler(
            self.Play,
            request_deserializer=None,  # bytes: read here, so that garbage is relayed, not fatal
            response_serializer=referee_pb2.RefereeMessage.SerializeToString,
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("oddtrick.v1.Referee", {"Play": play}),)
        )
        self.port = server.add_insecure_port(f"{host}:{port}")
        if self.port == 0:
            raise CannotListen(f"cannot listen on {host}:{port}")
        server.start()
        self._server = server
        return self.port

    def stop(self) -> None:
        """Stop serving: every call ends (the bot's and the referee's sides), then the pumps."""
        with self._lock:
            self._stopping = True
        if self._server is not None:
            self._server.stop(grace=1.0).wait()
        self._channel.close()
        self._pumps.shutdown(wait=True)

    def begin(self, scenario: str, probes: Probes) -> None:
        """Record what follows under ``scenario`` and apply its probes."""
        with self._lock:
            self.scenario = scenario
            self.began[scenario] = time.monotonic()
            self.probes = probes
            self.requests_seen = 0
            self.answers_forwarded = 0
            self.fault_streak = {}
            self.stopped_answering = ""

    def match_stopped(self) -> None:
        """The scenario's match was stopped before its end: no match_ended will close its record."""
        with self._lock:
            for connection in self.connections:
                connection.match_scenario = ""

    def candidate_sessions(self) -> int:
        """Open connections from the bot under test that were welcomed."""
        with self._lock:
            return sum(1 for c in self.connections if c.welcome is not None and c.status is None)

    def wait_sessions(self, count: int, timeout: float) -> bool:
        with self.connected:
            return self.connected.wait_for(lambda: self.candidate_sessions() >= count, timeout)

    # ------------------------------------------------------------- recording

    def _record(self, connection: Connection, direction: str, message: Message, note: str = "") -> None:
        copy = type(message)()
        copy.CopyFrom(message)
        with self._lock:
            scenario = connection.match_scenario or self.scenario
            self.entries.append(Entry(scenario, time.monotonic(), connection.number, direction, copy, note))

    # ----------------------------------------------------------- the relay

    def Play(self, request_iterator: Iterator[Any], context: Any) -> Iterator[Any]:  # noqa: N802
        connection = Connection(next(self._numbers), time.monotonic())
        with self._lock:
            self.connections.append(connection)
        to_referee: queue.Queue[Any] = queue.Queue()
        to_bot: queue.Queue[Any] = queue.Queue()
        call = self._play(iter(to_referee.get, _CLOSE))

        def hung_up() -> None:
            # The call is over. If nothing ended it here (the referee, or a probe), the bot did:
            # say so before the referee's side ends too, so no race decides who closed it.
            with self.connected:
                # (When the proxy itself stops, a stream still open stays on record as open.)
                if connection.status is None and not self._stopping:
                    connection.closed_by_bot = True
                    connection.closed_in = self.scenario
                    connection.status = (grpc.StatusCode.CANCELLED, "the bot closed the stream")
                    connection.ended_at = time.monotonic()
                    connection.ended_by = "bot"
                    self.connected.notify_all()
            call.cancel()  # hang up on the referee too

        context.add_callback(hung_up)

        def from_bot() -> None:
            try:
                for data in request_iterator:
                    try:
                        message = referee_pb2.BotMessage.FromString(data)
                    except DecodeError:
                        # Not a BotMessage: the referee answers it (INVALID_ARGUMENT), as it would.
                        self._record(
                            connection, "up", referee_pb2.BotMessage(), f"unreadable ({len(data)} bytes)"
                        )
                        to_referee.put(data)
                        continue
                    self._up(connection, message, to_referee, to_bot)
            except Exception:  # the bot's side failed: the call is over
                pass
            with self._lock:
                if connection.status is None:  # the bot hung up (or half-closed) first
                    connection.closed_by_bot = True
                    connection.closed_in = self.scenario
            to_referee.put(_CLOSE)

        def from_referee() -> None:
            try:
                for message in call:
                    self._down(connection, message, to_bot, call)
                to_bot.put(("end", call.code(), call.details() or ""))
            except grpc.RpcError as error:
                to_bot.put(("end", error.code(), error.details() or ""))

        self._pumps.submit(from_bot)
        self._pumps.submit(from_referee)
        while True:
            item = to_bot.get()
            if isinstance(item, tuple):
                _, code, details = item
                self._ended(connection, code, details, "referee" if item[0] == "end" else "probe")
                if code is not grpc.StatusCode.OK:
                    context.abort(code, details)
                return
            if isinstance(item, _Drop):
                call.cancel()
                self._ended(connection, grpc.StatusCode.UNAVAILABLE, item.details, "probe")
                context.abort(grpc.StatusCode.UNAVAILABLE, item.details)
                return
            yield item

    def _ended(self, connection: Connection, code: grpc.StatusCode, details: str, by: str) -> None:
        with self.connected:
            if connection.status is None:
                connection.status = (code, details)
                connection.ended_at = time.monotonic()
                connection.ended_by = by
            self.connected.notify_all()

    def _up(
        self, connection: Connection, message: Any, to_referee: queue.Queue[Any], to_bot: queue.Queue[Any]
    ) -> None:
        """A message from the bot: record it, and forward it unless a probe holds it back."""
        kind = message.WhichOneof("kind")
        if kind == "hello" and connection.hello is None:
            connection.hello = message.hello
        if kind == "decision":
            with self._lock:
                probes = self.probes
                request = connection.last_request
                answering = request is not None and message.decision.request_id == request.request_id
                first_answer = answering and not any(
                    e.connection == connection.number
                    and e.direction == "up"
                    and e.message.WhichOneof("kind") == "decision"
                    and e.message.decision.request_id == message.decision.request_id
                    for e in self.entries
                )
                refuse = (
                    answering
                    and first_answer
                    and probes.refuse_request_number
                    and connection.last_request_number == probes.refuse_request_number
                )
            if refuse and request is not None:
                self._record(connection, "up", message, "held back (probe: refused)")
                elapsed = round((time.monotonic() - connection.request_sent_at) * 1000)
                refusal = referee_pb2.Refusal(
                    request_id=request.request_id,
                    reason=probes.refusal_reason,  # type: ignore[arg-type]
                    message="refused by the conformance check: answer again with one of legal_actions",
                    time_left_ms=max(0, request.time_left_ms - elapsed),
                    attempts_left=2,
                    action=message.decision.action,
                )
                self._send_down(
                    connection, referee_pb2.RefereeMessage(refusal=refusal), to_bot, "injected (probe)"
                )
                return
            self._record(connection, "up", message, "forwarded")
            to_referee.put(message)
            with self._lock:
                if answering:
                    self.answers_forwarded += 1
                stale = (
                    answering
                    and probes.stale_refusal_after
                    and self.answers_forwarded == probes.stale_refusal_after
                )
            if stale:
                refusal = referee_pb2.Refusal(
                    request_id=message.decision.request_id,
                    reason=referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST,
                    message="no such request (a stale id, sent by the conformance check)",
                )
                self._send_down(
                    connection, referee_pb2.RefereeMessage(refusal=refusal), to_bot, "injected (probe)"
                )
            return
        self._record(connection, "up", message, "forwarded")
        to_referee.put(message)

    def _send_down(self, connection: Connection, message: Any, to_bot: queue.Queue[Any], note: str) -> None:
        self._record(connection, "down", message, note)
        to_bot.put(message)

    def _down(self, connection: Connection, message: Any, to_bot: queue.Queue[Any], call: Any) -> None:
        """A message from the referee: note what it tells, apply the probes, pass it on."""
        kind = message.WhichOneof("kind")
        request = None
        match_over = False
        with self.connected:
            if kind == "welcome":
                connection.welcome = message.welcome
                self.connected.notify_all()
            elif kind == "update":
                for event in message.update.events:
                    if event.HasField("match_started"):
                        connection.seat = event.match_started.seat
                        connection.match_scenario = self.scenario
                    match_over = match_over or event.HasField("match_ended")
                    self._count_fallback(connection, event)
                if message.update.HasField("request"):
                    request = message.update.request
            elif kind == "resync":
                if message.resync.HasField("match"):
                    connection.seat = message.resync.match.seat
                if message.resync.HasField("request"):
                    request = message.resync.request
            probes = self.probes
            number = 0
            if request is not None and kind == "update":
                self.requests_seen += 1
                number = self.requests_seen
        if number:
            if number == probes.empty_update_before:
                self._send_down(
                    connection,
                    referee_pb2.RefereeMessage(update=referee_pb2.Update()),
                    to_bot,
                    "injected (probe)",
                )
            if number == probes.unknown_message_before:
                later = referee_pb2.RefereeMessage()
                with_unknown_fields(later)
                self._send_down(connection, later, to_bot, "injected (probe)")
            if number == probes.drop_request_number:
                self._record(connection, "down", message, "held back (probe: connection dropped)")
                to_bot.put(_Drop("the conformance check dropped the connection: resume it"))
                return
        if request is not None:
            with self._lock:
                original = referee_pb2.DecisionRequest()
                original.CopyFrom(request)
                connection.last_request = original
                connection.last_request_number = number
                connection.request_sent_at = time.monotonic()
        changes = []
        if number and number == probes.unknown_kind_request:
            message.update.request.kind = UNKNOWN_ENUM
            changes.append("unknown DecisionKind")
        if number and number == probes.gap_request_number and message.update.events:
            left_out = message.update.events[0].sequence
            del message.update.events[0]
            changes.append(f"event {left_out} left out")
        if probes.unknown_fields:
            self._add_unknowns(message)
            changes.append("unknown fields")
        if probes.unknown_enums:
            fields = with_unknown_enums(message)
            if fields:
                changes.append("unknown enum values in " + ", ".join(dict.fromkeys(fields)))
        note = f"forwarded (probe: {', '.join(changes)})" if changes else "forwarded"
        self._send_down(connection, message, to_bot, note)
        if match_over:
            with self._lock:
                connection.match_scenario = ""

    def _count_fallback(self, connection: Connection, event: referee_pb2.Event) -> None:
        """Note a fallback the referee made for this connection's own seat (under the lock)."""
        member = event.WhichOneof("kind")
        if member not in ("call_made", "card_played"):
            return
        action = getattr(event, member)
        if action.seat != connection.seat:
            return
        if not action.by_referee or action.fault in self.probes.allowed_faults:
            self.fault_streak[action.seat] = 0
            return
        streak = self.fault_streak.get(action.seat, 0) + 1
        self.fault_streak[action.seat] = streak
        if streak >= STOP_AFTER_FAULTS and not self.stopped_answering:
            fault = game_pb2.FaultKind.Name(action.fault).removeprefix("FAULT_KIND_").lower()
            seat = cards_pb2.Seat.Name(action.seat).removeprefix("SEAT_").title()
            self.stopped_answering = (
                f"stopped after {streak} fallbacks in a row for {seat} ({fault}): the bot had stopped "
                "answering, so the rest of the scenario was not played"
            )

    @staticmethod
    def _add_unknowns(message: Any) -> None:
        with_unknown_fields(message)
        kind = message.WhichOneof("kind")
        if kind == "welcome":
            with_unknown_fields(message.welcome)
        elif kind == "update":
            with_unknown_fields(message.update)
            for event in message.update.events:
                with_unknown_fields(event)
            if message.update.HasField("request"):
                request = message.update.request
                with_unknown_fields(request)
                with_unknown_fields(request.hand)
        elif kind == "resync":
            with_unknown_fields(message.resync)


class _Drop:
    """Tells the relay to end the bot's call as a lost connection would."""

    def __init__(self, details: str) -> None:
        self.details = details
