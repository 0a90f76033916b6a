"""The ``oddtrick analyze`` and ``oddtrick sprt`` commands (double-dummy analysis
and the sequential test), kept out of the main CLI module so that it stays a
list of commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from oddtrick.deal_sets import DEALS_FROM_HELP, read_deal_set, short_set_note


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

    sprt = commands.add_parser(
        "sprt",
        help="play duplicate deal pairs until a sequential test says which bot is better",
        description=(
            "Play duplicate deal pairs between two Python bots in this process (same cards, "
            "partnerships swapped, fresh bots each play) until a sequential probability ratio test "
            "on A's paired deal scores accepts H0 (A gains --h0 points per deal on B) or H1 (A "
            "gains --h1), or the cap of deal pairs is reached. docs/sprt.md gives the model."
        ),
        epilog=(
            "example: oddtrick sprt --bot new=my_bot.py --bot old=sample_bots/heuristic_bot.py "
            "--game contract --h0 0 --h1 0.5"
        ),
    )
    sprt.add_argument(
        "--bot",
        action="append",
        required=True,
        metavar="NAME=FILE.py[:Class]",
        help="bot A, then bot B (given twice)",
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
    sprt.set_defaults(handler=_sprt)


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


def _sprt(args: argparse.Namespace) -> int:
    from concurrent.futures import ProcessPoolExecutor

    from oddtrick._run import load_bot
    from oddtrick.duplicate import deal_config
    from oddtrick.sprt import SprtState, run_sprt, scores_of

    if len(args.bot) != 2:
        print("oddtrick sprt: give exactly two bots, --bot A=FILE.py --bot B=FILE.py", file=sys.stderr)
        return 2
    specs = [spec.partition("=") for spec in args.bot]
    bad = [name + equals + source for name, equals, source in specs if not (name and equals and source)]
    if bad or args.max_deals < 1 or args.jobs < 1:
        problem = (
            f"{bad[0]!r} is not NAME=FILE.py[:Class]" if bad else "--max-deals and --jobs must be 1 or more"
        )
        print(f"oddtrick sprt: {problem}", file=sys.stderr)
        return 2
    names = [name for name, _, _ in specs]
    try:
        bots = [load_bot(source) for _, _, source in specs]
        state = SprtState(args.h0, args.h1, args.alpha, args.beta)
        deal_set = read_deal_set(args.deals_from) if args.deals_from is not None else None
    except (OSError, ImportError, AttributeError, ValueError) as error:
        print(f"oddtrick sprt: {error}", file=sys.stderr)
        return 2
    a, b = names
    print(
        f"SPRT {a} vs {b}, {args.game} whist: H0 {a} gains {args.h0:+g} points per deal, "
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
    if state.verdict == "H1":
        print(f"H1 accepted: {a} gains about {args.h1:+g} points per deal on {b} (LLR {state.llr:+.3f})")
    elif state.verdict == "H0":
        print(f"H0 accepted: {a} gains about {args.h0:+g} points per deal on {b} (LLR {state.llr:+.3f})")
    elif state.verdict == "identical":
        what = "0 (the same result at both tables)" if state.first == 0 else f"{state.first:+g}"
        print(
            f"no verdict: every one of the {state.count} deal pairs scored exactly {what}; "
            f"{a} and {b} seem to play identically, and more deals of that carry no evidence"
        )
    else:
        print(f"no verdict after {state.count} deal pairs (the cap): LLR {state.llr:+.3f}")
    return 0
