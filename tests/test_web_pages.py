"""The pages a tournament's players and spectators look for after the standings: each deal at
both tables (the traveller), a page per bot, and the whole tournament in one download. Real
tournaments of the sample bots, the page over HTTP on a real socket."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick_referee.competitions.tournaments.page import Leaderboard, LeaderboardRow, RatingPoint
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.web_support import get

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
HEURISTIC_BOT = ROOT / "sample_bots" / "heuristic_bot.py"


@asynccontextmanager
async def web_on(data_dir: Path, **options: Any) -> AsyncIterator[str]:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, create_app(data_dir, **options), "127.0.0.1:0")
        yield url
        nursery.cancel_scope.cancel()


def _plan(name: str, seed: str, deals: int, set_size: int) -> Any:
    from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings, parse_entry
    from oddtrick_referee.play.table import TableRules

    return TournamentSettings(
        entries=(parse_entry(f"rnd={RANDOM_BOT}"), parse_entry(f"Heu={HEURISTIC_BOT}")),
        config=GameConfig.contract(),
        deals=deals,
        set_size=set_size,
        tables=2,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed=seed,
        name=name,
    )


@pytest.fixture(scope="module")
def cup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A Contract Whist duplicate tournament of four deals (two sets of two), played to its end."""
    from oddtrick_referee.competitions.tournaments.tournament import run_tournament

    data_dir = tmp_path_factory.mktemp("deals-cup")
    standings = trio.run(
        lambda: run_tournament(_plan("pairs cup", "web-deals", 4, 2), data_dir, progress_stream=io.StringIO())
    )
    return data_dir, standings.to_json()


async def _play_one_table_then_stop_its_twin_as_it_begins(
    tournament: Any, progress: Any, master_seed: str
) -> Any:
    """The tournament's play, in an order no timing can change: the set's first table is
    played and recorded, then its twin begins and is stopped at once, as a tournament
    stopped while the twin was being played leaves it (the set is never released)."""
    from oddtrick_referee.competitions.tournaments.competition import PlayedTable, scored
    from oddtrick_referee.competitions.tournaments.tournament_plan import plan_runs

    first, twin = plan_runs(tournament.settings, master_seed)
    await tournament.play_run(first, progress)
    with trio.CancelScope() as stop_the_twin:

        async def play_table(spec: Any, sealed: bool, wait_s: float | None = None) -> PlayedTable:
            record = await tournament.referee.play_match(
                spec, wait_s=wait_s, sealed=sealed, on_start=lambda *_: stop_the_twin.cancel()
            )
            return await scored(record)

        tournament.play_table = play_table
        await tournament.play_run(twin, progress)
    assert stop_the_twin.cancelled_caught, "the twin was stopped, not played to its end"
    return tournament.standings()


@pytest.fixture(scope="module")
def halted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A duplicate tournament stopped while the set's second table was being played."""
    from oddtrick_referee.competitions.tournaments.tournament import run_tournament

    data_dir = tmp_path_factory.mktemp("halted-cup")
    trio.run(
        lambda: run_tournament(
            _plan("halted", "web-halted", 1, 1),
            data_dir,
            progress_stream=io.StringIO(),
            play=_play_one_table_then_stop_its_twin_as_it_begins,
        )
    )
    return data_dir


def get_bytes(url: str) -> tuple[int, bytes, dict[str, str]]:
    """GET ``url`` for a binary body: the status, the bytes and the headers."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        return error.code, error.read(), dict(error.headers)


def rows_of(body: str, table_id: str) -> list[list[str]]:
    """The text of each body row's cells of the table with this id."""
    table = body.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    table = table.split("<tbody>", 1)[1]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in rows]  # fmt: skip


