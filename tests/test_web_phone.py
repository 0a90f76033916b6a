"""Every route of the web page, read from the application's own router (a route added later
is visited too), at a desktop's 1280×800 and a phone's 390×844 in a real headless Chromium:
no page is wider than the screen, no column of a table is off screen unless the page says
so and how to see it, and a table laid out as labelled lines keeps each label apart from
its value. Its path parameters come from a real site (tests/site_support.py)."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import trio
from starlette.routing import Mount, Route

from oddtrick_referee.competitions.people.in_browser import Sittings
from oddtrick_referee.web.app import STATIC, create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.site_support import Site, build_site
from tests.web_support import browser_page, chromium_path

SIZES = [(1280, 800), (390, 844)]
VISIBLE_TEXT = "n => n.filter(t => getComputedStyle(t).visibility === 'visible').map(t => t.textContent)"

LAYOUT = """() => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  if (document.scrollingElement.scrollWidth > width) {
    problems.push('the page is ' + document.scrollingElement.scrollWidth + ' px wide on a ' + width +
      ' px screen');
  }
  const hidden = (n) => {
    for (let a = n; a; a = a.parentElement) if (a.getBoundingClientRect().width <= 1) return true;
    return false;
  };
  for (const cell of document.querySelectorAll('table th, table td')) {
    const box = cell.getBoundingClientRect();
    if (!cell.checkVisibility() || hidden(cell) || (box.right <= width + 1 && box.left >= -1)) continue;
    const scroller = cell.closest('.scroll');
    const hint = scroller && scroller.previousElementSibling;
    if (!(hint && hint.classList.contains('scroll-hint') && hint.checkVisibility())) {
      const table = cell.closest('table');
      problems.push('table#' + table.id + ': the column of "' + cell.textContent.trim().slice(0, 30) +
        '" is off screen (' + Math.round(box.left) + '-' + Math.round(box.right) +
        ' px) and nothing says so');
    }
  }
  const measure = document.createElement('canvas').getContext('2d');
  for (const cell of document.querySelectorAll('table td[data-label]')) {
    const label = getComputedStyle(cell, '::before');
    if (label.content === 'none' || label.display === 'none' || !cell.checkVisibility()) continue;
    const range = document.createRange();
    range.selectNodeContents(cell);
    const text = [...range.getClientRects()].filter((r) => r.width > 0);
    if (!text.length || !cell.textContent.trim()) continue;
    measure.font = label.fontWeight + ' ' + label.fontSize + ' ' + label.fontFamily;
    const labelEnd = cell.getBoundingClientRect().left + parseFloat(getComputedStyle(cell).paddingLeft) +
      measure.measureText(cell.dataset.label).width;
    const valueStart = Math.min(...text.filter((r) => Math.abs(r.top - text[0].top) < 2).map((r) => r.left));
    const sameLine = text[0].top < cell.getBoundingClientRect().top + 4 + parseFloat(label.fontSize);
    if (sameLine && valueStart - labelEnd < 4) {
      problems.push('table#' + cell.closest('table').id + ': the label "' + cell.dataset.label +
        '" runs into its value "' + cell.textContent.trim().slice(0, 30) + '"');
    }
  }
  return problems;
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    chromium_path()
    built, database = build_site(tmp_path_factory.mktemp("phone"))
    yield built
    database.close()


def app_of(site: Site) -> Any:
    """The page with everything plugged in: the ladder, and play from the browser."""
    sittings = Sittings(site.data_dir / "play", io.StringIO())
    return create_app(site.data_dir, leaderboard=site.leaderboard, sittings=sittings, play=True)


def parameter_values(site: Site) -> dict[str, list[str]]:
    """Each path parameter's values, from the site: both games' matches, both tournaments,
    a tournament entry's bot, a rated ladder bot and an unrated one."""
    return {
        "match_id": [site.matches["contract"][0], site.matches["classic"][0]],
        "hand": ["1"],
        "tournament_id": [quote(name, safe="") for name in site.tournaments.values()],
        "name": ["rnd", "a1", "b4"],
        "token": ["not-a-seat"],
    }


