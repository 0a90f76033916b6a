"""The ``oddtrick`` command.

``oddtrick bot`` and ``oddtrick watch`` are the SDK's; ``serve``, ``demo``, ``check`` and
``tournament`` come from the referee package, which is loaded only when one
of them is asked for.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from oddtrick import __version__
from oddtrick._address import DEFAULT_PORT, referee_list, with_default_port
from oddtrick._argparse import Parser
from oddtrick._bot import Bot
from oddtrick._options import (
    VARIABLE,
    OptionError,
    OptionValue,
    declared,
    described,
    from_variable,
    parse_words,
    shown,
    with_options,
)
from oddtrick._strong_cli import add_commands as add_strong_commands
from oddtrick.rules import GameKind

if TYPE_CHECKING:
    from oddtrick._client import BotRefused
    from oddtrick._tls import TlsOptions


def _add_bot_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bot = commands.add_parser(
        "bot",
        help="play a bot on a referee",
        description=(
            "Connect a bot to a referee and play: one gRPC stream per seat, as many seats "
            "as --seats, reconnecting when the connection drops, until stopped: Ctrl-C or SIGTERM "
            "finishes the matches it sits in and takes no new one, a second stops it at once. Given several "
            "referees (a ladder run on several, docs/ladder.md), it plays at the first that "
            "answers and moves to the next when that one goes away."
        ),
        epilog="example: oddtrick bot sample_bots/random_bot.py:RandomBot --server localhost:50051 "
        "--name alice --token s3cret --seats 2; the strong bot thinking 2 s a card: oddtrick bot "
        "sample_bots/pimc_bot.py option.think_seconds=2 --server …; its options: oddtrick bot "
        "sample_bots/pimc_bot.py --check-options. As a tournament or conformance `cmd:` entry, "
        "`oddtrick bot FILE.py` alone is enough: the address, name, seats and token come from "
        "ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS and ODDTRICK_TOKEN_FD (or ODDTRICK_TOKEN); "
        "an option given on the command line wins over its variable.",
    )
    bot.add_argument(
        "bot",
        metavar="FILE.py[:NAME]",
        help="the bot: a Bot subclass or a function in a Python file (NAME may be left out when the "
        "file defines one Bot subclass)",
    )
    _add_bot_options(bot)
    bot.add_argument(
        "--server",
        default=None,
        action="append",
        type=_servers,
        metavar="HOST:PORT[,HOST:PORT…]",
        help=f"the referee's address, port {DEFAULT_PORT} if none is given; several (commas, or "
        "--server again) for a ladder on several referees: the bot plays at the first that answers "
        "and moves to the next when it goes away (default: $ODDTRICK_SERVER, commas too)",
    )
    bot.add_argument(
        "--name",
        default=None,
        help="the bot's name at the referee, what standings show (default: $ODDTRICK_NAME)",
    )
    bot.add_argument(
        "--token",
        default=None,
        help="the credential the referee gave this name (default: read from the file descriptor "
        "$ODDTRICK_TOKEN_FD, else $ODDTRICK_TOKEN; on a shared machine prefer these, since every "
        "user can read a command line)",
    )
    bot.add_argument(
        "--seats",
        type=_seat_count,
        default=None,
        metavar="N",
        help="seats to hold at once (default: $ODDTRICK_SEATS, else 1)",
    )
    bot.add_argument("--version", dest="bot_version", default="0", help="the bot's version, shown in logs")
    bot.add_argument(
        "--games",
        default="classic,contract",
        help="games the bot will play, comma-separated (default: classic,contract)",
    )
    bot.add_argument(
        "--max-matches", type=int, default=None, metavar="N", help="stop each seat after N matches"
    )
    _add_tls_options(bot)
    loudness = bot.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true", help="also log every connection event")
    loudness.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    bot.set_defaults(handler=_run_bot)


def _add_bot_options(bot: argparse.ArgumentParser) -> None:
    """``oddtrick bot``'s bot options: ``option.NAME=VALUE`` words and ``--check-options``."""
    bot.add_argument(
        "options",
        nargs="*",
        default=[],
        metavar="option.NAME=VALUE",
        help="an option of the bot (a class attribute it names in `options`), e.g. "
        "option.think_seconds=2: true/false, a number or text; given too by $ODDTRICK_OPTIONS, a "
        'JSON object ({"think_seconds": 2}), which a word here overrides',
    )
    bot.add_argument(
        "--check-options",
        action="store_true",
        help="check the options given against the bot's, list them with the values it would "
        "play with, and exit without connecting",
    )
    if isinstance(bot, Parser):
        bot.intermixed = True  # option words may come after the other options too


