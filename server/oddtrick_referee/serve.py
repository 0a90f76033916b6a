"""``oddtrick serve``: play the configured matches, saying what happens as it happens.

Each match is announced when it starts (not only while its bots are awaited),
and its result when it ends; Ctrl-C (or SIGTERM, the same way) stops the referee
with one line saying what was stopped, what was kept and what to do next.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import TextIO

import trio

from oddtrick.rules import GameConfig, Seat
from oddtrick_referee.command_runner import (
    StopRequest,
    interrupted,
    run_command,
    sigterm_stops_like_ctrl_c,
    sole_error,
)
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee
from oddtrick_referee.web.server import web_beside


def serve(
    settings: RefereeSettings,
    config: GameConfig,
    seating: dict[Seat, str],
    rules: TableRules,
    *,
    matches: int,
    seed: str | None,
    forever: bool,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    web: socket.socket | None = None,
) -> int:
    """Run the referee and its matches; the exit status of ``oddtrick serve``."""
    current: list[tuple[str, Path]] = []
    finished: list[str] = []
    names = ", ".join(sorted(set(seating.values())))

    def started(match_id: str, log_path: Path) -> None:
        current[:] = [(match_id, log_path)]
        players = "  ".join(f"{seat} {seating[seat]}" for seat in Seat)
        print(f"match {match_id} started: {players}; log {log_path}", file=out, flush=True)

    stop = StopRequest()

    async def main() -> None:
        with sigterm_stops_like_ctrl_c(stop):
            await play()

    async def play() -> None:
        async with running_referee(settings) as referee, web_beside(referee, web) as url:
            print(f"referee listening on {referee.address}; logs in {referee.log_dir}", file=out, flush=True)
            if url:
                print(f"  web page on {url}/", file=out, flush=True)
            print(f"  follow the play with: oddtrick watch --server {referee.address} --follow", file=out)
            for number in range(1, matches + 1):
                print(f"match {number}/{matches}: waiting for {names} to connect", file=out, flush=True)
                match_seed = seed if matches == 1 else (f"{seed}/{number}" if seed else None)
                spec = MatchSpec(config, seating, rules, seed=match_seed)
                record = await referee.play_match(spec, on_start=started)
                current.clear()
                finished.append(record.match_id)
                result = record.state.match_result
                assert result is not None
                print(f"match {record.match_id} over: {result.reason}", file=out, flush=True)
            if forever:
                print("all matches played; serving on until Ctrl-C", file=out, flush=True)
                await trio.sleep_forever()
            referee.finish()

    try:
        run_command(main)
    except BaseException as error:
        if interrupted(error):
            print(_stopped_line(current, finished, settings.data_dir, stop.by), file=err, flush=True)
            return 130
        error = sole_error(error)
        if isinstance(error, OSError | ValueError):
            print(f"oddtrick serve: {error}", file=err)
            return 1
        raise
    return 0


def _stopped_line(current: list[tuple[str, Path]], finished: list[str], data_dir: Path, by: str) -> str:
    kept = f"{len(finished)} finished match(es) kept in {data_dir / 'logs'}"
    if current:
        match_id, log_path = current[0]
        return (
            f"stopped ({by}): match {match_id} abandoned and marked aborted (its log so far: "
            f"{log_path}); {kept}. A match cannot be resumed: run the command again to play it anew."
        )
    return f"stopped ({by}) while waiting for bots; {kept}. Run the command again to carry on."
