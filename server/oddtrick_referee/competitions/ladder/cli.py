"""``oddtrick ladder``: serve a ladder, manage its entrants, read its leaderboard.

``register``, ``retire``, ``rotate-token``, ``standings``, ``history`` and
``pairs`` work on the database directly, whether or not the ladder is running;
only ``serve`` creates a ladder, so they never make one in the wrong folder.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from oddtrick import bots
from oddtrick._argparse import EntryArgument, EntryWords, positive_seconds
from oddtrick._terminal import plural
from oddtrick.deal_sets import DEALS_FROM_HELP, DealSetError, read_deal_set
from oddtrick.rules import ConfigError
from oddtrick_referee._exceptions import (
    CannotListen,
    DatabaseError,
    LadderError,
    MetricsUnavailable,
    OptionError,
    RefereeError,
)
from oddtrick_referee.command_runner import StopRequest, run_command, sigterm_stops_like_ctrl_c
from oddtrick_referee.competitions.ladder.leaderboard import LeaderRow, leaderboard
from oddtrick_referee.competitions.ladder.pairs import format_pairs, pair_report
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings
from oddtrick_referee.competitions.ladder.service import (
    HouseBot,
    Ladder,
    LadderSettings,
    check_house_bots,
    default_house_bots,
    run_ladder,
)
from oddtrick_referee.competitions.tournaments.tournament import parse_entry
from oddtrick_referee.metrics import (
    Metrics,
    MetricsServer,
    add_metrics_option,
    start_metrics,
)
from oddtrick_referee.options import config_from_args
from oddtrick_referee.play.clock import CLOCK_HELP, clock_argument, time_control
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.database import Database, open_database, url_to_print
from oddtrick_referee.storage.ladder_store import LadderStore
from oddtrick_referee.transport.tls import add_tls_options, server_credentials
from oddtrick_referee.web.cli import add_web_option
from oddtrick_referee.web.server import bind_web, page_beside


def add_ladder_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_game_options: Callable[[argparse.ArgumentParser], None],
    add_data_dir: Callable[[argparse.ArgumentParser], None],
) -> None:
    ladder = commands.add_parser(
        "ladder",
        help="a standing, rated arena: bots connect whenever they like and are paired around the clock",
        description=(
            "A ladder pairs its registered bots continuously and rates them, as teams, by every "
            "deal's duplicate score. "
            "`serve` runs it; the other commands work on its database whether or not it runs. "
            "See docs/ladder.md."
        ),
    )
    sub = ladder.add_subparsers(dest="ladder_command", metavar="COMMAND", required=True)

    _add_serve(sub, add_game_options, add_data_dir)
    _add_entrant_commands(sub, add_data_dir)
    _add_reading_commands(sub, add_data_dir)


def _add_serve(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    add_game_options: Callable[[argparse.ArgumentParser], None],
    add_data_dir: Callable[[argparse.ArgumentParser], None],
) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the ladder: a referee, the house bots and the scheduler, until Ctrl-C",
        description=(
            "Every ladder match is two tables playing the same deals: team A holds the North-South "
            "cards at one table and the East-West cards at the other, team B the rest, and every "
            "seat is a different entrant, so no entrant ever sees more than one seat's cards of a "
            "deal (entrants are untrusted: they may pool what all their sessions see). House bots "
            "fill seats when too few entrants are connected. Several referees may run one ladder: "
            "start each with the same --database postgresql://… and its own --data-dir; each pairs "
            "the bots connected to it, and they share one leaderboard (docs/ladder.md)."
        ),
        epilog=(
            "example: oddtrick ladder serve --game contract --port 50051 "
            "(then: oddtrick ladder register alice; oddtrick bot my_bot.py --server HOST:50051 "
            "--name alice --token TOKEN --seats 2). On two referees: oddtrick ladder serve "
            "--database postgresql://ladder@db/ladder --data-dir /srv/a on each machine, and "
            "oddtrick bot my_bot.py --server A:50051,B:50051 … (the first that answers; the next "
            "when it goes away)."
        ),
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=50051, help="port (0: any free port; default 50051)")
    _add_storage(serve, add_data_dir)
    add_game_options(serve)
    _add_match_options(serve.add_argument_group("ladder matches"))
    _add_log_options(serve.add_argument_group("match logs"))
    _add_rating_options(serve.add_argument_group("ratings"))
    add_web_option(serve)
    add_metrics_option(serve, "the ladder (its referee, its seat waits, its matches waiting for bots)")
    add_tls_options(serve)
    serve.add_argument("-v", "--verbose", action="store_true", help="log every connection and match")
    serve.set_defaults(handler=_serve)


def _add_match_options(play: argparse._ArgumentGroup) -> None:
    play.add_argument(
        "--match-deals",
        type=int,
        default=8,
        metavar="N",
        help="deals per ladder match, at each table (default 8)",
    )
    play.add_argument(
        "--deadline", type=positive_seconds, default=5.0, metavar="S", help="seconds per decision (default 5)"
    )
    play.add_argument(
        "--grace",
        type=positive_seconds,
        default=30.0,
        metavar="S",
        help="reconnect grace period (default 30)",
    )
    play.add_argument("--clock", type=clock_argument, default=None, metavar="BANK+INCREMENT", help=CLOCK_HELP)
    play.add_argument(
        "--trusted-pairs",
        action="store_true",
        help="TRUSTED entrants only (a class, a club): one entrant holds both seats of a partnership "
        "and the twin table is played by another session of it, so each entrant sees all 52 cards "
        "of every deal it plays; two entrants per match instead of eight",
    )
    play.add_argument(
        "--house-bots",
        type=int,
        default=7,
        metavar="N",
        help="house bots the ladder runs to fill seats (default 7: a ladder with one entrant still plays)",
    )
    play.add_argument(
        "--house-bot",
        action=EntryWords,
        nargs="+",
        const="house-bot",
        default=[],
        metavar=("NAME=FILE.py[:Class]", "option.NAME=VALUE"),
        help="a house bot of your own instead of the default ones (repeatable), its bot options "
        "after it: --house-bot strong=sample_bots/pimc_bot.py option.think_seconds=0.5; or "
        f"strong:LEVEL, the strong sample bot at a level ({bots.strong_levels_text()}, docs/strong-bot.md): "
        "--house-bot strong:1 --house-bot strong:2 --house-bot strong:3",
    )
    play.add_argument(
        "--house-seats",
        type=int,
        default=2,
        metavar="N",
        help="matches each house bot plays at once (default 2)",
    )
    play.add_argument(
        "--deals-from",
        type=Path,
        default=None,
        metavar="FILE.pbn",
        help=DEALS_FROM_HELP + ". Matches take the next --match-deals deals each and go on where "
        "the last run left off. Keep the file private: a bot that has it knows every hand",
    )


def _add_log_options(logs: argparse._ArgumentGroup) -> None:
    logs.add_argument(
        "--plain-logs",
        action="store_true",
        help="keep finished match logs as plain text (default: each is gzipped in place when its "
        "match ends, 13 times smaller; every oddtrick command and the web page read both)",
    )
    logs.add_argument(
        "--keep-house-logs",
        type=float,
        default=None,
        metavar="DAYS",
        help="delete the logs of matches in which no entrant but one sat with house bots (an "
        "entrant's games against the house) once they are DAYS old, checked at start and hourly; "
        "their results, ratings and index rows stay in the database, and matches among two "
        "entrants or more keep their logs. Default: keep every log",
    )
    logs.add_argument(
        "--analyse",
        action="store_true",
        help="once a match is over and its tables released, submit each table's log as an analysis "
        "job to the work queue in the --database (PostgreSQL only); `oddtrick worker --database "
        "URL` analyses them, `oddtrick analyze --results` and `oddtrick web --database` show them",
    )


def _add_rating_options(rating: argparse._ArgumentGroup) -> None:
    rating.add_argument(
        "--draw-margin",
        type=float,
        default=0.0,
        metavar="POINTS",
        help="a match whose duplicate score per deal is within this of zero is drawn in W-D-L "
        "(default 0); the ratings take every deal's score as it is",
    )
    rating.add_argument(
        "--inactive-after",
        type=float,
        default=7.0,
        metavar="DAYS",
        help="days without a match before an entrant is listed inactive (default 7)",
    )


def _add_entrant_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    add_data_dir: Callable[[argparse.ArgumentParser], None],
) -> None:
    """register, retire, rotate-token: the database's entrants."""
    register = sub.add_parser(
        "register",
        help="add a bot; prints its token once (only a hash is kept)",
        description=(
            "Registers NAME and prints a fresh random token: give it to the bot's author. The ladder "
            "must exist (`oddtrick ladder serve` creates it): give the --data-dir or --database it "
            "runs with."
        ),
    )
    register.add_argument("name", metavar="NAME")
    _add_storage(register, add_data_dir)
    register.set_defaults(handler=_register)

    retire = sub.add_parser("retire", help="stop a bot for good: its token is refused, its history stays")
    retire.add_argument("name", metavar="NAME")
    _add_storage(retire, add_data_dir)
    retire.set_defaults(handler=_retire)

    rotate = sub.add_parser("rotate-token", help="give a bot a new token; the old one stops working")
    rotate.add_argument("name", metavar="NAME")
    _add_storage(rotate, add_data_dir)
    rotate.set_defaults(handler=_rotate)


