"""The web page over HTTP on a real socket: lists, server-side replay, downloads, and the
rules for what it will not show (sealed matches, paths outside the data folder)."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trio

from oddtrick.rules import Card, GameConfig, Seat, deal_cards
from oddtrick_referee.competitions.tournaments.page import Leaderboard, LeaderboardRow
from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.replay_support import Logged, play_all
from tests.test_replay import logged_hands
from tests.web_support import decision_time, get


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    return play_all(tmp_path_factory.mktemp("web") / "data", sealed=True)


def data_dir_of(played: dict[str, Logged]) -> Path:
    return played["sealed"].log_path.parent.parent


@asynccontextmanager
async def web_on(data_dir: Path, **options: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, create_app(data_dir, **options), "127.0.0.1:0")
        yield url
        nursery.cancel_scope.cancel()


def listed(body: str) -> list[str]:
    return re.findall(r'data-match="([^"]+)"', body)


async def test_the_matches_list_filters_and_pages(played):
    async with web_on(data_dir_of(played), page_size=2) as url:
        everything: list[str] = []
        page = 1
        while True:
            status, body, _ = await in_thread(get, f"{url}/matches?page={page}")
            assert status == 200
            rows = listed(body)
            assert len(rows) <= 2
            everything += rows
            if 'rel="next"' not in body:
                break
            page += 1
        assert sorted(everything) == sorted(f"m-{name}" for name in played)
        assert page == (len(played) + 1) // 2
        _, body, _ = await in_thread(get, f"{url}/matches?game=classic")
        async with web_on(data_dir_of(played)) as all_url:
            _, body, _ = await in_thread(get, f"{all_url}/matches?game=classic")
            assert sorted(listed(body)) == sorted(
                f"m-{name}" for name in played if name == "sealed" or name.startswith("classic")
            )
            _, body, _ = await in_thread(get, f"{all_url}/matches?status=sealed")
            assert listed(body) == ["m-sealed"]
            _, body, _ = await in_thread(get, f"{all_url}/matches?bot=alice&game=contract")
            assert sorted(listed(body)) == ["m-contract-doubling", "m-contract-game"]
            _, body, _ = await in_thread(get, f"{all_url}/matches?bot=nobody")
            assert listed(body) == []
            assert "No matches match these filters" in body


def held_on_page(body: str, seat: str) -> set[str]:
    section = body.split(f'id="hand-{seat}"', 1)[1].split("</section>", 1)[0]
    return set(re.findall(r'data-card="([^"]+)"', section))


async def test_a_finished_match_page_shows_the_position_its_url_names_without_javascript(played):
    logged = played["contract-doubling"]
    records = list(read_log(logged.log_path))
    seed = records[-1]["seed"]
    hand_number, card = 2, 17
    dealer = Seat.parse(next(r["dealer"] for r in records if r["type"] == "hand_start" and r["hand"] == 2))
    deal, _, _ = deal_cards(seed, hand_number, dealer)
    gone = {str(Card.parse(text)) for _, text in logged_hands(logged.log_path)[hand_number]["cards"][:card]}
    async with web_on(data_dir_of(played)) as url:
        status, body, _ = await in_thread(get, f"{url}/matches/{logged.match_id}?hand=2&card=17")
    assert status == 200
    for seat in Seat:
        assert held_on_page(body, str(seat)) == {str(c) for c in deal[seat]} - gone
    assert "hand 2 · card 17/" in body
    assert 'id="match-data"' in body


async def test_the_log_and_pbn_downloads(played):
    from endplay.parsers import pbn

    logged = played["classic-rotation"]
    async with web_on(data_dir_of(played)) as url:
        status, body, headers = await in_thread(get, f"{url}/matches/{logged.match_id}/log.jsonl")
        assert status == 200
        assert body == logged.log_path.read_text(encoding="utf-8")
        assert "attachment" in headers["content-disposition"]
        status, body, _ = await in_thread(get, f"{url}/matches/{logged.match_id}/match.pbn")
        assert status == 200
        assert len(pbn.loads(body)) == logged.config.deals
        status, body, _ = await in_thread(get, f"{url}/matches/{logged.match_id}/replay.json")
        assert status == 200
        assert [hand["number"] for hand in json.loads(body)["hands"]] == list(range(1, 6))


async def test_a_sealed_match_shows_nothing_of_its_deals_anywhere(played):
    sealed = played["sealed"]
    records = list(read_log(sealed.log_path))
    seed = records[-1]["seed"]
    async with web_on(data_dir_of(played)) as url:
        status, body, _ = await in_thread(get, f"{url}/matches/{sealed.match_id}")
        assert status == 200
        assert "sealed until both plays" in body
        assert "data-card" not in body
        assert seed not in body
        for suffix in ("log.jsonl", "match.pbn", "replay.json", "events"):
            status, body, _ = await in_thread(get, f"{url}/matches/{sealed.match_id}/{suffix}")
            assert status == 404, suffix
            assert seed not in body
            assert '"action"' not in body


async def test_a_bots_page_counts_its_matches_against_each_opponent_and_never_a_sealed_one(played):
    """alice holds North-South and bob East-West in every match: alice's record against bob is
    each seen match's result as its log ends, and the sealed play counts for nothing."""
    seen = [logged for name, logged in played.items() if name != "sealed"]
    winners = [list(read_log(logged.log_path))[-1]["result"]["winner"] for logged in seen]
    answered = sum(
        1
        for logged in seen
        for record in read_log(logged.log_path)
        if record.get("seat") in ("N", "S") and record.get("think_ms") is not None
    )
    async with web_on(data_dir_of(played)) as url:
        status, page, _ = await in_thread(get, f"{url}/bots/alice")
    assert status == 200
    record = page.split('id="other-record"', 1)[1].split("</table>", 1)[0]
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", record)]
    assert cells == ["bob", str(winners.count("NS")), str(winners.count(None)), str(winners.count("EW"))]
    assert f"Over its {len(seen)} finished match(es)" in page
    assert f"{answered} decisions answered" in page
    assert "m-sealed" not in page


