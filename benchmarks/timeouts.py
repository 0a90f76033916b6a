"""Time-outs the bots did not cause, at 250 concurrent tables: how many, and why.

Run ``python benchmarks/timeouts.py --minutes 3 --deadline-ms 250``
(``--tables``, ``--deals``, ``--clients``). As in ``benchmarks/soak.py``,
the referee runs in its own process and the bots are light raw gRPC clients
(``raw_bots.py``), several hundred sessions per process, two per table with
two streams each (1,000 sessions at the default 250 tables), seated for
match after match of ``--deals`` Contract Whist deals until the time is up,
under a decision deadline of ``--deadline-ms``. The bots answer at once and
report their own time (``Decision.bot_think_ms``, ``raw_bots.py
--report-think``); every time-out the referee makes of an answered request
is counted by its bot with that time. A time-out whose bot's own time was
under half the deadline (``--well-under``) is one the bot did not cause: the
time went to transport and scheduling. ``--think-ms`` makes the bots wait
before answering, as bots that think (without the CPU); at 0 they answer at
once, the heaviest load a referee can be given.

It prints ``name: value`` lines on stdout, progress on stderr:

* ``decisions``, ``timeouts`` (the referee's count), ``timeouts_not_thinking``
  (answered, own time under half the deadline), the rate of those per
  decision with its 95% Clopper-Pearson interval, and the goal (fewer than 1
  in 10,000);
* where the time goes, the figures that explain a time-out: the referee's
  request-to-answer time (``answer_ms``), the bots' own time (``think_ms``)
  and the rest (``lag_ms``) at p50/p99/p99.9/max, from every seat's
  decision times; the referee's trio loop lateness (a task that sleeps
  10 ms and records how late it wakes: every table waits as long) and the
  bots' asyncio loop lateness, likewise; the referee's added latency (an
  answer's arrival at its table to that table's next request); the
  referee's main thread's time ready to run but without a CPU
  (``/proc/…/schedstat``) and its share of a CPU; the referee's threads
  (gRPC's included); the machine's load.

Measured on a 2-CPU machine shared with other work (load average 10 to 12
throughout), 250 tables (1,000 sessions in 4 bot processes), 2-deal
matches, bots answering at once, 3 minutes a run:

==========  ==========  ==============  ======================================
deadline    decisions   time-outs       rate, 95% Clopper-Pearson interval
==========  ==========  ==============  ======================================
1000 ms     324,240     0               0 [0, 1.1e-5]: the goal is met
500 ms      310,692     88              2.8e-4 [2.3e-4, 3.5e-4]: not met
500 ms      185,248 †   0               0 [0, 2.0e-5]: met
250 ms      56,004 *    159             2.8e-3 [2.4e-3, 3.3e-3]: not met
==========  ==========  ==============  ======================================

(* a 30-second run; † a 2-minute run a few minutes later, load 7 to 12: the
lag's max was 566 ms there against 608 ms, so 500 ms is at the edge, met
or missed by how busy the machine's other work keeps it.) Every time-out was of a request the bot had answered
in 0 ms of its own time: none was the bot's thinking. Where the time went
(the 500 ms run; the others alike): the referee's request-to-answer time
p50 59, p99 263, p99.9 415, max 608 ms against the bots' own 0 / 0 / 1 /
19 ms, so the lag is all of it; the referee's trio loop woke 23 / 183 /
299 / 485 ms late (p50/p99/p99.9/max) and every table waits that long; the
bots' asyncio loops only 1 / 11 / 49 / 327 ms; the referee's own added
latency (answer taken to next request sent) 0 / 4 / 15 / 170 ms. The
referee's main thread was on a CPU 44% of the time and waited, ready, for
one 0.23 ms per decision (38% of the time at 1,663 decisions a second); the
process used 0.73 of a CPU with 11 threads (gRPC's included, flat). By
thread (the second 500 ms run, shares of the wall time): the trio main
thread ran 0.41 and waited ready 0.41; the two other Python threads (the
gRPC asyncio loop) ran 0.21 and waited 0.45; gRPC's four event engine
threads ran 0.05 and waited 0.26. So the
tail is the CPU scheduler's: bots that answer at once make the referee
CPU-bound (1,700 decisions a second is all this machine gives, whatever
the deadline), the machine's other work takes the CPU from it, and while
its thread waits every one of the 250 tables waits. Giving the bots a
lower priority (``--nice-bots 10``, 30 s at 250 ms) raised the throughput
to 1,925 a second but left the loop's p99 at 151 ms and the rate at
3.6e-3; bots that think 400 ms without the CPU (``--think-ms 400``, 552
decisions a second, 30 s at 1 s) still saw a lag p99 of 294 ms and a max
of 608 ms, from the other work on the machine.

The bar this machine defends: at 250 tables, a deadline of 1 s (or a clock
whose per-decision share is that much) keeps the time-outs that the bots
did not cause under 1 in 10,000 decisions, proven by the interval; a
deadline of 500 ms gives about 3 in 10,000, and 250 ms about 3 in 1,000.
Tighter deadlines at this many tables need more cores than two shared ones,
or the tables split over several referee processes.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from capacity import (
    CLK_TCK,
    Sampler,
    cpu_seconds,
    kill_left_running,
    machine_cpu,
    main_thread_cpu,
    print_figures,
    proc_status,
    progress,
    runqueue_wait,
    table_names,
    token_of,
)
from soak import load_average

from oddtrick._timing import DecisionTimes, Histogram

HERE = Path(__file__).resolve()
GOAL = 1e-4
"""Fewer than 1 time-out not caused by thinking in 10,000 decisions."""
PROBE_S = 0.01


# ------------------------------------------------------------------ the referee process


def referee_main(
    data_dir: str, tables: int, deals: int, secret: str, seconds: float, deadline_ms: int
) -> None:
    import trio

    from oddtrick.rules import GameConfig, MatchFormat, Seat
    from oddtrick_referee.play.table import Fault, TableRules
    from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

    names = table_names(tables)
    tokens = {name: token_of(name, secret) for name in names}
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=deals)
    rules = TableRules(deadline_s=deadline_ms / 1000, grace_s=30.0)
    times = DecisionTimes()
    loop_lag = Histogram()
    added = Histogram()
    counts = {"matches": 0, "decisions": 0, "timeouts": 0, "other_faults": 0}

    async def main() -> None:
        settings = RefereeSettings(port=0, data_dir=Path(data_dir), tokens=tokens)
        async with running_referee(settings) as referee:
            print(f"listening {referee.address}", flush=True)
            await referee.lobby.wait_for(dict.fromkeys(names, 2), config.game)
            print("playing", flush=True)
            started = time.perf_counter()

            async def table(index: int) -> None:
                ns, ew = f"t{index}-ns", f"t{index}-ew"
                seating = {Seat.NORTH: ns, Seat.SOUTH: ns, Seat.EAST: ew, Seat.WEST: ew}
                spec = MatchSpec(config, seating, rules, table_id=f"timeouts-{index}")
                while time.perf_counter() - started < seconds:
                    record = await referee.play_match(spec)
                    counts["matches"] += 1
                    for seat in record.seats.values():
                        timeouts = seat.faults.get(Fault.TIMEOUT, 0)
                        counts["decisions"] += seat.decisions + sum(seat.faults.values())
                        counts["timeouts"] += timeouts
                        counts["other_faults"] += sum(seat.faults.values()) - timeouts
                        times.merge(seat.times)
                    for value in record.added_latency_s:
                        added.add(round(value * 1000))

            async def probe() -> None:
                while True:
                    asked = trio.current_time()
                    await trio.sleep(PROBE_S)
                    loop_lag.add(round((trio.current_time() - asked - PROBE_S) * 1000))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(probe)
                async with trio.open_nursery() as tables_nursery:
                    for index in range(tables):
                        tables_nursery.start_soon(table, index)
                nursery.cancel_scope.cancel()
            wall = time.perf_counter() - started
            print("played", flush=True)
            report = {
                "wall_s": wall,
                **counts,
                "times": times.to_dict(),
                "loop_lag_ms": loop_lag.to_dict(),
                "added_ms": added.to_dict(),
            }
            print(json.dumps(report), flush=True)
            referee.finish()

    trio.run(main)


# ------------------------------------------------------------------ the referee's threads


def thread_times(pid: int) -> dict[int, tuple[str, float, float]]:
    """Every thread of the process: its name, CPU seconds, and seconds ready to run but
    waiting for a CPU (``schedstat``). Threads that end meanwhile are left out."""
    threads: dict[int, tuple[str, float, float]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            wait = int((task / "schedstat").read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            continue
        if int(task.name) == pid:
            name = "trio main"  # every table runs here
        threads[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK, wait)
    return threads


def thread_lines(
    before: dict[int, tuple[str, float, float]], after: dict[int, tuple[str, float, float]], wall: float
) -> str:
    """Per thread name over the play: its share of a CPU and of the time it waited ready."""
    by_name: dict[str, list[float]] = {}
    for tid, (name, cpu, wait) in after.items():
        _, cpu_before, wait_before = before.get(tid, (name, 0.0, 0.0))
        figures = by_name.setdefault(name, [0.0, 0.0, 0.0])
        figures[0] += 1
        figures[1] += cpu - cpu_before
        figures[2] += wait - wait_before
    ranked = sorted(by_name.items(), key=lambda item: -item[1][1])
    return "; ".join(
        f"{name} x{count:.0f}: cpu {cpu / wall:.2f}, waited {wait / wall:.2f}"
        for name, (count, cpu, wait) in ranked
        if cpu / wall >= 0.005 or wait / wall >= 0.005
    )


# ------------------------------------------------------------------ figures


def binomial_cdf(k: int, trials: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(trials, p), summed in logs (k is small here)."""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 0.0 if k < trials else 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    total = 0.0
    for i in range(k + 1):
        log_choose = math.lgamma(trials + 1) - math.lgamma(i + 1) - math.lgamma(trials - i + 1)
        total += math.exp(log_choose + i * log_p + (trials - i) * log_q)
    return min(1.0, total)


