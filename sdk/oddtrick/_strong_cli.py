"""The ``oddtrick analyze`` and ``oddtrick sprt`` commands (double-dummy analysis
and the sequential test), kept out of the main CLI module so that it stays a
list of commands."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oddtrick.rules import GameConfig
    from oddtrick.sprt import SprtState

from oddtrick._argparse import EntryWords, positive_seconds
from oddtrick._options import with_options
from oddtrick.deal_sets import DEALS_FROM_HELP, DealSet, read_deal_set, short_set_note


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``oddtrick analyze`` and ``oddtrick sprt``, with their options."""
    _add_analyze(commands)
    sprt = _add_sprt(commands)
    _add_sprt_referee_options(sprt)
    _add_sprt_worker_options(sprt)
    sprt.set_defaults(handler=_sprt)


def _add_analyze(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    analyze = commands.add_parser(
        "analyze",
        help="double-dummy analysis of played matches: the tricks every card lost",
        description=(
            "Replay match logs and solve every hand double-dummy: for each card, the tricks the "
            "player's side could take before and after it (so each mistake shows as tricks lost) "
            "and with each of its legal cards (a costly card names the best), each deal's par, and "
            "per seat and per bot the tricks lost and the accuracy: inaccuracies (?!, a card that "
            "lost 1 trick), mistakes (?, 2) and blunders (??, 3 or more). Needs the strong extra "
            "(pip install 'oddtrick[strong]'); docs/analysis.md says what the numbers mean."
        ),
        epilog="example: oddtrick analyze oddtrick-data/logs/*.jsonl --json > analysis.json; "
        "on workers: oddtrick analyze --submit --database postgresql://… LOG.jsonl, then "
        "oddtrick analyze --results --database postgresql://… (docs/workers.md)",
    )
    analyze.add_argument(
        "logs", nargs="*", type=Path, metavar="LOG.jsonl", help="match logs of finished matches"
    )
    analyze.add_argument("--json", action="store_true", help="print the analysis as JSON (for tools)")
    analyze.add_argument(
        "--cards",
        action="store_true",
        help="list every card with the tricks each legal card would have given, not only the cards "
        "that lost tricks",
    )
    analyze.add_argument(
        "--no-par",
        action="store_true",
        help="skip Contract Whist's par (twenty solves per deal, the slow part)",
    )
    queue = analyze.add_argument_group(
        "on workers (a PostgreSQL work queue that `oddtrick worker` processes lease from)"
    )
    queue.add_argument(
        "--submit",
        action="store_true",
        help="queue one analysis job per log instead of analysing here; each log's text goes "
        "into the database, so workers need no shared folder",
    )
    queue.add_argument(
        "--results",
        action="store_true",
        help="print the analyses the workers recorded (all jobs, oldest first) and what still waits",
    )
    queue.add_argument("--database", default=None, metavar="postgresql://…", help="the work queue's database")
    queue.add_argument(
        "--require-version",
        default=None,
        metavar="VERSION",
        help="with --submit: only workers of this oddtrick version or newer take the jobs",
    )
    analyze.set_defaults(handler=_analyze)


def _add_sprt(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    """The sprt command and the options that say what it tests."""
    sprt = commands.add_parser(
        "sprt",
        help="play duplicate deal pairs until a sequential test says which bot is better",
        description=(
            "Play duplicate deal pairs between two bots (same cards, partnerships swapped, fresh "
            "bots each play) until a sequential probability ratio test on A's paired deal scores "
            "accepts H0 (A gains --h0 points per deal on B) or H1 (A gains --h1), or the cap of "
            "deal pairs is reached. Two Python bot files play in this process; a cmd: entry (a "
            "program in any language), a --remote entry, --deadline or --referee play through a "
            "referee on a local port, as oddtrick tournament does, and the standings (with think "
            "time and lag) follow the verdict. docs/sprt.md gives the model."
        ),
        epilog=(
            "example: oddtrick sprt --bot new=my_bot.py --bot old=sample_bots/heuristic_bot.py "
            "--game contract --h0 0 --h1 0.5; a bot against itself with another setting: "
            "--bot slow=sample_bots/pimc_bot.py option.think_seconds=2 --bot fast=sample_bots/pimc_bot.py; "
            "a bot in another language: "
            "--bot new='cmd:java -jar bot.jar'"
        ),
    )
    sprt.add_argument(
        "--bot",
        action=EntryWords,
        nargs="+",
        const="bot",
        dest="entries",
        default=[],
        metavar=("NAME=FILE.py[:Class]|NAME=cmd:COMMAND", "option.NAME=VALUE"),
        help="bot A, then bot B (two entries in all, --remote ones included): an SDK bot file, or "
        "cmd:COMMAND for any program, started as oddtrick tournament starts it (it gets "
        "ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_TOKEN, ODDTRICK_SEATS); the bot's options follow "
        "it (option.think_seconds=2: the same bot file with two settings is an SPRT too)",
    )
    sprt.add_argument(
        "--remote",
        action=EntryWords,
        nargs=1,
        const="remote",
        dest="entries",
        metavar="NAME[=TOKEN0,TOKEN1]",
        help="an entry that connects by itself (any language), as NAME~0 and NAME~1, one per play "
        "of a deal, each with its own token (made and printed when not given)",
    )
    sprt.add_argument("--game", choices=["classic", "contract"], default="contract", help="default: contract")
    sprt.add_argument(
        "--h0", type=float, default=0.0, help="A's gain in points per deal under H0 (default 0)"
    )
    sprt.add_argument(
        "--h1", type=float, default=0.5, help="A's gain in points per deal under H1 (default 0.5)"
    )
    sprt.add_argument("--alpha", type=float, default=0.05, help="false positive rate (default 0.05)")
    sprt.add_argument("--beta", type=float, default=0.05, help="false negative rate (default 0.05)")
    sprt.add_argument(
        "--max-deals", type=int, default=2000, metavar="N", help="cap of deal pairs (default 2000)"
    )
    sprt.add_argument("--seed", default="sprt", help="the deals are SEED-0, SEED-1, … (default sprt)")
    sprt.add_argument(
        "--deals-from",
        type=Path,
        default=None,
        metavar="FILE.pbn",
        help=DEALS_FROM_HELP + "; deal pair N plays the file's deal N (--seed is then unused)",
    )
    sprt.add_argument(
        "--jobs", type=int, default=1, metavar="N", help="deal pairs played at once (default 1)"
    )
    return sprt


def _add_sprt_referee_options(sprt: argparse.ArgumentParser) -> None:
    referee = sprt.add_argument_group(
        "through a referee (cmd: and --remote entries, --deadline, --clock, --referee)"
    )
    referee.add_argument(
        "--referee",
        action="store_true",
        help="play through a referee even when both bots are Python files (as a tournament does)",
    )
    referee.add_argument(
        "--deadline",
        type=positive_seconds,
        default=None,
        metavar="S",
        help="seconds per decision on the referee's clock (default 5; implies --referee)",
    )
    referee.add_argument(
        "--grace",
        type=positive_seconds,
        default=30.0,
        metavar="S",
        help="reconnect grace period (default 30)",
    )
    referee.add_argument(
        "--clock",
        type=_clock,
        default=None,
        metavar="BANK+INCREMENT",
        help="a time bank per seat and match as well as the deadline (implies --referee): "
        "BANK+INCREMENT seconds, e.g. 60+0.5 = 60 s a seat per match plus 0.5 s at each of its "
        "decisions; a seat whose bank runs out gets the fallback action and a C (clock) fault "
        "(default: no clock; docs/rules.md, Time)",
    )
    referee.add_argument(
        "--remote-wait",
        type=float,
        default=60.0,
        metavar="S",
        help="seconds each deal pair waits for a remote entry; one that has not connected by then "
        "stops the test (default 60)",
    )
    referee.add_argument(
        "--bot-user",
        default=None,
        metavar="USER",
        help="when run as root, the user local entries run as (default: a user id of each "
        "process's own), as in oddtrick tournament",
    )
    referee.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    referee.add_argument("--port", type=int, default=0, help="port for remote entries (default: any free)")
    referee.add_argument(
        "--data-dir",
        type=Path,
        default=Path("oddtrick-data"),
        help="where match logs and the SQLite file go (default ./oddtrick-data); "
        "running the same test again resumes it",
    )


def _add_sprt_worker_options(sprt: argparse.ArgumentParser) -> None:
    workers = sprt.add_argument_group(
        "on workers (docs/scale-out.md): `oddtrick worker --database URL` processes play the deal pairs"
    )
    workers.add_argument(
        "--database", default=None, metavar="postgresql://…", help="the database the workers lease from"
    )
    workers.add_argument(
        "--workers",
        action="store_true",
        help="submit the deal pairs to the workers in batches; the test is followed here and every "
        "waiting batch is cancelled as soon as it decides",
    )


def _clock(text: str) -> object:
    """``--clock``'s type, from the referee package (loaded only when the option is given)."""
    from oddtrick_referee.play.clock import clock_argument

    return clock_argument(text)


def _analyze(args: argparse.Namespace) -> int:
    if args.submit or args.results or args.database is not None:
        return _analyze_on_workers(args)
    if not args.logs:
        print("oddtrick analyze: give the match logs to analyse (LOG.jsonl ...)", file=sys.stderr)
        return 2
    try:
        from oddtrick.analysis import AnalysisError, analyze_logs, render
    except ImportError as error:
        print(f"oddtrick analyze: {error}", file=sys.stderr)
        return 2

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\ranalysed {done}/{total} hands", end="" if done < total else "\n", file=sys.stderr)

    missing = [str(path) for path in args.logs if not path.is_file()]
    if missing:
        print(f"oddtrick analyze: no such log: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        result = analyze_logs(args.logs, progress, par=not args.no_par)
    except AnalysisError as error:
        print(f"oddtrick analyze: {error}", file=sys.stderr)
        return 1
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        print(render(result, cards=args.cards))
    return 0


def _analyze_on_workers(args: argparse.Namespace) -> int:
    """``--submit`` and ``--results``: the work queue of docs/workers.md (needs the referee package)."""
    if args.submit == args.results or args.database is None:
        print(
            "oddtrick analyze: on workers, give --database with either --submit LOG.jsonl ... or --results",
            file=sys.stderr,
        )
        return 2
    if args.results and args.logs:
        print("oddtrick analyze: --results takes no logs (it shows every analysis job)", file=sys.stderr)
        return 2
    if args.submit and not args.logs:
        print("oddtrick analyze: --submit needs the match logs to analyse", file=sys.stderr)
        return 2
    missing = [str(path) for path in args.logs if not path.is_file()]
    if missing:
        print(f"oddtrick analyze: no such log: {', '.join(missing)}; nothing submitted", file=sys.stderr)
        return 2
    try:
        from oddtrick_referee._exceptions import DatabaseError
        from oddtrick_referee.workers.cli import print_results, submit_analysis
    except ImportError as error:
        print(f"oddtrick analyze: the work queue needs the referee package ({error})", file=sys.stderr)
        return 2
    try:
        if args.submit:
            return submit_analysis(args.database, args.logs, not args.no_par, args.require_version)
        return print_results(args.database, args.json, args.cards)
    except DatabaseError as error:
        print(f"oddtrick analyze: {error}", file=sys.stderr)
        return 1


def _sprt(args: argparse.Namespace) -> int:
    from oddtrick.duplicate import deal_config
    from oddtrick.sprt import SprtState

    if len(args.entries) != 2:
        print(
            "oddtrick sprt: give exactly two bots, --bot A=FILE.py --bot B=FILE.py "
            "(or cmd:COMMAND, or --remote NAME)",
            file=sys.stderr,
        )
        return 2
    if args.max_deals < 1 or args.jobs < 1:
        print("oddtrick sprt: --max-deals and --jobs must be 1 or more", file=sys.stderr)
        return 2
    from oddtrick_referee.competitions.tournaments.sprt_command import parse_entries

    try:
        entries = parse_entries(args.entries)
        state = SprtState(args.h0, args.h1, args.alpha, args.beta)
        deal_set = read_deal_set(args.deals_from) if args.deals_from is not None else None
    except (OSError, ValueError) as error:
        print(f"oddtrick sprt: {error}", file=sys.stderr)
        return 2
    if entries[0].name == entries[1].name:
        print("oddtrick sprt: the two bots need different names", file=sys.stderr)
        return 2
    if problem := _workers_problem(args, entries, deal_set):
        print(f"oddtrick sprt: {problem}", file=sys.stderr)
        return 2
    a, b = (entry.name for entry in entries)
    through_referee = args.workers or (
        args.referee
        or args.deadline is not None
        or args.clock is not None
        or not all(entry.sdk for entry in entries)
    )
    where = "through a referee" if through_referee else "in this process"
    if args.workers:
        where = "on workers"
    print(
        f"SPRT {a} vs {b}, {args.game} whist, {where}: H0 {a} gains {args.h0:+g} points per deal, "
        f"H1 {args.h1:+g}; alpha {args.alpha:g}, beta {args.beta:g}; "
        f"bounds [{state.lower:.3f}, {state.upper:.3f}]; at most {args.max_deals} deal pairs",
        flush=True,
    )
    if deal_set is not None:
        print(f"deals from {deal_set.describe()}", flush=True)
        if (note := short_set_note(deal_set, args.max_deals)) is not None:
            print(note, flush=True)

    def report(current: SprtState) -> None:
        print(
            f"{current.count:>6} deal pairs  {a} {current.mean:+.3f} per deal  LLR {current.llr:+.3f} "
            f"[{current.lower:.3f}, {current.upper:.3f}]",
            flush=True,
        )

    config = deal_config(args.game)
    standings_text = None
    if through_referee:
        status, standings_text = _sprt_through_referee(args, entries, config, state, report, deal_set)
        if status:
            return status
    else:
        status = _sprt_in_process(args, entries, config, state, report, deal_set)
        if status:
            return status
    _print_verdict(state, a, b, args)
    if standings_text is not None:
        print()
        print(standings_text, end="")
    return 0


def _sprt_through_referee(
    args: argparse.Namespace,
    entries: list[Any],
    config: GameConfig,
    state: SprtState,
    report: Callable[[SprtState], None],
    deal_set: DealSet | None,
) -> tuple[int, str | None]:
    """The test through a referee here, or on workers: the exit status and the standings' text."""
    from oddtrick_referee.competitions.tournaments.sprt_command import play_sprt, play_sprt_on_workers

    if args.workers:
        status, outcome = play_sprt_on_workers(args, entries, config, state, report)
    else:
        status, outcome = play_sprt(args, entries, config, state, report, deal_set)
    if status:
        return status, None
    if outcome.absent is not None:
        print(
            f"no verdict after {state.count} deal pairs: {outcome.absent} did not connect within "
            f"{args.remote_wait:g} s"
        )
        return 1, None
    return 0, outcome.standings.render() if outcome.standings is not None else None


def _workers_problem(args: argparse.Namespace, entries: list[Any], deal_set: DealSet | None) -> str | None:
    """Why the options for a test on workers do not go together (None: they do)."""
    if args.workers != bool(args.database):
        return "on workers, give both --workers and --database postgresql://…"
    if args.workers and (deal_set is not None or not all(entry.local for entry in entries)):
        return "--workers plays bot files and cmd: programs on seeds: no --remote, no --deals-from"
    return None


def _sprt_in_process(
    args: argparse.Namespace,
    entries: list[Any],
    config: GameConfig,
    state: SprtState,
    report: Callable[[SprtState], None],
    deal_set: DealSet | None,
) -> int:
    """Play the deal pairs in this process (two Python bot files): no referee, no deadline."""
    from concurrent.futures import ProcessPoolExecutor

    from oddtrick._run import load_bot
    from oddtrick.sprt import run_sprt, scores_of

    try:
        bots = [with_options(load_bot(entry.source), entry.options) for entry in entries]
    except (OSError, ImportError, AttributeError, ValueError) as error:
        print(f"oddtrick sprt: {error}", file=sys.stderr)
        return 2
    try:
        if args.jobs > 1:
            with ProcessPoolExecutor(args.jobs) as pool:
                scores = scores_of(bots[0], bots[1], config, args.seed, pool, deal_set)
                run_sprt(scores, state, args.max_deals, report)
        else:
            scores = scores_of(bots[0], bots[1], config, args.seed, None, deal_set)
            run_sprt(scores, state, args.max_deals, report)
    except KeyboardInterrupt:
        print(f"stopped after {state.count} deal pairs: no verdict", file=sys.stderr)
        return 130
    return 0


def _print_verdict(state: SprtState, a: str, b: str, args: argparse.Namespace) -> None:
    """The verdict in one line: which hypothesis the test accepted (the gains it weighed, not
    a measure), and what was measured beside it."""
    measured = f"measured {state.mean:+.2f} per deal over {state.count} deal pairs, LLR {state.llr:+.3f}"
    if state.verdict in ("H1", "H0"):
        chosen, other = (args.h1, args.h0) if state.verdict == "H1" else (args.h0, args.h1)
        print(
            f"{state.verdict} accepted ({a} gains {chosen:+g} rather than {other:+g} points per deal "
            f"on {b}): {measured}"
        )
    elif state.verdict == "identical":
        what = "0 (the same result at both tables)" if state.first == 0 else f"{state.first:+g}"
        print(
            f"no verdict: every one of the {state.count} deal pairs scored exactly {what}; "
            f"{a} and {b} seem to play identically, and more deals of that carry no evidence"
        )
    elif state.count < state.min_pairs:
        print(
            f"no verdict after {state.count} deal pairs (the cap): the test decides from "
            f"{state.min_pairs} deal pairs on; give --max-deals {state.min_pairs} or more ({measured})"
        )
    else:
        print(f"no verdict after {state.count} deal pairs (the cap): {measured}")
