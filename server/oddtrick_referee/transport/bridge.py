"""grpc.aio on a helper thread, bridged to the trio side of the referee.

grpcio speaks asyncio, the referee speaks trio. The gRPC server runs in an
asyncio loop on one thread whatever the number of bots; each message crosses
threads with one non-blocking call (``run_sync_soon`` into trio,
``call_soon_threadsafe`` into asyncio), the fastest of the designs measured
on this machine. A stream is read by a pump task that is never cancelled
while the call lives, since cancelling a grpc.aio ``read()`` kills the call.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import errno
import logging
import socket
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import trio
from google.protobuf.message import DecodeError

from oddtrick_referee._exceptions import CannotListen

log = logging.getLogger("oddtrick.referee.transport")

_SERVER_OPTIONS = [
    # Bots send small messages one at a time: bandwidth-delay probing (a ping with
    # incoming data, to size flow-control windows for bulk transfers) only adds
    # frames and wake-ups to every decision.
    ("grpc.http2.bdp_probe", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    # A bot waiting on its turn gets no data from the referee: without this, the
    # referee stops pinging after two pings without data, and a bot stopped
    # (SIGSTOP) or cut off without a FIN is never noticed.
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
    ("grpc.max_receive_message_length", 64 * 1024),
    # gRPC sets SO_REUSEPORT by default: a second referee on the same port would
    # then listen too, and the bots' streams would be split between the two.
    ("grpc.so_reuseport", 0),
]


@dataclasses.dataclass(frozen=True)
class Close:
    """Ask the asyncio side to end a call with this status."""

    code: grpc.StatusCode
    details: str


class _Outgoing:
    """What the trio side sends on one call, queued for the asyncio side, which
    writes it (:meth:`write_until_closed`) until a :class:`Close` ends the call.

    The queue is a deque under a lock rather than an ``asyncio.Queue`` fed by
    ``call_soon_threadsafe``: the asyncio loop is woken only when the writer waits
    for something to write, never for a message queued while it is still writing
    the last, and a message costs no future and no getter bookkeeping.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, peer: str) -> None:
        self.peer = peer
        self._loop = loop
        self._lock = threading.Lock()
        self._pending: collections.deque[Any] = collections.deque()
        self._waiter: asyncio.Future[None] | None = None
        """The writer's wait for the next message, while the queue is empty (asyncio's side)."""
        self.closed = False

    @property
    def queued(self) -> int:
        """Messages sent but not yet taken by the writer."""
        return len(self._pending)

    # --- trio side
    def send(self, message: Any) -> None:
        """Queue ``message`` for the peer. Never blocks; a no-op once closed."""
        if self.closed:
            return
        with self._lock:
            self._pending.append(message)
            waiter, self._waiter = self._waiter, None
        if waiter is None:
            return
        try:
            self._loop.call_soon_threadsafe(_wake, waiter)
        except RuntimeError:  # the asyncio loop is gone: the server is stopping
            self.closed = True

    def close(self, code: grpc.StatusCode, details: str) -> None:
        """End the call with a status (OK for a clean end)."""
        if self.closed:
            return
        self.send(Close(code, details))
        self.closed = True

    # --- asyncio side
    async def write_until_closed(self, context: grpc.aio.ServicerContext) -> None:
        lock, pending = self._lock, self._pending
        while True:
            with lock:
                message = pending.popleft() if pending else None
                if message is None:
                    waiter = self._waiter = self._loop.create_future()
            if message is None:  # nothing queued (a message is never None)
                await waiter
                continue
            if isinstance(message, Close):
                if message.code is not grpc.StatusCode.OK:
                    await context.abort(message.code, message.details)
                return
            await context.write(message)


def _wake(waiter: asyncio.Future[None]) -> None:
    """The writer's wait is over (in asyncio's thread): a message is queued."""
    if not waiter.done():
        waiter.set_result(None)


class WatchStream(_Outgoing):
    """One spectator's server-streaming call (Arena.WatchMatch), seen from trio.

    A spectator that hangs up only sets :attr:`closed`: the table stops sending
    to it. One that reads too slowly is cut off rather than queued for without end.
    """

    max_behind = 256
    """Responses queued for a spectator before it is cut off."""

    def send(self, message: Any) -> None:
        # The queue's length read from the trio thread is a snapshot, which is all a bound needs.
        if not self.closed and self.queued >= self.max_behind:
            self.close(grpc.StatusCode.RESOURCE_EXHAUSTED, "the spectator fell too far behind the play")
            return
        super().send(message)

    async def serve(self, context: grpc.aio.ServicerContext) -> None:
        try:
            await self.write_until_closed(context)
        finally:
            self.closed = True