def _add_reading_commands(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    add_data_dir: Callable[[argparse.ArgumentParser], None],
) -> None:
    """standings, history, pairs: what the database says, the ladder running or not."""
    standings = sub.add_parser(
        "standings",
        help="the leaderboard",
        description=(
            "Rank, bot, rating (the conservative estimate mu - 3 sigma), its uncertainty, matches, "
            "win/draw/loss, forfeits, faults, the chance that it is stronger than the next row's "
            "entrant, when it last played. Rated entrants come first; provisional ones ('?', too "
            "few matches to place) are listed apart below them, by mean. 'zz' marks an inactive "
            "entrant, 'house' the ladder's own bots. --json gives the same rows in the same order, "
            "each with 'provisional' and 'stronger_than_next'."
        ),
    )
    _add_storage(standings, add_data_dir)
    standings.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    standings.set_defaults(handler=_standings)

    history = sub.add_parser("history", help="one bot's ladder matches and its rating after each")
    history.add_argument("name", metavar="NAME")
    _add_storage(history, add_data_dir)
    history.add_argument("--limit", type=int, default=50, metavar="N", help="newest N matches (default 50)")
    history.add_argument("--json", action="store_true", help="print as JSON")
    history.set_defaults(handler=_history)

    pairs = sub.add_parser(
        "pairs",
        help="pairs of entrants that keep meeting, and how they score together: a check for "
        "one party running several names",
        description=(
            "For every two entrants that finished matches together: how many (as teammates and "
            "as opponents), that as a share of the matches of whichever played fewer, their "
            "team's mean duplicate score per match as teammates, the first's against the "
            "second's as opponents, and each one's mean without the other. Most suspicious "
            "first (highest share). House bots are left out unless asked. See docs/ladder.md, "
            "'One party, several names'."
        ),
    )
    _add_storage(pairs, add_data_dir)
    pairs.add_argument(
        "--min-together",
        type=int,
        default=1,
        metavar="N",
        help="only pairs that finished at least N matches together (default 1)",
    )
    pairs.add_argument("--limit", type=int, default=50, metavar="N", help="the first N pairs (default 50)")
    pairs.add_argument("--include-house", action="store_true", help="count the house bots too")
    pairs.add_argument("--json", action="store_true", help="print as JSON")
    pairs.set_defaults(handler=_pairs)


