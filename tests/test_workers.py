"""Workers past one machine: the PostgreSQL lease queue and ``oddtrick worker`` processes.

Everything runs for real: a throw-away PostgreSQL server (tests/postgres_support.py),
workers as separate processes killed, stopped and interrupted with real signals,
and double-dummy analysis of logs from a real tournament as the work. Waits poll
the database or read the workers' lines, each with a deadline.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_support import reap
from tournament_support import match_logs, run_tournament
from worker_support import DEADLINE, Worker, until

from oddtrick.analysis import analyze_logs
from oddtrick_referee.storage.work_queue import (
    LOOK_AGAIN_SECONDS,
    MAX_ATTEMPTS,
    Job,
    WorkQueue,
    WorkQueueError,
    open_queue,
)


def _tournament(directory: Path, deals: int) -> list[Path]:
    run_tournament(directory, deals=deals)
    return match_logs(directory)


@pytest.fixture(scope="module")
def small_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two logs of two deals each: analysed without par in a fraction of a second."""
    return _tournament(tmp_path_factory.mktemp("small"), 2)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A log of twelve deals: analysed with par, it takes seconds, long enough to be
    caught mid-job by a signal sent as soon as the worker says it leased it."""
    return _tournament(tmp_path_factory.mktemp("long"), 12)[0]


@pytest.fixture
def url(postgres_url: str, request: pytest.FixtureRequest) -> str:
    from postgres_support import fresh_database

    return fresh_database(postgres_url, re.sub(r"\W", "_", request.node.name)[:60].lower())


@pytest.fixture
def work(url: str) -> Iterator[WorkQueue]:
    queue = open_queue(url)
    yield queue
    queue.close()


def job(work: WorkQueue, job_id: int) -> Job:
    return work.jobs(ids=[job_id])[0]


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            reap(worker.process)


def analysed_here(path: Path) -> object:
    """What ``oddtrick analyze --json --no-par`` says of the log, as a worker records it."""
    expected = analyze_logs([path], par=False)
    expected["logs"][0]["path"] = path.name
    return json.loads(json.dumps(expected))


def payload(path: Path, par: bool = False) -> dict[str, object]:
    from oddtrick_referee.workers.kinds import analysis_payload

    return analysis_payload(path, par).to_dict()


# The queue's rules, through its API on a real server.


def test_two_connections_never_lease_the_same_job(work: WorkQueue, url: str) -> None:
    ids = work.submit("analysis", [{"n": n} for n in range(40)])
    others = [open_queue(url) for _ in range(4)]
    got: list[list[int]] = [[] for _ in others]

    def take(index: int) -> None:
        while (lease := others[index].lease(f"w{index}", ["analysis"], (0, 1, 0), 30)) is not None:
            got[index].append(lease.id)

    threads = [threading.Thread(target=take, args=(index,)) for index in range(len(others))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
    for other in others:
        other.close()
    taken = [job_id for ids_of_one in got for job_id in ids_of_one]
    assert sorted(taken) == ids  # every job leased, none twice
    assert {j.attempts for j in work.jobs()} == {1}


def test_a_stale_token_records_nothing_and_hand_back_returns_the_job(work: WorkQueue) -> None:
    (job_id,) = work.submit("analysis", [{"n": 1}])
    first = work.lease("a", ["analysis"], (0, 1, 0), lease_seconds=0.2)
    assert first is not None
    assert first.id == job_id
    until("the lease expires", lambda: work.seconds_to_next_expiry() == 0.0)
    second = work.lease("b", ["analysis"], (0, 1, 0), lease_seconds=30)
    assert second is not None
    assert (second.id, second.token > first.token) == (job_id, True)
    assert not work.beat(job_id, first.token)
    assert not work.finish(job_id, first.token, {"from": "a"}, "a")
    assert not work.hand_back(job_id, first.token)
    assert work.hand_back(job_id, second.token)
    assert job(work, job_id).status == "waiting"
    third = work.lease("c", ["analysis"], (0, 1, 0))
    assert third is not None
    assert work.finish(job_id, third.token, {"from": "c"}, "c")
    assert not work.finish(job_id, third.token, {"again": True}, "c")  # counted once
    done = job(work, job_id)
    assert (done.status, done.result, done.done_by) == ("done", {"from": "c"}, "c")


def test_a_run_s_cancel_takes_its_leased_job_from_its_token_and_retry_brings_failed_back(
    work: WorkQueue,
) -> None:
    leased, waiting, failing, other = work.submit(
        "analysis", [{"run": "r", "n": 1}, {"run": "r", "n": 2}, {"run": "s", "n": 3}, {"run": "t", "n": 4}]
    )
    held = work.lease("a", ["analysis"], (0, 1, 0), lease_seconds=30)
    assert held is not None
    assert held.id == leased
    assert work.cancel_run("r") == 2
    assert not work.beat(leased, held.token)
    assert not work.finish(leased, held.token, {"late": True}, "a")
    assert [job(work, n).status for n in (leased, waiting)] == ["cancelled", "cancelled"]
    broken = work.lease("b", ["analysis"], (0, 1, 0), lease_seconds=30)
    assert broken is not None
    assert broken.id == failing
    assert work.fail(failing, broken.token, "no weights file", "b")
    assert work.retry_run("s") == 1
    back = job(work, failing)
    assert (back.status, back.attempts, back.error) == ("waiting", 0, "no weights file")
    assert work.retry_run("s") == 0
    assert job(work, other).status == "waiting"


def test_a_job_handed_back_with_a_reason_keeps_the_reason_and_uses_no_attempt(work: WorkQueue) -> None:
    (job_id,) = work.submit("analysis", [{"n": 1}])
    for _ in range(MAX_ATTEMPTS + 1):
        lease = work.lease("a", ["analysis"], (0, 1, 0), lease_seconds=30)
        assert lease is not None
        assert work.hand_back(job_id, lease.token, "bot 'x' differs here")
    back = job(work, job_id)
    assert (back.status, back.attempts, back.error) == ("waiting", 0, "bot 'x' differs here")


def test_a_lease_whose_answer_was_lost_goes_back_uncounted_when_its_worker_leases_again(
    work: WorkQueue,
) -> None:
    """The database committed a lease and went away before answering (a restart): the
    worker, trying again, must get that job back, its attempt counted once, rather than
    strand it until its lease expires and then count it twice."""
    first_id, second_id = work.submit("analysis", [{"n": 1}, {"n": 2}])
    lost = work.lease("box1 0a1b", ["analysis"], (0, 1, 0), lease_seconds=30, holds_none=True)
    assert lost is not None
    assert lost.id == first_id
    other = work.lease("box1 ffff", ["analysis"], (0, 1, 0), lease_seconds=30, holds_none=True)
    assert other is not None
    assert other.id == second_id
    again = work.lease("box1 0a1b", ["analysis"], (0, 1, 0), lease_seconds=30, holds_none=True)
    assert again is not None
    assert (again.id, again.attempts, again.token > lost.token) == (first_id, 1, True)
    assert not work.beat(first_id, lost.token)  # the lost answer's token holds nothing
    assert work.beat(second_id, other.token)  # the other process's job stays its own
    assert {j.id: j.attempts for j in work.jobs()} == {first_id: 1, second_id: 1}
    assert {j.id: j.status for j in work.jobs()} == {first_id: "leased", second_id: "leased"}


def test_work_for_a_newer_worker_is_not_leased_to_an_older_one(work: WorkQueue) -> None:
    (new_only,) = work.submit("analysis", [{"n": 1}], required_version=(0, 10))
    assert work.lease("old", ["analysis"], (0, 9, 9)) is None
    assert work.newer_version_waiting(["analysis"], (0, 9, 9)) == (0, 10)
    lease = work.lease("new", ["analysis"], (0, 10, 0))
    assert lease is not None
    assert lease.id == new_only
    assert work.newer_version_waiting(["analysis"], (0, 9, 9)) is None


def test_bad_input_is_refused_and_changes_nothing(work: WorkQueue, tmp_path: Path) -> None:
    with pytest.raises(WorkQueueError, match="kind of work"):
        work.submit("Not A Kind", [{"n": 1}])
    with pytest.raises(WorkQueueError, match="needs PostgreSQL"):
        open_queue(f"sqlite:///{tmp_path / 'q.sqlite'}")
    assert work.jobs() == []


def test_adding_work_wakes_an_idle_listener(work: WorkQueue, url: str) -> None:
    work.listen()
    assert not work.wait_for_work(0.05)
    submitter = open_queue(url)
    submitter.submit("analysis", [{"n": 1}])
    submitter.close()
    assert work.wait_for_work(DEADLINE)


def test_a_job_being_leased_when_an_idle_worker_finds_none_has_it_look_again_soon(
    work: WorkQueue, url: str
) -> None:
    (job_id,) = work.submit("analysis", [{"n": 1}])
    other = open_queue(url)
    with other.database.transaction() as cursor:  # another worker's lease of it, not yet committed
        cursor.execute("SELECT id FROM work WHERE id = ? FOR UPDATE", (job_id,))
        assert work.lease("idle", ["analysis"], (0, 1, 0)) is None  # the locked row is skipped
        assert work.seconds_to_next_expiry() is None  # no lease seen: a sleep until NOTIFY
        assert work.seconds_to_next_look(["analysis"], (0, 1, 0)) == LOOK_AGAIN_SECONDS
    held = other.lease("other", ["analysis"], (0, 1, 0), lease_seconds=30)
    assert held is not None
    assert 0 < (work.seconds_to_next_look(["analysis"], (0, 1, 0)) or 0) <= 30  # its expiry, seen
    assert other.hand_back(held.id, held.token)
    assert work.seconds_to_next_look(["analysis"], (0, 1, 0), refused=[job_id]) is None  # not its work
    work.submit("analysis", [{"n": 2}], required_version=(9,))
    assert work.seconds_to_next_look(["analysis"], (0, 1, 0), refused=[job_id]) is None  # nor a newer's
    other.close()


# Workers as processes.


def test_two_workers_share_the_work_and_never_do_a_job_twice(
    work: WorkQueue, url: str, small_logs: list[Path], workers: list[Worker]
) -> None:
    ids = work.submit("analysis", [payload(small_logs[n % 2]) for n in range(10)])
    workers += [Worker(url, "left"), Worker(url, "right")]
    until("every job done", lambda: all(j.status == "done" for j in work.jobs()))
    jobs = work.jobs()
    assert {j.attempts for j in jobs} == {1}
    leased = {
        worker.name: [int(m) for line in worker.lines for m in re.findall(r"leased job (\d+)", line)]
        for worker in workers
    }
    assert sorted(leased["left"] + leased["right"]) == ids
    assert {j.done_by for j in jobs} <= {"left", "right"}
    assert jobs[0].result == analysed_here(small_logs[0])
    assert [worker.stop() for worker in workers] == [130, 130]


def test_a_killed_worker_s_job_is_leased_again_after_expiry_and_done_once(
    work: WorkQueue, url: str, long_log: Path, workers: list[Worker]
) -> None:
    (job_id,) = work.submit("analysis", [payload(long_log, par=True)])
    doomed = Worker(url, "doomed", "--lease", "2", "--beat", "0.5")
    workers.append(doomed)
    doomed.wait_for(rf"leased job {job_id} ")
    reap(doomed.process)
    assert job(work, job_id).status == "leased"
    workers.append(Worker(url, "heir", "--lease", "2", "--beat", "0.5"))
    until("the job done", lambda: job(work, job_id).status == "done")
    done = job(work, job_id)
    assert (done.done_by, done.attempts) == ("heir", 2)
    assert workers[1].stop() == 130


def test_a_stopped_worker_s_late_result_is_refused_and_the_job_counts_once(
    work: WorkQueue, url: str, long_log: Path, workers: list[Worker]
) -> None:
    (job_id,) = work.submit("analysis", [payload(long_log, par=True)])
    frozen = Worker(url, "frozen", "--lease", "2", "--beat", "0.5")
    workers.append(frozen)
    token = int(frozen.wait_for(rf"leased job {job_id} .*token (\d+)").group(1))
    frozen.process.send_signal(signal.SIGSTOP)
    other = Worker(url, "other", "--lease", "2", "--beat", "0.5")
    workers.append(other)
    until("the job done by the other worker", lambda: job(work, job_id).status == "done")
    frozen.process.send_signal(signal.SIGCONT)
    frozen.wait_for(rf"job {job_id}: result refused .*token {token} ")
    done = job(work, job_id)
    assert (done.status, done.done_by, done.attempts) == ("done", "other", 2)
    assert not any(re.search(rf"job {job_id} done", line) for line in frozen.lines)
    assert [frozen.stop(), other.stop()] == [130, 130]


def test_an_older_worker_never_gets_work_for_a_newer_one_and_says_so_once(
    work: WorkQueue, url: str, small_logs: list[Path], workers: list[Worker]
) -> None:
    submitted = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "analyze",
            "--submit",
            "--database",
            url,
            "--no-par",
            "--require-version",
            "99.0",
            str(small_logs[0]),
        ],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert submitted.returncode == 0, submitted.stderr
    (newer,) = [j.id for j in work.jobs()]
    worker = Worker(url, "old")
    workers.append(worker)
    worker.wait_for(r"update required: waiting work needs oddtrick 99\.0 or newer")
    for _ in range(2):  # more work wakes it: it does that, and says nothing more of the update
        (plain,) = work.submit("analysis", [payload(small_logs[1])])
        until("the plain job done", lambda plain=plain: job(work, plain).status == "done")
    assert sum("update required" in line for line in worker.lines) == 1
    assert (job(work, newer).status, job(work, newer).attempts) == ("waiting", 0)
    assert worker.stop() == 130


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stopped_worker_hands_its_job_back_in_one_line(
    work: WorkQueue, url: str, long_log: Path, workers: list[Worker], stop: signal.Signals
) -> None:
    (job_id,) = work.submit("analysis", [payload(long_log, par=True)])
    worker = Worker(url, "leaving")
    workers.append(worker)
    worker.wait_for(rf"leased job {job_id} ")
    worker.process.send_signal(stop)
    assert worker.process.wait(timeout=DEADLINE) == 130
    worker.wait_for(rf"^worker leaving: stopped; job {job_id} handed back to waiting$")
    assert not any("Traceback" in line for line in worker.lines)
    back = job(work, job_id)
    assert (back.status, back.attempts) == ("waiting", 0)


def test_analyze_submit_then_results_gives_what_analyze_gives(
    work: WorkQueue, url: str, small_logs: list[Path], tmp_path: Path
) -> None:
    def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=DEADLINE
        )

    refused = oddtrick(
        "analyze", "--submit", "--database", url, str(small_logs[0]), str(tmp_path / "nope.jsonl")
    )
    assert refused.returncode == 2
    assert "no such log" in refused.stderr
    assert "nothing submitted" in refused.stderr
    assert work.jobs() == []
    submitted = oddtrick("analyze", "--submit", "--database", url, "--no-par", *map(str, small_logs))
    assert submitted.returncode == 0, submitted.stderr
    assert len(re.findall(r"job \d+: analysis of .* submitted", submitted.stdout)) == 2
    for _ in small_logs:
        once = oddtrick("worker", "--database", url, "--once", "--name", "once")
        assert once.returncode == 0, once.stdout + once.stderr
    results = oddtrick("analyze", "--results", "--json", "--database", url)
    assert results.returncode == 0, results.stderr
    recorded = json.loads(results.stdout)
    assert [entry["status"] for entry in recorded] == ["done", "done"]
    assert recorded[0]["analysis"] == analysed_here(small_logs[0])
    text = oddtrick("analyze", "--results", "--database", url)
    assert re.search(r"job \d+: .* done by once", text.stdout)
    assert "tricks lost" in text.stdout.lower()


def test_a_job_whose_leases_keep_expiring_is_marked_failed(work: WorkQueue) -> None:

    (job_id,) = work.submit("analysis", [{"n": 1}])
    for attempt in range(1, MAX_ATTEMPTS + 1):
        lease = work.lease(f"w{attempt}", ["analysis"], (0, 1, 0), lease_seconds=0.05)
        assert lease is not None
        assert lease.attempts == attempt
        until("the lease expires", lambda: work.seconds_to_next_expiry() == 0.0)
    assert work.lease("last", ["analysis"], (0, 1, 0)) is None
    failed = job(work, job_id)
    assert failed.status == "failed"
    assert f"expired {MAX_ATTEMPTS} times" in (failed.error or "")


def test_beats_keep_a_long_job_with_its_worker(
    work: WorkQueue, url: str, long_log: Path, workers: list[Worker]
) -> None:
    (job_id,) = work.submit("analysis", [payload(long_log, par=True)])
    busy = Worker(url, "busy", "--lease", "0.5", "--beat", "0.1")
    workers.append(busy)
    busy.wait_for(rf"leased job {job_id} ")
    workers.append(Worker(url, "idle", "--lease", "0.5", "--beat", "0.1"))
    workers[1].wait_for(r"waiting for analysis, tournament-set work")
    took = float(busy.wait_for(rf"job {job_id} done in (\d+\.\d+) s").group(1))
    assert took > 0.5, "the job must outlast one lease for the beats to be what kept it"
    done = job(work, job_id)
    assert (done.status, done.done_by, done.attempts) == ("done", "busy", 1)
    assert not any("leased job" in line for line in workers[1].lines)
    assert [worker.stop() for worker in workers] == [130, 130]


def test_a_job_that_cannot_be_done_fails_once_with_its_reason(work: WorkQueue, url: str) -> None:
    (job_id,) = work.submit("analysis", [{"log_name": "bogus.jsonl", "log_text": '{"type": "hand_start"}\n'}])
    once = subprocess.run(
        [sys.executable, "-m", "oddtrick", "worker", "--database", url, "--once"],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert once.returncode == 0, once.stdout + once.stderr
    assert re.search(rf"job {job_id} failed after .* bogus\.jsonl: .*not a match log", once.stdout)
    failed = job(work, job_id)
    assert (failed.status, failed.attempts) == ("failed", 1)
    assert "not a match log" in (failed.error or "")


def test_a_worker_refuses_bad_options_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from oddtrick._cli import main

    assert main(["worker", "--database", f"sqlite:///{tmp_path / 'q.sqlite'}"]) == 1
    assert "the work queue needs PostgreSQL" in capsys.readouterr().err
    assert (
        main(["worker", "--database", "postgresql://nobody@127.0.0.1:1/none", "--lease", "5", "--beat", "5"])
        == 2
    )
    assert "--beat (5 s) must be shorter than --lease (5 s)" in capsys.readouterr().err
    assert not (tmp_path / "q.sqlite").exists()
    with pytest.raises(SystemExit):
        main(["worker", "--database", "postgresql://x/y", "--kinds", "tournaments"])
    assert "the kinds of work are analysis" in capsys.readouterr().err


def test_a_tournament_set_whose_payload_cannot_be_read_fails_once_with_the_field_that_is_wrong(
    work: WorkQueue, url: str
) -> None:
    from oddtrick_referee.competitions.on_workers.distributed import TOURNAMENT_SET

    (job_id,) = work.submit(TOURNAMENT_SET, [{"run": "hand-made", "tournament": "cup", "runs": "both"}])
    once = subprocess.run(
        [sys.executable, "-m", "oddtrick", "worker", "--database", url, "--once"],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )
    assert once.returncode == 0, once.stdout + once.stderr
    assert f"leased job {job_id} (hand-made: a payload that cannot be read," in once.stdout
    assert re.search(rf"job {job_id} failed after .* payload cannot be read: .*'entries'", once.stdout)
    failed = job(work, job_id)
    assert (failed.status, failed.attempts) == ("failed", 1)
    assert "submit the run again" in (failed.error or "")
