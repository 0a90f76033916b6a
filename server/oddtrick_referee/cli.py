"""The referee's commands: ``serve``, ``demo`` and ``check``."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import socket
import sys
from pathlib import Path
from typing import Any

from oddtrick._argparse import EntryWords, positive_seconds
from oddtrick._names import valid_bot_name
from oddtrick.deal_sets import DEALS_FROM_HELP, DealSetError, read_deal_set, short_set_note
from oddtrick.rules import ConfigError, GameConfig, Seat
from oddtrick_referee._exceptions import MetricsUnavailable, OptionError, RefereeError, TokensFileError
from oddtrick_referee.competitions.ladder.cli import add_ladder_command
from oddtrick_referee.competitions.on_workers.distributed_command import submit_tournament
from oddtrick_referee.competitions.people.play_command import add_play_command
from oddtrick_referee.competitions.scoring.dd_skill_logs import missing_extra
from oddtrick_referee.competitions.tournaments.demo import run_demo
from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings, parse_entry, remote_entry
from oddtrick_referee.competitions.tournaments.tournament_command import play_tournament
from oddtrick_referee.competitions.tournaments.tournament_plan import in_process_entry, plan_runs
from oddtrick_referee.competitions.tournaments.tournament_workers_cli import (
    add_control_commands,
    add_status_command,
    add_workers_options,
    workers_problem,
)
from oddtrick_referee.conformance.cli import add_command as add_conformance
from oddtrick_referee.metrics import add_metrics_option, start_metrics
from oddtrick_referee.options import add_data_dir, add_game_options, config_from_args
from oddtrick_referee.play.clock import CLOCK_HELP, clock_argument
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import RefereeSettings, open_arena_problem
from oddtrick_referee.replay.check import add_check_command
from oddtrick_referee.replay.cli import add_commands as add_replay_commands
from oddtrick_referee.serve import serve
from oddtrick_referee.transport.tls import add_tls_options, server_credentials
from oddtrick_referee.transport.tokens import add_bot, convert, load_token_hashes
from oddtrick_referee.web.cli import add_commands as add_web_command
from oddtrick_referee.web.cli import add_web_option
from oddtrick_referee.web.server import bind_web
from oddtrick_referee.workers.cli import add_command as add_worker_command

log = logging.getLogger("oddtrick.referee")


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Every command of the referee's, in the order ``oddtrick --help`` lists them."""
    serve = _add_serve(commands)
    _add_demo(commands)
    tournament = _add_tournament(commands)
    _add_tokens(commands)
    add_ladder_command(commands, add_game_options, add_data_dir)
    add_play_command(commands)
    add_check_command(commands)
    add_replay_commands(commands)
    add_web_command(commands)
    add_web_option(serve)
    add_metrics_option(serve, "the referee")
    add_web_option(tournament)
    add_conformance(commands)
    add_worker_command(commands)


