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
import contextlib
import dataclasses
import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import grpc
import trio

log = logging.getLogger("oddtrick.referee.transport")

_SERVER_OPTIONS = [
    # Bots send small messages one at a time: bandwidth-delay probing (a ping with
    # incoming data, to size flow-control windows for bulk transfers) only adds
    # frames and wake-ups to every decision.
    ("grpc.http2.bdp_probe", 0),
    ("grpc.keepalive_time_ms", 10_000),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
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
    writes it (:meth:`write_until_closed`) until a :class:`Close` ends the call."""

    def __init__(self, loop: asyncio.AbstractEventLoop, peer: str) -> None:
        self.peer = peer
        self._loop = loop
        self._outbox: asyncio.Queue[Any] = asyncio.Queue()
        self.closed = False

    # --- trio side
    def send(self, message: Any) -> None:
        """Queue ``message`` for the peer. Never blocks; a no-op once closed."""
        if self.closed:
            return
        try:
            self._loop.call_soon_threadsafe(self._outbox.put_nowait, message)
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
        while True:
            message = await self._outbox.get()
            if isinstance(message, Close):
                if message.code is not grpc.StatusCode.OK:
                    await context.abort(message.code, message.details)
                return
            await context.write(message)


class WatchStream(_Outgoing):
    """One spectator's server-streaming call (Arena.WatchMatch), seen from trio.

    A spectator that hangs up only sets :attr:`closed`: the table stops sending
    to it. One that reads too slowly is cut off rather than queued for without end.
    """

    max_behind = 256
    """Responses queued for a spectator before it is cut off."""

    def send(self, message: Any) -> None:
        # qsize() read from the trio thread is a snapshot, which is all a bound needs.
        if not self.closed and self._outbox.qsize() >= self.max_behind:
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

    def _hang_up(self) -> None:
        self.closed = True
        self._inbox_send.close()


class _PlayHandler:
    """The asyncio half of every ``Play`` call."""

    def __init__(
        self,
        trio_token: trio.lowlevel.TrioToken,
        on_stream: Callable[[BotStream], None],
        inbox_size: int,
    ) -> None:
        self._trio_token = trio_token
        self._on_stream = on_stream
        self._inbox_size = inbox_size

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        loop = asyncio.get_running_loop()
        stream = BotStream(loop, context.peer(), self._inbox_size)
        try:
            self._trio_token.run_sync_soon(self._on_stream, stream)
        except trio.RunFinishedError:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the referee is shutting down")
        pump = asyncio.create_task(self._pump(context, stream))
        try:
            await stream.write_until_closed(context)
        finally:
            pump.cancel()
            self._to_trio(stream._hang_up)

    async def _pump(self, context: grpc.aio.ServicerContext, stream: BotStream) -> None:
        try:
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                self._to_trio(stream._deliver, message)
        except (asyncio.CancelledError, grpc.RpcError, grpc.aio.AioRpcError, grpc.aio.AbortError):
            pass
        except Exception as error:  # the call was aborted or broke: the trio side must know
            if not stream.closed:
                log.warning("reading from %s failed: %r", stream.peer, error)
        finally:
            self._to_trio(stream._hang_up)

    def _to_trio(self, function: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(trio.RunFinishedError):
            self._trio_token.run_sync_soon(function, *args)


@dataclasses.dataclass
class GrpcEndpoint:
    port: int
    loop: asyncio.AbstractEventLoop


@asynccontextmanager
async def grpc_server(
    address: str,
    on_stream: Callable[[BotStream], None],
    register: Callable[[grpc.aio.Server, Any], None],
    inbox_size: int = 16,
    stop_grace_s: float = 1.0,
) -> AsyncIterator[GrpcEndpoint]:
    """Run a grpc.aio server on ``address`` for the duration of the block.

    ``register(server, play_handler)`` adds the services; ``on_stream`` is
    called in trio for every new ``Play`` call.
    """
    handler = _PlayHandler(trio.lowlevel.current_trio_token(), on_stream, inbox_size)
    started: trio.Event = trio.Event()
    outcome: dict[str, Any] = {}
    token = trio.lowlevel.current_trio_token()

    async def serve() -> None:
        server = grpc.aio.server(options=_SERVER_OPTIONS)
        register(server, handler)
        try:
            port = server.add_insecure_port(address)
            await server.start()
        except Exception as error:
            outcome["error"] = error
            token.run_sync_soon(started.set)
            return
        stop = asyncio.Event()
        outcome["endpoint"] = GrpcEndpoint(port, asyncio.get_running_loop())
        outcome["stop"] = stop
        token.run_sync_soon(started.set)
        await stop.wait()
        await server.stop(stop_grace_s)

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="grpc-aio", daemon=True)
    thread.start()
    await started.wait()
    if "error" in outcome:
        await trio.to_thread.run_sync(thread.join)
        error = outcome["error"]
        if "bind" in str(error).lower() or "in use" in str(error).lower():
            raise OSError(
                f"cannot listen on {address}: the port is in use (another referee?); stop that "
                "program or choose another --port (--port 0 picks a free one)"
            )
        raise OSError(f"cannot listen on {address}: {error}")
    endpoint: GrpcEndpoint = outcome["endpoint"]
    try:
        yield endpoint
    finally:
        endpoint.loop.call_soon_threadsafe(outcome["stop"].set)
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(thread.join)
