"""The ``oddtrick`` command.

``oddtrick bot`` and ``oddtrick watch`` are the SDK's; ``serve``, ``demo``, ``check`` and
``tournament`` come from the referee package, which is loaded only when one
of them is asked for.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from oddtrick import __version__
from oddtrick._strong_cli import add_commands as add_strong_commands
from oddtrick.rules import GameKind


def _add_bot_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bot = commands.add_parser(
        "bot",
        help="play a bot on a referee",
        description=(
            "Connect a bot to a referee and play: one gRPC stream per seat, as many seats "
            "as --seats, reconnecting when the connection drops, until Ctrl-C."
        ),
        epilog="example: oddtrick bot sample_bots/random_bot.py:RandomBot --server localhost:50051 "
        "--name alice --token s3cret --seats 2",
    )
    bot.add_argument(
        "bot", metavar="FILE.py:NAME", help="the bot: a Bot subclass or a function in a Python file"
    )
    bot.add_argument("--server", required=True, metavar="HOST:PORT", help="the referee's address")
    bot.add_argument("--name", required=True, help="the bot's name at the referee (what standings show)")
    bot.add_argument("--token", default="", help="the credential the referee gave this name")
    bot.add_argument("--seats", type=int, default=1, metavar="N", help="seats to hold at once (default 1)")
    bot.add_argument("--version", dest="bot_version", default="0", help="the bot's version, shown in logs")
    bot.add_argument(
        "--games",
        default="classic,contract",
        help="games the bot will play, comma-separated (default: classic,contract)",
    )
    bot.add_argument(
        "--max-matches", type=int, default=None, metavar="N", help="stop each seat after N matches"
    )
    bot.add_argument("-v", "--verbose", action="store_true", help="log every connection event")
    bot.set_defaults(handler=_run_bot)


def _run_bot(args: argparse.Namespace) -> int:
    from oddtrick._run import BotRefused, load_bot, run

    try:
        bot = load_bot(args.bot)
        games = [GameKind(g.strip()) for g in args.games.split(",") if g.strip()]
    except (OSError, ImportError, AttributeError, ValueError) as error:
        print(f"oddtrick bot: {error}", file=sys.stderr)
        return 2
    try:
        run(
            bot,
            server=args.server,
            name=args.name,
            token=args.token,
            seats=args.seats,
            version=args.bot_version,
            games=games,
            max_matches=args.max_matches,
        )
    except BotRefused as refused:
        print(f"oddtrick bot: the referee refused {args.name!r}: {refused}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _add_watch_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    watch = commands.add_parser(
        "watch",
        help="follow a match in progress as a spectator",
        description=(
            "Print a match's play as it happens, trick by trick, as a spectator sees it: calls, "
            "cards and results, and the four hands once each hand is over (live only at an "
            "open table). Ends with the match."
        ),
        epilog="example: oddtrick watch --server localhost:50051",
    )
    watch.add_argument(
        "match_id", nargs="?", default=None, help="the match to watch (default: the newest in progress)"
    )
    watch.add_argument("--server", required=True, metavar="HOST:PORT", help="the referee's address")
    watch.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from oddtrick._watch import watch

    try:
        return watch(args.server, args.match_id, sys.stdout, sys.stderr)
    except KeyboardInterrupt:
        return 130


def build_parser(with_referee: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oddtrick",
        description="Bots play classic Whist and Contract Whist over gRPC; oddtrick referees.",
    )
    parser.add_argument("--version", action="version", version=f"oddtrick {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_bot_command(commands)
    _add_watch_command(commands)
    add_strong_commands(commands)
    if not with_referee:
        return parser
    try:
        from oddtrick_referee.cli import add_commands
    except ImportError:  # the SDK alone is installed
        pass
    else:
        add_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # A bot process needs only the SDK: skip loading the referee (and trio) to start fast.
    parser = build_parser(with_referee=arguments[:1] not in (["bot"], ["watch"]))
    args = parser.parse_args(arguments)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    result: int = args.handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
