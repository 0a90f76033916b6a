"""The referee over a long run: its memory and its latency tail, minute by minute.

Run ``python benchmarks/soak.py --minutes 10`` (``--tables``, ``--deals``,
``--clients``). As in ``benchmarks/capacity.py``, the referee runs in its
own process and the bots are light raw gRPC clients (``raw_bots.py``), two
per table with two streams each (1,000 sessions at the default 250 tables);
here they stay seated (``--stay``) and every table plays one Contract Whist
match of ``--deals`` deals after another until the time is up, so matches
start and end, and their memory comes and goes, all through the run.

It prints ``name: value`` lines on stdout, progress on stderr. For each
minute ``mN``: the referee's RSS (sampled every second from /proc; the
minute's lowest and highest), the matches and decisions that ended in it,
the added latency (from a bot's answer reaching its table to that table's
next request leaving, ``MatchRecord.added_latency_s``) at p50, p99, p99.9
and its max, the collector's pauses by generation (wall and CPU
milliseconds: ``benchmarks/gc_pauses.py``) and the load average. Then the
whole run: ``rss_flat_within`` (highest over lowest RSS after the first
minute, less 1: the goal is 0.20), the latency percentiles over every
decision, faults, and ``full_collection_ms`` with ``garbage_found``: one
full collection made at the end with every session still connected, what
it costs and how much garbage in cycles the whole run left for it.

Measured on a 2-CPU machine shared with other work, 250 tables (1,000
sessions), 2-deal matches, 10.25 minutes, load average (1 minute) 12 to 21:
622,821 decisions in 5,611 matches, 0 faults; RSS 98–155 MB in the first
minute (the tables filling up), then 145–161 MB for nine minutes
(``rss_flat_within`` 0.111, goal 0.20); added latency p50 0.19, p99 7.1,
p99.9 31, max 267 ms (per minute: p99 6.1–11.6, p99.9 19–56, max
74–267 ms). The collector made only young steps while matches were in
progress, 3,673 of them, the longest 20.5 ms of CPU; by the wall clock
the longest took 611 ms for 6 ms of CPU, the referee waiting for a CPU.
Its two full collections came once no match was in progress, the longer
137 ms of CPU (744 ms wall) for 272 objects of garbage: what ten minutes
of play left in cycles. A full collection at the end, every session still
connected, walks 121,607 objects in 95 ms of CPU (333 ms wall).

The referee before it freed finished matches by reference counting and
collected in timed steps, the same soak right after for 6 minutes (load
13 to 26): RSS 93–212 MB in the first minute, then 201–427 MB, still
climbing (``rss_flat_within`` 1.12); added latency p99 8.2, p99.9 44, max
469 ms; 61 young collections of up to 53 ms of CPU (692 ms wall) and three
of the middle generation during play, of 586, 1,212 and 1,356 ms of CPU
(the longest 9.2 s by the wall clock); the full collection at the end
walked 528,785 objects in 1,540 ms of CPU and found 412,065 of them
garbage: every finished match, kept by its cycles.

The added latency starts when the table takes the bot's answer, so a pause
while the answer waits in the table's channel is not in it: the collector's
wall times above are the longest stops a bot could see.
"""

from __future__ import annotations

import argparse
import array
import gc
import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from capacity import (
    kill_left_running,
    percentile,
    print_figures,
    proc_status,
    progress,
    table_names,
    token_of,
)
from gc_pauses import GcPauses

HERE = Path(__file__).resolve()


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


# ------------------------------------------------------------------ the referee process


