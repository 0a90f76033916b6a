"""``oddtrick sprt`` through a referee: entries parsed as ``oddtrick tournament`` parses
them, the deal pairs played by :mod:`.sequential`, a line per pair on stdout, the
standings (think time and lag included) at the end; a stop explained in one line."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path

from oddtrick._argparse import EntryArgument
from oddtrick._names import entry_name_problem
from oddtrick.deal_sets import DealSet
from oddtrick.rules import GameConfig
from oddtrick.sprt import SprtState
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.command_runner import (
    StopRequest,
    interrupted,
    run_command,
    sigterm_stops_like_ctrl_c,
    sole_error,
)
from oddtrick_referee.competitions.on_workers.distributed_command import submit_sprt
from oddtrick_referee.competitions.tournaments.sequential import Outcome, SequentialTest, player
from oddtrick_referee.competitions.tournaments.tournament import (
    Entry,
    Progress,
    parse_entry,
    remote_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules


def parse_entries(given: list[EntryArgument]) -> list[Entry]:
    """``--bot NAME=SPEC [option.NAME=VALUE…]`` and ``--remote NAME[=TOKEN0,TOKEN1]``, in the
    order given, as tournament entries (OptionError with the tournament's message, and for a
    name the referee would refuse as a bot name, before anything is started or written)."""
    entries = [
        parse_entry(entry.text, options=entry.options)
        if entry.kind == "bot"
        else remote_entry(entry.text, duplicate=True)
        for entry in given
    ]
    for entry in entries:
        problem = entry_name_problem(entry.name, duplicate=True)
        if problem:
            raise OptionError(problem)
    return entries


def _test(
    args: argparse.Namespace, entries: list[Entry], config: GameConfig, deal_set: DealSet | None
) -> SequentialTest:
    a, b = entries
    return SequentialTest(
        a,
        b,
        config,
        args.seed,
        args.max_deals,
        args.jobs,
        TableRules(
            deadline_s=args.deadline if args.deadline is not None else 5.0,
            grace_s=args.grace,
            clock=args.clock,
        ),
        args.remote_wait,
        args.bot_user,
        deal_set,
    )


def play_sprt_on_workers(
    args: argparse.Namespace,
    entries: list[Entry],
    config: GameConfig,
    state: SprtState,
    report: Callable[[SprtState], None],
) -> tuple[int, Outcome]:
    """Submit the test to the workers (:mod:`.distributed_command`) and follow it to its verdict."""
    test = dataclasses.replace(_test(args, entries, config, None), pairs_at_once=1)
    sprt = {"h0": state.h0, "h1": state.h1, "alpha": state.alpha, "beta": state.beta}
    status, standings = submit_sprt(test, args.database, state, report, sprt)
    return status, Outcome(state, standings)


def play_sprt(
    args: argparse.Namespace,
    entries: list[Entry],
    config: GameConfig,
    state: SprtState,
    report: Callable[[SprtState], None],
    deal_set: DealSet | None = None,
) -> tuple[int, Outcome]:
    """Play the test through a referee; the exit status (0: the test ran, whatever its
    verdict) and how it ended."""
    test = _test(args, entries, config, deal_set)
    outcome = Outcome(state)

    def listening(address: str) -> None:
        print(f"referee listening on {address}; data in {args.data_dir}", file=sys.stderr, flush=True)
        for entry in entries:
            if not entry.remote:
                continue
            for name, token in entry.identities(True).items():
                print(
                    f"  remote entry {entry.name}: connect with --server {address} --name {name} "
                    f"--token={token} --seats {4 * args.jobs}",
                    file=sys.stderr,
                    flush=True,
                )

    with Path(os.devnull).open("w") as quiet:  # the line per deal pair is the progress
        progress = Progress(0, quiet)

        async def main() -> None:
            with sigterm_stops_like_ctrl_c(StopRequest()):
                await run_tournament(
                    test.settings(),
                    args.data_dir,
                    args.host,
                    args.port,
                    sys.stderr,
                    listening,
                    progress=progress,
                    play=player(test, state, report, outcome),
                )

        try:
            run_command(main)
        except BaseException as error:
            if interrupted(error):
                print(
                    f"stopped after {state.count} deal pairs: no verdict; the pairs played are kept in "
                    f"{args.data_dir / 'oddtrick.sqlite3'}: run the same command to resume",
                    file=sys.stderr,
                )
                return 130, outcome
            error = sole_error(error)
            if isinstance(error, ValueError | RuntimeError | OSError):
                print(f"oddtrick sprt: {error}", file=sys.stderr)
                return 1, outcome
            raise
    return 0, outcome