def _add_storage(
    parser: argparse.ArgumentParser, add_data_dir: Callable[[argparse.ArgumentParser], None]
) -> None:
    add_data_dir(parser)
    parser.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="postgresql://USER@HOST:PORT/DB (default: SQLite, ladder.sqlite3 in the data folder)",
    )


def _store(args: argparse.Namespace) -> LadderStore:
    """The ladder's store, which must exist already: only ``serve`` makes a ladder, so a
    management command given the wrong --data-dir or --database says where it looked
    instead of making an empty ladder whose tokens the running one would refuse."""
    sqlite_path = _sqlite_path(args)
    if sqlite_path is not None and not sqlite_path.exists():
        raise DatabaseError(
            f"no ladder in {sqlite_path.parent.resolve()} (looked for {sqlite_path.name}): give the "
            "--data-dir (or --database) the ladder runs with; `oddtrick ladder serve` creates a ladder"
        )
    database = open_database(args.database, args.data_dir, LADDER_FILE)
    try:
        found = has_ladder(database)
    except BaseException:
        database.close()
        raise
    if not found:
        database.close()
        raise DatabaseError(
            f"no ladder in the database {database.url}: give the --database (or --data-dir) the ladder "
            "runs with; `oddtrick ladder serve` creates a ladder"
        )
    rating = RatingSettings()
    return LadderStore(database, rating.mu, rating.sigma)


