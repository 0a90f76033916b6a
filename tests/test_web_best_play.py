"""The replay as an analysis board, in a real headless Chromium beside a real referee: at a
step, every legal card of the seat to play carries its double-dummy tricks, as
``oddtrick analyze --json`` computes them; each seat's accuracy (inaccuracies, mistakes,
blunders) on the match page, in ``oddtrick analyze`` and summed on the bot's page; and the
traveller's deal diagram, opening leads and double-dummy table, checked against the solver
asked position by position (SolveBoard, not the table call the page uses)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
from tournament_support import run_tournament

from oddtrick.double_dummy import Position, solve
from oddtrick.rules import Card, Denomination, Seat
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.web_support import browser_page, chromium_path, get


def _tournament(directory: Path, game: str) -> Path:
    """A duplicate tournament of two deals: the referee on a socket, the sample bots as processes."""
    run_tournament(directory, game=game)
    return directory


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    chromium_path()
    return {game: _tournament(tmp_path_factory.mktemp(game), game) for game in ("contract", "classic")}


def _logs(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "logs").glob("*.jsonl"))


def _analyze_json(*logs: Path) -> dict[str, Any]:
    """What `oddtrick analyze --json` prints, run as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "oddtrick", "analyze", "--json", *map(str, logs)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


async def _serving(data_dir: Path, nursery: trio.Nursery) -> str:
    url: str = await nursery.start(serve_web, create_app(data_dir), "127.0.0.1:0")
    return url


async def _analysed(url: str, match_id: str) -> None:
    """Ask for the match's analysis until it is computed (the first request queues it)."""
    with trio.fail_after(120):
        while '"ready"' not in (await in_thread(get, f"{url}/matches/{match_id}/analysis.json"))[1]:
            await trio.sleep(0.2)


SHOWN = """() => {
  const cards = [...document.querySelectorAll('#table [data-dd-card]')];
  const values = {};
  for (const node of cards) values[node.dataset.ddCard] = +node.querySelector('sub.dd').dataset.dd;
  return {
    seat: [...new Set(cards.map((n) => n.closest('.seat').dataset.seat))],
    values,
    played: cards.filter((n) => n.classList.contains('dd-played-card')).map((n) => n.dataset.ddCard),
    best: cards.filter((n) => n.querySelector('sub.dd-best')).map((n) => n.dataset.ddCard),
    position: document.getElementById('position').textContent,
    named: [...document.querySelectorAll('#trick-list .play')].map((p) =>
      [p.querySelector('[data-card]').dataset.card,
       (p.querySelector('.best') || {dataset: {}}).dataset.best || '']),
  };
}"""

STEPS = [(1, 1), (1, 6), (1, 17), (2, 30), (2, 47)]
"""(hand, cards played) of the five positions read: a lead, mid-trick, later tricks."""


@pytest.mark.parametrize("game", ["contract", "classic"])
async def test_clicking_a_step_shows_every_legal_cards_double_dummy_tricks_as_analyze_does(folders, game):
    log = _logs(folders[game])[0]
    truth = _analyze_json(log)["logs"][0]
    hands = {hand["hand"]: hand for hand in truth["hands"]}
    match_id = log.stem

    def drive(url: str) -> list[dict[str, Any]]:
        seen = []
        with browser_page() as page:
            for hand, card in STEPS:
                page.goto(f"{url}/matches/{match_id}?hand={hand}&card={card - 1}")
                page.wait_for_selector("#table sub.dd", timeout=120_000)
                page.click("[data-step=forward]")  # the step: one card on
                page.wait_for_function(f"() => location.search.includes('card={card}')")
                seen.append(page.evaluate(SHOWN))
        return seen

    async with trio.open_nursery() as nursery:
        url = await _serving(folders[game], nursery)
        await _analysed(url, match_id)
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    for (hand, card), shown in zip(STEPS, seen, strict=True):
        expected = hands[hand]["cards"][card]  # the card played from this position
        assert shown["position"].endswith(f"card {card}/52")
        assert shown["seat"] == [expected["seat"]]
        assert shown["values"] == expected["options"]
        assert len(shown["values"]) >= 1
        assert shown["played"] == [expected["card"]]
        assert sorted(shown["best"]) == sorted(expected["best"])
        assert max(expected["options"].values()) == expected["before"]
        assert expected["options"][expected["card"]] == expected["after"]
        # Every costly card of the trick list names the best card(s).
        for index, (played, named) in enumerate(shown["named"]):
            done = hands[hand]["cards"][index]
            assert played == done["card"]
            assert named == (" ".join(done["best"]) if done["lost"] else "")