def _add_serve(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    serve = commands.add_parser(
        "serve",
        help="run a referee and play matches between connected bots",
        description=(
            "Listen for bots and play the configured match(es) as soon as the seated bots are "
            "connected. Each seat is one stream: a bot named for both seats of a partnership "
            "must open two streams (oddtrick bot --seats 2)."
        ),
        epilog="example: oddtrick serve --port 50051 --game classic --deals 8 --ns alice --ew bob",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=50051, help="port (0: any free port; default 50051)")
    add_data_dir(serve)
    add_tls_options(serve)
    serve.add_argument(
        "--tokens",
        type=Path,
        default=None,
        metavar="FILE.json",
        help="bot credentials, stored as salted hashes (made with: oddtrick tokens add FILE.json NAME); "
        "without it any token is accepted, which is allowed on a loopback address only",
    )
    serve.add_argument(
        "--allow-any-token",
        action="store_true",
        help="listen on a non-loopback address without --tokens: anyone who reaches it may play",
    )
    seating = serve.add_argument_group("seating (bot names)")
    seating.add_argument("--ns", metavar="NAME", help="the bot holding North and South")
    seating.add_argument("--ew", metavar="NAME", help="the bot holding East and West")
    for seat in Seat:
        seating.add_argument(f"--{seat.name.lower()}", metavar="NAME", help=f"the bot at {seat.name.title()}")
    add_game_options(serve)
    arena = serve.add_argument_group("arena rules")
    arena.add_argument(
        "--deadline",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="seconds per decision (default 5)",
    )
    arena.add_argument(
        "--grace",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="reconnect grace period (default 30)",
    )
    arena.add_argument(
        "--clock", type=clock_argument, default=None, metavar="BANK+INCREMENT", help=CLOCK_HELP
    )
    arena.add_argument("--seed", default=None, help="the match seed (default: random; revealed at the end)")
    arena.add_argument(
        "--open",
        action="store_true",
        default=None,
        help="spectators (oddtrick watch) see all four hands live: for exhibitions only, "
        "since a bot could watch its own table",
    )
    arena.add_argument(
        "--matches", type=int, default=None, metavar="N", help="matches to play, then exit (default 1)"
    )
    arena.add_argument("--forever", action="store_true", help="keep serving after the matches, until Ctrl-C")
    serve.add_argument("-v", "--verbose", action="store_true", help="log every action")
    serve.set_defaults(handler=_serve)
    return serve


def _add_demo(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = commands.add_parser(
        "demo",
        help="a short duplicate round robin of the sample bots, in both games",
        description=(
            "Starts a referee on a free localhost port and the sample bots (random and heuristic) "
            "as separate processes, plays a short duplicate round robin of classic Whist and one "
            "of Contract Whist, and prints the standings and where the logs are."
        ),
    )
    add_data_dir(demo)
    demo.add_argument(
        "--deals", type=int, default=8, metavar="N", help="deals per match, each played twice (default 8)"
    )
    demo.add_argument("-v", "--verbose", action="store_true", help="log every connection and match")
    demo.set_defaults(handler=_demo)


def _add_tournament(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    tournament = commands.add_parser(
        "tournament",
        help="a round robin (or gauntlet) of bots, duplicate deals by default, with standings",
        description=(
            "Every pair of entries plays one match (with --gauntlet, the first entry plays each "
            "of the others). Under duplicate (the default) each deal is played twice with the "
            "partnerships swapped, so the luck of the cards cancels. Results are stored in SQLite "
            "as tables finish; running the same command again resumes the tournament. "
            "What a tournament trusts of its entrants: each entry plays the two plays of a deal under "
            "two identities (NAME~0, NAME~1), each with its own token; a local entry runs as two "
            "processes, each given only its own token, so one process cannot take part in both plays. "
            "The referee cannot see what an entrant's operator does with both tokens, or what two "
            "local processes of the same user do between them: it trusts entrants not to pass "
            "information between their two plays, so it is for entrants whose operators you trust."
        ),
        epilog=(
            "example: oddtrick tournament --game contract --deals 200 --tables 4 "
            "--bot random=sample_bots/random_bot.py --bot heuristic=sample_bots/heuristic_bot.py --json; "
            "a bot's options after it: --bot strong=sample_bots/pimc_bot.py option.think_seconds=2; "
            "on workers: add --database postgresql://… --workers, and see it with "
            "oddtrick tournament status --database postgresql://… NAME (and retry, cancel: docs/scale-out.md)"
        ),
    )
    _add_tournament_entries(tournament.add_argument_group("entries (at least two)"))
    add_game_options(tournament)
    _add_tournament_plan(tournament.add_argument_group("tournament"))
    tournament.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    tournament.add_argument("--port", type=int, default=0, help="port for remote entries (default: any free)")
    add_data_dir(tournament)
    add_tls_options(tournament)
    tournament.add_argument("--json", action="store_true", help="print the standings as JSON on stdout")
    tournament.add_argument(
        "--dd-skill",
        action="store_true",
        help="also measure each entry's double-dummy skill once the tables are played: the tricks its "
        "cards lost per deal against the best card with all hands known, with a 95%% interval, "
        "shown beside points per deal (needs the strong extra, pip install 'oddtrick[strong]'; "
        "solving every hand costs CPU, about 40 hands a second)",
    )
    tournament.add_argument("-v", "--verbose", action="store_true", help="log every match")
    add_workers_options(tournament)
    tournament.set_defaults(handler=_tournament)
    add_status_command(commands)
    add_control_commands(commands)
    return tournament


def _add_tournament_entries(entries: argparse._ArgumentGroup) -> None:
    entries.add_argument(
        "--bot",
        action=EntryWords,
        nargs="+",
        const="bot",
        default=[],
        metavar=("NAME=FILE.py[:Class]", "option.NAME=VALUE"),
        help="a local entry the referee starts and stops: an SDK bot file, or NAME=cmd:COMMAND "
        "for any program (it gets ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_TOKEN, ODDTRICK_SEATS; "
        "it runs in the folder the tournament is started from, an SDK bot in its file's folder). "
        "If its process exits, the tournament stops at once and says why. Bot options follow it: "
        "--bot strong=pimc_bot.py option.think_seconds=2 option.samples=40 (true/false, a number or "
        "text; checked against an SDK bot's own before anything is played; a process gets them "
        "as JSON in ODDTRICK_OPTIONS)",
    )
    entries.add_argument(
        "--in-process",
        action=EntryWords,
        nargs="+",
        const="in-process",
        default=[],
        metavar=("NAME=FILE.py[:Class]", "option.NAME=VALUE"),
        help="an SDK bot file of your own, played in the referee's process: no process, sandbox or "
        "token, so faster, and nothing walls it off from the referee (your own code only; the "
        "standings' header says it was trusted); bot options follow it, as after --bot",
    )
    entries.add_argument(
        "--remote",
        action="append",
        default=[],
        metavar="NAME[=TOKEN0,TOKEN1]",
        help="an entry that connects by itself (any language); under duplicate it plays as NAME~0 and "
        "NAME~1, each with its own token (made and printed when not given; NAME=TOKEN with --no-duplicate)",
    )


def _add_tournament_plan(plan: argparse._ArgumentGroup) -> None:
    plan.add_argument("--gauntlet", action="store_true", help="the first entry plays each of the others")
    plan.add_argument(
        "--no-duplicate",
        action="store_true",
        help="play each match once at one table, in the game's format (game, rubber, deals)",
    )
    plan.add_argument("--tables", type=int, default=2, metavar="N", help="tables at once (default 2)")
    plan.add_argument(
        "--set-size", type=int, default=10, metavar="N", help="deals per seed and table run (default 10)"
    )
    plan.add_argument("--seed", default=None, help="master seed (default: random, stored for resuming)")
    plan.add_argument("--deals-from", type=Path, default=None, metavar="FILE.pbn", help=DEALS_FROM_HELP)
    plan.add_argument("--name", default=None, help="tournament name (default: derived from the settings)")
    plan.add_argument(
        "--remote-wait",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds each match waits for a remote entry to connect; one that has not by then "
        "forfeits that match (default 60)",
    )
    plan.add_argument(
        "--bot-user",
        default=None,
        metavar="USER",
        help="when run as root, the user local entries run as (default: a user id of each "
        "process's own, so that they cannot read the referee's data or each other's files); an "
        "entry that user cannot run runs as root in a bubblewrap sandbox instead (root: always "
        "as root, sandboxed when bubblewrap is installed); every entry has its own PID namespace",
    )
    plan.add_argument(
        "--deadline", type=positive_seconds, default=5.0, metavar="S", help="seconds per decision (default 5)"
    )
    plan.add_argument(
        "--grace",
        type=positive_seconds,
        default=30.0,
        metavar="S",
        help="reconnect grace period (default 30)",
    )
    plan.add_argument("--clock", type=clock_argument, default=None, metavar="BANK+INCREMENT", help=CLOCK_HELP)


def _add_tokens(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tokens = commands.add_parser(
        "tokens",
        help="make bot tokens for serve --tokens, or convert a file of plain-text tokens",
        description=(
            "A tokens file holds a salted hash of each bot's token, never the token. "
            "'add' makes a token for a bot (replacing any it had), stores its hash and prints the "
            "token once: give it to the bot's author. 'convert' turns a file of the earlier "
            'format ({"name": "token", ...}) into hashes, in place; the bots keep their tokens.'
        ),
        epilog="example: oddtrick tokens add tokens.json alice",
    )
    tokens.add_argument("action", choices=["add", "convert"])
    tokens.add_argument("file", type=Path, metavar="FILE.json")
    tokens.add_argument("name", nargs="?", default=None, help="the bot's name (for add)")
    tokens.set_defaults(handler=_tokens)


def seating_from_args(args: argparse.Namespace) -> dict[Seat, str]:
    seating: dict[Seat, str] = {}
    for seat in Seat:
        name = getattr(args, seat.name.lower()) or (args.ns if seat.side == 0 else args.ew)
        if not name:
            raise OptionError(
                f"nobody sits {seat.name.title()}: give --ns and --ew, or --{seat.name.lower()}"
            )
        seating[seat] = name
    return seating


def _serve(args: argparse.Namespace) -> int:

    try:
        config = config_from_args(args, arena_keys=True)
        seating = seating_from_args(args)
        hashes = load_token_hashes(args.tokens) if args.tokens else None
        tls = server_credentials(args)
        settings = RefereeSettings(
            host=args.host,
            port=args.port,
            data_dir=args.data_dir,
            token_hashes=hashes,
            tls=tls,
            allow_any_token=args.allow_any_token,
        )
        web = bind_web(args.web) if args.web is not None else None
        metrics, metrics_server = start_metrics(args.metrics, "oddtrick serve")
    except MetricsUnavailable as error:  # its message names the command already
        print(error, file=sys.stderr)
        return 2
    except (ConfigError, RefereeError) as error:
        print(f"oddtrick serve: {error}", file=sys.stderr)
        return 2
    if metrics_server is not None:
        settings = dataclasses.replace(settings, metrics=metrics)
        print(f"metrics on {metrics_server.url}", flush=True)
    try:
        return _serving(args, settings, config, seating, web)
    finally:
        if metrics_server is not None:
            metrics_server.close()


def _serving(
    args: argparse.Namespace,
    settings: RefereeSettings,
    config: GameConfig,
    seating: dict[Seat, str],
    web: socket.socket | None,
) -> int:
    """``oddtrick serve`` once its options are read: the referee's matches, as asked."""
    problem = open_arena_problem(settings)
    if problem:
        print(f"oddtrick serve: {problem}", file=sys.stderr)
        return 2
    logging.getLogger("oddtrick").setLevel(logging.INFO)
    rules = TableRules(
        deadline_s=args.deadline if args.deadline is not None else 5.0,
        grace_s=args.grace if args.grace is not None else 30.0,
        open=bool(args.open),
        clock=args.clock,
    )
    return serve(
        settings,
        config,
        seating,
        rules,
        matches=args.matches if args.matches is not None else 1,
        seed=args.seed,
        forever=args.forever,
        web=web,
    )


def failure_line(error: BaseException) -> str | None:
    """What went wrong, in one line, when it is the environment's fault (a folder that
    cannot be written, a port in use) rather than a bug; None for anything else."""
    if isinstance(error, BaseExceptionGroup):
        lines = [failure_line(inner) for inner in error.exceptions]
        return next((line for line in lines if line is not None), None)
    if isinstance(error, OSError):
        return str(error)
    return None


def _tokens(args: argparse.Namespace) -> int:

    try:
        if args.action == "add":
            if args.name is None or not valid_bot_name(args.name):
                print(
                    "oddtrick tokens add: give a bot name (letters, digits, '.', '_', '-')", file=sys.stderr
                )
                return 2
            token = add_bot(args.file, args.name)
            print(token)
            print(
                f"stored the hash of {args.name}'s token in {args.file}; the token is shown only now",
                file=sys.stderr,
            )
        else:
            count = convert(args.file)
            print(f"{args.file}: {count} tokens replaced by their salted hashes", file=sys.stderr)
    except (TokensFileError, OSError) as error:
        print(f"oddtrick tokens: {error}", file=sys.stderr)
        return 1
    return 0


def _demo(args: argparse.Namespace) -> int:

    return run_demo(args.data_dir, args.deals)


def _tournament(args: argparse.Namespace) -> int:

    try:
        entries = [parse_entry(given.text, options=given.options) for given in args.bot]
        entries += [in_process_entry(given.text, given.options) for given in args.in_process]
        entries += [remote_entry(text, duplicate=not args.no_duplicate) for text in args.remote]
        config = config_from_args(args)
        problem = _tournament_problem(entries, args)
        if problem:
            print(f"oddtrick tournament: {problem}", file=sys.stderr)
            return 2
        tls = server_credentials(args)
        deal_set = read_deal_set(args.deals_from) if args.deals_from is not None else None
        web = None
        if args.web is not None:
            web = bind_web(args.web)
        settings = TournamentSettings(
            entries=tuple(entries),
            config=config,
            deals=args.deals or 0,
            duplicate=not args.no_duplicate,
            gauntlet=args.gauntlet,
            set_size=max(1, args.set_size),
            tables=max(1, args.tables),
            rules=TableRules(deadline_s=args.deadline, grace_s=args.grace, clock=args.clock),
            remote_wait_s=args.remote_wait,
            seed=args.seed,
            name=args.name,
            bot_user=args.bot_user,
            deal_set=deal_set,
        )
    except (ConfigError, DealSetError, RefereeError, OSError) as error:  # OSError: a bot file's path
        print(f"oddtrick tournament: {error}", file=sys.stderr)
        return 2
    if args.workers:
        return submit_tournament(settings, args.database, args.detach, args.json)
    if deal_set is not None:
        needed = sum(run.deals for run in plan_runs(settings, "") if run.table_no == 0)
        print(f"deals from {deal_set.describe()}", file=sys.stderr)
        if (note := short_set_note(deal_set, needed)) is not None:
            print(note, file=sys.stderr)

    def listening(address: str) -> None:
        print(f"referee listening on {address}; data in {args.data_dir}", file=sys.stderr, flush=True)
        for entry in entries:
            if not entry.remote:
                continue
            identities = entry.identities(not args.no_duplicate)
            if len(identities) > 1:
                print(
                    f"  remote entry {entry.name} plays each deal twice, once per identity: run one bot "
                    "per identity, and keep what each sees from the other",
                    file=sys.stderr,
                    flush=True,
                )
            for name, token in identities.items():
                print(
                    f"  remote entry {entry.name}: connect with --server {address} --name {name} "
                    f"--token={token} --seats {2 * settings.tables}" + (" --tls" if tls else ""),
                    file=sys.stderr,
                    flush=True,
                )

    return play_tournament(settings, args, listening, tls=tls, web=web)


def _tournament_problem(entries: list[Any], args: argparse.Namespace) -> str | None:
    if len(entries) < 2:
        return "a tournament needs at least two entries (--bot, --in-process or --remote)"
    if len({entry.name for entry in entries}) != len(entries):
        return "entry names must be different"
    if args.deals is None and not args.no_duplicate:
        return "give --deals N: how many deals each match plays (each twice under duplicate)"
    if args.workers or args.database or args.detach:
        return workers_problem(args)
    if args.dd_skill:
        return missing_extra()
    return None