def referee_main(data_dir: str, tables: int, deals: int, secret: str, seconds: float) -> None:
    import trio

    from oddtrick.rules import GameConfig, MatchFormat, Seat
    from oddtrick_referee.play.table import TableRules
    from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

    names = table_names(tables)
    tokens = {name: token_of(name, secret) for name in names}
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=deals)
    rules = TableRules(deadline_s=30.0, grace_s=30.0)
    pauses = GcPauses()
    minutes: dict[int, dict[str, Any]] = {}

    async def main() -> None:
        settings = RefereeSettings(port=0, data_dir=Path(data_dir), tokens=tokens)
        async with running_referee(settings) as referee:
            pauses.playing = lambda: bool(referee.live)
            print(f"listening {referee.address}", flush=True)
            await referee.lobby.wait_for(dict.fromkeys(names, 2), config.game)
            print("playing", flush=True)
            started = time.perf_counter()
            pauses.install()

            def minute_of(now: float) -> dict[str, Any]:
                return minutes.setdefault(
                    int((now - started) // 60),
                    # Four bytes a decision (a list of floats takes 32): the benchmark's own
                    # figures must not grow the RSS it reports.
                    {"matches": 0, "decisions": 0, "faults": 0, "added": array.array("f"), "load": ""},
                )

            async def table(index: int) -> None:
                ns, ew = f"t{index}-ns", f"t{index}-ew"
                seating = {Seat.NORTH: ns, Seat.SOUTH: ns, Seat.EAST: ew, Seat.WEST: ew}
                spec = MatchSpec(config, seating, rules, table_id=f"soak-{index}")
                while time.perf_counter() - started < seconds:
                    record = await referee.play_match(spec)
                    minute = minute_of(time.perf_counter())
                    minute["matches"] += 1
                    minute["decisions"] += sum(seat.decisions for seat in record.seats.values())
                    minute["faults"] += sum(sum(seat.faults.values()) for seat in record.seats.values())
                    minute["added"].extend(s * 1000 for s in record.added_latency_s)

            async def note_load() -> None:
                while True:
                    minute_of(time.perf_counter())["load"] = load_average()
                    await trio.sleep(5)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(note_load)
                async with trio.open_nursery() as tables_nursery:
                    for index in range(tables):
                        tables_nursery.start_soon(table, index)
                nursery.cancel_scope.cancel()
            wall = time.perf_counter() - started
            pauses.remove()
            print("played", flush=True)  # the RSS samples end here, before the figures are worked out
            tracked = len(gc.get_objects())
            cpu, clock = time.thread_time(), time.perf_counter()
            garbage = gc.collect()
            full_cpu, full_wall = time.thread_time() - cpu, time.perf_counter() - clock
            every = sorted(value for minute in minutes.values() for value in minute["added"])
            report: dict[str, Any] = {
                "wall_s": wall,
                "minutes": {
                    str(number): {
                        "matches": minute["matches"],
                        "decisions": minute["decisions"],
                        "faults": minute["faults"],
                        "added_ms": [percentile(sorted(minute["added"]), f) for f in (0.5, 0.99, 0.999, 1.0)],
                        "gc": pauses.summary(started + 60 * number, started + 60 * (number + 1)),
                        "load": minute["load"],
                    }
                    for number, minute in sorted(minutes.items())
                },
                "added_ms": [percentile(every, f) for f in (0.5, 0.99, 0.999, 1.0)],
                "decisions": len(every),
                "faults": sum(minute["faults"] for minute in minutes.values()),
                "gc": pauses.summary(),
                "gc_between_matches": pauses.between_matches(),
                "tracked_objects_at_end": tracked,
                "frozen_objects": gc.get_freeze_count(),
                "full_collection_wall_ms": full_wall * 1000,
                "full_collection_cpu_ms": full_cpu * 1000,
                "garbage_found": garbage,
            }
            print(json.dumps(report), flush=True)
            referee.finish()

    trio.run(main)


# ------------------------------------------------------------------ measuring from outside


class RssSampler(threading.Thread):
    """The referee's RSS every second, with the time it was read."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.samples: list[tuple[float, float]] = []
        self.started = time.perf_counter()
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            try:
                _, rss = proc_status(self.pid)
            except OSError:
                return
            self.samples.append((time.perf_counter() - self.started, rss))


def gc_text(summary: dict[str, Any]) -> str:
    return " ".join(
        f"{generation}:{figures['collections']}x max {figures['max_wall_ms']:.1f}"
        f"/{figures['max_cpu_ms']:.1f}ms"
        for generation, figures in summary.items()
        if figures["collections"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long to play (default 10)")
    parser.add_argument("--tables", type=int, default=250)
    parser.add_argument("--deals", type=int, default=2, help="deals per match (default 2)")
    parser.add_argument("--clients", type=int, default=4, help="bot processes (default 4)")
    parser.add_argument(
        "--referee", nargs=5, metavar=("DATA", "TABLES", "DEALS", "SECRET", "SECONDS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.referee:
        data, tables, deals, secret, seconds = args.referee
        referee_main(data, int(tables), int(deals), secret, float(seconds))
        return
    secret = secrets.token_hex(8)
    names = table_names(args.tables)
    seconds = args.minutes * 60
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="oddtrick-soak-") as data_dir:
        command = [sys.executable, str(HERE), "--referee", data_dir, str(args.tables), str(args.deals)]
        referee = subprocess.Popen(
            [*command, secret, str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        clients: list[subprocess.Popen[str]] = []
        try:
            assert referee.stdout is not None
            address = referee.stdout.readline().split()[1]
            progress(f"referee (pid {referee.pid}) on {address}; {2 * len(names)} sessions connecting ...")
            for index in range(args.clients):
                specs = [f"{name}:{token_of(name, secret)}:2" for name in names[index :: args.clients]]
                clients.append(
                    subprocess.Popen(
                        [sys.executable, str(HERE.parent / "raw_bots.py"), address, "--stay", *specs],
                        stdout=subprocess.PIPE,
                        text=True,
                    )
                )
            line = referee.stdout.readline().strip()
            assert line == "playing", line
            sampler = RssSampler(referee.pid)
            sampler.start()
            progress(f"all connected; {args.tables} tables playing for {args.minutes:g} minutes ...")
            line = referee.stdout.readline().strip()
            sampler.stop.set()
            assert line == "played", line
            report = json.loads(referee.stdout.readline())
            outcomes = [json.loads(client.communicate(timeout=120)[0]) for client in clients]
            referee.wait(timeout=60)
        finally:
            kill_left_running((referee, *clients))
    failures = [failure for outcome in outcomes for failure in outcome["failures"]]
    lines: dict[str, Any] = {
        "sessions": 2 * len(names),
        "tables": args.tables,
        "deals_per_match": args.deals,
        "minutes_played": round(report["wall_s"] / 60, 2),
        "load_average_before": load_before,
    }
    for number, minute in report["minutes"].items():
        rss = [value for at, value in sampler.samples if int(at // 60) == int(number)]
        p50, p99, p999, worst = minute["added_ms"]
        lines[f"m{number}"] = (
            f"rss {min(rss, default=0):.0f}-{max(rss, default=0):.0f} MB, {minute['matches']} matches, "
            f"{minute['decisions']} decisions, {minute['faults']} faults, added p50 {p50:.2f} "
            f"p99 {p99:.2f} p99.9 {p999:.2f} max {worst:.1f} ms; gc {gc_text(minute['gc'])}; "
            f"load {minute['load']}"
        )
    settled = [value for at, value in sampler.samples if at >= 60] or [value for _, value in sampler.samples]
    p50, p99, p999, worst = report["added_ms"]
    lines.update(
        {
            "rss_mb_first_minute_max": round(max((v for at, v in sampler.samples if at < 60), default=0), 1),
            "rss_mb_after_first_minute": f"{min(settled):.1f}-{max(settled):.1f}",
            "rss_flat_within": round(max(settled) / min(settled) - 1, 3),
            "decisions": report["decisions"],
            "faults": report["faults"],
            "client_failures": len(failures),
            "referee_added_p50_ms": round(p50, 3),
            "referee_added_p99_ms": round(p99, 3),
            "referee_added_p99.9_ms": round(p999, 3),
            "referee_added_max_ms": round(worst, 3),
            "referee_gc": gc_text(report["gc"]) + " (wall/CPU)",
            "referee_gc_between_matches": report["gc_between_matches"],
            "tracked_objects_at_end": report["tracked_objects_at_end"],
            "frozen_objects": report["frozen_objects"],
            "full_collection_ms": (
                f"{report['full_collection_wall_ms']:.1f} wall, {report['full_collection_cpu_ms']:.1f} CPU"
            ),
            "garbage_found": report["garbage_found"],
            "load_average_after": load_average(),
        }
    )
    print_figures(lines, failures)


if __name__ == "__main__":
    main()