LADDER_FILE = "ladder.sqlite3"
"""The ladder's SQLite file in its data folder (the default database)."""


def _sqlite_path(args: argparse.Namespace) -> Path | None:
    """The SQLite file the ladder's options name, or ``None`` for PostgreSQL."""
    url = args.database
    if url is None:
        return Path(args.data_dir) / LADDER_FILE
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///"))
    return None


def has_ladder(database: Database) -> bool:
    """Whether ``database`` holds a ladder (its schema table), read without creating anything."""
    if database.dialect == "sqlite":
        query = "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ladder_schema'"
    else:
        query = "SELECT table_name FROM information_schema.tables WHERE table_name = 'ladder_schema'"
    with database.transaction() as cursor:
        return bool(cursor.rows(query))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _fail(command: str, error: BaseException) -> int:
    print(f"oddtrick ladder {command}: {error}", file=sys.stderr)
    return 2


def _register(args: argparse.Namespace) -> int:
    try:
        store = _store(args)
        token = store.register(args.name, _now_ms())
    except (LadderError, DatabaseError) as error:
        return _fail("register", error)
    print(f"registered {args.name} on {store.db.url}")
    print(f"token (shown once, keep it secret): {token}")
    # As docs/ladder.md: with two sessions an entrant can play two matches at once.
    print(
        f"connect with: oddtrick bot MY_BOT.py --server HOST:PORT --name {args.name} --token TOKEN --seats 2"
    )
    return 0


def _retire(args: argparse.Namespace) -> int:
    try:
        _store(args).retire(args.name, _now_ms())
    except (LadderError, DatabaseError) as error:
        return _fail("retire", error)
    print(f"retired {args.name}: its token is refused from now on; its matches stay in the history")
    return 0


def _rotate(args: argparse.Namespace) -> int:
    try:
        token = _store(args).rotate_token(args.name)
    except (LadderError, DatabaseError) as error:
        return _fail("rotate-token", error)
    print(f"new token for {args.name} (shown once; the old one no longer works): {token}")
    return 0


_LIVE = ("connected", "draining")
"""Leaderboard fields only the running ladder knows (GetLadder says them)."""


def _standings(args: argparse.Namespace) -> int:
    try:
        store = _store(args)
        rows = leaderboard(store.entrants(), Rater(RatingSettings()), _now_ms())
    except (LadderError, DatabaseError) as error:
        return _fail("standings", error)
    if args.json:
        # Who is connected only the running ladder knows (GetLadder says it).
        print(
            json.dumps([{k: v for k, v in row.to_dict().items() if k not in _LIVE} for row in rows], indent=2)
        )
        return 0
    print(format_leaderboard(rows))
    return 0


