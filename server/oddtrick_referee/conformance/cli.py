"""The `oddtrick conformance` command."""

from __future__ import annotations

import argparse
import logging
import shlex
import sys

from oddtrick._run import split_bot_spec
from oddtrick_referee.command_runner import interrupted, run_command
from oddtrick_referee.conformance.runner import Options, run_conformance


def add_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "conformance",
        help="check that a bot speaks the protocol correctly, before it joins a ladder",
        description=(
            "Play a bot through scripted matches on a local referee that probes it: both games and every "
            "game option, a refused answer, a stale refusal, a short deadline, a dropped stream to resume, "
            "two seats at once, Updates without a request, fields and enum values from a later version, "
            "and the session ending with OK. Prints each check with what was expected and what the bot did. "
            "Exit status 0 only when every check passes."
        ),
    )
    target = parser.add_mutually_exclusive_group()  # none given: one line on what to give
    target.add_argument(
        "bot",
        nargs="?",
        metavar="BOT.py",
        help="a Python bot (FILE.py or FILE.py:Class), started as `oddtrick bot BOT.py`; "
        "a bot in another language: --bot-command",
    )
    target.add_argument(
        "--bot-command",
        metavar="CMD",
        help="start the bot with this command line, as a tournament `cmd:` entry "
        "(it gets ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_TOKEN and ODDTRICK_SEATS=2)",
    )
    target.add_argument(
        "--port",
        type=int,
        help="listen on this port and wait for a bot you start yourself "
        "(give it the address, --name and --token printed, and 2 seats)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument(
        "--name", default="candidate", help="the bot_name the bot must send (default: candidate)"
    )
    parser.add_argument(
        "--token",
        default="conformance-token",
        help="the token the bot must send (default: conformance-token)",
    )
    parser.add_argument(
        "--connect-within",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long to wait for the bot's two streams (default: 60)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON, for CI")
    parser.set_defaults(handler=_conformance)


NO_BOT = (
    "oddtrick conformance: which bot? a Python file (oddtrick conformance my_bot.py), "
    '--bot-command "CMD" for a bot in another language, or --port PORT to start it yourself'
)


def _conformance(args: argparse.Namespace) -> int:
    if args.bot is None and args.bot_command is None and args.port is None:
        print(NO_BOT, file=sys.stderr)
        return 2
    if args.port is not None and not 0 < args.port < 65536:
        print(f"oddtrick conformance: --port must be from 1 to 65535, not {args.port}", file=sys.stderr)
        return 2

    # The probes make the referee log lost connections and refusals on purpose: keep it quiet.
    logging.getLogger("oddtrick.referee").setLevel(logging.ERROR)

    def progress(text: str) -> None:
        print(f"conformance: {text}", file=sys.stderr, flush=True)

    command = args.bot_command
    if args.bot is not None:
        path, _ = split_bot_spec(args.bot)
        if not path.is_file():
            print(
                f"oddtrick conformance: no bot file {path}; give a Python bot (FILE.py or FILE.py:Class), "
                'or --bot-command "CMD" for a bot in another language',
                file=sys.stderr,
            )
            return 2
        command = shlex.join([sys.executable, "-m", "oddtrick", "bot", args.bot])
    options = Options(
        command=command,
        host=args.host,
        port=args.port or 0,
        name=args.name,
        token=args.token,
        connect_within_s=args.connect_within,
        progress=progress,
    )
    try:
        report = run_command(run_conformance, options)
    except BaseException as error:
        if interrupted(error):  # bare, or inside the nurseries' groups
            return 130
        raise
    if args.json:
        report.write_json(sys.stdout)
    else:
        report.write_text(sys.stdout)
    return 0 if report.passed else 1
