"""How many decisions per second the referee serves, next to bare grpc.aio ping-pong.

Run ``python benchmarks/referee.py`` (``--seconds`` per phase). It prints
``name: value`` lines on stdout, progress (and CPU use) on stderr:

* ``decisions_per_s_1_table`` and ``decisions_per_s_4_tables``: the referee
  (this process, trio, grpc.aio on its helper thread) over loopback against
  four sample random-bot processes (``python -m oddtrick bot
  sample_bots/random_bot.py:RandomBot``), process k holding seat k at every
  table with one stream per table (``--seats 4``; in the 1-table phase three
  streams per bot wait idle in the lobby). After a warm-up (four 1-deal
  matches: every stream connected, imports done), a phase is one Contract
  Whist match of ``MatchFormat.DEALS`` per table, all tables at once
  (``play_match`` calls in a nursery), sized from a short calibration match
  so it lasts about ``--seconds``; the rate is the sum of
  ``SeatRecord.decisions`` over seats and tables divided by the wall time of
  the phase.
* ``baseline_roundtrips_per_s_4_streams``: bare grpc.aio, no referee: a
  server process (generic handler, raw bytes, no .proto) asks and a client
  process answers tiny messages on four bidi streams, counted for
  ``--seconds``. ``ratio_4_tables_vs_baseline`` divides the two.
* ``referee_added_p99_ms``: the 99th percentile, over every decision of the
  4-table phase, of ``MatchRecord.added_latency_s`` (from a bot's answer
  reaching the table to the next request leaving it).
* ``decisions_per_s_4_tables_unfolded``: the 4-table phase again on a
  referee with ``fold_events=False`` (every event sent as its own message).
* ``decisions_per_s_4_tables_raw_bots``: the 4-table phase again with bare
  protocol clients for bots (``benchmarks/raw_bots.py``: four processes, one
  stream per table each, answering every request with its first legal action
  from the message as it came, no SDK, no rules), as the floor's clients are
  bare: read against the floor, it is the referee's own cost, where the
  random bots' rate also holds the SDK's (a Python bot's client costs more
  CPU per decision than the referee on this machine).
* ``floor_decisions_per_s_4_tables`` and ``ratio_floor_vs_baseline``: the
  referee's transport with nothing on it. This process runs the referee's
  gRPC bridge and trio, four tables each asking the four seats in turn
  (8-byte questions, no rules, no protobuf); four client processes, each
  answering at once on one stream per table, with the SDK's channel options. It is what a referee with
  zero-cost rules, logs and messages would reach in this topology on this
  machine: the ceiling the decision rates above are to be read against.
  ``ratio_4_tables_vs_floor`` and ``ratio_raw_bots_vs_floor`` divide by it.

stderr also shows, per phase, the CPU used by each thread of this process,
by each child process and by everything else on the machine, and the CPU
milliseconds spent per decision (per round trip for the baseline): on a
shared or small machine the rates follow the CPU the benchmark gets, so read
them together. Every process started here is stopped before the script exits.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, Referee, RefereeSettings, running_referee

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
RAW_BOTS = ROOT / "benchmarks" / "raw_bots.py"
SEAT_NAMES = {seat: f"random-{seat.name.lower()}" for seat in Seat}
MAX_TABLES = 4
BASELINE_METHOD = "/bench.PingPong/Play"
CLK_TCK = os.sysconf("SC_CLK_TCK")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ CPU use from /proc


def cpu_seconds(pid: int | str, tid: int | str | None = None) -> float:
    """User + system CPU seconds of a process (or one of its threads), from /proc."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    try:
        with open(path) as file:
            text = file.read()
    except OSError:
        return 0.0
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def thread_cpu() -> dict[str, float]:
    """CPU seconds of each thread of this process, keyed by a readable name."""
    python_names = {thread.native_id: thread.name for thread in threading.enumerate()}
    python_names[os.getpid()] = "trio (main)"
    result = {}
    for tid in os.listdir("/proc/self/task"):
        name = python_names.get(int(tid))
        if name is None:
            try:
                with open(f"/proc/self/task/{tid}/comm") as file:
                    name = file.read().strip()
            except OSError:
                continue
        result[f"{name}/{tid}"] = cpu_seconds("self", tid)
    return result


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as file:
        values = [int(v) for v in file.readline().split()[1:9]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values) - idle) / CLK_TCK, sum(values) / CLK_TCK