def format_leaderboard(rows: list[LeaderRow]) -> str:
    """Rated entrants, then the provisional ones under their own heading; each row but the
    last says how likely its entrant is stronger than the next row's."""
    if not rows:
        return "no entrants yet: `oddtrick ladder register NAME` adds one"
    header = (
        f"{'#':>3}  {'bot':<24} {'rating':>7} {'± σ':>6}     {'matches':>4}  "
        f"{'W-D-L':>9}  {'forf':>4}  {'faults':>6}  {'> next':>6}  last played"
    )
    lines = [header, "-" * len(header)]
    if rows[0].provisional:
        lines.append("     (no rated entrant yet)")
    for number, row in enumerate(rows):
        if row.provisional and (number == 0 or not rows[number - 1].provisional):
            lines.append("     provisional (too few matches to place; by mean, below every rated entrant):")
        lines.append(_leader_line(row))
    lines.append(
        "rating = mu - 3 sigma;  > next = chance it is stronger than the row below;  "
        "? provisional;  zz inactive"
    )
    return "\n".join(lines)


def _leader_line(row: LeaderRow) -> str:
    marks = ("?" if row.provisional else " ") + (" zz" if row.inactive else "   ")
    name = row.name + (" (house)" if row.house else "")
    last = "never"
    if row.last_played_ms is not None:
        last = time.strftime("%Y-%m-%d %H:%M", time.gmtime(row.last_played_ms / 1000))
    above = "" if row.stronger_than_next is None else f"{row.stronger_than_next:.0%}"
    return (
        f"{row.rank:>3}  {name:<24} {row.rating:>7.2f} {row.sigma:>6.2f}{marks} {row.matches:>4}  "
        f"{f'{row.wins}-{row.draws}-{row.losses}':>9}  {row.forfeits:>4}  {row.faults:>6}  "
        f"{above:>6}  {last}"
    )


def _history(args: argparse.Namespace) -> int:
    try:
        store = _store(args)
        entrant = store.entrant(args.name)
        matches = store.matches(args.name, args.limit, 0)
        points = {p["match_id"]: p for p in store.rating_history(args.name)}
    except (LadderError, DatabaseError) as error:
        return _fail("history", error)
    if entrant is None:
        missing = LadderError(f"no entrant {args.name!r} (`oddtrick ladder standings` lists them)")
        return _fail("history", missing)
    rater = Rater(RatingSettings())
    items = []
    for match in matches:
        team = 0 if args.name in match.lineup["teams"][0] else 1
        point = points.get(match.match_id)
        score = match.score_a if match.score_a is not None else 0
        items.append(
            {
                "match_id": match.match_id,
                "status": match.status,
                "started_ms": match.created_ms,
                "team": "AB"[team],
                "score": score if team == 0 else -score,
                "deals": len(match.deals),
                "result": _result_for(match.outcome, team, match.status),
                "rating_after": rater.conservative(Rating(point["mu"], point["sigma"])) if point else None,
                "cause": match.cause,
            }
        )
    if args.json:
        print(json.dumps({"bot": args.name, "matches": items}, indent=2))
        return 0
    print(f"{args.name}: {entrant.matches} rated matches, {len(items)} shown (newest first)")
    for item in items:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(str(item["started_ms"])) / 1000))
        after = f"rating {item['rating_after']:.2f}" if item["rating_after"] is not None else "not rated"
        cause = f" ({item['cause']})" if item["cause"] else ""
        print(
            f"  {when}  {item['match_id']:<28} {item['status']:<8} team {item['team']} "
            f"{item['score']:+5d} over {plural(int(str(item['deals'])), 'deal')}  "
            f"{item['result']:<5} {after}{cause}"
        )
    return 0


