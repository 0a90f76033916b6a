"""Tournaments and sequential tests played by ``oddtrick worker`` processes from PostgreSQL.

Everything is real: a throw-away PostgreSQL server (tests/postgres_support.py), the
submitting command and the workers as processes, each worker running its own local
referee and the bots as processes of their own, signals sent for real (SIGKILL,
SIGSTOP), the database stopped and started again. The bots are deterministic (the
heuristic bot and a random bot seeded by what it sees), so a run on workers must give
the standings a one-machine run of the same seed gives.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from bounds_support import MEMORY_CEILING, gzip_bomb, oddtrick_measured
from process_support import reap
from worker_support import DEADLINE, Worker, until

from oddtrick import __version__
from oddtrick_referee._exceptions import ResultRefused
from oddtrick_referee.competitions.on_workers.distributed import TOURNAMENT_SET
from oddtrick_referee.competitions.on_workers.distributed_results import ResultCheck, _log_text
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import MAX_ATTEMPTS, WorkQueue, open_queue, parse_version
from oddtrick_referee.workers.kinds import LEASE_AND_BEAT

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = Path(__file__).with_name("seeded_random_bot.py")
FAST = ("--lease", "2", "--beat", "0.5")
"""Short leases, so that a dead worker's set is leased again within seconds."""


def oddtrick(*words: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )


def tournament_words(name: str, deals: int, set_size: int, *bots: str) -> list[str]:
    entries = bots or (f"heuristic={HEURISTIC}", f"seeded={SEEDED}")
    words = ["tournament", "--game", "contract", "--deals", str(deals), "--set-size", str(set_size)]
    words += ["--seed", "same-seed", "--name", name, "--json"]
    for entry in entries:
        words += ["--bot", entry]
    return words


def submit(url: str, words: list[str]) -> subprocess.CompletedProcess[str]:
    """Submit a run without following it."""
    done = oddtrick(*words, "--database", url, "--workers", "--detach", timeout=DEADLINE)
    assert done.returncode == 0, done.stderr
    return done


def without_times(standings: dict[str, Any]) -> dict[str, Any]:
    """The standings but the decision times, which no two runs share, even on one machine."""
    entries = [{k: v for k, v in row.items() if k != "time"} for row in standings["entries"]]
    return {**standings, "entries": entries}


@pytest.fixture
def url(postgres_url: str, request: pytest.FixtureRequest) -> str:
    from postgres_support import fresh_database

    return fresh_database(postgres_url, re.sub(r"\W", "_", request.node.name)[:60].lower())


@pytest.fixture
def work(url: str) -> Iterator[WorkQueue]:
    queue = open_queue(url)
    yield queue
    queue.close()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.send_signal(signal.SIGCONT)
            reap(worker.process)


def run_jobs(work: WorkQueue, name: str) -> list[Any]:
    """The run's jobs, each done one with the tables its logs count for (as the standings read them)."""
    store = RunStore(work)
    run = store.get(name)
    return [] if run is None else ResultCheck().jobs(store, run)


def all_done(work: WorkQueue, name: str) -> bool:
    jobs = run_jobs(work, name)
    return bool(jobs) and all(job.status == "done" for job in jobs)


def status_json(url: str, name: str, *more: str) -> dict[str, Any]:
    shown = oddtrick("tournament", "status", "--database", url, name, "--json", *more, timeout=DEADLINE)
    assert shown.returncode == 0, shown.stderr
    report: dict[str, Any] = json.loads(shown.stdout)
    return report


def tables_played(work: WorkQueue, name: str) -> list[tuple[str, int, int]]:
    return sorted(table.key for job in run_jobs(work, name) for table in job.tables)