def _bisect(increasing: Any, target: float) -> float:
    """The p in [0, 1] at which ``increasing(p)`` reaches ``target``."""
    low, high = 0.0, 1.0
    for _ in range(80):
        middle = (low + high) / 2
        if increasing(middle) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def clopper_pearson(events: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a rate: no statistics package needed, and
    exact at 0 events, where a normal interval says nothing."""
    if trials == 0:
        return 0.0, 1.0
    tail = (1 - confidence) / 2
    lower = 0.0 if events == 0 else _bisect(lambda p: 1 - binomial_cdf(events - 1, trials, p), tail)
    upper = 1.0 if events == trials else _bisect(lambda p: 1 - binomial_cdf(events, trials, p), 1 - tail)
    return lower, upper


def quantiles(histogram: Histogram) -> str:
    figures = [histogram.quantile(f) for f in (0.5, 0.99, 0.999, 1.0)]
    return " / ".join("n/a" if value is None else str(value) for value in figures) + " ms (p50/p99/p99.9/max)"


def _verdict(events: int, trials: int, upper: float) -> str:
    if upper < GOAL:
        return "met (the interval's top is under it)"
    if trials and events / trials < GOAL:
        return "met at the point estimate, not proven: too few decisions for the interval"
    return "NOT met"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="how long to play (default 3)")
    parser.add_argument("--deadline-ms", type=int, default=250, help="decision deadline (default 250 ms)")
    parser.add_argument("--tables", type=int, default=250)
    parser.add_argument("--deals", type=int, default=2, help="deals per match (default 2)")
    parser.add_argument("--clients", type=int, default=4, help="bot processes (default 4)")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=0.0,
        help="each bot waits this long before answering, as a bot that thinks without using the CPU "
        "(default 0: at once, the heaviest load)",
    )
    parser.add_argument(
        "--well-under",
        type=float,
        default=0.5,
        help="a time-out is not the bot's doing when its own time was under this share of the "
        "deadline (default 0.5)",
    )
    parser.add_argument(
        "--nice-bots",
        type=int,
        default=0,
        metavar="N",
        help="run the bot processes at this niceness, below the referee (default 0: the same): "
        "whether the referee's lateness is the CPU scheduler's",
    )
    parser.add_argument("--referee", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.referee:
        data, tables, deals, secret, seconds, deadline = args.referee
        referee_main(data, int(tables), int(deals), secret, float(seconds), int(deadline))
        return
    secret = secrets.token_hex(8)
    names = table_names(args.tables)
    seconds = args.minutes * 60
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="oddtrick-timeouts-") as data_dir:
        command = [sys.executable, str(HERE), "--referee", data_dir, str(args.tables), str(args.deals)]
        referee = subprocess.Popen(
            [*command, secret, str(seconds), str(args.deadline_ms)], stdout=subprocess.PIPE, text=True
        )
        clients: list[subprocess.Popen[str]] = []
        try:
            assert referee.stdout is not None
            address = referee.stdout.readline().split()[1]
            sampler = Sampler(referee.pid)
            sampler.start()
            progress(f"referee (pid {referee.pid}) on {address}; {2 * len(names)} sessions connecting ...")
            for index in range(args.clients):
                specs = [f"{name}:{token_of(name, secret)}:2" for name in names[index :: args.clients]]
                clients.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE.parent / "raw_bots.py"),
                            address,
                            f"--think-ms={args.think_ms}",
                            "--stay",
                            "--report-think",
                            *specs,
                        ],
                        stdout=subprocess.PIPE,
                        text=True,
                        preexec_fn=(lambda: os.nice(args.nice_bots)) if args.nice_bots else None,
                    )
                )
            line = referee.stdout.readline().strip()
            assert line == "playing", line
            cpu_start, machine_start = cpu_seconds(referee.pid), machine_cpu()
            trio_start, wait_start = main_thread_cpu(referee.pid), runqueue_wait(referee.pid)
            threads_start = thread_times(referee.pid)
            progress(
                f"all connected; {args.tables} tables playing for {args.minutes:g} minutes "
                f"at {args.deadline_ms} ms a decision ..."
            )
            line = referee.stdout.readline().strip()
            assert line == "played", line
            cpu = cpu_seconds(referee.pid) - cpu_start
            trio_cpu = main_thread_cpu(referee.pid) - trio_start
            trio_wait = runqueue_wait(referee.pid) - wait_start
            busy, total = (end - start for end, start in zip(machine_cpu(), machine_start, strict=True))
            threads_at_end, _ = proc_status(referee.pid)
            threads_end = thread_times(referee.pid)
            report = json.loads(referee.stdout.readline())
            sampler.stop.set()
            outcomes = [json.loads(client.communicate(timeout=120)[0]) for client in clients]
            referee.wait(timeout=60)
        finally:
            kill_left_running((referee, *clients))
    failures = [failure for outcome in outcomes for failure in outcome["failures"]]
    late = sorted(value for outcome in outcomes for value in outcome["late"])
    unanswered = sum(outcome["timed_out_unanswered"] for outcome in outcomes)
    bot_think, bot_loop = Histogram(), Histogram()
    for outcome in outcomes:
        bot_think.merge(Histogram.from_dict(outcome["think_ms"]))
        bot_loop.merge(Histogram.from_dict(outcome["loop_lag_ms"]))
    times = DecisionTimes.from_dict(report["times"])
    decisions = report["decisions"]
    well_under = args.deadline_ms * args.well_under
    not_thinking = sum(1 for value in late if value < well_under)
    low, high = clopper_pearson(not_thinking, decisions)
    wall = report["wall_s"]
    lines: dict[str, Any] = {
        "sessions": 2 * len(names),
        "tables": args.tables,
        "deadline_ms": args.deadline_ms,
        "bots_sleep_ms": args.think_ms,
        "bots_niceness": args.nice_bots,
        "minutes_played": round(wall / 60, 2),
        "matches": report["matches"],
        "decisions": decisions,
        "decisions_per_s": round(decisions / wall),
        "timeouts": report["timeouts"],
        "timeouts_answered_by_bot": len(late),
        "timeouts_unanswered": unanswered,
        "timeouts_not_thinking": f"{not_thinking} (bot's own time under {well_under:g} ms)",
        "timed_out_bots_own_ms": (", ".join(str(v) for v in late[:20]) + (" ..." if len(late) > 20 else ""))
        or "-",
        "rate_not_thinking": f"{not_thinking / decisions:.2e} [{low:.2e}, {high:.2e}] (95% Clopper-Pearson)"
        if decisions
        else "n/a",
        "goal_below": f"{GOAL:.0e}: {_verdict(not_thinking, decisions, high)}",
        "other_faults": report["other_faults"],
        "client_failures": len(failures),
        "answer_ms": quantiles(times.answer),
        "think_ms": quantiles(times.think),
        "lag_ms": quantiles(times.lag),
        "lag_over_half_deadline": sum(c for v, c in times.lag.counts.items() if v >= args.deadline_ms / 2),
        "referee_loop_lag_ms": quantiles(Histogram.from_dict(report["loop_lag_ms"])),
        "referee_added_ms": quantiles(Histogram.from_dict(report["added_ms"])),
        "bots_think_ms": quantiles(bot_think),
        "bots_loop_lag_ms": quantiles(bot_loop),
        "referee_cpu_share": round(cpu / wall, 2),
        "referee_trio_thread_busy": round(trio_cpu / wall, 2),
        "referee_trio_thread_runqueue_wait_ms_per_decision": round(trio_wait / max(1, decisions) * 1000, 3),
        "referee_threads_by_name": thread_lines(threads_start, threads_end, wall),
        "referee_threads_max": sampler.threads,
        "referee_threads_at_end": threads_at_end,
        "referee_rss_mb_max": round(sampler.rss, 1),
        "machine_busy": round(busy / total, 2) if total else 0.0,
        "machine_cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
    print_figures(lines, failures)


if __name__ == "__main__":
    main()
