"""The ``oddtrick analyze`` and ``oddtrick sprt`` commands (double-dummy analysis
and the sequential test), kept out of the main CLI module so that it stays a
list of commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    analyze = commands.add_parser(
        "analyze",
        help="double-dummy analysis of played matches: the tricks every card lost",
        description=(
            "Replay match logs and solve every hand double-dummy: for each card, the tricks the "
            "player's side could take before and after it (so each mistake shows as tricks lost), "
            "each deal's par, and the tricks lost per seat and per bot. Needs the strong extra "
            "(pip install 'oddtrick[strong]')."
        ),
        epilog="example: oddtrick analyze oddtrick-data/logs/*.jsonl --json > analysis.json",
    )
    analyze.add_argument(
        "logs", nargs="+", type=Path, metavar="LOG.jsonl", help="match logs of finished matches"
    )
    analyze.add_argument("--json", action="store_true", help="print the analysis as JSON (for tools)")
    analyze.add_argument(
        "--cards", action="store_true", help="list every card, not only those that lost tricks"
    )
    analyze.add_argument(
        "--no-par",
        action="store_true",
        help="skip Contract Whist's par (twenty solves per deal, the slow part)",
    )
    analyze.set_defaults(handler=_analyze)


def _analyze(args: argparse.Namespace) -> int:
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