def test_workers_give_the_standings_one_machine_gives_and_logs_that_check(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    words = tournament_words("same", 8, 2)
    alone = oddtrick(*words, "--data-dir", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    workers += [Worker(url, "left", "--tables", "1"), Worker(url, "right")]
    followed = oddtrick(*words, "--database", url, "--workers")
    assert followed.returncode == 0, followed.stderr
    assert "4 duplicate sets submitted" in followed.stderr
    assert without_times(json.loads(followed.stdout)) == without_times(json.loads(alone.stdout))
    report = status_json(url, "same", "--logs", str(tmp_path / "logs"))
    assert report["sets"] == {"done": 4}
    assert without_times(report["standings"]) == without_times(json.loads(alone.stdout))
    assert {worker["name"] for worker in report["workers"]} == {"left", "right"}
    logs = sorted((tmp_path / "logs").glob("*.jsonl"))
    assert len(logs) == 8
    checked = oddtrick("check", *map(str, logs))
    assert checked.returncode == 0, checked.stdout
    again = oddtrick(*words, "--database", url, "--workers")  # the same command follows the same run
    assert again.returncode == 0, again.stderr
    assert "already submitted" in again.stderr
    assert len(run_jobs(work, "same")) == 4


def test_a_worker_s_gzip_bomb_of_a_log_is_one_line_of_error_in_bounded_memory(
    url: str, work: WorkQueue, tmp_path: Path
) -> None:
    submit(url, tournament_words("bombed", 2, 2))
    lease = work.lease("forger", [TOURNAMENT_SET], parse_version(__version__))  # the run's own version
    assert lease is not None
    bomb = base64.b64encode(gzip_bomb(b"", b"\0", 300)).decode("ascii")  # 300 MiB in 300 KiB
    assert len(bomb) < 1024 * 1024
    assert work.finish(
        lease.id, lease.token, {"tables": [], "logs": {"first": bomb, "second": bomb}}, "forger"
    )
    logs = tmp_path / "logs"
    done, peak = oddtrick_measured(
        tmp_path / "peak", "tournament", "status", "--database", url, "bombed", "--logs", str(logs)
    )
    # Scored from its logs, the forged result is refused before any of them is written out.
    assert done.returncode == 0, done.stderr
    assert "result of forger refused, not counted" in done.stdout
    assert list(logs.iterdir()) == []  # nothing half-written left behind
    assert peak < MEMORY_CEILING, f"checking the run's results held {peak / 2**20:.0f} MiB"


def test_a_gzip_bomb_in_a_results_log_is_refused_within_its_bound() -> None:
    bomb = base64.b64encode(gzip_bomb(b"", b"\0", 300)).decode("ascii")  # 300 MiB in 300 KiB
    tracemalloc.start()
    try:
        with pytest.raises(ResultRefused, match="cannot be unpacked"):
            _log_text({"first": bomb}, "first")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"refusing the bomb held {peak / 2**20:.0f} MiB"


def test_a_killed_worker_s_set_is_played_again_from_its_start_and_counted_once(
    url: str, work: WorkQueue, workers: list[Worker]
) -> None:
    submit(url, tournament_words("killed", 4, 2))
    doomed = Worker(url, "doomed", *FAST)
    workers.append(doomed)
    job_id = int(doomed.wait_for(r"leased job (\d+) ").group(1))
    reap(doomed.process)
    workers.append(Worker(url, "heir", *FAST))
    until("every set done", lambda: all_done(work, "killed"))
    jobs = {job.id: job for job in run_jobs(work, "killed")}
    assert (jobs[job_id].done_by, jobs[job_id].attempts) == ("heir", 2)
    assert tables_played(work, "killed") == [("heuristic|seeded", s, t) for s in (1, 2) for t in (0, 1)]
    assert status_json(url, "killed")["standings"]["entries"][0]["deals"] == 4


def test_an_idle_worker_beside_a_killed_one_leases_its_set_once_its_lease_expires(
    url: str, work: WorkQueue, workers: list[Worker]
) -> None:
    pair = [Worker(url, "left"), Worker(url, "right")]  # the sets' own lease: 10 s, a beat every 2 s
    workers += pair
    for worker in pair:
        worker.wait_for("waiting for")
    submit(url, tournament_words("beside", 2, 2))  # one set: both wake, one leases it
    end = time.monotonic() + DEADLINE
    while not (leased := [w for w in pair if any(re.search(r"leased job \d+ ", line) for line in w.lines)]):
        assert time.monotonic() < end, f"no worker leased the set: {[w.lines for w in pair]}"
        time.sleep(0.02)
    (victim,) = leased
    standby = pair[1 - pair.index(victim)]
    job_id = int(victim.wait_for(r"leased job (\d+) ").group(1))
    reap(victim.process)  # SIGKILL mid-set: no hand-back, its lease runs out
    killed = time.monotonic()
    standby.wait_for(rf"leased job {job_id} ", deadline=LEASE_AND_BEAT[TOURNAMENT_SET][0] + 30)
    print(f"death to leased elsewhere: {time.monotonic() - killed:.1f} s")
    until("the set done by the worker beside", lambda: all_done(work, "beside"))
    (done,) = run_jobs(work, "beside")
    assert (done.done_by, done.attempts) == (standby.name, 2)
    keys = [t.key for t in done.tables]
    assert sorted(keys) == [("heuristic|seeded", 1, 0), ("heuristic|seeded", 1, 1)]  # none lost, none twice
    assert [len(table.deals) for table in done.tables] == [2, 2]
    assert status_json(url, "beside")["standings"]["entries"][0]["deals"] == 2


def test_a_stopped_worker_s_late_result_is_refused_by_its_fencing_token(
    url: str, work: WorkQueue, workers: list[Worker]
) -> None:
    submit(url, tournament_words("frozen", 2, 2))
    frozen = Worker(url, "frozen", *FAST)
    workers.append(frozen)
    found = frozen.wait_for(r"leased job (\d+) .*token (\d+)")
    job_id, token = int(found.group(1)), int(found.group(2))
    frozen.process.send_signal(signal.SIGSTOP)
    workers.append(Worker(url, "other", *FAST))
    until("the set done by the other worker", lambda: all_done(work, "frozen"))
    frozen.process.send_signal(signal.SIGCONT)
    frozen.wait_for(rf"job {job_id}: result refused .*token {token} ")
    (job,) = run_jobs(work, "frozen")
    assert (job.done_by, job.attempts, len(job.tables)) == ("other", 2, 2)


def test_workers_carry_on_when_postgresql_restarts_mid_run(workers: list[Worker]) -> None:
    from postgres_support import postgres_cluster

    with postgres_cluster() as cluster:
        submit(cluster.url, tournament_words("restart", 8, 2))
        work = open_queue(cluster.url)
        worker = Worker(cluster.url, "steady", "--beat", "0.5", "--lease", "30")
        workers.append(worker)
        worker.wait_for(r"job \d+ done in")
        work.close()
        cluster.stop("fast")
        worker.wait_for(r"database unreachable|cannot renew the lease")
        cluster.start()
        work = open_queue(cluster.url)
        until("every set done after the restart", lambda: all_done(work, "restart"))
        assert len(tables_played(work, "restart")) == 8
        assert all(job.attempts == 1 for job in run_jobs(work, "restart"))
        work.close()
        assert worker.stop() == 130


def test_a_bot_that_dies_at_start_fails_its_set_after_the_attempts_limit_with_its_reason(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    dying = tmp_path / "dying_bot.py"
    dying.write_text("raise SystemExit('this bot cannot start: no weights file')\n")
    words = tournament_words("dying", 2, 2, f"heuristic={HEURISTIC}", f"dying={dying}")
    workers.append(Worker(url, "patient", *FAST))
    followed = oddtrick(*words, "--database", url, "--workers")
    assert followed.returncode == 1, followed.stderr
    assert re.search(
        rf"set 1 \(job \d+\) failed after {MAX_ATTEMPTS} attempts: .*no weights file", followed.stderr
    )
    (job,) = run_jobs(work, "dying")
    assert (job.status, job.attempts) == ("failed", MAX_ATTEMPTS)
    gave_back = [line for line in workers[0].lines if "given back" in line]
    assert len(gave_back) == MAX_ATTEMPTS


def test_a_worker_whose_bot_differs_gives_the_set_back_and_a_matching_one_plays_it(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    bot = tmp_path / "bot.py"
    shutil.copy(SEEDED, bot)
    submit(url, tournament_words("hashes", 2, 2, f"heuristic={HEURISTIC}", f"mine={bot}"))
    original = bot.read_bytes()
    bot.write_bytes(original + b"\n# edited after submission\n")
    changed = Worker(url, "changed", *FAST)
    workers.append(changed)
    changed.wait_for(r"given back .*bot 'mine': .* here has sha256 .*this worker will not take it again")
    (job,) = run_jobs(work, "hashes")
    assert job.status == "waiting"
    assert "install the same bot" in (status_json(url, "hashes")["given_back"][0]["reason"])
    bot.write_bytes(original)
    workers.append(Worker(url, "matching", *FAST))
    until("the set done", lambda: all_done(work, "hashes"))
    assert run_jobs(work, "hashes")[0].done_by == "matching"
    assert sum("leased job" in line for line in changed.lines) == 1


def test_an_sprt_on_workers_stops_their_work_when_it_decides_with_the_one_machine_verdict(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    words = ["sprt", "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}", "--seed", "t"]
    words += ["--max-deals", "200", "--h0", "0", "--h1", "2"]
    alone = oddtrick(*words, "--referee", "--data-dir", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    workers += [Worker(url, "one"), Worker(url, "two")]
    followed = oddtrick(*words, "--database", url, "--workers")
    assert followed.returncode == 0, followed.stderr
    verdict = [line for line in followed.stdout.splitlines() if "accepted" in line or "no verdict" in line]
    assert verdict == [
        line for line in alone.stdout.splitlines() if "accepted" in line or "no verdict" in line
    ]
    assert verdict
    assert verdict[0].startswith("H1 accepted")
    (name,) = RunStore(work).names()
    jobs = run_jobs(work, name)
    assert {job.status for job in jobs} <= {"done", "cancelled", "leased"}
    assert sum(job.status == "cancelled" for job in jobs) >= len(jobs) // 2
    report = status_json(url, name)
    assert report["sprt"]["verdict"] == "H1"
    assert report["sprt"]["pairs"] == int(re.findall(r"^\s*(\d+) deal pairs", alone.stdout, re.M)[-1])


def statuses(work: WorkQueue, name: str) -> list[tuple[str, int]]:
    """Each job's status and attempts, read from the queue (no result is checked)."""
    return [(job.status, job.attempts) for job in work.jobs() if job.payload.get("run") == name]


def rewrite_result(work: WorkQueue, job_id: int, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a done job's recorded result in the database, as anyone with its password can."""
    with work.database.transaction() as cursor:
        (row,) = cursor.rows("SELECT result FROM work WHERE id = ?", (job_id,))
        result = row["result"]
        change(result)
        cursor.execute("UPDATE work SET result = ?::jsonb WHERE id = ?", (json.dumps(result), job_id))


def seeded_wins_every_deal(result: dict[str, Any]) -> None:
    """The deal scores recorded beside the logs give ``seeded`` 999 points a deal; the logs stay true."""
    for table in result["tables"]:
        ns = table["ns_entry"] == "seeded"
        table["deals"] = [[deal, 999 if ns else 0, 0 if ns else 999] for deal, _, _ in table["deals"]]


def seeded_wins_every_deal_in_the_logs_too(result: dict[str, Any]) -> None:
    """As :func:`seeded_wins_every_deal`, and each log's hand results say the same: the logs
    agree with the figures beside them, but not with what the rules make of their play."""
    seeded_wins_every_deal(result)
    for table in result["tables"]:
        points = {deal: [ns, ew] for deal, ns, ew in table["deals"]}
        text = gzip.decompress(base64.b64decode(result["logs"][table["match_id"]])).decode()
        lines = []
        for line in text.splitlines():
            record = json.loads(line)
            if record["type"] == "hand_result":
                record.update(points=points[record["hand"]], honours=[0, 0], scores=points[record["hand"]])
                line = json.dumps(record)
            lines.append(line)
        forged = gzip.compress(("\n".join(lines) + "\n").encode())
        result["logs"][table["match_id"]] = base64.b64encode(forged).decode()


@pytest.mark.parametrize(
    ("forgery", "why"),
    [
        (seeded_wins_every_deal, "the worker reports deal"),
        (seeded_wins_every_deal_in_the_logs_too, "its log fails the rules' check"),
    ],
    ids=["scores-changed", "log-changed"],
)
def test_a_result_rewritten_in_the_database_is_refused_not_counted_and_its_set_played_again(
    url: str, work: WorkQueue, workers: list[Worker], forgery: Callable[[dict[str, Any]], None], why: str
) -> None:
    submit(url, tournament_words("forged", 4, 2))
    first = Worker(url, "first", *FAST)
    workers.append(first)
    until("both sets done", lambda: statuses(work, "forged") == [("done", 1), ("done", 1)])
    assert first.stop() == 130
    honest = status_json(url, "forged")["standings"]
    set_one = min(job.id for job in work.jobs() if job.payload.get("run") == "forged")
    rewrite_result(work, set_one, forgery)
    report = status_json(url, "forged")
    assert all(abs(row["points_per_deal"]) < 100 for row in report["standings"]["entries"])
    assert [row["deals"] for row in report["standings"]["entries"]] == [2, 2]  # set 2 alone counts
    (refused,) = report["refused"]
    assert (refused["set"], refused["job"], refused["status"]) == (1, set_one, "waiting")
    assert why in refused["reason"]
    assert "refused, not counted" in refused["reason"]
    assert statuses(work, "forged") == [("waiting", 1), ("done", 1)]
    workers.append(Worker(url, "second", *FAST))
    until("set 1 played again", lambda: statuses(work, "forged") == [("done", 2), ("done", 1)])
    again = status_json(url, "forged")
    assert again["refused"] == []
    assert without_times(again["standings"]) == without_times(honest)


def test_a_worker_of_another_oddtrick_version_leases_none_of_a_run_s_sets(
    url: str, work: WorkQueue, workers: list[Worker]
) -> None:
    submit(url, tournament_words("versioned", 2, 2))
    other = Worker(url, "other-code", *FAST, version="0.0.9")
    workers.append(other)
    other.wait_for(r"waiting work is for oddtrick \S+ only, this worker is 0\.0\.9")
    assert statuses(work, "versioned") == [("waiting", 0)]
    assert status_json(url, "versioned")["workers"] == []  # it plays none of the run's sets
    report = status_json(url, "versioned", "--all-workers")
    assert report["run"]["oddtrick"] == __version__
    (seen,) = report["workers"]
    assert (seen["name"], seen["version"]) == ("other-code", "0.0.9")
    assert seen["refused"] == f"oddtrick 0.0.9: this run's sets are for oddtrick {__version__} only"
    shown = oddtrick(
        "tournament", "status", "--database", url, "versioned", "--all-workers", timeout=DEADLINE
    )
    assert f"refused: oddtrick 0.0.9: this run's sets are for oddtrick {__version__} only" in shown.stdout
    workers.append(Worker(url, "same-code", *FAST))
    until("the set done", lambda: statuses(work, "versioned") == [("done", 1)])
    assert run_jobs(work, "versioned")[0].done_by == "same-code"
    assert not any("leased job" in line for line in other.lines)


def test_options_that_do_not_go_with_workers_are_refused_in_one_line_and_submit_nothing(
    url: str, work: WorkQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    from oddtrick._cli import main

    base = tournament_words("refused", 2, 2)
    cases = [
        ([*base, "--workers"], "--workers needs --database"),
        ([*base, "--database", url], "add --workers"),
        (
            [*base, "--database", url, "--workers", "--remote", "far"],
            "--remote is for a tournament on one machine",
        ),
        (
            [*base, "--database", url, "--workers", "--no-duplicate"],
            "--no-duplicate is for a tournament on one",
        ),
        (["sprt", "--bot", f"a={HEURISTIC}", "--bot", f"b={SEEDED}", "--workers"], "give both --workers and"),
    ]
    for words, message in cases:
        assert main(words) == 2, words
        error = capsys.readouterr().err
        assert message in error
        assert len(error.strip().splitlines()) == 1, error
    assert main(["tournament", "status", "--database", url, "nothing-here"]) == 2
    assert "no run 'nothing-here' here" in capsys.readouterr().err
    assert work.jobs() == []


def test_a_set_failed_for_want_of_a_file_is_retried_once_it_is_there_and_the_run_finishes(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    needy = tmp_path / "needy_bot.py"
    weights = tmp_path / "weights.bin"
    check = "import pathlib\nif not pathlib.Path(__file__).with_name('weights.bin').exists():\n"
    needy.write_text(
        check + "    raise SystemExit('this bot cannot start: no weights file')\n" + SEEDED.read_text()
    )
    words = tournament_words("needy", 2, 2, f"heuristic={HEURISTIC}", f"needy={needy}")
    workers.append(Worker(url, "patient", *FAST))
    failed = oddtrick(*words, "--database", url, "--workers")
    assert failed.returncode == 1, failed.stderr
    assert statuses(work, "needy") == [("failed", MAX_ATTEMPTS)]
    assert workers[0].stop() == 130
    weights.write_bytes(b"\0")
    retried = oddtrick("tournament", "retry", "--database", url, "needy", timeout=DEADLINE)
    assert retried.returncode == 0, retried.stderr
    assert "1 failed set(s) back to waiting" in retried.stdout
    (job,) = run_jobs(work, "needy")
    assert (job.status, job.attempts) == ("waiting", 0)
    assert "no weights file" in (job.error or "")  # the last error is kept until it is played
    workers.append(Worker(url, "good", *FAST))
    followed = oddtrick(*words, "--database", url, "--workers")
    assert followed.returncode == 0, followed.stderr
    assert len(json.loads(followed.stdout)["entries"]) == 2
    (job,) = run_jobs(work, "needy")
    assert (job.status, job.attempts, job.done_by) == ("done", 1, "good")
    again = oddtrick("tournament", "retry", "--database", url, "needy", timeout=DEADLINE)
    assert (again.returncode, again.stdout.strip()) == (0, "run needy: no failed sets to retry")


def test_cancel_stops_a_run_s_waiting_sets_and_retry_or_cancel_of_no_run_changes_nothing(
    url: str, work: WorkQueue
) -> None:
    submit(url, tournament_words("unwanted", 4, 2))
    for verb in ("retry", "cancel"):
        missing = oddtrick("tournament", verb, "--database", url, "nope", timeout=DEADLINE)
        assert missing.returncode == 2
        assert f"oddtrick tournament {verb}: no run 'nope' here (runs: unwanted); nothing changed" in (
            missing.stderr
        )
    assert statuses(work, "unwanted") == [("waiting", 0)] * 2
    cancelled = oddtrick("tournament", "cancel", "--database", url, "unwanted", timeout=DEADLINE)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith("run unwanted: 2 waiting or leased set(s) cancelled")
    assert statuses(work, "unwanted") == [("cancelled", 0)] * 2
    for verb in ("retry", "cancel"):
        shown = oddtrick("tournament", verb, "--help", timeout=DEADLINE)
        assert shown.returncode == 0
        assert f"usage: oddtrick tournament {verb}" in shown.stdout


def test_workers_whose_bot_differs_use_no_attempt_and_a_matching_worker_then_plays_the_set(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    bot = tmp_path / "bot.py"
    shutil.copy(SEEDED, bot)
    submit(url, tournament_words("misconfigured", 2, 2, f"heuristic={HEURISTIC}", f"mine={bot}"))
    original = bot.read_bytes()
    bot.write_bytes(original + b"\n# edited after submission\n")
    changed = [Worker(url, f"changed-{number}", *FAST) for number in range(MAX_ATTEMPTS)]
    workers += changed
    for worker in changed:
        worker.wait_for(r"given back .*bot 'mine': .*this worker will not take it again")
    assert statuses(work, "misconfigured") == [("waiting", 0)]
    bot.write_bytes(original)
    workers.append(Worker(url, "matching", *FAST))
    until("the set done", lambda: all_done(work, "misconfigured"))
    (job,) = run_jobs(work, "misconfigured")
    assert (job.done_by, job.attempts) == ("matching", 1)
    assert all(sum("leased job" in line for line in worker.lines) == 1 for worker in changed)


def test_a_decided_sprt_on_workers_cancels_its_leased_batches_and_none_is_played_after(
    url: str, work: WorkQueue, workers: list[Worker]
) -> None:
    words = ["sprt", "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}", "--seed", "t"]
    words += ["--max-deals", "400", "--h0", "0", "--h1", "2"]
    workers += [Worker(url, name) for name in ("one", "two", "three")]
    followed = oddtrick(*words, "--database", url, "--workers")
    assert followed.returncode == 0, followed.stderr
    (name,) = RunStore(work).names()
    at_verdict = statuses(work, name)
    assert {status for status, _ in at_verdict} == {"done", "cancelled"}
    cut_short = [job.id for job in work.jobs() if job.status == "cancelled" and job.attempts > 0]
    assert cut_short, "a batch being played when the test decided is cancelled, not finished"
    for job_id in cut_short:
        (player,) = [
            worker for worker in workers if any(f"leased job {job_id} " in line for line in worker.lines)
        ]
        player.wait_for(rf"job {job_id}: result refused")
    assert statuses(work, name) == at_verdict


def test_a_worker_checks_only_the_bots_seated_at_the_set_s_tables(tmp_path: Path) -> None:
    from oddtrick.rules import GameConfig
    from oddtrick_referee.competitions.on_workers.distributed import tournament_jobs
    from oddtrick_referee.competitions.tournaments.tournament_plan import TournamentSettings, parse_entry
    from oddtrick_referee.workers.tournament_job import own_entries

    third = tmp_path / "third.py"
    shutil.copy(SEEDED, third)
    texts = (f"heuristic={HEURISTIC}", f"seeded={SEEDED}", f"third={third}")
    settings = TournamentSettings(
        entries=tuple(parse_entry(text) for text in texts), config=GameConfig(), deals=2, set_size=2
    )
    jobs = tournament_jobs(settings, "seed")
    third.write_bytes(third.read_bytes() + b"\n# edited after submission\n")
    refused = {job.index for job in jobs if any(record.hash_problem() for record in own_entries(job))}
    seats_third = {
        job.index for job in jobs if any("third" in (run.ns_entry, run.ew_entry) for run in job.runs)
    }
    assert refused == seats_third
    assert 0 < len(refused) < len(jobs)


SLEEPY = Path(__file__).with_name("sleepy_bot.py")


def _decisions(metrics_url: str) -> float:
    """The decisions a worker's referee has taken so far, read off its /metrics."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(metrics_url, timeout=DEADLINE) as response:
        families = list(text_string_to_metric_families(response.read().decode()))
    return next(s.value for f in families for s in f.samples if s.name == "oddtrick_decisions_total")


def test_a_worker_stopped_for_less_than_its_lease_charges_no_bot_and_counts_as_one_process(
    url: str, work: WorkQueue, workers: list[Worker], tmp_path: Path
) -> None:
    """The worker's own stall (SIGSTOP, three deadlines long, its lease ten times that) is not
    charged to the bots waiting on it: no fault, the standings of the one-process run."""
    sleepy = f"cmd:{sys.executable} {SLEEPY} heuristic 100"  # the referee waits on a bot nearly always
    words = [*tournament_words("stalled", 2, 2, f"one={sleepy}", f"two={sleepy}"), "--deadline", "1"]
    alone = oddtrick(*words, "--data-dir", str(tmp_path / "alone"))
    assert alone.returncode == 0, alone.stderr
    submit(url, words)
    worker = Worker(url, "stalled", "--lease", "30", "--beat", "0.5", "--metrics", "0")
    workers.append(worker)
    metrics_url = worker.wait_for(r"metrics on (\S+)").group(1)
    until("the worker's table in play", lambda: _decisions(metrics_url) >= 20)
    worker.process.send_signal(signal.SIGSTOP)  # the worker only: its bots run on
    try:
        time.sleep(3.0)  # the stall itself: what the test is about
    finally:
        worker.process.send_signal(signal.SIGCONT)
    until("the set done", lambda: all_done(work, "stalled"))
    report = status_json(url, "stalled", "--logs", str(tmp_path / "logs"))
    expected = json.loads(alone.stdout)
    assert without_times(report["standings"]) == without_times(expected)
    assert [entry["time"]["timeouts"] for entry in report["standings"]["entries"]] == [0, 0]
    faults = [
        line
        for log in sorted((tmp_path / "logs").glob("*.jsonl"))
        for line in log.read_text().splitlines()
        if '"fault"' in line
    ]
    assert faults == [], f"the worker's own stall was charged to the bots: {faults}"
