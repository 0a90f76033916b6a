"""Every page passes axe-core's checks (WCAG 2.1 A and AA, and its best practices) in a real
headless Chromium, and ours beside them: controls labelled, landmarks, an aria-live region for
the card played and the score, every chart titled, every control reachable by the keyboard.

axe-core comes inside the ``axe-playwright-python`` wheel (a dev dependency), so nothing is
fetched at test time; Playwright evaluates it in the page, past the page's own CSP. A failure
names the rule and the element."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.test_web_pages import _plan, ladder_with_two_rated_matches
from tests.web_support import browser_page, chromium_path

OUR_CHECKS = """() => {
  const problems = [];
  const name = (n) => n.tagName.toLowerCase() + (n.id ? '#' + n.id : '') +
    (typeof n.className === 'string' && n.className ? '.' + n.className.split(' ').join('.') : '');
  for (const tag of ['header', 'nav', 'main']) {
    if (!document.querySelector(tag)) problems.push('no <' + tag + '> landmark');
  }
  if (!document.querySelector('h1')) problems.push('no <h1>');
  if (document.getElementById('table') && !document.querySelector('[aria-live]')) {
    problems.push('div#table: a card table without an aria-live region for the card played and the score');
  }
  for (const svg of document.querySelectorAll('svg')) {
    const titled = svg.querySelector(':scope > title') || svg.getAttribute('aria-label') ||
      svg.getAttribute('aria-labelledby');
    if (!titled && svg.getAttribute('aria-hidden') !== 'true') {
      problems.push(name(svg) + ': a chart without a title');
    }
  }
  for (const control of document.querySelectorAll('button, select, input, [role=button], [tabindex]')) {
    if (control.type === 'hidden') continue;
    const labelled = (control.labels && control.labels.length) || control.getAttribute('aria-label') ||
      control.getAttribute('aria-labelledby') ||
      (control.tagName === 'BUTTON' && control.textContent.trim()) || control.querySelector(':scope > title');
    if (!labelled) problems.push(name(control) + ': a control without a label');
    if (control.tabIndex < 0) problems.push(name(control) + ': a control the keyboard cannot reach');
  }
  return problems;
}"""


def axe_problems(page: Any) -> list[str]:
    """axe-core's violations of WCAG 2.1 A/AA and its best practices, each with its elements."""
    from axe_playwright_python.sync_playwright import Axe

    options = {
        "runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}
    }
    results = Axe().run(page, options=options)
    return [
        f"{v['id']} ({v['help']}): {', '.join(str(node['target']) for node in v['nodes'])}"
        for v in results.response["violations"]
    ]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, dict[str, str]]:
    """A data folder with a finished duplicate tournament and a ladder's ratings beside it."""
    chromium_path()
    from oddtrick_referee.competitions.tournament import run_tournament

    data_dir = tmp_path_factory.mktemp("a11y")
    trio.run(lambda: run_tournament(_plan("a11y cup", "a11y", 2, 2), data_dir, progress_stream=io.StringIO()))
    match_id = TournamentStore(data_dir / "oddtrick.sqlite3").table_runs("a11y cup")[0]["match_id"]
    source, _, database = ladder_with_two_rated_matches(data_dir)
    pages = {
        "home": "/",
        "matches": "/matches",
        "replay": f"/matches/{match_id}?hand=1&card=6",
        "traveller": f"/matches/{match_id}/deals/1",
        "tournaments": "/tournaments",
        "standings": "/tournaments/a11y%20cup",
        "bot": "/bots/rnd",
        "rated bot": "/bots/a1",
        "leaderboard": "/leaderboard",
    }
    yield data_dir, source, pages
    database.close()


async def test_every_page_passes_axe_and_our_own_checks(site):
    data_dir, source, pages = site

    said: list[str] = []

    def drive(url: str) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        said.clear()
        with browser_page() as page:
            for what, path in pages.items():
                page.goto(url + path)
                if what == "replay":
                    page.wait_for_selector("#analysis-chart svg", timeout=120_000)
                found[what] = axe_problems(page) + page.evaluate(OUR_CHECKS)
                if what == "replay":
                    page.keyboard.press("ArrowRight")
                    page.wait_for_function("() => location.search.includes('card=7')")
                    said.append(page.inner_text("#announce"))
        return found

    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, create_app(data_dir, leaderboard=source), "127.0.0.1:0")
        found = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    problems = [f"{what} page: {problem}" for what, listed in found.items() for problem in listed]
    assert not problems, "\n".join(problems)
    seventh = played_cards(data_dir, pages["replay"])[6]
    assert f" played {seventh}" in said[0]
    assert "Tricks NS " in said[0]


def played_cards(data_dir: Path, path: str) -> list[str]:
    """The first hand's cards, in play order and as people read them (♠Q), from the log."""
    from oddtrick.rules import Card
    from tests.test_replay import logged_hands

    match_id = path.split("/")[2].split("?")[0]
    log = next((data_dir / "logs").rglob(f"{match_id}.jsonl*"))
    return [Card.parse(text).pretty for _, text in logged_hands(log)[1]["cards"]]
