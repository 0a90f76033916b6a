"""What a flood of Hellos with bad tokens costs a ladder's tables: a benchmark, not a test.

Run ``python benchmarks/bad_hellos.py`` (``--seconds`` per phase, ``--sqlite``
for SQLite instead of a throw-away PostgreSQL server like the tests').
A ladder runs in this process with 8 random-bot processes (2 streams each)
playing Contract Whist matches of 4 deals. Three phases follow one another,
each ``--seconds`` long:

* ``quiet``: nothing but the honest tables;
* ``inline``: a flooder process (``--connections`` streams, each sending a
  Hello with a wrong token for a registered name, reading the refusal, and
  again) while every token is checked the way the referee once did: one
  database transaction per Hello on trio's own thread, no budget per address
  (emulated here by swapping the lobby's credentials; nothing in the referee
  does this any more);
* ``flood``: the same flood against the referee as it ships (tokens checked
  in worker threads, failed Hellos budgeted per address).

For each phase it prints ``PHASE_name: value`` lines on stdout:

* ``loop_lag_p50_ms``, ``loop_lag_p99_ms``, ``loop_lag_max_ms``: how late a
  task sleeping 1 ms at a time on trio's thread wakes (what every table waits
  on);
* ``decisions_per_s``: the honest tables' decisions (requests answered);
* ``bad_hellos_per_s`` and ``refused_unauthenticated`` /
  ``refused_resource_exhausted``: the flood as the flooder saw it;
* ``faults``: timeouts and other faults the honest entrants collected.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from oddtrick.rules import GameConfig  # noqa: E402
from oddtrick_referee.competitions.ladder.service import Ladder, LadderSettings, open_store, run_ladder  # noqa: E402
from oddtrick_referee.play import table as table_module  # noqa: E402
from oddtrick_referee.play.table import TableRules  # noqa: E402
from oddtrick_referee.storage.ladder_store import LadderStore  # noqa: E402
from oddtrick_referee.transport.sessions import Credentials  # noqa: E402

RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
HERE = Path(__file__).resolve()


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class InlineCredentials(Credentials):
    """The referee's old way, for the ``inline`` phase: every Hello's token checked by one
    database transaction on trio's thread, and no budget of failures."""

    def __init__(self, store: LadderStore) -> None:
        super().__init__()
        self._store = store

    @property
    def open(self) -> bool:
        return False

    @property
    def remote(self) -> bool:
        return False

    def known(self, name: str, token: str) -> str | None:
        return self._store.verify(name, token)


# ------------------------------------------------------------------ flooder


def flood(address: str, connections: int, seconds: float) -> dict[str, int]:
    """Hellos with a wrong token from ``connections`` threads for ``seconds``; the refusals."""
    import grpc

    from oddtrick.v1 import game_pb2, referee_pb2

    hello = referee_pb2.BotMessage(
        hello=referee_pb2.Hello(
            bot_name="bot0",
            bot_version="flood",
            token="not-the-token",
            protocol=referee_pb2.ProtocolVersion(name="oddtrick.v1", minor=0),
            games=[game_pb2.GAME_KIND_CONTRACT],
        )
    )
    deadline = time.monotonic() + seconds

    def one_connection() -> collections.Counter[str]:
        seen: collections.Counter[str] = collections.Counter()
        with grpc.insecure_channel(address) as channel:
            play = channel.stream_stream(
                "/oddtrick.v1.Referee/Play",
                request_serializer=referee_pb2.BotMessage.SerializeToString,
                response_deserializer=referee_pb2.RefereeMessage.FromString,
            )
            while time.monotonic() < deadline:
                try:
                    for _ in play(iter([hello]), timeout=30):
                        pass
                    seen["OK"] += 1
                except grpc.RpcError as error:
                    seen[error.code().name] += 1
        return seen

    with concurrent.futures.ThreadPoolExecutor(connections) as pool:
        parts = list(pool.map(lambda _: one_connection(), range(connections)))
    return dict(sum(parts, collections.Counter()))


# ------------------------------------------------------------------- ladder


class Counter:
    """Counts the honest tables' decisions while :attr:`recording`."""

    def __init__(self) -> None:
        self.decisions = 0

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        original = table_module.Table._decide
        counter = self

        async def decide(table: table_module.Table, seat: object) -> object:
            counter.decisions += 1
            return await original(table, seat)  # type: ignore[arg-type]

        table_module.Table._decide = decide  # type: ignore[assignment,method-assign]
        try:
            yield
        finally:
            table_module.Table._decide = original  # type: ignore[method-assign]