async def test_the_deal_list_and_each_deals_traveller_show_both_tables_and_the_standings_difference(cup):
    data_dir, standings = cup
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    runs = store.table_runs("pairs cup")
    results = {(d.set_number, d.deal_number, d.table): d for d in store.deal_results("pairs cup")}
    async with web_on(data_dir) as url:
        status, body, _ = await in_thread(get, f"{url}/tournaments/{quote('pairs cup', safe='')}")
        assert status == 200
        deals = rows_of(body, "deals")
        differences = []
        every = [(1, 1), (1, 2), (2, 1), (2, 2)]  # two sets of two deals, each played at two tables
        for row, (set_number, deal_number) in zip(deals, every, strict=True):
            match, set_cell, deal_cell, table_1, table_2, difference, _ = row
            assert (set_cell, deal_cell) == (str(set_number), str(deal_number))
            for cell, table in ((table_1, 0), (table_2, 1)):
                played = results[(set_number, deal_number, table)]
                assert cell == f"{played.ns_entry} {played.ns_points}–{played.ew_points} {played.ew_entry}"
            first = match.split(" v ")[0]
            assert difference.startswith(first + " ")
            differences.append(float(difference.split(" ")[-1]))
        # The differences are the deal scores the standings average.
        entry = next(e for e in standings["entries"] if e["entry"] == first)
        assert sum(differences) / len(differences) == pytest.approx(entry["points_per_deal"])

        table_0 = next(r for r in runs if r.set_number == 1 and r.table_no == 0)
        table_1 = next(r for r in runs if r.set_number == 1 and r.table_no == 1)
        status, page, _ = await in_thread(get, f"{url}/matches/{table_0.match_id}?hand=2")
        assert status == 200
        assert f'href="/matches/{table_1.match_id}?hand=2"' in page  # the twin play
        assert '<span class="bot"><a href="/bots/rnd">rnd</a></span>' in page  # each seat's bot page
        assert f'href="/matches/{table_0.match_id}/deals/2"' in page
        status, traveller, _ = await in_thread(get, f"{url}/matches/{table_1.match_id}/deals/2")
        assert status == 200
        missing, _, _ = await in_thread(get, f"{url}/matches/{table_0.match_id}/deals/3")
        unknown, unknown_body, _ = await in_thread(get, f"{url}/matches/no-such-match/deals/1")
        bad = [
            (await in_thread(get, f"{url}/matches/{table_0.match_id}/deals/{n}"))[0] for n in ("x", "0", "-1")
        ]
    assert missing == unknown == 404
    assert bad == [404, 404, 404]
    assert "Not found" in unknown_body
    assert "/static/style.css" in unknown_body
    shown = rows_of(traveller, "traveller")
    assert [row[0] for row in shown] == ["1", "2"]
    for row, run in zip(shown, (table_0, table_1), strict=True):
        _, ns, ew, contract, lead, tricks, score, play = row
        assert (ns, ew, play) == (run.ns_entry, run.ew_entry, run.match_id)
        hand = replay_log(next((data_dir / "logs").glob(f"**/{run.match_id}.jsonl*"))).hands[1]
        if hand.plays:
            assert lead == f"{hand.plays[0].seat.name[0]} {hand.plays[0].card.pretty}"
        assert tricks == f"{hand.result.tricks[0]}–{hand.result.tricks[1]}"
        played = results[(1, 2, run.table_no)]
        assert score == f"{played.ns_points}–{played.ew_points}"
        if hand.contract is None:
            assert contract == "thrown in: all four passed"
        else:
            assert contract.startswith(f"contract {hand.contract.level}{hand.contract.denomination.symbol}")
    assert table_0.ns_entry == table_1.ew_entry  # partnerships swapped
    assert f"<strong>{deals[1][5]}</strong>" in traveller