@dataclass
class CpuMeter:
    """CPU use of this process (per thread), of child processes and of the machine over a span."""

    children: dict[str, int] = field(default_factory=dict)
    _start: float = 0.0
    _threads: dict[str, float] = field(default_factory=dict)
    _kids: dict[str, float] = field(default_factory=dict)
    _machine: tuple[float, float] = (0.0, 0.0)

    def start(self) -> None:
        self._start = time.perf_counter()
        self._threads = thread_cpu()
        self._kids = {name: cpu_seconds(pid) for name, pid in self.children.items()}
        self._machine = machine_cpu()

    def report(self, label: str, units: int, unit: str) -> None:
        """Print CPU shares (1.0 = one CPU) and CPU milliseconds per unit of work."""
        wall = time.perf_counter() - self._start
        used = {name: seconds - self._threads.get(name, 0.0) for name, seconds in thread_cpu().items()}
        ours = sum(used.values())
        parts = [
            f"{name} {seconds / wall:.0%}"
            for name, seconds in sorted(used.items(), key=lambda kv: -kv[1])
            if seconds > 0.01 * wall
        ]
        progress(f"  {label}: cpu of this process {ours / wall:.0%} ({', '.join(parts)})")
        kids = {name: cpu_seconds(pid) - self._kids.get(name, 0.0) for name, pid in self.children.items()}
        if kids:
            progress(
                f"  {label}: cpu of child processes {sum(kids.values()) / wall:.0%} ("
                + ", ".join(f"{name} {seconds / wall:.0%}" for name, seconds in kids.items())
                + ")"
            )
        all_ours = ours + sum(kids.values())
        if units:
            progress(
                f"  {label}: cpu per {unit}: {all_ours / units * 1000:.3f} ms in all, "
                f"{ours / units * 1000:.3f} ms in this process, "
                f"{sum(kids.values()) / units * 1000:.3f} ms in child processes"
            )
        busy, total = machine_cpu()
        busy, total = busy - self._machine[0], total - self._machine[1]
        cpus = os.cpu_count() or 1
        if total > 0:
            progress(
                f"  {label}: machine ({cpus} CPUs) {busy / total:.0%} busy; other processes used "
                f"{max(0.0, busy / total * cpus - all_ours / wall):.2f} CPUs"
            )


# ------------------------------------------------------------------ the referee phases


@dataclass
class PhaseResult:
    decisions: int
    wall_s: float
    records: list[MatchRecord]

    @property
    def rate(self) -> float:
        return self.decisions / self.wall_s


def contract(deals: int) -> GameConfig:
    return GameConfig.contract(format=MatchFormat.DEALS, deals=deals)


async def play_tables(referee: Referee, tables: int, deals: int) -> PhaseResult:
    """Play ``tables`` matches of ``deals`` deals at once; count decisions over the wall time."""
    records: list[MatchRecord] = []
    rules = TableRules(deadline_s=5.0, grace_s=5.0)

    async def one(index: int) -> None:
        spec = MatchSpec(contract(deals), SEAT_NAMES, rules, table_id=f"bench-{index}")
        records.append(await referee.play_match(spec, wait_s=60))

    started = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for index in range(tables):
            nursery.start_soon(one, index)
    wall = time.perf_counter() - started
    decisions = sum(seat.decisions for record in records for seat in record.seats.values())
    faults = sum(sum(seat.faults.values()) for record in records for seat in record.seats.values())
    if faults:
        progress(f"  warning: {faults} faults (timeouts or illegal actions) in this phase")
    return PhaseResult(decisions, wall, records)


def bot_command(server: str, name: str, token: str, seats: int, raw: bool = False) -> list[str]:
    """A random bot through the SDK, or (``raw``) a bare protocol client, with ``seats`` streams."""
    if raw:
        return [sys.executable, str(RAW_BOTS), server, "--stay", f"{name}:{token}:{seats}"]
    return [
        sys.executable, "-m", "oddtrick", "bot", f"{RANDOM_BOT}:RandomBot",
        "--server", server, "--name", name, "--token", token, "--seats", str(seats),
    ]  # fmt: skip