async def lag_probe(lags: list[float]) -> None:
    while True:
        before = trio.current_time()
        await trio.sleep(0.001)
        lags.append(trio.current_time() - before - 0.001)


async def phase(
    name: str, ladder: Ladder, counter: Counter, seconds: float, connections: int
) -> dict[str, Any]:
    progress(f"phase {name}: {seconds:g} s")
    store = ladder.store
    faults_before = sum(e.faults for e in await trio.to_thread.run_sync(store.entrants))
    lags: list[float] = []
    flooded: dict[str, int] = {}
    decisions_before = counter.decisions
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lag_probe, lags)
        if name != "quiet":
            command = [sys.executable, str(HERE), "--flooder", ladder.referee.address]
            command += ["--connections", str(connections), "--seconds", str(seconds)]
            done = await trio.run_process(command, capture_stdout=True)
            flooded = json.loads(done.stdout)
        else:
            await trio.sleep(seconds)
        nursery.cancel_scope.cancel()
    elapsed = trio.current_time() - start
    await ladder.wait_outcomes(len(ladder.outcomes) + 1)  # the matches under way get rated
    faults = sum(e.faults for e in await trio.to_thread.run_sync(store.entrants)) - faults_before
    return {
        "loop_lag_p50_ms": 1000 * statistics.median(lags),
        "loop_lag_p99_ms": 1000 * percentile(lags, 0.99),
        "loop_lag_max_ms": 1000 * max(lags),
        "decisions_per_s": (counter.decisions - decisions_before) / elapsed,
        "bad_hellos_per_s": sum(flooded.values()) / elapsed,
        "refused_unauthenticated": flooded.get("UNAUTHENTICATED", 0),
        "refused_resource_exhausted": flooded.get("RESOURCE_EXHAUSTED", 0),
        "faults": faults,
    }


async def run(data_dir: Path, database: str | None, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    settings = LadderSettings(
        config=GameConfig.contract(),
        deals=4,
        rules=TableRules(deadline_s=5.0, grace_s=5.0),
        data_dir=data_dir,
        database=database,
        seed=1,
    )
    store = open_store(settings)
    tokens = {f"bot{i}": store.register(f"bot{i}", now_ms=1) for i in range(8)}
    store.db.close()
    counter = Counter()
    processes: list[subprocess.Popen[bytes]] = []
    results: dict[str, dict[str, Any]] = {}
    with counter.installed():
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
                command += ["--seats", "2"]
                processes.append(
                    subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            await ladder.wait_outcomes(4)  # warm-up: every bot connected and playing
            shipped = ladder.referee.lobby.credentials
            results["quiet"] = await phase("quiet", ladder, counter, args.seconds, args.connections)
            ladder.referee.lobby.credentials = InlineCredentials(ladder.store)
            results["inline"] = await phase("inline", ladder, counter, args.seconds, args.connections)
            ladder.referee.lobby.credentials = shipped
            await trio.sleep(args.seconds / 2)  # the inline flood's last Hellos drain
            results["flood"] = await phase("flood", ladder, counter, args.seconds, args.connections)
            nursery.cancel_scope.cancel()
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait()
    return results


@contextlib.contextmanager
def _pytest_free() -> Iterator[None]:
    """postgres_support skips through pytest when PostgreSQL is missing; here that is an error."""
    try:
        yield
    except BaseException as error:
        if type(error).__name__ in ("Skipped", "Failed"):
            raise SystemExit(f"PostgreSQL: {error}") from None
        raise


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        if args.sqlite:
            results = await run(Path(folder), None, args)
        else:
            from postgres_support import postgres_server

            with _pytest_free(), postgres_server() as url:
                results = await run(Path(folder), url, args)
    print(f"database: {'sqlite' if args.sqlite else 'postgresql'}")
    for name, figures in results.items():
        for key, value in figures.items():
            shown = f"{value:.1f}" if isinstance(value, float) else str(value)
            print(f"{name}_{key}: {shown}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds per phase (default 20)")
    parser.add_argument("--connections", type=int, default=8, help="the flood's streams at once (default 8)")
    parser.add_argument("--sqlite", action="store_true", help="SQLite instead of PostgreSQL")
    parser.add_argument("--flooder", metavar="ADDRESS", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.flooder:
        print(json.dumps(flood(arguments.flooder, arguments.connections, arguments.seconds)))
    else:
        trio.run(main, arguments)
