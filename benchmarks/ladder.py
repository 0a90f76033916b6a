"""Does the ladder's scheduler and database slow play? A benchmark, not a test.

Run ``python benchmarks/ladder.py`` (``--seconds`` per phase, ``--bots``). It
prints ``name: value`` lines on stdout and progress on stderr:

* ``ladder_decisions_per_s``: ``--bots`` (≥ 8) random-bot processes
  (``sample_bots/random_bot.py``), each registered on a ladder (SQLite, the
  default) and connected with ``--seats`` streams, no house bots, Contract
  Whist matches of 4 deals, played for ``--seconds`` after a warm-up. A
  decision is one request answered (counted where the table issues it).
* ``tournament_decisions_per_s``: the same bots as a duplicate round robin
  (``run_tournament``, local entries), with as many tables at once as the
  ladder had (``--seats`` ladder matches of two tables each), for the same time.
* ``ratio_ladder_vs_tournament``: the two divided (goal ≥ 0.9).
* ``ladder_next_match_p99_ms`` (SQLite) and ``ladder_pg_next_match_p99_ms``
  (PostgreSQL, a throw-away server like the tests'), with their p50: for each
  ladder match, the time from the moment its last entrant became free (a
  table released its seat) to the match's first decision request (goal < 50 ms).
  ``ladder_pg_decisions_per_s`` is the PostgreSQL phase's rate.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from oddtrick.rules import GameConfig  # noqa: E402
from oddtrick_referee.competitions.ladder.service import Ladder, LadderSettings, open_store, run_ladder  # noqa: E402
from oddtrick_referee.competitions.tournaments.tournament import (  # noqa: E402
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play import table as table_module  # noqa: E402
from oddtrick_referee.play.table import TableRules  # noqa: E402
from oddtrick_referee.transport import sessions as sessions_module  # noqa: E402

RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class Probe:
    """Counts decisions and times each seat's release and each table's first request."""

    def __init__(self) -> None:
        self.decisions = 0
        self.freed_at: dict[str, float] = {}
        self.first_request_gaps: list[float] = []
        self._seen_tables: set[int] = set()
        self.recording = False

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        original_decide = table_module.Table._decide
        original_release = sessions_module.Lobby.release
        probe = self

        async def decide(table: table_module.Table, seat: object) -> object:
            if probe.recording:
                probe.decisions += 1
                if id(table) not in probe._seen_tables:
                    probe._seen_tables.add(id(table))
                    names = {link.bot_name for link in table.links.values()}
                    ready = max((probe.freed_at.get(n, 0.0) for n in names), default=0.0)
                    if ready:
                        probe.first_request_gaps.append(trio.current_time() - ready)
            return await original_decide(table, seat)  # type: ignore[arg-type]

        def release(lobby: sessions_module.Lobby, link: sessions_module.SeatLink) -> None:
            probe.freed_at[link.bot_name] = trio.current_time()
            original_release(lobby, link)

        table_module.Table._decide = decide  # type: ignore[assignment,method-assign]
        sessions_module.Lobby.release = release  # type: ignore[method-assign]
        try:
            yield
        finally:
            table_module.Table._decide = original_decide  # type: ignore[method-assign]
            sessions_module.Lobby.release = original_release  # type: ignore[method-assign]


async def ladder_phase(
    data_dir: Path, database: str | None, bots: int, seats: int, seconds: float
) -> tuple[float, list[float]]:
    settings = LadderSettings(
        config=GameConfig.contract(),
        deals=4,
        rules=TableRules(deadline_s=5.0, grace_s=5.0),
        data_dir=data_dir,
        database=database,
        seed=1,
    )
    store = open_store(settings)
    tokens = {f"bot{i}": store.register(f"bot{i}", now_ms=1) for i in range(bots)}
    store.db.close()
    probe = Probe()
    processes: list[subprocess.Popen[bytes]] = []
    with probe.installed():
        async with trio.open_nursery() as nursery:
            ready: list[Ladder] = []
            started = trio.Event()

            def on_ready(ladder: Ladder) -> None:
                ready.append(ladder)
                started.set()

            nursery.start_soon(lambda: run_ladder(settings, on_ready=on_ready))
            await started.wait()
            ladder = ready[0]
            for name, token in tokens.items():
                command = [sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot"]
                command += ["--server", ladder.referee.address, "--name", name, "--token", token]
                command += ["--seats", str(seats)]
                processes.append(
                    subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            await ladder.wait_outcomes(2 * seats)  # warm-up: every bot connected and playing
            probe.recording = True
            start = trio.current_time()
            await trio.sleep(seconds)
            elapsed = trio.current_time() - start
            probe.recording = False
            nursery.cancel_scope.cancel()
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()
    return probe.decisions / elapsed, probe.first_request_gaps


async def tournament_phase(data_dir: Path, bots: int, tables: int, seconds: float) -> float:
    entries = tuple(parse_entry(f"bot{i}={RANDOM_BOT}:RandomBot") for i in range(bots))
    settings = TournamentSettings(
        entries=entries,
        config=GameConfig.contract(),
        deals=400,
        set_size=4,
        tables=tables,
        rules=TableRules(deadline_s=5.0, grace_s=5.0),
        seed="bench",
    )
    probe = Probe()
    with probe.installed():
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: run_tournament(settings, data_dir, progress_stream=io.StringIO()))
            while probe.decisions == 0:  # warm-up: until the local entries play
                probe.recording = True
                await trio.sleep(0.5)
            await trio.sleep(3)
            probe.decisions = 0
            start = trio.current_time()
            await trio.sleep(seconds)
            elapsed = trio.current_time() - start
            decisions = probe.decisions
            nursery.cancel_scope.cancel()
    return decisions / elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def main(args: argparse.Namespace) -> None:
    tables = 2 * args.seats
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        progress(f"ladder on SQLite: {args.bots} random bots x {args.seats} seats, {args.seconds:g} s")
        ladder_rate, gaps = await ladder_phase(root / "ladder", None, args.bots, args.seats, args.seconds)
        progress(f"tournament: the same {args.bots} bots, {tables} tables, {args.seconds:g} s")
        tournament_rate = await tournament_phase(root / "tournament", args.bots, tables, args.seconds)
        pg_rate, pg_gaps = float("nan"), []
        if not args.no_postgres:
            from postgres_support import postgres_server

            progress("ladder on PostgreSQL")
            with _pytest_free(), postgres_server() as url:
                pg_rate, pg_gaps = await ladder_phase(
                    root / "ladder-pg", url, args.bots, args.seats, args.seconds
                )
    print(f"ladder_decisions_per_s: {ladder_rate:.0f}")
    print(f"tournament_decisions_per_s: {tournament_rate:.0f}")
    print(f"ratio_ladder_vs_tournament: {ladder_rate / tournament_rate:.2f}")
    print(f"ladder_matches_timed: {len(gaps)}")
    print(f"ladder_next_match_p50_ms: {1000 * statistics.median(gaps):.1f}")
    print(f"ladder_next_match_p99_ms: {1000 * percentile(gaps, 0.99):.1f}")
    if pg_gaps:
        print(f"ladder_pg_decisions_per_s: {pg_rate:.0f}")
        print(f"ladder_pg_next_match_p50_ms: {1000 * statistics.median(pg_gaps):.1f}")
        print(f"ladder_pg_next_match_p99_ms: {1000 * percentile(pg_gaps, 0.99):.1f}")


@contextlib.contextmanager
def _pytest_free() -> Iterator[None]:
    """postgres_support skips through pytest when PostgreSQL is missing; here that is an error."""
    try:
        yield
    except BaseException as error:
        if type(error).__name__ in ("Skipped", "Failed"):
            raise SystemExit(f"PostgreSQL phase: {error}") from None
        raise


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=15.0, help="seconds per phase (default 15)")
    parser.add_argument("--bots", type=int, default=8, help="random-bot processes (at least 8; default 8)")
    parser.add_argument(
        "--seats", type=int, default=2, help="streams per bot = ladder matches at once (default 2)"
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL phase")
    arguments = parser.parse_args()
    if arguments.bots < 8:
        parser.error("a ladder match needs 8 different entrants: --bots 8 or more")
    trio.run(main, arguments)