async def test_a_running_sets_twin_and_deals_are_not_shown(halted):
    store = TournamentStore(halted / "oddtrick.sqlite3")
    runs = store.table_runs("halted")
    assert len(runs) == 1  # one table recorded; its twin never ended
    done = runs[0].match_id
    async with web_on(halted) as url:
        _, listed, _ = await in_thread(get, f"{url}/matches")
        others = [m for m in re.findall(r'data-match="([^"]+)"', listed) if m != done]
        assert others, "the twin was started"
        status, deal_page, _ = await in_thread(get, f"{url}/matches/{done}/deals/1")
        _, standings, _ = await in_thread(get, f"{url}/tournaments/halted")
        status_zip, archive, _ = await in_thread(get_bytes, f"{url}/download/tournament/halted")
        bot_status, bot_page, _ = await in_thread(get, f"{url}/bots/Heu")
    assert bot_status == 200  # an entry of the tournament
    assert done not in bot_page  # its sealed play is not listed, nor counted
    assert status == 200
    assert "still being played" in deal_page
    for twin in others:
        assert twin not in deal_page
    assert "data-card" not in deal_page
    assert 'id="traveller"' not in deal_page
    # Neither the deal nor its double-dummy table is shown before the set is published.
    assert 'id="deal-diagram"' not in deal_page
    assert 'id="dd-table"' not in deal_page
    assert "Double dummy" not in deal_page
    assert 'id="deals"' not in standings
    assert "1 set(s) still being played" in standings
    assert status_zip == 200
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        names = z.namelist()
        readme = z.read("halted/README.txt").decode()
        pbn_text = z.read("halted/halted.pbn").decode()
    assert not any(name.endswith(".jsonl") for name in names)
    assert done in readme
    assert "Board" not in pbn_text


class Ladder:
    """A ladder as the web page reads one (the interface the ladder plugs in with): Heu is on
    it, with three rated matches."""

    history = (
        RatingPoint(1_700_000_000_000, "ladder-1", 2.0),
        RatingPoint(1_700_000_600_000, "ladder-2", 5.5),
        RatingPoint(1_700_001_200_000, "ladder-3", 4.5),
    )

    def leaderboard(self) -> Leaderboard:
        return Leaderboard("Ladder", [LeaderboardRow(1, "Heu", 4.5, 2.0, 3, 1_700_001_200_000)])

    def rating_history(self, name: str) -> list[RatingPoint]:
        return list(self.history) if name == "Heu" else []


async def test_a_bots_page_gives_its_record_faults_think_times_matches_and_rating(cup):
    data_dir, standings = cup
    heu = next(e for e in standings["entries"] if e["entry"] == "Heu")
    async with web_on(data_dir, leaderboard=Ladder()) as url:
        status, page, headers = await in_thread(get, f"{url}/bots/Heu")
        _, rnd_page, _ = await in_thread(get, f"{url}/bots/rnd")
        _, board, _ = await in_thread(get, f"{url}/leaderboard")
        _, tournament, _ = await in_thread(get, f"{url}/tournaments/{quote('pairs cup', safe='')}")
        _, matches, _ = await in_thread(get, f"{url}/matches")
        unknown = [(await in_thread(get, f"{url}/bots/{name}"))[:2] for name in ("nobody", "Heu~0", "heu")]
    assert status == 200
    assert "default-src 'self'" in headers["content-security-policy"]
    won, drawn, lost = (heu["matches"][k] for k in ("won", "drawn", "lost"))
    assert rows_of(page, "tournament-record") == [
        ["rnd", str(won), str(drawn), str(lost), str(heu["deals"]), f"{heu['points_per_deal']:+.2f}"]
    ]
    faults = heu["faults"]
    assert rows_of(page, "faults") == [
        [
            str(faults[k])
            for k in ("timeouts", "clock", "illegal", "disconnected", "forfeits", "refusals", "bot_errors")
        ]
    ]
    buckets = rows_of(page, "think-times")
    assert sum(int(row[1]) for row in buckets) == heu["time"]["answered"] > 0
    assert len(rows_of(page, "matches")) == 4
    assert 'href="/bots/rnd"' in page
    # The rating over time, drawn on the server: a point per rated match, no script.
    chart = page.split('id="rating-chart"', 1)[1].split("</svg>", 1)[0]
    points = re.search(r'<polyline points="([^"]+)"', chart)
    assert points is not None
    assert len(points.group(1).split()) == 3
    assert chart.count("<circle") == 3
    assert "<script" not in page
    assert "rating between 2.0 and 5.5, 4.5 after its last rated match" in page
    assert 'id="rating-chart"' not in rnd_page  # not on the ladder
    assert rows_of(rnd_page, "tournament-record")[0][0] == "Heu"
    # Names link to it wherever a person reads them.
    assert '<a href="/bots/Heu">Heu</a>' in board
    assert '<a href="/bots/Heu">Heu</a>' in tournament
    assert 'class="bot-link" href="/bots/Heu">Heu</a>' in matches
    for status_code, body in unknown:
        assert status_code == 404
        assert "Not found" in body