CRAFTED = [
    "/matches/..%2Foddtrick.sqlite3",
    "/matches/..%2F..%2F..%2Fetc%2Fpasswd/log.jsonl",
    "/matches/%2e%2e/log.jsonl",
    "/matches/%2Fetc%2Fpasswd/log.jsonl",
    "/matches/m-classic-cut%00/log.jsonl",
    "/matches/m-classic-cut%2F..%2F..%2Foddtrick.sqlite3/log.jsonl",
    "/matches/.hidden/log.jsonl",
    "/matches/" + "a" * 300 + "/log.jsonl",
    "/matches/oddtrick.sqlite3/log.jsonl",
    "/static/..%2Fapp.py",
    "/static/%2e%2e/data.py",
    "/static/..%2F..%2Freplay%2Fmodel.py",
    "/tournaments/..%2F..%2Foddtrick.sqlite3",
]


def own_copy(played: dict[str, Logged], tmp_path: Path) -> Path:
    """The shared data folder, copied for a test that changes its index (log paths stay inside it)."""
    import shutil

    data_dir = tmp_path / "data"
    shutil.copytree(data_dir_of(played), data_dir)
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        for match_id, log_path in db.execute("SELECT match_id, log_path FROM matches").fetchall():
            db.execute(
                "UPDATE matches SET log_path = ? WHERE match_id = ?",
                (str(data_dir / "logs" / Path(log_path).name), match_id),
            )
    return data_dir


async def test_crafted_ids_never_reach_a_file_outside_the_data_folder(played, tmp_path):
    data_dir = own_copy(played, tmp_path)
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"type":"match_start","secret":"TOPSECRET"}\n', encoding="utf-8")
    inside_but_not_a_log = data_dir / "notes.jsonl"
    inside_but_not_a_log.write_text('{"secret":"TOPSECRET"}\n', encoding="utf-8")
    config = json.dumps(played["classic-cut"].config.to_dict())
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        for match_id, path in (
            ("evil-outside", str(secret)),
            ("evil-relative", str(data_dir / "logs" / ".." / "notes.jsonl")),
            ("evil-passwd", "/etc/passwd"),
        ):
            db.execute(
                "INSERT OR REPLACE INTO matches "
                "(match_id, status, started_at, config, players, log_path, details) "
                "VALUES (?, 'finished', 0, ?, '{}', ?, '{\"sealed\": false}')",
                (match_id, config, path),
            )
    async with web_on(data_dir) as url:
        for path in [
            *CRAFTED,
            *(
                f"/matches/evil-{w}{s}"
                for w in ("outside", "relative", "passwd")
                for s in ("", "/log.jsonl", "/match.pbn", "/replay.json")
            ),
        ]:
            status, body, _ = await in_thread(get, url + path)
            assert status == 404 or (
                status == 200 and "cannot be replayed" not in body and "data-card" not in body
            ), path
            assert "TOPSECRET" not in body, path
            assert "root:" not in body, path
            assert "SQLite format" not in body, path
            assert "import " not in body, path
        # The real match is still served: the refusals are the crafted paths', not everything's.
        status, _, _ = await in_thread(get, f"{url}/matches/m-classic-cut/log.jsonl")
        assert status == 200


