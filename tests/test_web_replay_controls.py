"""The replay's controls in a real headless Chromium, at a desktop's 1280×800 and a phone's
390×844: a classic Whist replay has no auction table (there is no auction), autoplay keeps
the speed chosen however late its ticks come, Back steps back to the hand shown before
instead of leaving the replay, and a live match's badge says it is finished once it is.

Autoplay is timed on Playwright's clock, never the wall's: ``run_for`` lets simulated time
flow with every timer fired, ``fast_forward`` jumps it with each due timer fired once, as a
page whose main thread was busy (drawing a position) finds its timers late. The pace in
real time is benchmarks/autoplay.py's figure."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web, web_beside
from tests.referee_support import in_thread
from tests.replay_support import SEATING
from tests.site_support import Site, build_site
from tests.test_web_browser import GatedBot, run_gated
from tests.web_support import browser_page, chromium_path

SIZES = [(1280, 800), (390, 844)]
SIZE_IDS = ["desktop", "phone"]
MATCH_OVER = "() => document.getElementById('live-status').textContent.includes('over')"
STEP = "() => parseInt(document.getElementById('scrubber').value, 10)"
"""The position within the hand: calls and cards shown."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    chromium_path()
    built, database = build_site(tmp_path_factory.mktemp("controls"))
    yield built
    database.close()


async def on_page(site: Site, drive: Any) -> Any:
    """``drive(url)`` in a worker thread, with the site's page served meanwhile."""
    async with trio.open_nursery() as nursery:
        url = await nursery.start(serve_web, create_app(site.data_dir), "127.0.0.1:0")
        found = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    return found


@pytest.mark.parametrize(("width", "height"), SIZES, ids=SIZE_IDS)
async def test_a_classic_replay_shows_no_auction_table_and_a_contract_one_does(site, width, height):
    def drive(url: str) -> dict[str, tuple[int, list[str]]]:
        seen = {}
        with browser_page(width, height) as page:
            for game in ("classic", "contract"):
                page.goto(f"{url}/matches/{site.matches[game][0]}?hand=1&card=5")
                page.keyboard.press("ArrowRight")  # drawn by the script too, not only the server
                page.wait_for_function("() => location.search.includes('card=6')")
                headings = page.eval_on_selector_all("main h3", "nodes => nodes.map(n => n.textContent)")
                seen[game] = (page.locator("#auction").count(), headings)
        return seen

    seen = await on_page(site, drive)
    assert seen["classic"][0] == 0
    assert "Auction" not in seen["classic"][1]
    assert "Tricks" in seen["classic"][1]
    assert seen["contract"][0] == 1
    assert "Auction" in seen["contract"][1]


@pytest.mark.parametrize(("width", "height"), SIZES, ids=SIZE_IDS)
@pytest.mark.parametrize("speed", [8, 2])
async def test_autoplay_takes_the_steps_its_speed_says_however_late_its_ticks(site, width, height, speed):
    """Two simulated seconds of smooth play, then three of a busy page (each second jumped
    at once): ``speed`` steps a second all along, within 10%."""

    def drive(url: str) -> tuple[int, int, int]:
        with browser_page(width, height) as page:
            page.clock.install()
            page.goto(f"{url}/matches/{site.matches['contract'][0]}?hand=1&card=0")
            page.clock.pause_at(page.evaluate("() => Date.now()") + 1000)
            page.select_option("#speed", str(speed))
            start = page.evaluate(STEP)
            page.click("#play")
            page.clock.run_for(2000)
            smooth = page.evaluate(STEP) - start
            for _ in range(3):
                page.clock.fast_forward(1000)
            busy = page.evaluate(STEP) - start - smooth
            page.click("#play")  # pause: no step more
            paused = page.evaluate(STEP)
            page.clock.run_for(3000)
            return smooth, busy, page.evaluate(STEP) - paused

    smooth, busy, after_pause = await on_page(site, drive)
    assert abs(smooth - 2 * speed) <= 0.1 * 2 * speed, (smooth, busy)
    assert abs(busy - 3 * speed) <= 0.1 * 3 * speed, (smooth, busy)
    assert after_pause == 0


@pytest.mark.parametrize(("width", "height"), SIZES, ids=SIZE_IDS)
async def test_back_steps_back_to_the_hand_shown_before_and_forward_again(site, width, height):
    match_id = site.matches["contract"][0]

    def drive(url: str) -> list[tuple[str, str, bool]]:
        seen = []
        with browser_page(width, height) as page:
            page.goto(f"{url}/matches")
            page.goto(f"{url}/matches/{match_id}?hand=1&card=5")
            page.evaluate("() => { window.sameViewer = true; }")

            def where() -> None:
                seen.append(
                    (
                        page.inner_text("#position"),
                        page.url.split("?", 1)[1],
                        page.evaluate("() => !!window.sameViewer"),
                    )
                )

            for _ in range(2):
                page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowDown")  # the next hand
            for _ in range(3):
                page.keyboard.press("ArrowRight")
            where()
            page.go_back()
            page.wait_for_function("() => location.search.includes('hand=1')")
            where()
            page.go_forward()
            page.wait_for_function("() => location.search.includes('hand=2')")
            where()
            page.go_back()
            page.wait_for_function("() => location.search.includes('hand=1')")
            page.go_back()  # before the replay: the list of matches
            page.wait_for_url(f"{url}/matches")
        return seen

    seen = await on_page(site, drive)
    assert seen[0][:2] == ("hand 2 · card 3/52", "hand=2&card=3")
    assert seen[1][:2] == ("hand 1 · card 7/52", "hand=1&card=7")
    assert seen[2][:2] == ("hand 2 · card 3/52", "hand=2&card=3")
    assert all(same for _, _, same in seen), "Back left the replay page"


@pytest.mark.parametrize(("width", "height"), SIZES, ids=SIZE_IDS)
async def test_the_live_badge_says_finished_once_the_match_is_over(tmp_path: Path, width, height) -> None:
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Gated", (GatedBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
    match_id = f"badge-{width}"

    def follow(url: str) -> tuple[str, str, str]:
        with browser_page(width, height) as page:
            page.goto(f"{url}/matches/{match_id}")
            page.wait_for_function("() => document.body.dataset.lastSeq")
            during = page.inner_text(".live-badge")
            go.set()
            page.wait_for_function(
                "() => document.getElementById('live-status').textContent.includes('over')"
            )
            badge = page.locator(".live-badge")
            after = badge.inner_text() if badge.count() and badge.is_visible() else ""
            return during, after, page.inner_text("h1")

    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        assert url is not None
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_gated, referee.address, name, bot)
        finished = trio.Event()

        async def play() -> None:
            await referee.play_match(
                MatchSpec(config, SEATING, TableRules(deadline_s=60.0), match_id=match_id)
            )
            finished.set()

        nursery.start_soon(play)
        try:
            assert await in_thread(reached.wait, 60)
            during, after, heading = await in_thread(follow, url)
        finally:
            go.set()
        await finished.wait()
    assert during == "live"
    assert "live" not in heading.split(), heading
    assert after in ("", "finished"), after
