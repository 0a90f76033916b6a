"""The web page of a run on workers (``oddtrick web --database URL``), all of it real: a
throw-away PostgreSQL (tests/postgres_support.py), ``oddtrick worker`` processes, the page
served by ``oddtrick web`` over a socket and read by a headless Chromium, which follows the
run by itself until it is over, and whose final standings are ``tournament status --json``'s;
and a replay page that shows the analysis a worker recorded rather than computing its own."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from process_support import reap
from worker_support import DEADLINE, Worker, until

from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import open_queue
from oddtrick_referee.web.analysis import page_analysis
from tests.test_web_accessibility import OUR_CHECKS, axe_problems
from tests.web_support import browser_page, chromium_path

ROOT = Path(__file__).resolve().parents[1]
HEURISTIC = ROOT / "sample_bots" / "heuristic_bot.py"
SEEDED = Path(__file__).with_name("seeded_random_bot.py")


def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=DEADLINE
    )


@pytest.fixture
def url(postgres_url: str, request: pytest.FixtureRequest) -> str:
    from postgres_support import fresh_database

    return fresh_database(postgres_url, re.sub(r"\W", "_", request.node.name)[:60].lower())


@pytest.fixture
def page_of(url: str, tmp_path: Path) -> Iterator[str]:
    """``oddtrick web --database URL`` (its data folder holds no referee data), and its address."""
    web = subprocess.Popen(
        [sys.executable, "-m", "oddtrick", "web", "--database", url, "--data-dir", str(tmp_path / "none"),
         "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert web.stdout is not None
    line = web.stdout.readline()
    found = re.search(r"web page on (\S+)/", line)
    assert found, f"{line!r} {web.stderr.read() if web.poll() is not None and web.stderr else ''}"
    yield found.group(1)
    web.send_signal(signal.SIGINT)
    _, err = web.communicate(timeout=DEADLINE)
    assert web.returncode == 0, err


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            reap(worker.process)


class _Table(HTMLParser):
    """The text of each cell of the table with one id, row by row."""

    def __init__(self, table_id: str) -> None:
        super().__init__()
        self.table_id, self.inside, self.rows = table_id, False, list[list[str]]()
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", self.table_id) in attrs:
            self.inside = True
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.inside = False
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append("".join(self.cell).strip())
            self.cell = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def table(html: str, table_id: str) -> list[list[str]]:
    parser = _Table(table_id)
    parser.feed(html)
    return parser.rows


def get(address: str) -> str:
    with urllib.request.urlopen(address, timeout=DEADLINE) as response:
        text: str = response.read().decode()
    return text


def standings_rows(standings: dict[str, Any]) -> list[list[str]]:
    """The standings table's rows as a local tournament's page shows them."""
    rows = [["#", "Entry", "W-D-L", "Deals", "Points/deal", "95% interval", "Faults"]]
    for e in standings["entries"]:
        m, ci = e["matches"], e["ci95"]
        rows.append([
            str(e["rank"]), e["entry"], f"{m['won']}-{m['drawn']}-{m['lost']}", str(e["deals"]),
            "n/a" if e["points_per_deal"] is None else f"{e['points_per_deal']:+.2f}",
            f"[{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "n/a", str(sum(e["faults"].values())),
        ])  # fmt: skip
    return rows


DONE = "() => document.querySelector('td[data-status=done]').textContent.trim() === '2'" \
    " && !document.querySelector('[data-follow]')"  # fmt: skip


def test_the_page_follows_a_run_on_workers_to_the_standings_tournament_status_prints(
    url: str, page_of: str, workers: list[Worker]
) -> None:
    chromium_path()
    words = ["tournament", "--game", "contract", "--deals", "4", "--set-size", "2", "--seed", "s",
             "--name", "web run", "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}"]  # fmt: skip
    submitted = oddtrick(*words, "--database", url, "--workers", "--detach")
    assert submitted.returncode == 0, submitted.stderr
    assert get(page_of + "/").count("/runs/web%20run") == 1  # / opens on the runs: no referee data here
    before = get(page_of + "/runs/web%20run")
    statuses = ["waiting", "leased", "done", "failed", "cancelled"]
    assert table(before, "jobs") == [statuses, ["2", "0", "0", "0", "0"]]
    assert 'data-follow="5"' in before
    assert "No worker has leased" in before

    with browser_page() as page:
        page.goto(page_of + "/runs/web%20run")
        problems = axe_problems(page) + page.evaluate(OUR_CHECKS)
        workers.append(Worker(url, "only", "--tables", "1"))
        page.wait_for_function(DONE, timeout=DEADLINE * 1000)
        followed = int(page.evaluate("document.body.dataset.followed || '0'"))
        final = page.content()
        problems += axe_problems(page) + page.evaluate(OUR_CHECKS)
        page.goto(page_of + "/runs")
        problems += axe_problems(page) + page.evaluate(OUR_CHECKS)
    assert not problems, "\n".join(problems)
    assert followed >= 1  # the page asked again by itself, without a reload

    shown = oddtrick("tournament", "status", "--database", url, "web run", "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["sets"] == {"done": 2}
    assert table(final, "standings") == standings_rows(report["standings"])
    (worker,) = report["workers"]
    shown = table(final, "workers")[1]  # its last beat apart, which moves between two looks
    assert shown[:3] + shown[4:] == [
        "only", "alive", worker["version"], "2", f"{worker['deals_per_minute']:.1f}", "0", "nothing"
    ]  # fmt: skip
    assert [row[:3] for row in table(final, "played")[1:]] == [["1", "done", "only"], ["2", "done", "only"]]
    assert "ETA: none: no set is left (2 done)" in final


def test_a_database_the_page_cannot_reach_is_a_one_line_error(tmp_path: Path) -> None:
    done = oddtrick("web", "--database", "postgresql://nobody@127.0.0.1:1/none", "--port", "0")
    assert done.returncode == 1
    assert done.stderr.startswith("oddtrick web: "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_an_sprt_s_page_shows_its_line_until_the_verdict_tournament_status_prints(
    url: str, page_of: str, workers: list[Worker]
) -> None:
    words = ["sprt", "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}", "--seed", "t"]
    words += ["--max-deals", "200", "--h0", "0", "--h1", "2", "--database", url, "--workers"]
    follower = subprocess.Popen(
        [sys.executable, "-m", "oddtrick", *words],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = RunStore(open_queue(url))
    try:
        until("the test is submitted", lambda: bool(store.names()))
        (name,) = store.names()
    finally:
        store.queue.close()
    address = page_of + "/runs/" + urllib.parse.quote(name)
    before = get(address)
    assert 'data-follow="5"' in before
    assert '<strong id="verdict">undecided</strong>' in before
    workers.append(Worker(url, "only"))
    pages: list[str] = []

    def over() -> bool:
        pages.append(get(address))
        return "data-follow" not in pages[-1]

    until("the page says the test is over", over)
    _, err = follower.communicate(timeout=DEADLINE)
    assert follower.returncode == 0, err
    shown = oddtrick("tournament", "status", "--database", url, name, "--json")
    assert shown.returncode == 0, shown.stderr
    line = json.loads(shown.stdout)["sprt"]
    assert line["verdict"] == "H1"
    final = pages[-1]
    assert f'<strong id="verdict">{line["verdict"]}</strong>' in final
    assert f'<span id="llr">{line["llr"]:+.3f}</span>' in final
    assert f"{line['pairs']} deal pairs" in final
    with pytest.raises(urllib.error.HTTPError) as missing:
        get(page_of + "/runs/no%20such%20run")
    missing.value.close()
    assert missing.value.code == 404


def test_a_match_s_analysis_a_worker_recorded_is_the_replay_page_s_at_once(
    url: str, workers: list[Worker], tmp_path: Path
) -> None:
    pytest.importorskip("endplay")
    data = tmp_path / "data"
    words = ["tournament", "--game", "contract", "--deals", "2", "--set-size", "2", "--seed", "a"]
    played = oddtrick(
        *words, "--bot", f"heuristic={HEURISTIC}", "--bot", f"seeded={SEEDED}", "--data-dir", str(data)
    )
    assert played.returncode == 0, played.stderr
    log = sorted(data.rglob("*.jsonl*"))[0]
    match_id = log.name.split(".")[0]
    submitted = oddtrick("analyze", "--submit", "--database", url, str(log))
    assert submitted.returncode == 0, submitted.stderr
    workers.append(Worker(url, "solver"))
    queue = open_queue(url)
    try:
        until(
            "the worker records the analysis", lambda: queue.latest_result("analysis", [log.name]) is not None
        )
    finally:
        queue.close()
    here = oddtrick("analyze", "--json", str(log))
    assert here.returncode == 0, here.stderr
    web = subprocess.Popen(
        [sys.executable, "-m", "oddtrick", "web", "--database", url, "--data-dir", str(data), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert web.stdout is not None
        address = re.search(r"web page on (\S+)/", web.stdout.readline())
        assert address
        shown = json.loads(get(f"{address.group(1)}/matches/{match_id}/analysis.json"))
    finally:
        web.send_signal(signal.SIGINT)
        web.communicate(timeout=DEADLINE)
    assert shown == page_analysis(json.loads(here.stdout))  # ready at the first ask: nothing computed here
    assert shown["hands"]
