"""``oddtrick tournament`` once its options are read: run it, print the standings, and
say in a line what happened when it stops early (Ctrl-C, a dead entry, a busy port)."""

from __future__ import annotations

import argparse
import json
import socket
import sys
from collections.abc import Callable

import grpc
import trio

from oddtrick_referee._errors import interrupted, sole_error
from oddtrick_referee.competitions.standings_table import print_standings
from oddtrick_referee.competitions.tournament import Progress, TournamentSettings, run_tournament
from oddtrick_referee.web.server import page_beside


def play_tournament(
    settings: TournamentSettings,
    args: argparse.Namespace,
    listening: Callable[[str], None],
    tls: grpc.ServerCredentials | None = None,
    web: socket.socket | None = None,
) -> int:
    progress = Progress(0, sys.stderr)
    try:
        standings = trio.run(
            lambda: run_tournament(
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
        )
    except BaseException as error:
        if interrupted(error):
            print(
                f"stopped (Ctrl-C): {progress.done} of {progress.total} tables finished and kept in "
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
    if args.json:
        print(json.dumps(standings.to_json(), indent=2))
    else:
        print_standings(standings, sys.stdout)
    return 0


def _announce_web(url: str) -> None:
    print(f"web page (standings, live tables) on {url}/", file=sys.stderr, flush=True)