def _server(text: str) -> str:
    """``--server``: ``HOST:PORT``, or ``HOST`` for the referee's default port."""
    try:
        return with_default_port(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _servers(text: str) -> tuple[str, ...]:
    """``--server A,B``: one referee or several, each ``HOST:PORT`` or ``HOST``."""
    try:
        return referee_list(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _seat_count(text: str) -> int:
    """``--seats``: a whole number of seats, at least one."""
    try:
        seats = int(text)
    except ValueError:
        seats = 0
    if seats < 1 or str(seats) != text.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seats: give 1 or more")
    return seats


def _add_tls_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("TLS (for a referee started with --tls-cert)")
    group.add_argument("--tls", action="store_true", help="connect over TLS, checking the referee")
    group.add_argument(
        "--ca",
        type=Path,
        default=None,
        metavar="FILE.pem",
        help="certificates trusted for the referee (default: the system's); implies --tls",
    )
    group.add_argument(
        "--tls-cert",
        type=Path,
        default=None,
        metavar="FILE.pem",
        help="this client's certificate (mutual TLS)",
    )
    group.add_argument("--tls-key", type=Path, default=None, metavar="FILE.pem", help="its private key")


def _tls(args: argparse.Namespace) -> TlsOptions | None:
    from oddtrick._tls import tls_from_args  # gRPC's credentials: loaded by the commands that connect

    return tls_from_args(args.tls, args.ca, args.tls_cert, args.tls_key)


def _run_bot(args: argparse.Namespace) -> int:
    from oddtrick._run import BotRefused, load_bot, run

    if args.check_options:
        return _check_options(args, load_bot)
    try:
        server, name, seats = _connection_from_environment(args)
        given = _given_options(args)
    except ValueError as error:
        print(f"oddtrick bot: {error}", file=sys.stderr)
        return 2
    token = args.token if args.token is not None else _token_from_environment()
    try:
        bot = with_options(load_bot(args.bot), given)
        games = [GameKind(g.strip()) for g in args.games.split(",") if g.strip()]
        tls = _tls(args)
        if tls is not None:
            tls.credentials()  # a missing or unreadable file is reported now, in one line
    except OptionError as error:
        print(f"oddtrick bot: {error}", file=sys.stderr)
        return 2
    except (OSError, ImportError, AttributeError, ValueError, SyntaxError) as error:
        print(f"oddtrick bot: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    try:
        run(
            bot,
            server=server,
            name=name,
            token=token,
            seats=seats,
            version=args.bot_version,
            games=games,
            max_matches=args.max_matches,
            tls=tls,
        )
    except BotRefused as refused:
        print(refusal_line(refused, server, name, token), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _given_options(args: argparse.Namespace) -> dict[str, OptionValue]:
    """The options of ``oddtrick bot``: ``$ODDTRICK_OPTIONS`` (what a tournament sets), then
    the option words of its command line, which win."""
    return {
        **from_variable(os.environ.get(VARIABLE, "")),
        **parse_words(args.options, f"oddtrick bot {args.bot}"),
    }


def _check_options(args: argparse.Namespace, load: Callable[[str], Any]) -> int:
    """``oddtrick bot FILE.py --check-options``: the bot's options with the values it would
    play with (0), or why they cannot be given (2, one line), without connecting. The
    referee runs it for a bot file's entry before anything is played."""
    try:
        loaded = load(args.bot)
        target = with_options(loaded, _given_options(args))
        is_class = isinstance(target, type) and issubclass(target, Bot)
        defaults, values = (declared(loaded), declared(target)) if is_class else ({}, {})
    except OptionError as error:
        print(f"oddtrick bot: {error}", file=sys.stderr)
        return 2
    except (OSError, ImportError, AttributeError, TypeError, ValueError, SyntaxError) as error:
        print(f"oddtrick bot: {type(error).__name__}: {error}", file=sys.stderr)
        return 2
    name = getattr(target, "__name__", args.bot)
    if not values:
        print(f"{name} declares no options")
    for option, value in values.items():
        print(f"{name} option.{option}={shown(value)}  ({described(defaults[option])})")
    return 0


def refusal_line(refused: BotRefused, server: str, name: str, token: str) -> str:
    """What ``oddtrick bot`` says when the referee refuses it or nothing answers."""
    if refused.code.name == "UNAUTHENTICATED" and not token:
        return (
            f"oddtrick bot: the referee at {server} wants a token for {name!r} and none "
            "was given: pass --token TOKEN (or set ODDTRICK_TOKEN)"
        )
    if refused.code.name == "UNAVAILABLE":
        where = " or ".join(server.split(","))
        return (
            f"oddtrick bot: nothing listens at {where} (no referee answered for a minute): "
            "start the referee there (oddtrick serve), or give its --server HOST:PORT"
        )
    return f"oddtrick bot: the referee refused {name!r}: {refused}"


def _bot_logging(args: argparse.Namespace) -> None:
    """``oddtrick bot`` says what it does by default, a line per connection and per match
    (timestamps, no logger names); -v adds every connection event, -q keeps warnings only."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    bot_log = logging.getLogger("oddtrick.bot")
    bot_log.handlers[:] = [handler]
    bot_log.propagate = False
    bot_log.setLevel(logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO)


def _connection_from_environment(args: argparse.Namespace) -> tuple[str, str, int]:
    """Servers (``A,B``), name and seats: each from its option, else from the variable every
    tournament ``cmd:`` entry is given; ValueError (one line, what to do) when missing."""
    if args.server:
        given = [address for addresses in args.server for address in addresses]
        server = ",".join(referee_list(",".join(given)))  # an address repeated across options
    else:
        text = os.environ.get("ODDTRICK_SERVER", "")
        if not text.strip():
            raise ValueError("no referee address: pass --server HOST:PORT (or set ODDTRICK_SERVER)")
        try:
            server = ",".join(referee_list(text))
        except ValueError as error:
            raise ValueError(f"ODDTRICK_SERVER: {error}") from None
    name = args.name or os.environ.get("ODDTRICK_NAME", "")
    if not name:
        raise ValueError("no bot name: pass --name NAME (or set ODDTRICK_NAME)")
    seats = args.seats
    if seats is None:
        text = os.environ.get("ODDTRICK_SEATS", "").strip() or "1"
        if not text.isdigit():
            raise ValueError(f"ODDTRICK_SEATS is {text!r}, not a number of seats: set it to 1 or more")
        seats = int(text)
    if seats < 1:
        raise ValueError(f"ODDTRICK_SEATS is {seats}: a bot holds at least one seat; set it to 1 or more")
    return server, name, seats


def _token_from_environment() -> str:
    """The token a tournament hands its local entries: through a pipe
    (``ODDTRICK_TOKEN_FD``), else ``ODDTRICK_TOKEN``; empty without either."""
    fd = os.environ.pop("ODDTRICK_TOKEN_FD", "")
    if fd.isdigit():
        with os.fdopen(int(fd), "rb") as pipe:
            return pipe.read().decode("utf-8").strip()
    return os.environ.get("ODDTRICK_TOKEN", "")


def _add_watch_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    watch = commands.add_parser(
        "watch",
        help="follow a match in progress as a spectator",
        description=(
            "Print a match's play as it happens, trick by trick, as a spectator sees it: calls, "
            "cards and results, and the four hands once each hand is over (live only at an "
            "open table). Waits for a match to start if none is in progress; ends with the match "
            "(--follow: goes on to the next). A finished match named by its id is replayed from its log."
        ),
        epilog="example: oddtrick watch --server localhost:50051",
    )
    watch.add_argument(
        "match_id", nargs="?", default=None, help="the match to watch (default: the newest in progress)"
    )
    watch.add_argument(
        "--server",
        required=True,
        type=_server,
        metavar="HOST:PORT",
        help=f"the referee's address (port {DEFAULT_PORT} if none is given)",
    )
    _add_tls_options(watch)
    watch.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="after a match, wait for the next one and follow it too, until Ctrl-C",
    )
    watch.add_argument(
        "--delay",
        type=float,
        default=None,
        metavar="S",
        help="pause after each line, to follow the play as a person (default: 0.6 on a terminal, "
        "0 when the output is piped)",
    )
    watch.add_argument(
        "--no-wait",
        dest="wait",
        action="store_false",
        help="exit at once if no match is in progress (default: wait for one to start)",
    )
    watch.set_defaults(handler=_watch)


def _watch(args: argparse.Namespace) -> int:
    from oddtrick._watch import watch

    delay = args.delay if args.delay is not None else (0.6 if sys.stdout.isatty() else 0.0)
    try:
        tls = _tls(args)
        if tls is not None:
            tls.credentials()
        return watch(
            args.server,
            args.match_id,
            sys.stdout,
            sys.stderr,
            wait=args.wait,
            follow=args.follow,
            delay=max(0.0, delay),
            tls=tls,
        )
    except ValueError as error:
        print(f"oddtrick watch: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stopped watching (Ctrl-C)", file=sys.stderr)
        return 130


def build_parser(with_referee: bool = True) -> argparse.ArgumentParser:
    parser = Parser(
        prog="oddtrick",
        description="Bots play classic Whist and Contract Whist over gRPC; oddtrick referees.",
        epilog="first steps: `oddtrick demo` plays the sample bots; `oddtrick play` seats you at the "
        "terminal; `oddtrick bot my_bot.py --server HOST:PORT --name NAME` plays your bot; "
        '`oddtrick conformance --bot-command "oddtrick bot my_bot.py"` checks a bot in any language '
        "before it joins a ladder. `oddtrick COMMAND --help` says more. The rules: docs/rules.md.",
    )
    parser.add_argument("--version", action="version", version=f"oddtrick {__version__}")
    # Parsers of the subcommands are Parsers too (argparse makes them of the parent's class).
    commands = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(title="commands", metavar="COMMAND"),
    )
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
    started: list[bool] = []
    try:
        return _main(arguments, started)
    except KeyboardInterrupt:
        # Ctrl-C before a command handles it itself (while the referee's modules load, a
        # second or two on a busy machine, or in a command with nothing to keep): one
        # line, not a traceback.
        command = next((word for word in arguments if not word.startswith("-")), "")
        who = f"oddtrick {command}" if command and started else "oddtrick"
        when = "" if started else " while starting; nothing was done"
        print(f"{who}: stopped (Ctrl-C){when}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`oddtrick ladder standings | head`): stop quietly, as
        # cat does. What is still buffered must not be flushed into the closed pipe at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a program killed by it


def _main(arguments: list[str], started: list[bool]) -> int:
    if arguments[:1] == ["tournament"] and arguments[1:2] in (["status"], ["retry"], ["cancel"]):
        arguments = [f"tournament-{arguments[1]}", *arguments[2:]]  # a verb read by a parser of its own
    # A bot process needs only the SDK: skip loading the referee (and trio) to start fast;
    # `oddtrick --version` (argparse prints it as soon as it reads it) needs nothing else either.
    parser = build_parser(with_referee=arguments[:1] not in (["bot"], ["watch"], ["--version"]))
    args = parser.parse_args(arguments)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 2
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(asctime)s %(levelname)-7s %(name)s: %(message)s",
        datefmt="%H:%M:%S",
    )
    if args.handler is _run_bot:
        _bot_logging(args)
    started.append(True)
    result: int = args.handler(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