class BotStream(_Outgoing):
    """One bot's bidirectional call, seen from trio.

    ``inbox`` yields the bot's messages in order and ends (``EndOfChannel``)
    when the bot hangs up. Messages the trio side has not taken yet are
    bounded; a bot that sends more is cut off with RESOURCE_EXHAUSTED, so a
    flood never grows memory or slows another table.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, peer: str, inbox_size: int) -> None:
        super().__init__(loop, peer)
        send, self.inbox = trio.open_memory_channel[Any](inbox_size)
        self._inbox_send = send
        self.on_message: Callable[[Any], object] | None = None
        """Set by the session once its handshake is done: messages are then handled as
        they arrive rather than queued in :attr:`inbox`."""
        self.broken: Close | None = None
        """Why the bot's side ended other than by a half-close (bytes that are not a
        message): the status the trio side ends the call with once the inbox runs dry."""

    def close(self, code: grpc.StatusCode, details: str) -> None:
        if self.closed:
            return
        super().close(code, details)
        self._inbox_send.close()

    # --- called in trio's thread through run_sync_soon
    def _deliver(self, message: Any) -> None:
        if self.closed:
            return
        if self.on_message is not None:
            # This runs as a trio callback, outside any task: an exception here
            # would take the whole referee down, so a bug costs this stream only.
            try:
                self.on_message(message)
            except Exception:
                log.exception("handling a message from %s failed; closing its stream", self.peer)
                self.close(grpc.StatusCode.INTERNAL, "the referee failed to handle a message")
            return
        try:
            self._inbox_send.send_nowait(message)
        except trio.WouldBlock:
            log.warning("%s sent too many messages; cutting it off", self.peer)
            self.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many messages the referee did not ask for; answer each request once",
            )
        except trio.ClosedResourceError:
            pass

    def _peer_ended(self, broken: Close | None) -> None:
        """The bot's side ended (a half-close, or ``broken``): the inbox ends after what
        was already queued, and the trio side ends the call (:meth:`close`) with a status."""
        if self.broken is None:
            self.broken = broken
        self._inbox_send.close()

    def _hang_up(self) -> None:
        """The call itself is over (ended with a status, or cancelled by the bot)."""
        self.closed = True
        self._inbox_send.close()


class CallCount:
    """How many Play calls are open, counted on the trio side (a test, or a benchmark,
    can wait for every call to be released)."""

    def __init__(self) -> None:
        self.active = 0
        self._changed = trio.Event()

    def opened(self) -> None:
        self.active += 1

    def ended(self) -> None:
        self.active -= 1
        self._changed.set()
        self._changed = trio.Event()

    async def wait_until_at_most(self, count: int) -> None:
        while self.active > count:
            await self._changed.wait()


class _PlayHandler:
    """The asyncio half of every ``Play`` call.

    The call ends when the trio side closes the stream, and only then: a bot's
    half-close or unreadable bytes are handed to the trio side, which ends the
    call with a status (a call left without one would hold its memory for good).
    """

    def __init__(
        self,
        trio_token: trio.lowlevel.TrioToken,
        on_stream: Callable[[BotStream], None],
        inbox_size: int,
    ) -> None:
        self._trio_token = trio_token
        self._on_stream = on_stream
        self._inbox_size = inbox_size
        self.calls = CallCount()

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        loop = asyncio.get_running_loop()
        stream = BotStream(loop, context.peer(), self._inbox_size)
        try:
            self._trio_token.run_sync_soon(self._opened, stream)
        except trio.RunFinishedError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        pump = asyncio.create_task(self._pump(context, stream))
        try:
            await stream.write_until_closed(context)
        finally:
            pump.cancel()
            self._to_trio(self._ended, stream)

    def _opened(self, stream: BotStream) -> None:
        self.calls.opened()
        self._on_stream(stream)

    def _ended(self, stream: BotStream) -> None:
        stream._hang_up()
        self.calls.ended()

    async def _pump(self, context: grpc.aio.ServicerContext, stream: BotStream) -> None:
        broken: Close | None = None
        try:
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                self._to_trio(stream._deliver, message)
        except (asyncio.CancelledError, grpc.RpcError, grpc.aio.AioRpcError, grpc.aio.AbortError):
            pass  # the call is over (ended by the referee, or cancelled by the bot)
        except DecodeError as error:
            broken = Close(
                grpc.StatusCode.INVALID_ARGUMENT, f"a message could not be read as a BotMessage ({error})"
            )
        except Exception as error:  # the call broke: end it, and say why in the log
            if not stream.closed:
                log.warning("reading from %s failed: %r", stream.peer, error)
            broken = Close(grpc.StatusCode.INTERNAL, "the referee could not read the stream")
        finally:
            self._to_trio(stream._peer_ended, broken)

    def _to_trio(self, function: Callable[..., None], *args: Any) -> None:
        # try/except rather than contextlib.suppress: this runs for every message a bot sends.
        try:
            self._trio_token.run_sync_soon(function, *args)
        except trio.RunFinishedError:
            return  # the referee is stopping: nobody is left to tell


@dataclasses.dataclass
class GrpcEndpoint:
    port: int
    loop: asyncio.AbstractEventLoop
    calls: CallCount
    loopback_port: int
    """Where bot processes on this machine connect (the same port unless it is TLS)."""


@asynccontextmanager
async def grpc_server(
    address: str,
    on_stream: Callable[[BotStream], None],
    register: Callable[[grpc.aio.Server, Any], None],
    inbox_size: int = 16,
    stop_grace_s: float = 1.0,
    keepalive_s: tuple[float, float] = (10.0, 5.0),
    credentials: grpc.ServerCredentials | None = None,
    loopback_port: bool = False,
) -> AsyncIterator[GrpcEndpoint]:
    """Run a grpc.aio server on ``address`` for the duration of the block.

    ``register(server, play_handler)`` adds the services; ``on_stream`` is
    called in trio for every new ``Play`` call. ``keepalive_s``: the referee
    pings every connection this often, and drops it when a ping is not
    answered within the second figure. ``credentials``: TLS (else plaintext).
    ``loopback_port``: also listen in plaintext on a free port of 127.0.0.1
    (:attr:`GrpcEndpoint.loopback_port`), for bot processes the referee starts
    itself on this machine.
    """
    options = [
        *_SERVER_OPTIONS,
        ("grpc.keepalive_time_ms", round(keepalive_s[0] * 1000)),
        ("grpc.keepalive_timeout_ms", round(keepalive_s[1] * 1000)),
        # gRPC core times a ping out after this (default a minute), whatever the
        # keepalive timeout says: a stopped bot was kept for 60 s, not 15.
        ("grpc.http2.ping_timeout_ms", round(keepalive_s[1] * 1000)),
    ]
    if _port_in_use(address):
        raise CannotListen(_in_use(address))
    handler = _PlayHandler(trio.lowlevel.current_trio_token(), on_stream, inbox_size)
    started: trio.Event = trio.Event()
    outcome: dict[str, Any] = {}
    token = trio.lowlevel.current_trio_token()

    async def serve() -> None:
        server = grpc.aio.server(options=options)
        register(server, handler)
        try:
            if credentials is None:
                port = server.add_insecure_port(address)
            else:
                port = server.add_secure_port(address, credentials)
            local = server.add_insecure_port("127.0.0.1:0") if loopback_port else port
            await server.start()
        except Exception as error:
            outcome["error"] = error
            token.run_sync_soon(started.set)
            return
        stop = asyncio.Event()
        outcome["endpoint"] = GrpcEndpoint(port, asyncio.get_running_loop(), handler.calls, local)
        outcome["stop"] = stop
        token.run_sync_soon(started.set)
        await stop.wait()
        await server.stop(stop_grace_s)

    # The server's asyncio loop runs in a thread this block owns, joined at its end (and,
    # when the block is cancelled while the server starts, once the server has started).
    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="grpc-aio")
    thread.start()
    try:
        await started.wait()
    except BaseException:
        with trio.CancelScope(shield=True):
            await started.wait()
        await _stop_and_join(thread, outcome)
        raise
    if "error" in outcome:
        await _stop_and_join(thread, outcome)
        error = outcome["error"]
        if "bind" in str(error).lower() or "in use" in str(error).lower():
            raise CannotListen(_in_use(address))
        raise CannotListen(f"cannot listen on {address}: {error}")
    try:
        yield outcome["endpoint"]
    finally:
        await _stop_and_join(thread, outcome)


async def _stop_and_join(thread: threading.Thread, outcome: dict[str, Any]) -> None:
    """Stop the server if it started, and wait for its thread to end, even when cancelled."""
    if "stop" in outcome:
        outcome["endpoint"].loop.call_soon_threadsafe(outcome["stop"].set)
    with trio.CancelScope(shield=True):
        await trio.to_thread.run_sync(thread.join)


def _in_use(address: str) -> str:
    return (
        f"cannot listen on {address}: the port is in use (another referee?); stop that "
        "program or choose another --port (--port 0 picks a free one)"
    )


def _port_in_use(address: str) -> bool:
    """Whether another program holds ``address``'s port, tried with a plain socket first:
    gRPC's own failed bind writes a raw log line (``E… add_port.cc``) to stderr before
    the clear message, which a user should see alone."""
    host, _, port_text = address.rpartition(":")
    if not port_text.isdigit() or int(port_text) == 0:
        return False
    bind_host: str | None = host.strip("[]") or None
    try:
        found = socket.getaddrinfo(
            bind_host, int(port_text), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError:
        return False  # gRPC says what is wrong with the address
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC binds
            try:
                probe.bind(where)
            except OSError as error:
                if error.errno == errno.EADDRINUSE:
                    return True
    return False