async def run_bot(command: list[str], log_path: Path, task_status: trio.TaskStatus[int]) -> None:
    """Run one bot process until cancelled (then terminate it); fail loudly if it dies first."""
    with log_path.open("w") as output:
        process = await trio.lowlevel.open_process(command, stdout=output, stderr=output)
        task_status.started(process.pid)
        try:
            await process.wait()
        finally:
            await _stop(process)
    tail = "".join(log_path.read_text(errors="replace").splitlines(keepends=True)[-20:])
    raise RuntimeError(f"a bot process exited early with status {process.returncode}; its output:\n{tail}")


async def referee_phases(
    data_dir: Path, fold_events: bool, tables_per_phase: list[int], seconds: float, raw_bots: bool = False
) -> dict[int, PhaseResult]:
    """Start a referee and four bot processes (random bots, or bare clients with
    ``raw_bots``); play each phase; stop everything."""
    tokens = {name: secrets.token_hex(8) for name in SEAT_NAMES.values()}
    settings = RefereeSettings(port=0, data_dir=data_dir, tokens=tokens, fold_events=fold_events)
    results: dict[int, PhaseResult] = {}
    async with running_referee(settings) as referee, trio.open_nursery() as bots:
        meter = CpuMeter()
        for seat, name in SEAT_NAMES.items():
            command = bot_command(referee.address, name, tokens[name], MAX_TABLES, raw_bots)
            pid = await bots.start(run_bot, command, data_dir / f"{name}.log")
            meter.children[f"bot-{seat.name.lower()}"] = pid
        kind = "bare protocol client" if raw_bots else "random bot"
        progress(f"referee on {referee.address} (fold_events={fold_events}); 4 {kind} processes started")
        # Warm up: every stream connected (all tables at once), imports done, code paths hot.
        warm = await play_tables(referee, MAX_TABLES, 1)
        progress(f"  warm-up: {warm.decisions} decisions in {warm.wall_s:.2f} s")
        bare = " bare bots" if raw_bots else ""
        for tables in tables_per_phase:
            calibration = await play_tables(referee, tables, 3)
            per_deal = calibration.decisions / (3 * tables)
            deals = max(3, math.ceil(1.25 * seconds * calibration.rate / (per_deal * tables)))
            progress(
                f"{tables} table(s){bare}, fold_events={fold_events}: calibration "
                f"{calibration.rate:.0f} decisions/s; playing {deals} deals per table ..."
            )
            meter.start()
            result = await play_tables(referee, tables, deals)
            meter.report(f"{tables} table(s){bare}", result.decisions, "decision")
            progress(
                f"  {result.decisions} decisions in {result.wall_s:.2f} s: {result.rate:.0f} decisions/s"
            )
            if result.wall_s < 0.8 * seconds:
                progress(f"  warning: the phase lasted {result.wall_s:.1f} s, less than --seconds")
            results[tables] = result
        bots.cancel_scope.cancel()
    return results


# ------------------------------------------------------------------ the grpc.aio baseline


def baseline_server() -> None:
    """A grpc.aio server that asks (8 bytes) and waits for each answer, on every stream."""
    import grpc

    async def play(request_iterator: object, context: grpc.aio.ServicerContext) -> None:
        question = b"question"
        while True:
            await context.write(question)
            answer = await context.read()
            if answer is grpc.aio.EOF:
                return

    async def serve() -> None:
        server = grpc.aio.server()
        handler = grpc.method_handlers_generic_handler(
            "bench.PingPong", {"Play": grpc.stream_stream_rpc_method_handler(play)}
        )
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        print(port, flush=True)
        await server.wait_for_termination()

    asyncio.run(serve())


async def answer_every_question(call: Any, counts: list[int], index: int) -> None:
    """Answer each message on a grpc.aio call at once, counting in ``counts[index]``, until it ends."""
    import grpc

    answer = b"answer"
    while True:
        question = await call.read()
        if question is grpc.aio.EOF:
            return
        await call.write(answer)
        counts[index] += 1


