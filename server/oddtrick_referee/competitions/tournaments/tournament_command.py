"""``oddtrick tournament`` once its options are read: run it, print the standings, and
say in a line what happened when it stops early (Ctrl-C or SIGTERM, a dead entry, a busy port)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import trio

from oddtrick_referee._exceptions import CannotListen, OptionError
from oddtrick_referee.command_runner import (
    StopRequest,
    interrupted,
    run_command,
    sigterm_stops_like_ctrl_c,
    sole_error,
)
from oddtrick_referee.competitions.scoring.dd_skill_logs import tournament_dd_skill
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.scoring.standings_table import print_standings
from oddtrick_referee.competitions.tournaments.tournament import Progress, TournamentSettings, run_tournament
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import bind_web, page_beside, serve_web


def play_tournament(
    settings: TournamentSettings,
    args: argparse.Namespace,
    listening: Callable[[str], None],
    tls: grpc.ServerCredentials | None = None,
    web: socket.socket | None = None,
) -> int:
    progress = Progress(0, sys.stderr)
    stop = StopRequest()
    web_address = web.getsockname()[:2] if web is not None else None  # (the page takes the socket)

    async def main() -> Standings:
        with sigterm_stops_like_ctrl_c(stop):
            return await run_tournament(
                settings,
                args.data_dir,
                args.host,
                args.port,
                sys.stderr,
                listening,
                tls=tls,
                page=page_beside(web, settings.tournament_id, _announce_web),
                progress=progress,
            )

    try:
        standings = run_command(main)
    except BaseException as error:
        if interrupted(error):
            print(
                f"stopped ({stop.by}): {progress.done} of {progress.total} tables finished and kept in "
                f"{args.data_dir / 'oddtrick.sqlite3'} (logs, partial ones too, in "
                f"{args.data_dir / 'logs'}); run the same command to resume",
                file=sys.stderr,
            )
            return 130
        error = sole_error(error)
        if isinstance(error, ValueError | RuntimeError | OSError):
            print(f"oddtrick tournament: {error}", file=sys.stderr)
            return 1
        raise
    status = 0
    if getattr(args, "dd_skill", False):
        from oddtrick.analysis import AnalysisError

        try:
            standings = with_dd_skill(standings, settings, args)
        except AnalysisError as error:
            # The tables are played and stored: show their standings, say why the measure is missing.
            print(f"oddtrick tournament: --dd-skill: {error}; standings without it", file=sys.stderr)
            status = 1
    if args.json:
        print(json.dumps(standings.to_json(), indent=2))
    else:
        print_standings(standings, sys.stdout)
    if web_address is not None:
        return keep_page_up(web_address, args.data_dir, settings.tournament_id, status)
    return status


def keep_page_up(address: tuple[str, int], data_dir: Path, tournament_id: str, status: int) -> int:
    """``tournament --web`` once the tournament is over: its standings, replays and travellers
    stay on the same address until Ctrl-C (or SIGTERM), so people who follow it can read the
    end; the referee and the bots are gone. ``status`` is returned then."""
    host, port = address
    try:
        sock = bind_web(f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
    except (OptionError, CannotListen) as error:
        print(f"oddtrick tournament: the web page cannot stay up: {error}", file=sys.stderr)
        return status or 1

    async def main() -> None:
        with sigterm_stops_like_ctrl_c(StopRequest()):
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve_web, create_app(data_dir, tournament=tournament_id), sock)
                print(
                    f"the tournament is over; its web page stays up on {url}/ (Ctrl-C to stop)",
                    file=sys.stderr,
                    flush=True,
                )

    try:
        run_command(main)
    except BaseException as error:
        if not interrupted(error):
            raise
    return status


def with_dd_skill(standings: Standings, settings: TournamentSettings, args: argparse.Namespace) -> Standings:
    """The standings with every entry's double-dummy loss per deal (``--dd-skill``): every
    played hand of the tournament solved, which takes a while, so progress goes to stderr."""

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rdouble-dummy: {done}/{total} hands", end="" if done < total else "\n", file=sys.stderr)

    tournament_id = settings.tournament_id
    # run_tournament carries on a tournament stored under the id an earlier version gave it.
    if not settings.name and TournamentStore(args.data_dir / "oddtrick.sqlite3").has_tournament(
        settings.legacy_tournament_id
    ):
        tournament_id = settings.legacy_tournament_id
    entries = [entry.name for entry in settings.entries]
    skill = tournament_dd_skill(args.data_dir, tournament_id, entries, progress)
    return dataclasses.replace(standings, dd_skill=skill)


def _announce_web(url: str) -> None:
    print(f"web page (standings, live tables) on {url}/", file=sys.stderr, flush=True)
