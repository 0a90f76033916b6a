"""The options of ``oddtrick play`` and what they turn into (see :mod:`.at_terminal`)."""

from __future__ import annotations

import argparse
import getpass
import socket
import sys
from pathlib import Path
from typing import IO

import trio

from oddtrick._argparse import EntryArgument, EntryWords, positive_seconds
from oddtrick.rules import ConfigError, ParseError, Seat
from oddtrick_referee._exceptions import RefereeError
from oddtrick_referee.command_runner import (
    StopRequest,
    interrupted,
    run_command,
    sigterm_stops_like_ctrl_c,
    sole_error,
)
from oddtrick_referee.competitions.people.at_terminal import (
    DEFAULT_BOT,
    Opponent,
    check_opponents,
    opponent,
    play_at_terminal,
    seat_table,
)
from oddtrick_referee.competitions.people.in_browser import Sitting, Sittings
from oddtrick_referee.competitions.people.seat_desk import SeatDesk
from oddtrick_referee.options import add_data_dir, add_game_options, config_from_args
from oddtrick_referee.referee import MatchRecord
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.seat import SittingsLive
from oddtrick_referee.web.server import bind_web, serve_web


def add_play_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:

    play = commands.add_parser(
        "play",
        help="take a seat at the terminal and play a match against bots",
        description=(
            "Play one match yourself against bots: the sample heuristic bot by default, or your own "
            "bot files, or remote bots. Your seat is a client of a referee like any bot's (the same "
            "protocol, the same log, which oddtrick check verifies), without a decision deadline. "
            "At your turn, type the number of a choice or the card or call itself (QH, 10h, Q♥; "
            "7C, 8NT, pass, double); with --web, click them on a web page instead. "
            "Ctrl-D or Ctrl-C stops. A match is 4 deals unless --deals, "
            "--format or --config says otherwise."
        ),
        epilog="examples: oddtrick play --game classic --deals 4 --opponents my_bot.py; "
        "oddtrick play --web 8000 --game contract",
    )
    play.add_argument("--seat", default="S", help="your seat: N, E, S or W (default S)")
    play.add_argument("--name", default=None, help="your name in the log (default: your user name)")
    play.add_argument(
        "--partner",
        action=EntryWords,
        nargs="+",
        const="partner",
        default=[],
        metavar=("BOT", "option.NAME=VALUE"),
        help="your partner: FILE.py[:Class], cmd:COMMAND or remote:NAME (default: the sample heuristic "
        "bot), its bot options after it: --partner sample_bots/pimc_bot.py option.think_seconds=0.5",
    )
    play.add_argument(
        "--opponents",
        action=EntryWords,
        nargs="+",
        const="opponents",
        default=[],
        metavar=("BOT", "option.NAME=VALUE"),
        help="both opponents (one bot, two seats): as --partner (default: the sample heuristic bot)",
    )
    play.add_argument("--seed", default=None, help="the match seed (default: random)")
    play.add_argument(
        "--deadline",
        type=positive_seconds,
        default=5.0,
        metavar="S",
        help="seconds per decision for the bots (default 5)",
    )
    play.add_argument(
        "--web",
        metavar="[HOST:]PORT",
        default=None,
        help="play in the browser instead of the terminal: serve your seat's page on this port "
        "(the host defaults to 127.0.0.1; 0: any free port) and print its address, whose secret "
        "part is your seat; click your cards and calls there. Spectators follow the match live at "
        "/matches/ID on the same page",
    )
    add_game_options(play)
    add_data_dir(play)
    play.set_defaults(handler=_play)


def _play(args: argparse.Namespace) -> int:
    if args.deals is None and args.format is None and args.config is None:
        args.deals = 4  # a sitting, rather than a whole game to 100
    try:
        config = config_from_args(args)
        seat = Seat.parse(args.seat)
        partner = _bot(args.partner, "partner")
        opponents = _bot(args.opponents, "opponents")
        args.data_dir.mkdir(parents=True, exist_ok=True)  # (covered for the bots' options check)
        run_command(check_opponents, partner, opponents, args.data_dir)
        name = args.name or _user_name()
        if args.web is not None:
            seat_table(seat, partner, opponents, name)  # a name clash is a usage error, said now
            sitting = Sitting(config, seat, partner, opponents, name, args.seed, args.deadline)
            return play_in_browser(sitting, args.data_dir, bind_web(args.web))
        return play_at_terminal(
            config,
            seat,
            partner,
            opponents,
            name=name,
            data_dir=args.data_dir,
            seed=args.seed,
            deadline_s=args.deadline,
        )
    except (ConfigError, ParseError, RefereeError, OSError) as error:  # OSError: a bot file's path
        print(f"oddtrick play: {error}", file=sys.stderr)
        return 2


def _bot(given: list[EntryArgument], role: str) -> Opponent:
    """The bot ``--partner`` or ``--opponents`` names (the last one given), with its options;
    the sample heuristic bot when none is."""
    if not given:
        return opponent(str(DEFAULT_BOT), role)
    return opponent(given[-1].text, role, given[-1].options)


def play_in_browser(sitting: Sitting, data_dir: Path, web: socket.socket, out: IO[str] = sys.stdout) -> int:
    """``oddtrick play --web``: one match, the person's seat played from the page on ``web``;
    the command's exit status."""
    sittings = Sittings(data_dir, out, limit=1)
    ended: dict[str, object] = {}

    async def main() -> None:
        with sigterm_stops_like_ctrl_c(StopRequest()):
            async with trio.open_nursery() as nursery:
                await nursery.start(sittings.run)
                app = create_app(data_dir, SittingsLive(sittings), sittings=sittings)
                url = await nursery.start(serve_web, app, web)
                done = trio.Event()

                def end(desk: SeatDesk, record: MatchRecord | None) -> None:
                    ended.update(desk=desk, record=record)
                    done.set()

                desk = sittings.start(sitting, on_end=end)
                print(
                    f"play in your browser: {url}/play/{desk.token}  (Ctrl-C to stop)", file=out, flush=True
                )
                await done.wait()
                nursery.cancel_scope.cancel()

    try:
        run_command(main)
    except BaseException as error:
        if interrupted(error):
            print(f"stopped (Ctrl-C): the match was abandoned; logs in {data_dir}", file=out)
            return 130
        error = sole_error(error)
        if isinstance(error, (OSError, RuntimeError, ValueError)):
            print(f"oddtrick play: {error}", file=sys.stderr)
            return 1
        raise
    record, desk = ended.get("record"), ended.get("desk")
    if not isinstance(record, MatchRecord):
        print(
            f"oddtrick play: {desk.error if isinstance(desk, SeatDesk) else 'the match stopped'}",
            file=sys.stderr,
        )
        return 1
    print(f"log: {record.log_path}  (replay and verify it: oddtrick check {record.log_path})", file=out)
    return 0


def _user_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        return "you"
    return "".join(c for c in name if c.isalnum() or c in "-_.") or "you"


__all__ = ["Path", "add_play_command"]
