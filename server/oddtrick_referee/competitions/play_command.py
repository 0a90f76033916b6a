"""The options of ``oddtrick play`` and what they turn into (see :mod:`.at_terminal`)."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path

from oddtrick._argparse import positive_seconds
from oddtrick.rules import ConfigError, Seat
from oddtrick_referee.competitions.at_terminal import DEFAULT_BOT, opponent, play_at_terminal
from oddtrick_referee.options import add_data_dir, add_game_options, config_from_args


def add_play_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:

    play = commands.add_parser(
        "play",
        help="take a seat at the terminal and play a match against bots",
        description=(
            "Play one match yourself against bots: the sample heuristic bot by default, or your own "
            "bot files, or remote bots. Your seat is a client of a referee like any bot's (the same "
            "protocol, the same log, which oddtrick check verifies), without a decision deadline. "
            "At your turn, type the number of a choice or the card or call itself (QH, 10h, Q♥; "
            "7C, 8NT, pass, double). Ctrl-D or Ctrl-C stops. A match is 4 deals unless --deals, "
            "--format or --config says otherwise."
        ),
        epilog="example: oddtrick play --game classic --deals 4 --opponents my_bot.py",
    )
    play.add_argument("--seat", default="S", help="your seat: N, E, S or W (default S)")
    play.add_argument("--name", default=None, help="your name in the log (default: your user name)")
    play.add_argument(
        "--partner",
        default=None,
        metavar="BOT",
        help="your partner: FILE.py[:Class], cmd:COMMAND or remote:NAME (default: the sample heuristic bot)",
    )
    play.add_argument(
        "--opponents",
        default=None,
        metavar="BOT",
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
    add_game_options(play)
    add_data_dir(play)
    play.set_defaults(handler=_play)


def _play(args: argparse.Namespace) -> int:
    if args.deals is None and args.format is None and args.config is None:
        args.deals = 4  # a sitting, rather than a whole game to 100
    try:
        config = config_from_args(args)
        seat = Seat.parse(args.seat)
        partner = opponent(args.partner or str(DEFAULT_BOT), "partner")
        opponents = opponent(args.opponents or str(DEFAULT_BOT), "opponents")
        name = args.name or _user_name()
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
    except (ConfigError, ValueError, OSError) as error:
        print(f"oddtrick play: {error}", file=sys.stderr)
        return 2


def _user_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        return "you"
    return "".join(c for c in name if c.isalnum() or c in "-_.") or "you"


__all__ = ["Path", "add_play_command"]
