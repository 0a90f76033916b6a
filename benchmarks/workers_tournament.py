"""Tournaments on workers, measured (``python benchmarks/workers.py --tournaments [--quick]``).

Five figures, each from real parts: a throw-away PostgreSQL server, ``oddtrick
worker`` processes, the submitting command, the sample heuristic bot against a
bot that plays randomly but deterministically (tests/seeded_random_bot.py):

* ``overhead``: what a leased set costs the queue (the lease, a beat every 2 s
  of its play, the record of its result with its logs, the check after), timed
  against PostgreSQL with a real set's result, in ms and as a share of the
  set's own play;
* ``throughput``: one tournament played by N workers of one table each, against
  one ``oddtrick tournament --tables N`` process, same bots and deals;
* ``lease rate``: jobs leased and finished per second by 4 and by 16 claimers
  (threads, one connection each) on one PostgreSQL;
* ``deaths``: a worker SIGKILLed mid-set, an idle worker beside it, with the
  default lease of sets (10 s): the time from the kill to the set leased
  elsewhere and to it recorded, and over all deaths the tables lost or
  counted twice.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from worker_support import Worker  # noqa: E402

from oddtrick.duplicate import deal_config  # noqa: E402
from oddtrick_referee.competitions.on_workers.distributed import tournament_jobs  # noqa: E402
from oddtrick_referee.competitions.on_workers.distributed_results import ResultCheck  # noqa: E402
from oddtrick_referee.competitions.tournaments.tournament_plan import TournamentSettings, parse_entry  # noqa: E402
from oddtrick_referee.storage.run_store import RunStore  # noqa: E402
from oddtrick_referee.storage.work_queue import open_queue  # noqa: E402
from oddtrick_referee.workers.table_session import close_session  # noqa: E402
from oddtrick_referee.workers.tournament_job import play_job  # noqa: E402

HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = ROOT / "tests" / "seeded_random_bot.py"
BOTS = ("--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}")


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def settings(name: str, deals: int, set_size: int) -> TournamentSettings:
    entries = (parse_entry(f"heuristic={HEURISTIC}"), parse_entry(f"seeded={SEEDED}"))
    return TournamentSettings(
        entries=entries,
        config=deal_config("contract"),
        deals=deals,
        set_size=set_size,
        seed="bench",
        name=name,
    )


def tournament_words(name: str, deals: int, set_size: int) -> list[str]:
    words = ["tournament", "--game", "contract", "--deals", str(deals), "--set-size", str(set_size)]
    return [*words, "--seed", "bench", "--name", name, *BOTS]


def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=3600
    )
    if done.returncode != 0:
        raise SystemExit(f"oddtrick {' '.join(words[:2])} failed: {done.stderr[-2000:]}")
    return done


def overhead(url: str, set_size: int, repeats: int) -> None:
    """The queue's cost per set against a real set's play time and result."""
    warm_up, job = tournament_jobs(settings("overhead", 2 * set_size, set_size), "bench")
    play_job(warm_up, 2)  # the worker's local referee and bots start: later sets of the run reuse them
    started = time.perf_counter()
    result = play_job(job, 2)
    play_s = time.perf_counter() - started
    close_session()
    queue = open_queue(url)
    store = RunStore(queue)
    beats = max(1, round(play_s / 2.0))
    spent: list[float] = []
    for n in range(repeats):
        store.create(f"o-{n}", "tournament", {"n": n}, "s", "tournament-set", [job.to_dict()])
        began = time.perf_counter()
        lease = queue.lease("bench", ["tournament-set"], (9, 9), {"tournament-set": 10.0})
        assert lease is not None
        for _ in range(beats):
            queue.beat(lease.id, lease.token, 10.0)
            queue.seen("bench", (9, 9), ["tournament-set"], lease.id)
        assert queue.finish(lease.id, lease.token, result, "bench")
        store.get(f"o-{n}")  # the after-step's look at the run
        spent.append(time.perf_counter() - began)
    queue.close()
    cost = statistics.median(spent)
    print(f"set_play_s ({set_size} deals, both plays, in a running session): {play_s:.2f}")
    print(f"set_result_kib (tables and gzip logs): {len(str(result)) / 1024:.0f}")
    print(
        f"coordination_ms_per_set (lease + {beats} beats + record + check, p50 of {repeats}): "
        f"{1000 * cost:.1f}"
    )
    print(f"coordination_share_of_play: {100 * cost / play_s:.2f}%")


def throughput(url: str, count: int, deals: int, set_size: int) -> None:
    """One run on ``count`` one-table workers against one process with ``count`` tables."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        began = time.perf_counter()
        oddtrick(*tournament_words("alone", deals, set_size), "--tables", str(count), "--data-dir", folder)
        alone_s = time.perf_counter() - began
    started = [Worker(url, f"t-{n}", "--tables", "1") for n in range(count)]
    for worker in started:
        worker.wait_for("waiting for")
    began = time.perf_counter()
    oddtrick(*tournament_words("spread", deals, set_size), "--database", url, "--workers")
    spread_s = time.perf_counter() - began
    for worker in started:
        worker.stop()
    sets = -(-deals // set_size)
    print(f"one_process_{count}_tables_s ({sets} sets of {set_size} deals): {alone_s:.1f}")
    print(f"{count}_workers_1_table_s: {spread_s:.1f}")
    print(f"throughput_workers_over_one_process: {alone_s / spread_s:.2f}x")


def lease_rate(url: str, claimers: int, jobs: int) -> None:
    """Leases (each finished at once) per second with ``claimers`` connections at it."""
    queue = open_queue(url)
    queue.submit("tournament-set", [{"n": n, "run": f"rate-{claimers}"} for n in range(jobs)])
    queues = [open_queue(url) for _ in range(claimers)]
    counts = [0] * claimers

    def claim(index: int) -> None:
        mine = queues[index]
        while (lease := mine.lease(f"c{index}", ["tournament-set"], (9, 9), 30.0)) is not None:
            mine.finish(lease.id, lease.token, {"ok": True}, f"c{index}")
            counts[index] += 1

    threads = [threading.Thread(target=claim, args=(index,)) for index in range(claimers)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    for other in [*queues, queue]:
        other.close()
    print(f"lease_rate_{claimers}_claimers (lease + finish each): {sum(counts) / elapsed:.0f} leases/s")


def first_to_lease(pair: list[Worker]) -> tuple[Worker, int]:
    """The worker of the two that leased the set, and the set's job id."""
    end = time.monotonic() + 120
    while time.monotonic() < end:
        for worker in pair:
            for line in worker.lines:
                if found := re.search(r"leased job (\d+) ", line):
                    return worker, int(found.group(1))
        time.sleep(0.02)
    raise SystemExit("neither worker leased the set within 120 s")


def deaths(url: str, count: int, set_size: int) -> None:
    """``count`` workers killed mid-set, each beside an idle one, at the default lease."""
    queue = open_queue(url)
    store = RunStore(queue)
    to_lease: list[float] = []
    to_done: list[float] = []
    for n in range(count):
        name = f"death-{n}"
        pair = [Worker(url, f"w{n}-{side}") for side in "ab"]
        for worker in pair:
            worker.wait_for("waiting for")
        oddtrick(*tournament_words(name, set_size, set_size), "--database", url, "--workers", "--detach")
        victim, job_id = first_to_lease(pair)
        standby = pair[1 - pair.index(victim)]  # idle beside it: the run has one set
        time.sleep(1.0)  # the victim's bots are playing
        victim.process.kill()
        killed = time.perf_counter()
        victim.process.wait()
        standby.wait_for(rf"leased job {job_id} ", deadline=120)
        to_lease.append(time.perf_counter() - killed)
        standby.wait_for(rf"job {job_id} done in", deadline=120)
        to_done.append(time.perf_counter() - killed)
        standby.stop()
        progress(f"death {n + 1}/{count}: leased elsewhere after {to_lease[-1]:.1f} s")
    check = ResultCheck()  # the tables each done set counts for, read off its logs as the standings do
    runs = [(n, store.get(f"death-{n}")) for n in range(count)]
    tables = [
        (n, t) for n, run in runs if run is not None for job in check.jobs(store, run) for t in job.tables
    ]
    keys = [(n, *t.key) for n, t in tables]
    expected = 2 * count
    deals_played = sum(len(t.deals) for _, t in tables)
    queue.close()
    print(
        f"death_to_leased_elsewhere_s (p50, max of {count}): "
        f"{statistics.median(to_lease):.1f}, {max(to_lease):.1f}"
    )
    print(f"death_to_recorded_s (p50, max): {statistics.median(to_done):.1f}, {max(to_done):.1f}")
    print(f"tables_lost: {expected - len(set(keys))}")
    print(f"tables_counted_twice: {len(keys) - len(set(keys))}")
    print(f"deals_recorded: {deals_played} of {expected * set_size}")


def main(args: argparse.Namespace) -> None:
    from postgres_support import fresh_database, postgres_server

    quick, only = args.quick, set(args.only or PARTS)
    with postgres_server() as server:
        if "overhead" in only:
            progress("overhead per set…")
            overhead(fresh_database(server, "b_overhead"), 4 if quick else 10, 5 if quick else 20)
        if "throughput" in only:
            progress("throughput: 2 workers of 1 table against 1 process of 2 tables (2 cores here)…")
            throughput(fresh_database(server, "b_throughput"), 2, 8 if quick else 80, 2 if quick else 10)
        if "rate" in only:
            for claimers in (4, 16):
                progress(f"lease rate, {claimers} claimers…")
                lease_rate(fresh_database(server, f"b_rate_{claimers}"), claimers, 400 if quick else 4000)
        if "deaths" in only:
            progress("worker deaths…")
            deaths(fresh_database(server, "b_deaths"), 3 if quick else 20, 4)


PARTS = ("overhead", "throughput", "rate", "deaths")


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="small runs: minutes, not a quarter hour")
    parser.add_argument(
        "--only", action="append", choices=PARTS, default=None, help="measure only this (may be repeated)"
    )
