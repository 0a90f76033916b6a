"""Serving the page with Hypercorn's trio worker, alone or beside a referee."""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from oddtrick_referee._exceptions import CannotListen, OptionError
from oddtrick_referee.competitions.people.in_browser import Sittings
from oddtrick_referee.competitions.tournaments.page import LeaderboardSource, Page
from oddtrick_referee.referee import Referee
from oddtrick_referee.web.app import WebApp, create_app
from oddtrick_referee.web.guard import HostCheck, configured_hosts
from oddtrick_referee.web.live import ArenaLive, LiveSource, RefereeLive
from oddtrick_referee.web.progress import Progress, state_progress
from oddtrick_referee.web.runs import RunPages
from oddtrick_referee.web.seat import SittingsLive

log = logging.getLogger("oddtrick.web")


def parse_address(text: str, default_host: str = "127.0.0.1") -> tuple[str, int]:
    """``PORT`` or ``HOST:PORT`` → (host, port); raises OptionError with what is expected."""
    host, colon, port = text.rpartition(":")
    if not colon:
        host, port = default_host, text
    try:
        number = int(port)
    except ValueError:
        raise OptionError(f"not a web address: {text!r} (expected PORT or HOST:PORT, e.g. 8000)") from None
    if not 0 <= number <= 65535:
        raise OptionError(f"not a port: {number} (0-65535)")
    return host or default_host, number


def bind_web(address: str) -> socket.socket:
    """A listening address for the page, bound now, so a port in use is a plain error at start.

    ``address`` is ``PORT`` or ``HOST:PORT`` (the host defaults to 127.0.0.1);
    raises OptionError for a malformed one and CannotListen naming the address when
    it cannot be bound.
    """
    host, port = parse_address(address)
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    except OSError as error:  # no IPv6 here, say
        raise CannotListen(f"cannot serve the web page on {host}:{port}: {error.strerror or error}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise CannotListen(
            f"cannot serve the web page on {host}:{port}: {error.strerror or error} "
            "(choose another port, or 0 for any free one)"
        ) from None
    return sock


async def serve_web(
    app: Any,
    where: socket.socket | str,
    *,
    hosts: Sequence[str] | None = None,
    task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``app`` until cancelled, on a bound socket or an address (``[HOST:]PORT``);
    ``task_status`` gets the page's URL.

    Only requests whose Host is the bound address, localhost, or one of ``hosts``
    (by default the names in ``ODDTRICK_WEB_HOSTS``) are answered: see :mod:`.guard`.
    """
    sock = bind_web(where) if isinstance(where, str) else where
    host, port = sock.getsockname()[:2]
    web = getattr(getattr(app, "state", None), "web", None)  # the pages', closed when serving ends
    app = HostCheck(app, host, configured_hosts() if hosts is None else hosts)
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
    config = Config()
    config.bind = [f"fd://{sock.detach()}"]  # Hypercorn takes the socket over
    config.accesslog = None
    config.errorlog = logging.getLogger("oddtrick.web.hypercorn")
    config.graceful_timeout = 1.0

    class _Status:
        def started(self, binds: list[str] | None = None) -> None:
            task_status.started(url)

    try:
        await serve(app, config, task_status=_Status())
    finally:
        if isinstance(web, WebApp):
            web.close()


@asynccontextmanager
async def web_beside(
    referee: Referee,
    where: socket.socket | str | None,
    leaderboard: LeaderboardSource | None = None,
    tournament: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> AsyncIterator[str | None]:
    """Serve the page beside a running referee while the block runs (nothing if ``where`` is None).

    The page reads the referee's data folder and follows its live tables.
    Yields the page's URL.
    """
    if where is None:
        yield None
        return
    app = create_app(referee.data_dir, RefereeLive(referee), leaderboard, tournament)

    def progress(match_id: str) -> Progress | None:
        table = referee.live_table(match_id)
        return None if table is None else state_progress(table.state)

    app.state.web.data.live_progress = progress
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, app, where)
        log.info("web page on %s", url)
        if announce is not None:
            announce(url)
        try:
            yield url
        finally:
            nursery.cancel_scope.cancel()


def page_beside(
    where: socket.socket | str | None,
    tournament: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> Page:
    """The page a competition holds open beside its referee (see :data:`~.competitions.page.Page`):
    :func:`web_beside` on ``where``, opening on ``tournament``'s standings if given."""

    def page(
        referee: Referee, leaderboard: LeaderboardSource | None
    ) -> AbstractAsyncContextManager[str | None]:
        return web_beside(referee, where, leaderboard, tournament=tournament, announce=announce)

    return page


def standalone_app(
    data_dir: Path,
    server: str | None,
    leaderboard: LeaderboardSource | None = None,
    sittings: Sittings | None = None,
    runs: RunPages | None = None,
) -> Any:
    """``oddtrick web``'s page; with ``sittings``, the Play button too, and the matches played
    from it live (unless ``server`` is followed instead); with ``runs``, a workers' database's runs."""
    live: LiveSource | None = ArenaLive(server) if server else None
    if live is None and sittings is not None:
        live = SittingsLive(sittings)
    app = create_app(data_dir, live, leaderboard, sittings=sittings, play=sittings is not None, runs=runs)
    if runs is not None:
        app.state.web.analyses.stored = runs.analysis
    return app