def _pairs(args: argparse.Namespace) -> int:
    if args.min_together < 1 or args.limit < 1:
        return _fail("pairs", OptionError("--min-together and --limit must be at least 1"))
    try:
        store = _store(args)
        entrants = store.entrants(include_retired=True)
        matches = store.finished_matches()
    except (LadderError, DatabaseError) as error:
        return _fail("pairs", error)
    house = set() if args.include_house else {e.name for e in entrants if e.house}
    records = pair_report(matches, house, args.min_together)[: args.limit]
    if args.json:
        print(json.dumps([record.to_dict() for record in records], indent=2))
        return 0
    print(format_pairs(records))
    return 0


def _result_for(outcome: str | None, team: int, status: str) -> str:
    if status != "finished" or not outcome:
        return "-"
    if outcome == "draw":
        return "draw"
    return "win" if outcome == "ab"[team] else "loss"


def _serve(args: argparse.Namespace) -> int:
    try:
        metrics, metrics_server = start_metrics(args.metrics, "oddtrick ladder serve")
    except MetricsUnavailable as error:
        print(error, file=sys.stderr)
        return 2
    try:
        return _serve_with(args, metrics, metrics_server)
    finally:
        if metrics_server is not None:
            metrics_server.close()


def _serve_with(
    args: argparse.Namespace, metrics: Metrics | None, metrics_server: MetricsServer | None
) -> int:
    """``ladder serve`` with its ``--metrics`` served (or none asked for)."""
    try:
        settings = _ladder_settings(args, metrics)
        run_command(check_house_bots, settings)
    except (ConfigError, DealSetError, RefereeError, OSError) as error:  # OSError: a bot file's path
        return _fail("serve", error)
    if metrics_server is not None:
        print(f"metrics on {metrics_server.url}", flush=True)
    logging.basicConfig(format="%(asctime)s %(name)s: %(message)s", level=logging.WARNING)
    logging.getLogger("oddtrick").setLevel(logging.INFO if args.verbose else logging.WARNING)
    logging.getLogger("oddtrick.ladder").setLevel(logging.INFO)

    def ready(ladder: object) -> None:
        assert isinstance(ladder, Ladder)
        _print_ready(ladder, settings, args.data_dir)

    try:
        web = bind_web(args.web) if args.web is not None else None
    except (OptionError, CannotListen) as error:
        return _fail("serve", error)

    def web_ready(url: str) -> None:
        print(f"  the leaderboard and live play: {url}/leaderboard", flush=True)

    try:
        run_command(
            _until_stopped,
            lambda: run_ladder(settings, on_ready=ready, page=page_beside(web, announce=web_ready)),
        )
    except BaseException as error:
        if _contains(error, KeyboardInterrupt):
            print(
                "ladder stopped: finished matches and ratings are kept; a match in progress is recorded "
                "aborted and not rated. Run the same command to carry on.",
                file=sys.stderr,
            )
            return 130
        known = _first(error, (OSError, DatabaseError, LadderError))
        if known is None:
            raise
        return _fail("serve", known)
    return 0


def _ladder_settings(args: argparse.Namespace, metrics: Metrics | None = None) -> LadderSettings:
    """The ladder ``serve``'s options describe; OptionError (ConfigError, DealSetError) says what is wrong."""
    ignored = [f"--{name}" for name in ("format", "deals", "target") if getattr(args, name) is not None]
    if ignored:
        raise OptionError(f"{', '.join(ignored)}: every ladder match plays --match-deals deals; drop them")
    config = config_from_args(args)
    house = default_house_bots(args.house_bots)
    if args.house_bot:
        house = tuple(_house_bot(text) for text in args.house_bot)
    tls = server_credentials(args)
    deal_set = read_deal_set(args.deals_from) if args.deals_from is not None else None
    if args.match_deals < 1:
        raise OptionError("--match-deals must be at least 1")
    if args.keep_house_logs is not None and not args.keep_house_logs >= 0:
        raise OptionError("--keep-house-logs must be a number of days, 0 or more")
    if args.analyse and not (args.database or "").startswith(("postgresql://", "postgres://")):
        raise OptionError("--analyse needs a PostgreSQL --database: the work queue lives there")
    return LadderSettings(
        metrics=metrics,
        config=config,
        deals=args.match_deals,
        rules=TableRules(deadline_s=args.deadline, grace_s=args.grace, clock=args.clock),
        data_dir=args.data_dir,
        database=args.database,
        host=args.host,
        port=args.port,
        trusted=args.trusted_pairs,
        house_bots=house,
        house_seats=args.house_seats,
        rating=RatingSettings(draw_margin=args.draw_margin, inactive_after_s=args.inactive_after * 86400),
        tls=tls,
        compress_logs=not args.plain_logs,
        deal_set=deal_set,
        keep_house_logs_s=None if args.keep_house_logs is None else args.keep_house_logs * 86400,
        analyse=args.analyse,
    )


