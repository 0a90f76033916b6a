"""Serving the page with Hypercorn's trio worker, alone or beside a referee."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.leaderboard import LeaderboardSource
from oddtrick_referee.web.live import RefereeLive

if TYPE_CHECKING:
    from oddtrick_referee.referee import Referee

log = logging.getLogger("oddtrick.web")


def parse_address(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` → (host, port); raises ValueError with what is expected."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = default_host, text
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"not a web address: {text!r} (expected PORT or HOST:PORT, e.g. 8000)") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"not a port: {number} (0-65535)")
    return host or default_host, number


async def serve_web(
    app: Any, host: str, port: int, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED
) -> None:
    """Serve ``app`` on host:port until cancelled; ``task_status`` gets the page's URL."""
    config = Config()
    config.bind = [f"[{host}]:{port}" if ":" in host else f"{host}:{port}"]
    config.accesslog = None
    config.errorlog = logging.getLogger("oddtrick.web.hypercorn")
    config.graceful_timeout = 1.0

    class _Status:
        def started(self, binds: list[str] | None = None) -> None:
            url = (binds or [f"http://{host}:{port}"])[0]
            task_status.started(url.rstrip("/"))

    await serve(app, config, task_status=_Status())


@asynccontextmanager
async def web_beside(
    referee: Referee,
    address: str | None,
    leaderboard: LeaderboardSource | None = None,
    tournament: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> AsyncIterator[str | None]:
    """Serve the page beside a running referee while the block runs (nothing if ``address`` is None).

    The page reads the referee's data folder and follows its live tables.
    Yields the page's URL.
    """
    if address is None:
        yield None
        return
    host, port = parse_address(address)
    app = create_app(referee.settings.data_dir, RefereeLive(referee), leaderboard, tournament)
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, app, host, port)
        log.info("web page on %s", url)
        if announce is not None:
            announce(url)
        try:
            yield url
        finally:
            nursery.cancel_scope.cancel()


def standalone_app(data_dir: Path, server: str | None, leaderboard: LeaderboardSource | None = None) -> Any:
    from oddtrick_referee.web.live import ArenaLive

    return create_app(data_dir, ArenaLive(server) if server else None, leaderboard)