def baseline_client(address: str, streams: int, seconds: float) -> None:
    """Answer every question on ``streams`` streams; print "measuring", then the round trips
    counted over the next ``seconds`` and the exact window in seconds."""
    import grpc

    async def main() -> None:
        counts = [0] * streams
        async with grpc.aio.insecure_channel(address) as channel:
            method = channel.stream_stream(BASELINE_METHOD)

            async def one(index: int) -> None:
                await answer_every_question(method(), counts, index)

            tasks = [asyncio.create_task(one(i)) for i in range(streams)]
            # Warm up: every stream open and answering, then a little more.
            while min(counts) < 100 and not any(task.done() for task in tasks):
                await asyncio.sleep(0.01)
            await asyncio.sleep(min(0.5, seconds / 10))
            print("measuring", flush=True)
            before, started = sum(counts), time.perf_counter()
            await asyncio.sleep(seconds)
            after, ended = sum(counts), time.perf_counter()
            print(after - before, ended - started, flush=True)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


async def read_line(stream: trio.abc.ReceiveStream) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        chunk = await stream.receive_some(64)
        if not chunk:
            raise RuntimeError("a baseline process exited before printing its line")
        line += chunk
    return line


async def run_baseline(streams: int, seconds: float) -> float:
    here = str(Path(__file__).resolve())
    server = await trio.lowlevel.open_process(
        [sys.executable, here, "--baseline-server"], stdout=subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        with trio.fail_after(30):
            address = f"127.0.0.1:{int(await read_line(server.stdout))}"
        progress(f"baseline: grpc.aio server on {address}, {streams} streams, {seconds:g} s ...")
        client = await trio.lowlevel.open_process(
            [sys.executable, here, "--baseline-client", address, str(streams), str(seconds)],
            stdout=subprocess.PIPE,
        )
        try:
            assert client.stdout is not None
            meter = CpuMeter(children={"server": server.pid, "client": client.pid})
            with trio.fail_after(seconds + 60):
                await read_line(client.stdout)  # "measuring"
                meter.start()
                count, window = (float(word) for word in (await read_line(client.stdout)).split())
                meter.report("baseline", round(count), "round trip")
                await client.wait()
            rate = count / window
        finally:
            await _stop(client)
        progress(f"  {rate:.0f} round trips/s")
        return rate
    finally:
        await _stop(server)


async def _stop(process: trio.Process) -> None:
    with trio.CancelScope(shield=True):
        if process.returncode is None:
            process.terminate()
            with trio.move_on_after(5):
                await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                await stream.aclose()


# ------------------------------------------------------------------ the transport floor

FLOOR_METHOD = "/bench.Floor/Play"


def floor_client(address: str, seat: int, tables: int) -> None:
    """One seat at every table: introduce each stream as "seat:table", then answer every question."""
    import grpc

    async def main() -> None:
        from oddtrick._client import CHANNEL_OPTIONS

        async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
            method = channel.stream_stream(FLOOR_METHOD)

            async def one(table: int) -> None:
                call = method()
                await call.write(f"{seat}:{table}".encode())
                await answer_every_question(call, [0], 0)

            await asyncio.gather(*(one(table) for table in range(tables)))

    asyncio.run(main())


async def run_floor(tables: int, seconds: float) -> float:
    """Decisions per second through the referee's bridge with no referee on it (see the docstring)."""
    import grpc

    from oddtrick_referee.transport.bridge import BotStream, grpc_server

    streams: dict[tuple[int, int], BotStream] = {}
    all_connected = trio.Event()

    async def introduce(stream: BotStream) -> None:
        seat, table = (int(part) for part in (await stream.inbox.receive()).decode().split(":"))
        streams[seat, table] = stream
        if len(streams) == 4 * tables:
            all_connected.set()

    def register(server: grpc.aio.Server, play_handler: object) -> None:
        handler = grpc.method_handlers_generic_handler(
            "bench.Floor",
            {"Play": grpc.stream_stream_rpc_method_handler(play_handler.Play)},  # type: ignore[attr-defined]
        )
        server.add_generic_rpc_handlers((handler,))

    counts = [0] * tables
    here = str(Path(__file__).resolve())
    async with trio.open_nursery() as nursery:

        def on_stream(stream: BotStream) -> None:
            nursery.start_soon(introduce, stream)

        async with grpc_server("127.0.0.1:0", on_stream, register) as endpoint:
            address = f"127.0.0.1:{endpoint.port}"
            clients = [
                await trio.lowlevel.open_process(
                    [sys.executable, here, "--floor-client", address, str(seat), str(tables)]
                )
                for seat in range(4)
            ]
            meter = CpuMeter(children={f"client-{seat}": c.pid for seat, c in enumerate(clients)})
            progress(f"transport floor: referee bridge on {address}, {tables} tables, 4 client processes ...")
            try:
                with trio.fail_after(60):
                    await all_connected.wait()

                async def table(index: int) -> None:
                    seat = 0
                    while True:
                        stream = streams[seat, index]
                        stream.send(b"question")
                        await stream.inbox.receive()
                        counts[index] += 1
                        seat = (seat + 1) % 4

                async with trio.open_nursery() as tables_nursery:
                    for index in range(tables):
                        tables_nursery.start_soon(table, index)
                    await trio.sleep(min(1.0, seconds / 4))  # warm up
                    meter.start()
                    before, started = sum(counts), time.perf_counter()
                    await trio.sleep(seconds)
                    done, wall = sum(counts) - before, time.perf_counter() - started
                    meter.report("floor", done, "decision")
                    tables_nursery.cancel_scope.cancel()
                for stream in streams.values():
                    stream.close(grpc.StatusCode.OK, "")
            finally:
                for client in clients:
                    await _stop(client)
        nursery.cancel_scope.cancel()
    rate = done / wall
    progress(f"  {rate:.0f} decisions/s")
    return rate


# ------------------------------------------------------------------ main


def percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


async def benchmark(seconds: float) -> list[str]:
    baseline = await run_baseline(MAX_TABLES, seconds)
    floor = await run_floor(MAX_TABLES, seconds)
    with tempfile.TemporaryDirectory(prefix="oddtrick-bench-") as temp:
        folded = await referee_phases(Path(temp) / "folded", True, [1, MAX_TABLES], seconds)
        unfolded = await referee_phases(Path(temp) / "unfolded", False, [MAX_TABLES], seconds)
        raw = await referee_phases(Path(temp) / "raw", True, [MAX_TABLES], seconds, raw_bots=True)
    one, four, bare = folded[1], folded[MAX_TABLES], raw[MAX_TABLES]
    added = [s for record in four.records for s in record.added_latency_s]
    return [
        f"decisions_per_s_1_table: {one.rate:.0f}",
        f"decisions_per_s_4_tables: {four.rate:.0f}",
        f"baseline_roundtrips_per_s_4_streams: {baseline:.0f}",
        f"ratio_4_tables_vs_baseline: {four.rate / baseline:.2f}",
        f"referee_added_p99_ms: {percentile(added, 0.99) * 1000:.3f}",
        f"decisions_per_s_4_tables_unfolded: {unfolded[MAX_TABLES].rate:.0f}",
        f"floor_decisions_per_s_4_tables: {floor:.0f}",
        f"ratio_floor_vs_baseline: {floor / baseline:.2f}",
        f"ratio_4_tables_vs_floor: {four.rate / floor:.2f}",
        f"decisions_per_s_4_tables_raw_bots: {bare.rate:.0f}",
        f"ratio_raw_bots_vs_floor: {bare.rate / floor:.2f}",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Decisions per second through the referee (1 and 4 tables, four random-bot "
        "processes over loopback) next to bare grpc.aio ping-pong on 4 streams and to the "
        "referee's transport with no referee on it."
    )
    parser.add_argument(
        "--seconds", type=float, default=5.0, help="how long each measured phase lasts (default: 5)"
    )
    parser.add_argument("--baseline-server", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-client", nargs=3, metavar="ARG", help=argparse.SUPPRESS)
    parser.add_argument("--floor-client", nargs=3, metavar="ARG", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.baseline_server:
        baseline_server()
        return
    if args.floor_client:
        address, seat, tables = args.floor_client
        floor_client(address, int(seat), int(tables))
        return
    if args.baseline_client:
        address, streams, seconds = args.baseline_client
        baseline_client(address, int(streams), float(seconds))
        return
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    lines = trio.run(benchmark, args.seconds)
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