async def test_a_whole_tournament_downloads_as_one_zip_of_its_logs_and_pbn(cup):
    from endplay.parsers import pbn
    from endplay.types import ContractBid, Player

    data_dir, _ = cup
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    match_ids = [m for m, _, _ in store.table_matches("pairs cup")]
    async with web_on(data_dir) as url:
        _, standings_page, _ = await in_thread(get, f"{url}/tournaments/{quote('pairs cup', safe='')}")
        link = re.search(r'<a href="(/download/tournament/[^"]+)" download>', standings_page)
        assert link is not None
        status, archive, headers = await in_thread(get_bytes, url + link.group(1))
        _, log_text, _ = await in_thread(get, f"{url}/matches/{match_ids[0]}/log.jsonl")
        missing, _, _ = await in_thread(get_bytes, f"{url}/download/tournament/no-such-cup")
    assert status == 200
    assert missing == 404
    assert headers["content-type"] == "application/zip"
    assert 'filename="pairs_cup.zip"' in headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(archive)) as z:
        assert z.testzip() is None
        logs = sorted(n for n in z.namelist() if n.endswith(".jsonl"))
        assert logs == sorted(f"pairs_cup/logs/{m}.jsonl" for m in match_ids)
        assert z.read(f"pairs_cup/logs/{match_ids[0]}.jsonl").decode() == log_text
        text = z.read("pairs_cup/pairs_cup.pbn").decode()
    boards = pbn.loads(text)
    assert len(boards) == 2 * len(match_ids)  # two deals a table
    assert {board.info["MatchId"] for board in boards} == set(match_ids)
    auctions = re.findall(r'\[Dealer "([NESW])"\].*?\[Auction "([NESW])"\]', text, re.S)
    assert len(auctions) == len(boards)
    for board, (dealer, first) in zip(boards, auctions, strict=True):
        assert board.info["Scoring"] == "ContractWhist"
        # The first call is the dealer's left's, and the Auction tag says so.
        assert Player.find(first) == Player.find(dealer).lho
        bids = [(k, bid) for k, bid in enumerate(board.auction) if isinstance(bid, ContractBid)]
        if not bids:
            assert board.contract.level == 0
            continue
        # Contract Whist's declarer is whoever made the last bid: counted from the first caller.
        at, last = bids[-1]
        assert Player.find(first).next(at) == board.contract.declarer
        assert (last.level, last.denom) == (board.contract.level, board.contract.denom)


async def test_in_a_browser_the_links_to_both_tables_follow_the_hand_shown(cup):
    """The one part that needs the script: the replay steps from hand to hand without a new
    page, and the links to this deal at both tables and at the other table go with it."""
    from tests.web_support import browser_page

    data_dir, _ = cup
    runs = TournamentStore(data_dir / "oddtrick.sqlite3").table_runs("pairs cup")
    table_0 = next(r for r in runs if r.set_number == 1 and r.table_no == 0).match_id
    table_1 = next(r for r in runs if r.set_number == 1 and r.table_no == 1).match_id

    def drive(url: str) -> tuple[list[str | None], list[str | None], list[str]]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{table_0}?hand=1&card=0")
            before = [page.get_attribute(f"#{i}", "href") for i in ("traveller-link", "twin-link")]
            page.select_option("#hand-picker", "2")
            after = [page.get_attribute(f"#{i}", "href") for i in ("traveller-link", "twin-link")]
            page.click("#traveller-link")
            page.wait_for_selector("#traveller")
            plays = page.eval_on_selector_all("#traveller tbody tr", "rows => rows.map(r => r.dataset.table)")
            return before, after, plays

    async with web_on(data_dir) as url:
        before, after, plays = await in_thread(drive, url)
    assert before == [f"/matches/{table_0}/deals/1", f"/matches/{table_1}?hand=1"]
    assert [href.rsplit("/", 1)[-1] if href else href for href in after] == ["2", f"{table_1}?hand=2"]
    assert plays == ["0", "1"]