def _grades(cards: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Inaccuracies, mistakes, blunders: cards that lost 1, 2, and 3 or more tricks."""
    return (
        sum(c["lost"] == 1 for c in cards),
        sum(c["lost"] == 2 for c in cards),
        sum(c["lost"] >= 3 for c in cards),
    )


async def test_each_seats_accuracy_on_the_match_page_and_in_analyze(folders):
    log = _logs(folders["contract"])[0]
    truth = _analyze_json(log)
    cards = [card for hand in truth["logs"][0]["hands"] for card in hand["cards"]]
    assert any(card["lost"] for card in cards), "random bots lose tricks double dummy"

    def drive(url: str) -> list[dict[str, str]]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{log.stem}")
            page.wait_for_selector("#accuracy tbody tr", timeout=120_000)
            return page.eval_on_selector_all(
                "#accuracy tbody tr",
                "rows => rows.map(r => Object.fromEntries("
                "[...r.cells].map(c => [c.dataset.key, c.textContent])))",
            )

    async with trio.open_nursery() as nursery:
        url = await _serving(folders["contract"], nursery)
        rows = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert [row["seat"] for row in rows] == ["North", "East", "South", "West"]
    for row in rows:
        letter = row["seat"][0]
        mine = [card for card in cards if card["seat"] == letter]
        totals = truth["seats"][f"{log.stem}:{letter}"]
        graded = _grades(mine)
        assert (totals["inaccuracies"], totals["mistakes"], totals["blunders"]) == graded
        assert (int(row["inaccuracies"]), int(row["mistakes"]), int(row["blunders"])) == graded
        assert int(row["lost"]) == sum(card["lost"] for card in mine) == totals["lost"]
        assert int(row["cards"]) == len(mine) == 26
        accurate = sum(not card["lost"] for card in mine)
        assert row["accuracy"] == f"{round(100 * accurate / len(mine))}%"
    text = subprocess.run(
        [sys.executable, "-m", "oddtrick", "analyze", str(log)], check=True, capture_output=True, text=True
    ).stdout
    assert "?! inaccuracy: a card that lost 1 trick; ? mistake: 2; ?? blunder: 3 or more" in text
    for name, totals in truth["bots"].items():
        line = next(line for line in text.splitlines() if line.split()[:1] == [name])
        numbers = line.split()[1:]
        assert numbers[:2] == [str(totals["hands"]), str(totals["lost"])]
        assert numbers[3:6] == [str(totals["inaccuracies"]), str(totals["mistakes"]), str(totals["blunders"])]
    costly = next(card for card in cards if card["lost"])
    best = " ".join(Card.parse(text).pretty for text in costly["best"])
    assert f"lost {costly['lost']} (best {best}: {costly['before']})" in text


async def test_a_bots_page_sums_its_accuracy_over_its_analysed_matches(folders, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(folders["contract"], data_dir, ignore=shutil.ignore_patterns("analysis", "*.lock"))
    logs = _logs(data_dir)
    truth = _analyze_json(*logs)["bots"]["random"]
    async with trio.open_nursery() as nursery:
        url = await _serving(data_dir, nursery)
        _, before, _ = await in_thread(get, f"{url}/bots/random")
        for log in logs:
            await _analysed(url, log.stem)
        _, after, _ = await in_thread(get, f"{url}/bots/random")
        nursery.cancel_scope.cancel()
    assert "None of its matches has been analysed yet" in before
    assert 'id="accuracy"' not in before
    cells = dict(re.findall(r'<td class="num" data-key="([a-z-]+)">([^<]*)</td>', after))
    assert f"Over its {len(logs)} analysed match(es) here ({truth['hands']} hands" in after
    assert int(cells["lost"]) == truth["lost"] > 0
    assert int(cells["cards"]) == truth["cards"] == 13 * truth["hands"]
    assert [int(cells[k]) for k in ("inaccuracies", "mistakes", "blunders")] == [
        truth["inaccuracies"],
        truth["mistakes"],
        truth["blunders"],
    ]
    assert cells["per-hand"] == f"{truth['per_hand']:.2f}"


def _declarer_tricks(hands: tuple[tuple[Card, ...], ...], denomination: Denomination, declarer: Seat) -> int:
    """The declarer's side's tricks, its left leading: 13 less the leader's best, asked of
    SolveBoard at the opening lead."""
    scores = solve([Position(hands, denomination.suit, declarer.left)])[0]  # type: ignore[arg-type]
    return 13 - max(scores.values())


def _cells(page: str, table_id: str) -> list[list[str]]:
    table = page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0].split("<tbody>", 1)[1]
    return [
        [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)
    ]


@pytest.mark.parametrize("game", ["contract", "classic"])
async def test_the_traveller_shows_the_deal_each_tables_lead_and_the_double_dummy_table(folders, game):
    data_dir = folders[game]
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    runs = [run for run in store.table_runs(store.tournaments()[0].tournament_id) if run.set_number == 1]
    first = next(r for r in runs if r.table_no == 0)
    async with trio.open_nursery() as nursery:
        url = await _serving(data_dir, nursery)
        status, page, _ = await in_thread(get, f"{url}/matches/{first.match_id}/deals/1")
        nursery.cancel_scope.cancel()
    assert status == 200
    replays = {run.table_no: replay_log(data_dir / "logs" / f"{run.match_id}.jsonl").hands[0] for run in runs}
    dealt = replays[0]
    # The diagram: every seat's cards as dealt, by suit, spades first, high cards first.
    for seat in Seat:
        block = page.split(f'class="hand-record hand-{seat.name[0]}"', 1)[1].split("</div>\n", 1)[0]
        shown = re.findall(r'data-suit="(.)">([^<]*)<', block)
        for symbol, ranks in shown:
            held = sorted((c for c in dealt.deal[seat] if c.suit.symbol == symbol), key=lambda c: -c.rank)
            assert ranks == (" ".join(c.rank.label for c in held) or "—")
        assert [s for s, _ in shown] == ["♠", "♥", "♦", "♣"]
    # Each table's opening lead: the first card of its log's play.
    rows = _cells(page, "traveller")
    leads = [row[4] for row in rows]
    expected = [
        f"{replays[n].plays[0].seat.name[0]} {replays[n].plays[0].card.pretty}" if replays[n].plays else "n/a"
        for n in sorted(replays)
    ]
    assert leads == expected
    # The double-dummy table, every cell asked of the solver another way.
    hands = tuple(tuple(dealt.deal[seat]) for seat in Seat)
    table = _cells(page, "dd-table")
    order = [
        Denomination.NO_TRUMPS,
        Denomination.SPADES,
        Denomination.HEARTS,
        Denomination.DIAMONDS,
        Denomination.CLUBS,
    ]
    assert len(table) == 5
    for row, denomination in zip(table, order, strict=True):
        assert row[0].startswith(denomination.symbol)
        declarers = (Seat.NORTH, Seat.SOUTH, Seat.EAST, Seat.WEST)
        assert [int(n) for n in row[1:]] == [
            _declarer_tricks(hands, denomination, seat) for seat in declarers
        ]
    marked = re.findall(r'<tr data-denomination="([A-Z]+)" class="this-table"', page)
    if game == "classic":
        assert marked == [Denomination(dealt.trumps).letters if dealt.trumps is not None else "NT"]
        assert "With perfect play the dealer" in page
    else:
        assert marked == []
        assert "Par: " in page


async def test_a_ladder_tables_page_links_its_twin_the_team_result_and_the_traveller(folders, tmp_path):
    """Two twin tables played on the referee, recorded by a ladder's own store as the two
    tables of one ladder match (as ``ladder serve`` records its tables), its leaderboard
    plugged into the page as ``oddtrick web`` plugs it."""
    from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings
    from oddtrick_referee.competitions.ladder.web_source import LadderLeaderboard
    from oddtrick_referee.storage.database import open_database
    from oddtrick_referee.storage.ladder_store import LadderStore

    data_dir = folders["contract"]
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    runs = sorted(
        (run for run in store.table_runs(store.tournaments()[0].tournament_id) if run.set_number == 1),
        key=lambda run: run.table_no,
    )
    tables = [run.match_id for run in runs]
    settings = RatingSettings()
    database = open_database(None, tmp_path, "ladder.sqlite3")
    ladder = LadderStore(database, settings.mu, settings.sigma)
    lineup = {
        "tables": [
            {"N": "a1", "S": "a2", "E": "b1", "W": "b2"},
            {"N": "b1", "S": "b2", "E": "a1", "W": "a2"},
        ],
        "teams": [["a1", "a2"], ["b1", "b2"]],
    }
    for name in ("a1", "a2", "b1", "b2"):
        ladder.register(name, now_ms=1)
    assert ladder.open_match("lm-1", "c", lineup, {"game": "contract"}, tables, "referee-1", 10)
    ladder.finish_match("lm-1", "finished", "seed", 7, "a", [(1, 9), (2, -2)], lambda _: [], {}, now_ms=20)
    source = LadderLeaderboard(ladder, Rater(settings), "Ladder")
    try:
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve_web, create_app(data_dir, leaderboard=source), "127.0.0.1:0")
            _, page, _ = await in_thread(get, f"{url}/matches/{tables[0]}?hand=1")
            status, deal, _ = await in_thread(get, f"{url}/matches/{tables[0]}/deals/1")
            nursery.cancel_scope.cancel()
    finally:
        database.close()
    links = page.split('id="ladder"', 1)[1].split("</p>", 1)[0]
    assert "Ladder match lm-1, table 1 of 2" in links
    assert (
        "team A (a1 + a2) v team B (b1 + b2): team A +7 over 2 deals played at both tables: won by team A"
        in links
    )
    assert f'href="/matches/{tables[1]}?hand=1"' in links
    assert f'href="/matches/{tables[0]}/deals/1"' in links
    assert status == 200
    assert "Ladder match lm-1" in deal
    assert [row[-1] for row in _cells(deal, "traveller")] == tables
    assert "as the ladder rates it: <strong>+9</strong>" in deal
    assert 'id="dd-table"' in deal
    assert 'id="deal-diagram"' in deal