def every_address(app: Any, site: Site) -> list[str]:
    """Every GET route of ``app`` with its parameters filled, and every static file."""
    values = parameter_values(site)
    addresses = []
    for route in app.routes:
        if isinstance(route, Mount):
            addresses += [f"{route.path}/{p.name}" for p in sorted(Path(STATIC).iterdir())]
            continue
        assert isinstance(route, Route), route
        if route.methods is not None and "GET" not in route.methods:
            continue
        names = re.findall(r"{(\w+)(?::\w+)?}", route.path)
        missing = [n for n in names if n not in values]
        assert not missing, f"{route.path}: give parameter_values a value for {missing}"
        paths = [route.path]
        for name in names:
            paths = [re.sub(r"{" + name + r"(?::\w+)?}", v, p) for p in paths for v in values[name]]
        addresses += paths
    return addresses


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["desktop", "phone"])
async def test_no_page_is_wider_than_the_screen_nor_hides_a_column_unsaid(site, width, height):
    app = app_of(site)
    addresses = every_address(app, site)

    def visit(url: str) -> tuple[dict[str, list[str]], list[str]]:
        found: dict[str, list[str]] = {}
        pages: list[str] = []
        with browser_page(width, height) as page:
            for address in addresses:
                answer = page.request.get(url + address, max_redirects=3)
                if not answer.headers.get("content-type", "").startswith("text/html"):
                    continue
                pages.append(address)
                page.goto(url + address)
                found[address] = page.evaluate(LAYOUT)
        return found, pages

    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, app, "127.0.0.1:0")
        found, pages = await in_thread(visit, url)
        nursery.cancel_scope.cancel()
    assert {"/leaderboard", "/bots/a1", f"/matches/{site.matches['classic'][0]}/deals/1"} <= set(pages)
    assert len(pages) >= 19, pages
    problems = [f"{address}: {p}" for address, listed in found.items() for p in listed]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["desktop", "phone"])
async def test_the_rating_chart_has_axes_dates_values_on_hover_and_links_to_its_matches(site, width, height):
    """A ladder bot's chart: its rating axis has round values around every rating, its
    matches' axis the dates of the first and last, hovering a point shows that match's date
    and rating, each point links to the match's replay, and no request leaves the host."""
    from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings
    from tests.site_support import DAY_MS, FIRST_MS, RATINGS

    conservative = Rater(RatingSettings()).conservative
    ratings = [conservative(Rating(mu, sigma)) for mu, sigma in RATINGS][: len(site.rated)]
    days = [
        time.strftime("%Y-%m-%d", time.gmtime((FIRST_MS + k * DAY_MS) / 1000)) for k in range(len(ratings))
    ]

    def drive(url: str) -> dict[str, Any]:
        requested: list[str] = []
        seen: dict[str, Any] = {"tips": []}
        with browser_page(width, height) as page:
            page.on("request", lambda request: requested.append(request.url))
            page.goto(f"{url}/bots/a1")
            seen["values"] = page.eval_on_selector_all("#rating-axis text", "n => n.map(t => t.textContent)")
            seen["dates"] = page.eval_on_selector_all("#date-axis text", "n => n.map(t => t.textContent)")
            seen["links"] = page.eval_on_selector_all(
                "#rating-chart a", "n => n.map(a => a.getAttribute('href'))"
            )
            points = page.locator("#rating-chart a circle")
            for k in range(points.count()):
                points.nth(k).hover()
                seen["tips"].append(
                    page.eval_on_selector_all(
                        "#rating-chart .tip",
                        VISIBLE_TEXT,
                    )
                )
            page.locator("#rating-chart a circle").last.click()
            # The replay writes its step into the address (?hand=…) once drawn: either address.
            page.wait_for_url(re.compile(rf"/matches/{site.rated[-1]}(\?.*)?$"))
            seen["opened"] = page.inner_text("h1")
            seen["outside"] = [
                r for r in requested if not r.startswith(url + "/") and not r.startswith("data:")
            ]
        return seen

    async with trio.open_nursery() as nursery:
        url = await nursery.start(
            serve_web, create_app(site.data_dir, leaderboard=site.leaderboard), "127.0.0.1:0"
        )
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert seen["outside"] == []
    assert seen["links"] == [f"/matches/{m}" for m in site.rated]
    values = [float(v) for v in seen["values"] if v != "rating"]
    assert values == sorted(values), values
    assert len(values) >= 3, values
    assert values[0] <= min(ratings), (values, ratings)
    assert values[-1] >= max(ratings), (values, ratings)
    assert seen["dates"][0] == days[0], seen["dates"]
    assert days[-1] in seen["dates"], seen["dates"]
    assert len(seen["tips"]) == len(ratings)
    for tips, rating, day, match_id in zip(seen["tips"], ratings, days, site.rated, strict=True):
        assert len(tips) == 1, tips
        assert day in tips[0], tips[0]
        assert f"rating {rating:.1f}" in tips[0], tips[0]
        assert match_id in tips[0], tips[0]
    assert seen["opened"] == f"Match {site.rated[-1]}"