def ladder_with_two_rated_matches(folder: Path) -> tuple[Any, Any, Any]:
    """A ladder's own store in ``folder`` with two rated matches of a1..a4 against b1..b4: its
    leaderboard (as ``oddtrick web`` plugs it in), its store and the database to close."""
    from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings
    from oddtrick_referee.competitions.ladder.web_source import LadderLeaderboard
    from oddtrick_referee.storage.database import open_database
    from oddtrick_referee.storage.ladder_store import LadderStore, RatingChange

    settings = RatingSettings()
    database = open_database(None, folder, "ladder.sqlite3")
    store = LadderStore(database, settings.mu, settings.sigma)
    teams = [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]]
    lineup = {
        "tables": [
            {"N": "a1", "S": "a2", "E": "b1", "W": "b2"},
            {"N": "b3", "S": "b4", "E": "a3", "W": "a4"},
        ],
        "teams": teams,
    }
    for name in teams[0] + teams[1]:
        store.register(name, now_ms=1)
    for number, (mu, sigma) in enumerate(((27.0, 7.0), (29.5, 6.0)), start=1):
        match_id = f"ladder-{number}"
        store.plan_match(match_id, f"c{number}", lineup, {"game": "contract"}, now_ms=10 * number)
        assert store.claim_match(match_id, "referee-1")

        def rate(current: dict[str, Any], mu: float = mu, sigma: float = sigma) -> list[RatingChange]:
            return [RatingChange(n, mu, sigma, "win") for n in teams[0]] + [
                RatingChange(n, 50.0 - mu, sigma, "loss") for n in teams[1]
            ]

        store.finish_match(match_id, "finished", "seed", 12, "a", [(1, 12)], rate, {}, now_ms=10 * number + 5)
    source = LadderLeaderboard(store, Rater(settings), "Ladder")
    return source, store, database


async def test_a_ladder_entrants_page_charts_the_rating_the_leaderboard_ranks_by(tmp_path):
    """The ladder's own store and leaderboard, as ``oddtrick web`` plugs them in: two rated
    matches, and the chart ends at the bot's stored rating, as the leaderboard ranks by it."""
    from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings

    settings = RatingSettings()
    source, store, database = ladder_with_two_rated_matches(tmp_path)
    try:
        async with web_on(tmp_path, leaderboard=source) as url:
            status, page, _ = await in_thread(get, f"{url}/bots/a1")
            _, board, _ = await in_thread(get, f"{url}/leaderboard")
        entrant = store.entrant("a1")
    finally:
        database.close()
    assert status == 200
    assert '<a href="/bots/a1">a1</a>' in board
    chart = page.split('id="rating-chart"', 1)[1].split("</svg>", 1)[0]
    assert chart.count("<circle") == 2
    rating = Rater(settings).conservative
    from oddtrick_referee.competitions.ladder.ratings import Rating

    first, last = rating(Rating(27.0, 7.0)), rating(Rating(29.5, 6.0))
    assert entrant is not None
    stored = rating(Rating(entrant.mu, entrant.sigma))
    assert f"rating between {min(first, last):.1f} and {max(first, last):.1f}, {last:.1f} after" in page
    assert stored == last
    assert "No match of it may be seen yet." in page  # the ladder's matches are not in this folder