def _print_ready(ladder: Ladder, settings: LadderSettings, data_dir: Path) -> None:
    print(
        f"ladder listening on {ladder.referee.address}: {settings.match_config.describe()}, "
        f"{'trusted pairs' if settings.trusted else 'teams of four, one seat per entrant'}; "
        f"{len(settings.house_bots)} house bots; data in {data_dir}",
        flush=True,
    )
    if settings.deal_set is not None:
        print(f"  deals from {settings.deal_set.describe()}", flush=True)
    rules = settings.rules
    print(f"  time control: {time_control(rules.deadline_s, rules.clock)}", flush=True)
    where = _where_option(settings, data_dir)
    print(f"  register a bot:   oddtrick ladder register NAME {where}", flush=True)
    print(f"  see the standings: oddtrick ladder standings {where}", flush=True)


def _where_option(settings: LadderSettings, data_dir: Path) -> str:
    """The option that finds this ladder's store, for the commands the banner prints: its
    --database when it has one (its data folder then holds no ladder), else --data-dir."""
    if settings.database:
        return f"--database {shlex.quote(url_to_print(settings.database))}"
    return f"--data-dir {shlex.quote(str(data_dir))}"


async def _until_stopped(run: Callable[[], Awaitable[None]]) -> None:
    """Runs the ladder; SIGTERM (a service manager's stop) stops it as Ctrl-C does."""
    with sigterm_stops_like_ctrl_c(StopRequest()):
        await run()


STRONG_HOUSE = "strong:"
"""``--house-bot strong:LEVEL``: the strong sample bot at one of its levels, as a house bot."""


def _house_bot(given: EntryArgument) -> HouseBot:
    """The house bot one ``--house-bot`` names: ``NAME=FILE.py`` with its options, or
    ``strong:LEVEL``, the strong sample bot at that level (``house-strong-LEVEL``), so that
    a new entrant sees where it stands against graded opponents (docs/strong-bot.md). Its
    level is checked with its options, by the bot, before the ladder starts."""
    if given.text.startswith(STRONG_HOUSE):
        level = given.text.removeprefix(STRONG_HOUSE)
        if not level.isdigit() or int(level) == 0:
            raise OptionError(
                f"--house-bot {given.text}: strong:LEVEL takes a level number, {bots.strong_levels_text()}, "
                "e.g. strong:2 (the levels are in docs/strong-bot.md)"
            )
        strong = parse_entry(f"house-strong-{int(level)}={bots.bot_file('pimc')}")
        assert strong.command is not None  # an SDK bot file
        assert strong.cwd is not None
        return HouseBot(
            strong.name, strong.command, strong.cwd, options={**given.options, "level": int(level)}
        )
    entry = parse_entry(given.text)
    if not entry.sdk or entry.command is None or entry.cwd is None:
        raise OptionError(
            f"--house-bot takes NAME=FILE.py[:Class] (an SDK bot), not a cmd: program: {given.text}"
        )
    return HouseBot(entry.name, entry.command, entry.cwd, options=given.options)


def _contains(error: BaseException, kind: type[BaseException]) -> bool:
    return _first(error, (kind,)) is not None


def _first(error: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of these kinds in ``error``, however deep in exception groups."""
    if isinstance(error, kinds):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = _first(inner, kinds)
            if found is not None:
                return found
    return None


__all__ = ["add_ladder_command"]
