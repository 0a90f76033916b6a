"""The ``web`` command, and the ``--web`` option of the commands that run a referee."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import trio

from oddtrick_referee._exceptions import CannotListen, DatabaseError, OptionError
from oddtrick_referee.command_runner import (
    StopRequest,
    interrupted,
    run_command,
    sigterm_stops_like_ctrl_c,
    sole_error,
)
from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings
from oddtrick_referee.competitions.ladder.web_source import LadderLeaderboard
from oddtrick_referee.competitions.people.in_browser import Sittings
from oddtrick_referee.competitions.tournaments.page import LeaderboardSource
from oddtrick_referee.storage.database import open_database
from oddtrick_referee.storage.ladder_store import LadderStore
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import open_queue
from oddtrick_referee.web.runs import RunPages
from oddtrick_referee.web.server import bind_web, serve_web, standalone_app


def add_web_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--web",
        metavar="[HOST:]PORT",
        default=None,
        help="also serve the web page (matches, replays, live play, standings) on this port; "
        "the host defaults to 127.0.0.1 (to serve it under other names, list them in "
        "ODDTRICK_WEB_HOSTS)",
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    web = commands.add_parser(
        "web",
        help="serve the web page: matches, replays, standings",
        description=(
            "Serves a referee data folder's matches as web pages: the list of matches, a replay "
            "viewer for each finished one (step through it card by card; the URL names the "
            "position), downloads of its log and PBN, tournament standings and the leaderboard. "
            "With --server it also follows matches in progress live from that referee; beside a "
            "referee, use serve --web or tournament --web instead. With --database it also shows the "
            "runs on workers of that PostgreSQL database under /runs (docs/scale-out.md)."
        ),
        epilog="example: oddtrick web --data-dir oddtrick-data --port 8000. The page answers only "
        "under the address it listens on and localhost (a guard against DNS rebinding); to serve it "
        "under other names, list them, comma-separated, in ODDTRICK_WEB_HOSTS "
        "(ODDTRICK_WEB_HOSTS=cards.example.org oddtrick web --host 0.0.0.0).",
    )
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    web.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    web.add_argument(
        "--data-dir",
        type=Path,
        default=Path("oddtrick-data"),
        help="the referee data folder to show (default ./oddtrick-data)",
    )
    web.add_argument(
        "--server",
        metavar="HOST:PORT",
        default=None,
        help="follow live matches from this referee's Arena service",
    )
    web.add_argument(
        "--play",
        action="store_true",
        help="put a Play button on the page: whoever opens the page may then start a match "
        "against the sample bots and play a seat in the browser (one deal; at most 4 at once, "
        "each starting bot processes here, and stopped when no page has followed it for 10 "
        "minutes), so it is off unless given",
    )
    web.add_argument(
        "--database",
        default=None,
        metavar="postgresql://…",
        help="also show the runs on workers of this database (tournaments and SPRTs submitted with "
        "--workers) under /runs, each with its jobs, standings or SPRT line and workers, following "
        "itself while it goes on. Alongside --data-dir rather than instead of it: the workers keep "
        "no data folder of their own, and one page may show a referee's matches and the runs at "
        "once; with --database, a --data-dir holding no referee data is no error (the page then "
        "opens on /runs). A match whose log a worker analysed (oddtrick analyze --submit) shows "
        "that analysis instead of computing it here",
    )
    web.set_defaults(handler=_web)


ABANDON_S = 600.0
"""Under --play, a match whose seat no page has followed for 10 minutes is stopped."""


def _ladder_in(data_dir: Path) -> LeaderboardSource | None:
    """The leaderboard of a ladder that keeps its SQLite database in this folder, if any."""
    if not (data_dir / "ladder.sqlite3").exists():
        return None

    settings = RatingSettings()
    store = LadderStore(open_database(None, data_dir, "ladder.sqlite3"), settings.mu, settings.sigma)
    return LadderLeaderboard(store, Rater(settings), "Ladder")


def _runs(url: str | None) -> RunPages | None:
    """The runs of the workers' database at ``url`` (None: none given); raises DatabaseError."""
    return None if url is None else RunPages(RunStore(open_queue(url)))


def _web(args: argparse.Namespace) -> int:
    try:
        runs = _runs(args.database)
    except DatabaseError as error:  # (the driver's reason may run over lines: one line here)
        print(f"oddtrick web: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    referee_data = (args.data_dir / "oddtrick.sqlite3").exists()
    if not referee_data and not args.play and runs is None:  # --play's referee makes it
        print(
            f"oddtrick web: no referee data in {args.data_dir} (no oddtrick.sqlite3); give the folder "
            "oddtrick serve or tournament wrote with --data-dir",
            file=sys.stderr,
        )
        return 2
    sittings = Sittings(args.data_dir, sys.stdout, abandon_s=ABANDON_S) if args.play else None
    app = standalone_app(args.data_dir, args.server, _ladder_in(args.data_dir), sittings, runs)
    host = f"[{args.host}]" if ":" in args.host else args.host
    try:
        sock = bind_web(f"{host}:{args.port}")
    except (OptionError, CannotListen) as error:
        print(f"oddtrick web: {error}", file=sys.stderr)
        return 1

    async def main() -> None:
        with sigterm_stops_like_ctrl_c(StopRequest()):
            async with trio.open_nursery() as nursery:
                if sittings is not None:
                    await nursery.start(sittings.run)
                url = await nursery.start(serve_web, app, sock)
                print(f"web page on {url}/ (Ctrl-C to stop)", flush=True)

    try:
        run_command(main)
    except BaseException as error:
        # Ctrl-C (or SIGTERM) reaches here inside the nursery's exception group.
        if interrupted(error):
            return 0
        error = sole_error(error)
        if isinstance(error, OSError):
            print(f"oddtrick web: {error}", file=sys.stderr)
            return 1
        raise
    return 0
