"""The traveller and "play on from here" laid out for reading, in a real headless Chromium
beside a tournament played on a real referee by the sample bots as processes: on a desktop
the traveller's table fits the page with long entry names and the two lines of a play-on
stand side by side, a trick a line; on a phone the deal diagram keeps the compass and every
stacked label stands apart from its value."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
from tournament_support import run_tournament, sample_bot

from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.web_support import browser_page, chromium_path

LONG = ("a-rather-long-entrant-name-rnd", "another-long-entrant-name-heu")
"""Entry names as long as a team's on a ladder table, which once pushed the traveller's
score and play columns off a desktop page."""


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chromium_path()
    directory = tmp_path_factory.mktemp("layout")
    run_tournament(directory, deals=1, bots={LONG[0]: sample_bot("random"), LONG[1]: sample_bot("heuristic")})
    return directory


def _first_table(data_dir: Path) -> str:
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    runs = store.table_runs(store.tournaments()[0].tournament_id)
    return next(run.match_id for run in runs if run.table_no == 0)


async def _drive(data_dir: Path, drive: Any) -> Any:
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, create_app(data_dir), "127.0.0.1:0")
        with trio.fail_after(240):
            found = await in_thread(drive, url, _first_table(data_dir))
        nursery.cancel_scope.cancel()
    return found


BOXES = """() => Object.fromEntries([...document.querySelectorAll('#deal-diagram .hand-record')].map((n) => {
  const r = n.getBoundingClientRect();
  return [n.dataset.seat, { left: r.left, right: r.right, top: r.top, bottom: r.bottom }];
}))"""

GAPS = """() => {
  // For each stacked cell: the room between its label (the ::before) and its value.
  const ctx = document.createElement('canvas').getContext('2d');
  return [...document.querySelectorAll('#traveller td[data-label]')].map((td) => {
    const before = getComputedStyle(td, '::before');
    ctx.font = before.font;
    const label = Math.max(ctx.measureText(td.dataset.label).width, parseFloat(before.minWidth) || 0);
    const range = document.createRange();
    range.selectNodeContents(td);
    const value = [...range.getClientRects()].find((r) => r.width > 0);
    const start = td.getBoundingClientRect().left + parseFloat(getComputedStyle(td).paddingLeft);
    return [td.dataset.label, value.left - start - label];
  });
}"""


def _traveller(url: str, match_id: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with browser_page(1280, 800) as page:
        page.goto(f"{url}/matches/{match_id}/deals/1")
        seen["desk"] = page.evaluate(
            "() => { const s = document.getElementById('traveller').parentElement;"
            " return [s.scrollWidth, s.clientWidth]; }"
        )
    with browser_page(390, 844) as page:
        page.goto(f"{url}/matches/{match_id}/deals/1")
        seen["boxes"] = page.evaluate(BOXES)
        seen["gaps"] = page.evaluate(GAPS)
        seen["width"] = page.evaluate("document.documentElement.scrollWidth")
    return seen


async def test_the_traveller_fits_a_desktop_and_keeps_the_compass_and_its_labels_on_a_phone(data_dir):
    seen = await _drive(data_dir, _traveller)
    scroll_width, client_width = seen["desk"]
    assert scroll_width <= client_width, "the traveller's table runs off a 1280 px page"
    boxes = seen["boxes"]
    assert set(boxes) == {"N", "E", "S", "W"}
    assert boxes["N"]["bottom"] <= min(boxes["W"]["top"], boxes["E"]["top"])
    assert boxes["W"]["right"] <= boxes["E"]["left"]
    assert boxes["S"]["top"] >= max(boxes["W"]["bottom"], boxes["E"]["bottom"])
    assert boxes["W"]["left"] < boxes["N"]["left"] < boxes["E"]["left"]
    assert boxes["W"]["left"] < boxes["S"]["left"] < boxes["E"]["left"]
    assert seen["width"] <= 390
    assert {label for label, _ in seen["gaps"]} >= {"Contract or trumps", "Tricks NS–EW", "Score NS–EW"}
    touching = [label for label, gap in seen["gaps"] if gap < 3]
    assert not touching, f"labels run into their values at 390 px: {touching}"


LINES = """() => {
  const line = (name) => {
    const box = document.querySelector('#play-on-result [data-line=' + name + ']');
    const r = box.getBoundingClientRect();
    const rows = [...box.querySelectorAll('li')].map((li) => {
      const plays = [...li.querySelectorAll('.play')].map((p) => p.getBoundingClientRect());
      return { tops: new Set(plays.map((p) => Math.round(p.top))).size,
               height: li.getBoundingClientRect().height, play: plays[0].height };
    });
    return { left: r.left, right: r.right, rows };
  };
  return { on: line('played-on'), as: line('as-played') };
}"""


def _play_on(url: str, match_id: str) -> dict[str, Any]:
    with browser_page(1280, 800) as page:
        page.goto(f"{url}/matches/{match_id}?hand=1&card=8")
        page.check("#play-on-form input[value=W]")
        page.select_option("#play-on-bot", "random")
        page.select_option("#play-on-others", "dd")
        page.click("#play-on-run")
        page.wait_for_selector("#play-on-result [data-line=as-played] .outcome", timeout=120_000)
        found: dict[str, Any] = page.evaluate(LINES)
    return found


async def test_play_on_shows_its_two_lines_side_by_side_a_trick_a_line_on_a_desktop(data_dir):
    lines = await _drive(data_dir, _play_on)
    on, played = lines["on"], lines["as"]
    assert on["right"] <= played["left"], "the two lines of play are not side by side"
    assert on["right"] - on["left"] >= 400, "each line has room for a trick on one line"
    for row in on["rows"] + played["rows"]:
        assert row["tops"] == 1
        assert row["height"] < 2 * row["play"], "a trick wraps onto a second line"


ARROWS = """() => [...document.querySelectorAll('#trick-list li')].map((li) => {
  // The trick's "→ WINNER": the lines its text is laid on.
  const walker = document.createTreeWalker(li, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode()) && !node.textContent.includes('→')) {}
  const range = document.createRange();
  range.setStart(node, node.textContent.indexOf('→'));
  range.setEnd(node, node.textContent.length);
  return [range.toString(), new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
})"""


def _trick_list(url: str, match_id: str) -> dict[int, list[tuple[str, int]]]:
    seen: dict[int, list[tuple[str, int]]] = {}
    for width, height in ((1280, 800), (390, 844)):
        with browser_page(width, height) as page:
            page.goto(f"{url}/matches/{match_id}?hand=1&card=52")
            page.wait_for_selector("#accuracy-panel:not([hidden])", timeout=120_000)
            seen[width] = page.evaluate(ARROWS)
    return seen


async def test_each_tricks_winner_stays_beside_its_arrow_in_the_trick_list(data_dir):
    """The best cards named after costly ones make the trick list's lines wrap: the winner
    must not be left on a line of its own, away from its arrow."""
    seen = await _drive(data_dir, _trick_list)
    for width, arrows in seen.items():
        assert len(arrows) == 13
        split = [text for text, lines in arrows if lines != 1]
        assert not split, f"at {width} px the winner is parted from its arrow: {split}"
