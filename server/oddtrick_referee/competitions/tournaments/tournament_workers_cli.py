"""The options of ``oddtrick tournament`` that send it to workers, and ``oddtrick tournament status``.

Why options on the same command rather than a ``submit`` verb: a cutechess or
``oddtrick tournament`` user already has the command line of the run they
want; adding where the workers are (``--database URL --workers``) to it plays
the same tournament, seed and all, on them, and prints the same standings at
the end. Reading a run back is another act (it plays nothing and needs no
bots), so it is a verb of its own: ``oddtrick tournament status``, as
Fishtest's test page and fishnet's status are pages of their own.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from oddtrick_referee.competitions.on_workers.distributed_command import status
from oddtrick_referee.competitions.on_workers.run_control import cancel, retry

STATUS_COMMAND = "tournament-status"
"""The parser ``oddtrick tournament status …`` is read by (the word pair is turned into it)."""


def add_workers_options(tournament: argparse.ArgumentParser) -> None:
    group = tournament.add_argument_group(
        "on workers (docs/scale-out.md): `oddtrick worker --database URL` processes play the sets"
    )
    group.add_argument(
        "--database",
        default=None,
        metavar="postgresql://…",
        help="the PostgreSQL database the workers lease from (with --workers)",
    )
    group.add_argument(
        "--workers",
        action="store_true",
        help="submit the run's duplicate sets to the workers instead of playing them here, then follow "
        "it and print the standings; the same command again follows the same run",
    )
    group.add_argument(
        "--detach", action="store_true", help="with --workers: submit and exit without following the run"
    )


def workers_problem(args: argparse.Namespace) -> str | None:
    """Why the worker options given do not go together (None: they do)."""
    if not args.workers:
        return "--database and --detach are for a run on workers: add --workers"
    if not args.database:
        return "--workers needs --database postgresql://USER@HOST/DB, the database the workers lease from"
    refused = [
        option
        for option, given in (("--remote", args.remote), ("--no-duplicate", args.no_duplicate),
                              ("--deals-from", args.deals_from), ("--dd-skill", args.dd_skill),
                              ("--web", getattr(args, "web", None)))
        if given
    ]  # fmt: skip
    if refused:
        return f"{', '.join(refused)} is for a tournament on one machine, not with --workers"
    return None


def add_status_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        STATUS_COMMAND,
        prog="oddtrick tournament status",
        description=(
            "A run on workers (a tournament or an SPRT submitted with --workers), from its database: "
            "its sets by status and why any failed or was given back, its ETA at the pace so far, its "
            "standings (and the SPRT line), the run's workers (alive or dead by their last beat, their "
            "oddtrick version, sets played, deals per minute, errors, the set each holds) and who "
            "played which set. Without NAME, the runs. docs/workers.md explains each column."
        ),
        epilog="example: oddtrick tournament status --database postgresql://oddtrick@db/oddtrick t-0123abcd",
    )
    parser.add_argument(
        "name", nargs="?", default=None, metavar="NAME", help="the run (its --name or t-… id)"
    )
    parser.add_argument("--database", required=True, metavar="postgresql://…", help="the workers' database")
    parser.add_argument("--json", action="store_true", help="print it all as JSON")
    parser.add_argument(
        "--all-workers",
        action="store_true",
        help="also list the database's workers that have not leased a set of this run (marked *)",
    )
    parser.add_argument(
        "--logs", type=Path, default=None, metavar="DIR", help="also write the run's match logs to DIR"
    )
    parser.set_defaults(
        handler=lambda args: status(args.database, args.name, args.json, args.logs, args.all_workers)
    )


def add_control_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``oddtrick tournament retry`` and ``oddtrick tournament cancel``."""
    retrying = commands.add_parser(
        "tournament-retry",
        prog="oddtrick tournament retry",
        description=(
            "Bring a run's failed sets back to waiting, their attempts reset to zero, once what made "
            "them fail is put right (a bot's missing file installed on the workers); the workers play "
            "them. Their last error stays shown by `oddtrick tournament status` until they are played. "
            "Prints how many sets went back."
        ),
        epilog="example: oddtrick tournament retry --database postgresql://oddtrick@db/oddtrick t-0123abcd",
    )
    cancelling = commands.add_parser(
        "tournament-cancel",
        prog="oddtrick tournament cancel",
        description=(
            "Cancel a run's waiting and leased sets: no worker leases them again, and a worker playing "
            "one finds at its next beat that its lease no longer holds and its result is refused. The "
            "sets done are kept. Prints how many sets were cancelled."
        ),
        epilog="example: oddtrick tournament cancel --database postgresql://oddtrick@db/oddtrick t-0123abcd",
    )
    for parser, act in ((retrying, retry), (cancelling, cancel)):
        parser.add_argument("name", metavar="NAME", help="the run (its --name or t-… id)")
        parser.add_argument(
            "--database", required=True, metavar="postgresql://…", help="the workers' database"
        )
        parser.set_defaults(handler=lambda args, act=act: act(args.database, args.name))