class FixedLadder:
    def __init__(self, rows: list[LeaderboardRow]) -> None:
        self.rows = rows

    def leaderboard(self) -> Leaderboard:
        return Leaderboard("Contract Whist ladder", self.rows, note="rating μ − 3σ")


async def test_the_leaderboard_page_renders_a_plugged_in_ladder_and_says_when_there_is_none(played):
    async with web_on(data_dir_of(played)) as url:
        status, body, _ = await in_thread(get, f"{url}/leaderboard")
    assert status == 200
    assert "There is no ladder on this server." in body
    rows = [
        LeaderboardRow(
            1, "heuristic", 24.5, 1.25, 40, 1_700_000_000_000, house=True, stronger_than_next=0.87
        ),
        LeaderboardRow(2, "<script>alert(1)</script>", 20.0, 6.0, 3, None, provisional=True, faults=2),
        LeaderboardRow(3, "sleepy", 18.25, 3.5, 12, 1_600_000_000_000, inactive=True),
    ]
    async with web_on(data_dir_of(played), leaderboard=FixedLadder(rows)) as url:
        status, body, _ = await in_thread(get, f"{url}/leaderboard")
    assert status == 200
    assert "no ladder" not in body
    table = body.split('id="leaderboard"', 1)[1]
    assert [
        re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<tr[^>]*>\s*<td[^>]*>(\d+)</td>", table)
    ] == [
        "1",
        "2",
        "3",
    ]
    assert "24.5 ± 1.2" in table or "24.5 ± 1.3" in table
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in table
    assert "<script>alert" not in body
    assert table.count("provisional</span>") == 1
    assert table.count("inactive</span>") == 1
    assert "house</span>" in table
    assert table.count("87%") == 1  # the chance the first is stronger than the second


