"""The ``replay`` and ``export`` commands."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from oddtrick._log_records import Record
from oddtrick._terminal import plural
from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.model import MatchReplay, replay_records
from oddtrick_referee.replay.pbn import match_to_pbn
from oddtrick_referee.replay.play_on import (
    DEFAULT_OTHERS,
    STEP_HELP,
    parse_seats,
    parse_step,
    play_on,
    play_on_json,
    play_on_text,
)
from oddtrick_referee.replay.play_on_players import BOTS
from oddtrick_referee.replay.sources import (
    file_withheld,
    records_from_data_dir,
    records_from_file,
    records_from_server,
)
from oddtrick_referee.replay.terminal import run


def _add_source(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        metavar="LOG.jsonl|MATCH_ID",
        help="a match log file, or a match id found with --server or in --data-dir",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--server", metavar="HOST:PORT", default=None, help="fetch the match's log from this referee"
    )
    where.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="find the match in this referee data folder (default ./oddtrick-data)",
    )


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = commands.add_parser(
        "replay",
        help="show a logged match hand by hand: the deal, the auction, every trick",
        # Wrapped here: the raw formatter, which keeps the examples' lines, would not.
        description=textwrap.fill(
            "Re-creates a finished match from its log with the rules engine and shows each hand as a "
            "card player's diagram, the auction in seat columns, the play trick by trick, the result "
            "and the scores. On a terminal the keys step through it (→ ← a trick, ↓ ↑ a hand, q to "
            "quit); piped, everything is printed."
        ),
        epilog="examples: oddtrick replay oddtrick-data/logs/MATCH.jsonl --hand 3 --trick 5 | less -R\n"
        "          oddtrick replay MATCH_ID --server localhost:50051\n"
        "          oddtrick replay MATCH.jsonl --from 3:17 --with NS=pimc   (play hand 3 on from card 17)\n\n"
        "play on: from a step of a finished hand, the seats given by --with are played by their\n"
        "bot and the others by --others (double dummy unless told), then the continuation and\n"
        "its result are shown beside what happened. The players:\n"
        + "".join(f"  {name:<10} {words}\n" for name, words in BOTS.items())
        + "A sealed play of a duplicate pair (its deals still to be played) is not played on.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_source(replay)
    replay.add_argument(
        "--hand", type=int, default=None, metavar="N", help="start at hand N (piped: only it)"
    )
    replay.add_argument("--trick", type=int, default=None, metavar="K", help="start at trick K of that hand")
    replay.add_argument(
        "--print", dest="keys", action="store_false", default=None, help="print everything even on a terminal"
    )
    _add_play_on(replay)
    replay.set_defaults(handler=_replay)

    export = commands.add_parser(
        "export",
        help="write a logged match in another format: PBN (the default) or JSON",
        description=textwrap.fill(
            "Writes a finished match as Portable Bridge Notation (the default), one PBN game per hand, "
            "for deal viewers and solvers (docs/pbn.md says how Whist maps onto PBN); or, with --json, "
            "as the replay the rules engine re-creates from the log (every hand's deal, calls and "
            "cards, who won each trick, think times, faults, results), for scripts."
        ),
        epilog="examples: oddtrick export oddtrick-data/logs/MATCH.jsonl -o match.pbn\n"
        "          oddtrick export MATCH_ID --json | jq '.hands[0].result'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_source(export)
    kind = export.add_mutually_exclusive_group()
    kind.add_argument(
        "--pbn",
        dest="format",
        action="store_const",
        const="pbn",
        help="Portable Bridge Notation 2.1 (the default)",
    )
    kind.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="the replay as JSON (docs/match-log.md)",
    )
    export.set_defaults(format="pbn")
    export.add_argument("-o", "--output", type=Path, default=None, help="the file to write (default: stdout)")
    export.set_defaults(handler=_export)


def _add_play_on(replay: argparse.ArgumentParser) -> None:
    group = replay.add_argument_group("play on from a step (see below)")
    group.add_argument(
        "--from",
        dest="play_from",
        metavar="HAND:CARD",
        default=None,
        help=f"play the hand on from there: {STEP_HELP}",
    )
    group.add_argument(
        "--with",
        dest="play_with",
        metavar="SEAT=BOT",
        action="append",
        default=[],
        help=f"a seat (N, E, S, W, or NS, EW) and its bot ({', '.join(BOTS)}); repeat for more seats",
    )
    group.add_argument(
        "--others",
        default=DEFAULT_OTHERS,
        choices=list(BOTS),
        help=f"who plays the seats not given by --with (default {DEFAULT_OTHERS}: the double-dummy solver)",
    )
    group.add_argument(
        "--think", type=float, default=1.0, metavar="SECONDS", help="the pimc bot's time per card (default 1)"
    )
    group.add_argument(
        "--json", action="store_true", help="print the play-on as JSON (docs/web.md, Play on from here)"
    )


def load_records(args: argparse.Namespace) -> list[Record]:
    """The log records of the match the command names, from a file, a referee or a data folder."""

    source: str = args.source
    if args.server is not None:
        return records_from_server(args.server, source)
    if args.data_dir is not None or not (source.endswith(".jsonl") or Path(source).is_file()):
        return records_from_data_dir(args.data_dir or Path("oddtrick-data"), source)
    return records_from_file(Path(source))


def load_match(args: argparse.Namespace) -> MatchReplay:
    """The match the command names, from a file, a referee or a data folder."""
    return replay_records(load_records(args))


def _play_on(args: argparse.Namespace) -> None:
    """``replay --from HAND:CARD --with SEAT=BOT``: the hand played on, printed."""
    if args.play_from is None:
        raise ReplayError("--with, --others, --think and --json play a hand on: give --from HAND:CARD too")
    if args.hand is not None or args.trick is not None or args.keys is not None:
        raise ReplayError(
            "--hand, --trick and --print step through the replay, --from HAND:CARD plays a hand on"
            " from one step: give one or the other"
        )
    step = parse_step(args.play_from)
    picked = parse_seats(args.play_with)
    if not picked:
        raise ReplayError("--from needs the seats to play on: --with SEAT=BOT, such as --with S=pimc")
    if args.think <= 0:
        raise ReplayError(f"--think {args.think}: give the pimc bot's seconds per card, more than 0")
    records = load_records(args)
    start = records[0] if records else None
    if args.server is None and args.data_dir is None and Path(args.source).is_file() and start is not None:
        withheld = file_withheld(Path(args.source), str(getattr(start, "match_id", "")))
        if withheld:
            raise ReplayError(f"{withheld}: it is not played on before then")
    found = play_on(records, step, picked, args.others, args.think)
    if args.json:
        sys.stdout.write(json.dumps(play_on_json(found), ensure_ascii=False, indent=1) + "\n")
    else:
        sys.stdout.write(play_on_text(found))


def _replay(args: argparse.Namespace) -> int:

    try:
        if args.play_from is not None or args.play_with or args.json:
            _play_on(args)
            return 0
        match = load_match(args)
        run(match, sys.stdout, args.hand, args.trick, args.keys)
    except ReplayError as error:
        print(f"oddtrick replay: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # piped into head or a pager that quit
        return 0
    return 0


def _export(args: argparse.Namespace) -> int:

    try:
        match = load_match(args)
    except ReplayError as error:
        print(f"oddtrick export: {error}", file=sys.stderr)
        return 1
    if args.format == "json":
        text = json.dumps(match_to_json(match), ensure_ascii=False, indent=1) + "\n"
        what = plural(len(match.hands), "hand")
    else:
        text = match_to_pbn(match)
        what = plural(text.count("[Board "), "hand")
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as error:
            print(f"oddtrick export: cannot write {args.output}: {error.strerror or error}", file=sys.stderr)
            return 1
        print(f"wrote {what} to {args.output} ({args.format.upper()})", file=sys.stderr)
    return 0