def test_serve_and_tournament_serve_the_page_beside_the_referee(tmp_path):
    for command, line_marker in (
        (["serve", "--port", "0", "--ns", "a", "--ew", "b", "--deals", "1"], "web page on "),
        (
            [
                "tournament",
                "--remote",
                "x=tx0,tx1",
                "--remote",
                "y=ty0,ty1",
                "--deals",
                "1",
                "--name",
                "t-web",
            ],
            "web page (standings, live tables) on ",
        ),
    ):
        with subprocess.Popen(
            [
                sys.executable,
                "-m",
                "oddtrick",
                *command,
                "--web",
                "0",
                "--data-dir",
                str(tmp_path / command[0]),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        ) as process:
            try:
                assert process.stdout is not None
                url = None
                for line in process.stdout:
                    if line_marker in line:
                        url = line.split(line_marker, 1)[1].split()[0].rstrip("/")
                        break
                assert url is not None, command
                status, body, headers = get(url + "/")
                assert status == 302
                if command[0] == "tournament":
                    assert headers["location"] == "/tournaments/t-web"
                    status, body, _ = get(url + "/tournaments/t-web")
                    assert status == 200
                    assert 'id="standings"' in body
                else:
                    status, body, _ = get(url + "/matches")
                    assert status == 200
            finally:
                process.terminate()
                process.wait(timeout=30)


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A small duplicate tournament, played once: its data folder and its standings."""
    import io

    from oddtrick_referee.competitions.tournaments.tournament import (
        TournamentSettings,
        parse_entry,
        run_tournament,
    )
    from oddtrick_referee.play.table import TableRules

    data_dir = tmp_path_factory.mktemp("cup")
    random_bot = Path(__file__).resolve().parents[1] / "sample_bots" / "random_bot.py"
    heuristic_bot = Path(__file__).resolve().parents[1] / "sample_bots" / "heuristic_bot.py"
    plan = TournamentSettings(
        entries=(parse_entry(f"rnd={random_bot}"), parse_entry(f"Heu={heuristic_bot}")),
        config=GameConfig.classic(),
        deals=2,
        set_size=1,
        tables=2,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed="web-standings",
        name="web-cup",
    )
    standings = trio.run(lambda: run_tournament(plan, data_dir, progress_stream=io.StringIO()))
    return data_dir, standings.to_json()


async def test_a_tournaments_standings_page_shows_its_standings(cup):
    data_dir, standings = cup
    async with web_on(data_dir) as url:
        status, body, _ = await in_thread(get, f"{url}/tournaments")
        assert status == 200
        assert '<a href="/tournaments/web-cup">web-cup</a>' in body
        status, body, _ = await in_thread(get, f"{url}/tournaments/web-cup")
        assert status == 200
        _, listed_matches, _ = await in_thread(get, f"{url}/matches")
    table = body.split('id="standings"', 1)[1].split("</table>", 1)[0]
    cells = [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)
    ]  # (an entry's name is a link to its bot page)
    rows = [row for row in cells if row]
    expected = [
        [
            str(e["rank"]),
            e["entry"],
            f"{e['matches']['won']}-{e['matches']['drawn']}-{e['matches']['lost']}",
            str(e["deals"]),
            f"{e['points_per_deal']:+.2f}",
        ]
        for e in standings["entries"]
    ]
    assert [row[:5] for row in rows] == expected
    # Think time and lag apart, as the standings give them.
    times = body.split('id="times"', 1)[1].split("</table>", 1)[0]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", times, re.S)]
    shown = [row for row in cells if row]
    assert shown == [
        [
            e["entry"],
            str(e["time"]["answered"]),
            str(e["time"]["think_ms"]["p50"]),
            str(e["time"]["think_ms"]["p99"]),
            str(e["time"]["lag_ms"]["p50"]),
            str(e["time"]["lag_ms"]["p99"]),
            "0",
        ]
        for e in standings["entries"]
    ]
    # Its four table runs (two deals, each played twice) are listed, unsealed once both plays ended.
    assert len(listed(listed_matches)) == 4
    statuses = re.findall(r'<td data-label="Status">([^<]*)</td>', listed_matches)
    assert statuses == ["finished"] * 4


async def test_a_classic_deals_traveller_gives_each_tables_trumps_in_suit_symbols(cup):
    data_dir, _ = cup
    async with web_on(data_dir) as url:
        _, body, _ = await in_thread(get, f"{url}/tournaments/web-cup")
        links = re.findall(r'<a href="(/matches/[^"/]+/deals/\d+)">both tables</a>', body)
        assert len(links) == 2  # two deals, each played at two tables
        status, traveller, _ = await in_thread(get, url + links[0])
    assert status == 200
    table = traveller.split('id="traveller"', 1)[1].split("</table>", 1)[0]
    contracts = re.findall(r'<td data-label="Contract or trumps"[^>]*>([^<]*)</td>', table)
    assert len(contracts) == 2
    for text in contracts:
        assert re.match(r"(trumps [♠♥♦♣] |no trumps)", text), text
    assert contracts[0] == contracts[1]  # the same cards, so the same trumps, at both tables


def player_cells(body: str) -> list[tuple[str, str]]:
    """Each listed match's NS and EW cells, as text."""
    rows = re.findall(r"<tr class=\"status-[^\"]*\" data-match=[^>]*>(.*?)</tr>", body, re.S)
    cells = [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
             for row in rows]  # fmt: skip
    return [(row[2], row[3]) for row in cells]


async def test_the_bot_filter_finds_a_tournament_entry_by_its_name_and_the_pages_show_that_name(cup):
    """A tournament entry plays as Heu~0 and Heu~1; a person looks for, and reads, Heu."""
    data_dir, _ = cup
    async with web_on(data_dir) as url:
        found = {}
        not_names = ("he", "eu", "heu~", "heu~%", "heu~2", "_eu")
        for bot in ("Heu", "heu", "HEU", "heu~1", "Heu~0", "rnd", *not_names):
            status, body, _ = await in_thread(get, f"{url}/matches?bot={quote(bot)}")
            assert status == 200
            found[bot] = sorted(listed(body))
        _, everything, _ = await in_thread(get, f"{url}/matches")
        match_page = listed(everything)[0]
        status, page, _ = await in_thread(get, f"{url}/matches/{match_page}")
        assert status == 200
    every = sorted(listed(everything))
    assert len(every) == 4
    assert found["Heu"] == found["heu"] == found["HEU"] == found["rnd"] == every
    assert len(found["heu~1"]) == len(found["Heu~0"]) == 2
    assert sorted(found["heu~1"] + found["Heu~0"]) == every
    for not_a_name in not_names:
        assert found[not_a_name] == [], not_a_name
    # The list shows the bots' names; who connected at each seat stays as a detail.
    assert sorted(player_cells(everything)) == sorted([("rnd", "Heu"), ("Heu", "rnd")] * 2)
    assert "~0" not in "".join(a + b for a, b in player_cells(everything))
    assert re.search(r'title="N (rnd|Heu)~[01] · E (rnd|Heu)~[01] · S', everything)
    seats = {seat: re.sub(r"<[^>]+>", "", text) for seat, text in
             re.findall(r'data-seat="([NESW])">\s*<h3>(.*?)</h3>', page, re.S)}  # fmt: skip
    assert set(seats) == set("NESW")
    for text in seats.values():
        name = "Heu" if "Heu" in text else "rnd"
        assert re.fullmatch(rf"\s*\w+ {name} as {name}~[01](\s*D)?\s*", text), text


def test_a_web_port_in_use_is_a_plain_error_before_anything_starts(tmp_path):
    import socket

    from oddtrick_referee.storage.match_index import MatchStore

    MatchStore(tmp_path / "oddtrick.sqlite3")  # a data folder oddtrick web will serve
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for command in (
            ["serve", "--port", "0", "--ns", "a", "--ew", "b", "--web", str(port)],
            ["tournament", "--remote", "a", "--remote", "b", "--deals", "1", "--web", str(port)],
            ["web", "--port", str(port)],
        ):
            run = subprocess.run(
                [sys.executable, "-m", "oddtrick", *command, "--data-dir", str(tmp_path)],
                capture_output=True,
                text=True,
                check=False,
                timeout=60,
            )
            assert run.returncode != 0, command
            assert (
                f"cannot serve the web page on 127.0.0.1:{port}" in run.stderr
                or "no referee data" in run.stderr
            )
            assert "Traceback" not in run.stderr


async def test_a_match_stopped_before_its_end_says_it_cannot_be_replayed(played, tmp_path):
    data_dir = own_copy(played, tmp_path)
    source = played["contract-game"]
    lines = source.log_path.read_text(encoding="utf-8").splitlines(keepends=True)
    config = json.dumps(source.config.to_dict())
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        for match_id, sealed in (("stopped-open", "false"), ("stopped-sealed", "true")):
            path = data_dir / "logs" / f"{match_id}.jsonl"
            path.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
            db.execute(
                "INSERT OR REPLACE INTO matches "
                "(match_id, status, started_at, config, players, log_path, details) "
                f"VALUES (?, 'aborted', 0, ?, '{{}}', ?, '{{\"sealed\": {sealed}}}')",
                (match_id, config, str(path)),
            )
    async with web_on(data_dir) as url:
        status, body, _ = await in_thread(get, f"{url}/matches/stopped-open")
        assert status == 200
        assert "cannot be replayed" in body
        assert "the seed is revealed only at the end" in body
        assert "/matches/stopped-open/log.jsonl" in body
        status, body, _ = await in_thread(get, f"{url}/matches/stopped-open/log.jsonl")
        assert status == 200
        assert body == "".join(lines[: len(lines) // 2])
        status, body, _ = await in_thread(get, f"{url}/matches/stopped-sealed")
        assert "data-card" not in body
        assert "log.jsonl" not in body
        status, _, _ = await in_thread(get, f"{url}/matches/stopped-sealed/log.jsonl")
        assert status == 404


def test_tournament_web_serves_a_tournament_whatever_its_name(tmp_path):
    """A name is the user's to choose: spaces, '#', '/' and letters beyond ASCII included."""
    from urllib.parse import quote

    name = "Spring cup #1/ü"
    command = [
        sys.executable, "-m", "oddtrick", "tournament", "--remote", "x=tx0,tx1", "--remote", "y=ty0,ty1",
        "--deals", "1", "--name", name, "--web", "0", "--data-dir", str(tmp_path),
    ]  # fmt: skip
    marker = "web page (standings, live tables) on "
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        try:
            assert process.stdout is not None
            said = (line.split(marker, 1)[1] for line in process.stdout if marker in line)
            url = next((rest.split()[0].rstrip("/") for rest in said), None)
            assert url is not None
            status, _, headers = get(url + "/")
            assert status == 302
            assert headers["location"] == "/tournaments/" + quote(name, safe="")
            status, body, _ = get(url + headers["location"])
            assert status == 200
            assert 'id="standings"' in body
            assert "Spring cup #1/ü" in body
            status, listing, _ = get(url + "/tournaments")
            assert status == 200
            link = re.search(r'<a href="(/tournaments/[^"]+)">Spring cup #1/ü</a>', listing)
            assert link is not None, listing
            status, body, _ = get(url + link[1])
            assert status == 200
            assert 'id="standings"' in body
            assert get(url + "/tournaments/" + quote("Spring cup #2", safe=""))[0] == 404
        finally:
            process.terminate()
            process.wait(timeout=30)


# ------------------------------------------------------------------ what every response carries


async def test_every_response_carries_the_security_headers(played):
    from oddtrick_referee.web.guard import CONTENT_SECURITY_POLICY

    logged = played["classic-cut"]
    async with web_on(data_dir_of(played)) as url:
        for path in (
            "/matches",
            f"/matches/{logged.match_id}",
            f"/matches/{logged.match_id}/log.jsonl",
            f"/matches/{logged.match_id}/replay.json",
            "/matches/no-such-match",
            "/static/viewer.js",
            "/tournaments",
            "/no/such/page",
            "/",
        ):
            status, _, headers = await in_thread(get, url + path)
            assert status in (200, 302, 404), path
            assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY, path
            assert "default-src 'self'" in CONTENT_SECURITY_POLICY
            assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
            assert headers["x-content-type-options"] == "nosniff", path
            assert headers["referrer-policy"] == "same-origin", path


async def test_an_unknown_route_is_the_styled_not_found_page(played):
    async with web_on(data_dir_of(played)) as url:
        for path in ("/nothing", "/matches/m-classic-cut/nothing", "/static/none.css", "/leaderboard/x"):
            status, body, headers = await in_thread(get, url + path)
            assert status == 404, path
            assert headers["content-type"].startswith("text/html"), path
            assert '<link rel="stylesheet" href="/static/style.css">' in body, path
            assert "<h1>Not found</h1>" in body, path
            assert 'href="/matches"' in body, path


async def test_a_request_under_a_name_the_page_is_not_served_under_is_refused(played, monkeypatch):
    """DNS rebinding: a site that points its own name at 127.0.0.1 gets nothing from the page."""
    logged = played["classic-cut"]
    port_of = lambda url: url.rsplit(":", 1)[1]  # noqa: E731
    async with web_on(data_dir_of(played)) as url:
        port = port_of(url)
        for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
            status, body, headers = await in_thread(
                get, f"{url}/matches/{logged.match_id}/log.jsonl", {"Host": host}
            )
            assert status == 421, host
            assert "DNS rebinding" in body
            assert "ODDTRICK_WEB_HOSTS" in body
            assert '"action"' not in body
            assert headers["x-content-type-options"] == "nosniff"
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST", "localhost"):
            status, _, _ = await in_thread(get, f"{url}/matches/{logged.match_id}/log.jsonl", {"Host": host})
            assert status == 200, host
    monkeypatch.setenv("ODDTRICK_WEB_HOSTS", "cards.example, page.example:8000")
    async with web_on(data_dir_of(played)) as url:
        port = port_of(url)
        for host in (f"cards.example:{port}", "page.example"):
            status, _, _ = await in_thread(get, f"{url}/matches", {"Host": host})
            assert status == 200, host
        status, _, _ = await in_thread(get, f"{url}/matches", {"Host": "evil.example"})
        assert status == 421


def test_the_names_the_page_answers_under():
    from oddtrick_referee.web.guard import HostCheck, host_name

    assert host_name("LocalHost:8000") == "localhost"
    assert host_name("[::1]:8000") == "::1"
    assert host_name("[::1]") == "::1"
    assert host_name("cards.example") == "cards.example"
    loopback = HostCheck(lambda *a: None, "127.0.0.1", ["Cards.Example:8000"])
    assert [loopback.allows(n) for n in ("127.0.0.1", "localhost", "::1", "cards.example")] == [True] * 4
    assert not loopback.allows("192.168.1.5")
    assert not loopback.allows("evil.example")
    # Bound to every address, the page answers under any address (a rebinding needs a name).
    everywhere = HostCheck(lambda *a: None, "0.0.0.0")
    assert everywhere.allows("192.168.1.5")
    assert everywhere.allows("fe80::1")
    assert not everywhere.allows("evil.example")
    assert not everywhere.allows("192.168.1.5.evil.example")


async def test_each_call_of_the_auction_says_how_long_its_bot_thought_and_took_to_answer(played):
    logged = played["contract-doubling"]
    calls = len(logged_hands(logged.log_path)[1]["calls"])
    actions = [r for r in read_log(logged.log_path) if r["type"] == "action" and r["hand"] == 1][:calls]
    async with web_on(data_dir_of(played)) as url:
        status, body, _ = await in_thread(get, f"{url}/matches/{logged.match_id}?hand=1&card=0")
    assert status == 200
    auction = body.split('id="auction"', 1)[1].split("</table>", 1)[0]
    titles = re.findall(r'<td title="([^"]*)">', auction)
    assert titles == [decision_time(r) for r in actions]
    assert all(title.startswith("thought ") and ", answered in " in title for title in titles)


def test_every_fault_the_referee_logs_has_words_in_one_place_and_the_script_no_copy():
    """A card the referee played for a seat is said to be the referee's, whatever the fault,
    in the words of the one module the terminal and the page share; the page's script is
    sent them with each fault, so it keeps no words of its own to drift."""
    from oddtrick.rules._words import FAULTS
    from oddtrick_referee.play.table import Fault
    from oddtrick_referee.web.app import STATIC

    logged = {fault.value for fault in Fault} | {"refusal", "disconnect", "reconnect", "forfeit"}
    assert set(FAULTS) == logged
    script = (STATIC / "viewer.js").read_text(encoding="utf-8")
    assert not any(words in script for words in FAULTS.values())


@pytest.mark.parametrize("sent", ["SIGINT", "SIGTERM"])
def test_oddtrick_web_stops_cleanly_on_ctrl_c_and_sigterm(tmp_path, sent):
    """Ctrl-C, or SIGTERM (kill, a service manager), stops the page: exit status 0, no traceback."""
    import signal

    from oddtrick_referee.storage.match_index import MatchStore

    MatchStore(tmp_path / "oddtrick.sqlite3")
    command = [sys.executable, "-m", "oddtrick", "web", "--port", "0", "--data-dir", str(tmp_path)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("web page on http://127.0.0.1:"), line
        url = line.split()[3].rstrip("/")
        assert get(url + "/matches")[0] == 200
        process.send_signal(getattr(signal, sent))
        _, err = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "Traceback" not in err


async def test_a_matchs_downloads_answer_404_with_why_when_it_is_unknown_sealed_or_unreadable(
    played, tmp_path
):
    data_dir = own_copy(played, tmp_path)
    whole = played["classic-cut"].log_path.read_text(encoding="utf-8").splitlines(keepends=True)
    torn = data_dir / "logs" / "torn.jsonl"
    torn.write_text("".join(whole[:-1]), encoding="utf-8")  # no match_end: cannot be replayed
    config = json.dumps(played["classic-cut"].config.to_dict())
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        db.execute(
            "INSERT OR REPLACE INTO matches "
            "(match_id, status, started_at, config, players, log_path, details) "
            "VALUES ('torn', 'finished', 0, ?, '{}', ?, '{\"sealed\": false}')",
            (config, str(torn)),
        )
    downloads = ("replay.json", "analysis.json", "log.jsonl", "match.pbn")
    async with web_on(data_dir) as url:
        answers = {
            (match_id, suffix): await in_thread(get, f"{url}/matches/{match_id}/{suffix}")
            for match_id in ("no-such-match", played["sealed"].match_id, "torn")
            for suffix in downloads
        }
    for suffix in downloads:
        status, body, _ = answers["no-such-match", suffix]
        assert (status, body) == (404, "no such match\n"), suffix
    for suffix in downloads:  # why it is not shown: sealed, not unknown
        status, body, _ = answers[played["sealed"].match_id, suffix]
        assert status == 404, suffix
        assert "sealed" in body, (suffix, body)
        assert body.endswith("\n"), suffix
    for suffix in ("replay.json", "match.pbn"):
        status, body, _ = answers["torn", suffix]
        assert status == 404, suffix
        assert "did not finish" in body, suffix
    assert answers["torn", "log.jsonl"][:2] == (200, "".join(whole[:-1]))
