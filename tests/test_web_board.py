"""The replay page as an analysis board, in a real headless Chromium: every costly card marked
by the tricks it lost double dummy (as ``oddtrick analyze`` computes it), a chart of the hand
against par, computed once per match and kept beside the logs; never for a sealed table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick.analysis import analyze_logs
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.web.analysis import mark
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web
from tests.referee_support import in_thread
from tests.replay_support import CONFIGS, Logged, play_logged
from tests.web_support import browser_page, chromium_path, get


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    chromium_path()
    data_dir = tmp_path_factory.mktemp("board") / "data"

    async def main() -> dict[str, Logged]:
        async with running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee:
            found = {
                "contract": await play_logged(referee, CONFIGS["contract-doubling"], "board-c", "b-contract"),
                "classic": await play_logged(referee, CONFIGS["classic-turned"], "board-k", "b-classic"),
                "sealed": await play_logged(referee, CONFIGS["classic-turned"], "board-s", "b-sealed", True),
            }
            referee.finish()
        return found

    return trio.run(main)


async def web_for(data_dir: Path, nursery: trio.Nursery) -> str:
    url: str = await nursery.start(serve_web, create_app(data_dir), "127.0.0.1:0")
    return url


def board_at(page: Any) -> dict[str, Any]:
    """What the board shows: every mark in the trick list (trick, place, text), the chart's
    costly cards and its line, the last card's line."""
    return page.evaluate(
        """() => ({
          marks: [...document.querySelectorAll('#trick-list > li')].flatMap((li, t) =>
            [...li.querySelectorAll('.play')].map((p, j) =>
              [t, j, (p.querySelector('.mark') || {}).textContent || ''])),
          dots: [...document.querySelectorAll('#analysis-chart circle.loss')].map(c => +c.dataset.stepTo),
          line: document.querySelector('#analysis-chart polyline').getAttribute('points').split(' ').length,
          title: document.querySelector('#analysis-chart svg title').textContent,
          card: document.getElementById('analysis-card').textContent,
        })"""
    )


@pytest.mark.parametrize("name", ["contract", "classic"])
async def test_every_card_carries_the_mark_of_the_tricks_it_lost_and_the_hand_its_chart(played, name):
    logged = played[name]
    data_dir = logged.log_path.parent.parent
    truth = analyze_logs([logged.log_path])["logs"][0]["hands"]
    hand = truth[0]

    def drive(url: str) -> tuple[dict[str, Any], dict[str, Any], str]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{logged.match_id}?hand={hand['hand']}&card=52")
            page.wait_for_selector("#analysis-chart svg", timeout=120_000)
            at_end = board_at(page)
            page.click("#analysis-chart circle.loss >> nth=0")
            page.wait_for_function("() => !location.search.includes('card=52')")
            jumped = board_at(page)
            return at_end, jumped, page.url

    async with trio.open_nursery() as nursery:
        url = await web_for(data_dir, nursery)
        at_end, jumped, jumped_url = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    expected = [[i // 4, i % 4, mark(card["lost"])] for i, card in enumerate(hand["cards"])]
    assert at_end["marks"] == expected
    costly = [i + 1 for i, card in enumerate(hand["cards"]) if card["lost"]]
    assert costly, "random bots lose tricks double dummy"
    assert at_end["dots"] == costly
    assert at_end["line"] == 53
    assert f"from {hand['double_dummy_tricks'][0]} at the opening lead" in at_end["title"]
    last = hand["cards"][-1]
    assert f"could take {last['before']} before it, {last['after']} after" in at_end["card"]
    assert f"card={costly[0]}" in jumped_url
    first = hand["cards"][costly[0] - 1]
    assert f"lost {first['lost']} trick" in jumped["card"]
    kept = json.loads((data_dir / "analysis" / f"{logged.match_id}.json").read_text())
    assert kept["analysis"]["hands"][str(hand["hand"])]["lost"] == [c["lost"] for c in hand["cards"]]


async def test_a_kept_analysis_is_in_the_page_itself_and_a_sealed_table_is_never_analysed(played):
    logged, sealed = played["contract"], played["sealed"]
    data_dir = logged.log_path.parent.parent
    async with trio.open_nursery() as nursery:
        url = await web_for(data_dir, nursery)
        while (await in_thread(get, f"{url}/matches/{logged.match_id}/analysis.json"))[1].find("ready") < 0:
            await trio.sleep(0.2)  # the first request starts the solver; it answers "pending" meanwhile
        _, page, _ = await in_thread(get, f"{url}/matches/{logged.match_id}")
        sealed_json = await in_thread(get, f"{url}/matches/{sealed.match_id}/analysis.json")
        _, sealed_page, _ = await in_thread(get, f"{url}/matches/{sealed.match_id}")
        nursery.cancel_scope.cancel()
    embedded = page.split('<script id="analysis-data" type="application/json">')[1].split("</script>")[0]
    assert json.loads(embedded)["status"] == "ready"
    assert sealed_json[0] == 404
    assert "analysis" not in sealed_page.lower()
    assert not (data_dir / "analysis" / f"{sealed.match_id}.json").exists()


def test_without_the_strong_extra_the_page_says_in_one_line_which_extra_gives_analysis(played):
    """`oddtrick web` in a Python where endplay cannot be imported, as after a plain install."""
    import subprocess
    import sys

    logged = played["classic"]
    blocked = (
        "import sys; sys.modules['endplay'] = None; sys.argv = ['oddtrick'] + sys.argv[1:]; "
        "from oddtrick._cli import main; sys.exit(main())"
    )
    data_dir = logged.log_path.parent.parent
    (data_dir / "analysis" / f"{logged.match_id}.json").unlink(missing_ok=True)  # (a kept one is shown)
    command = [sys.executable, "-c", blocked, "web", "--port", "0", "--data-dir", str(data_dir)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as server:
        try:
            assert server.stdout is not None
            line = server.stdout.readline()
            url = line.split("web page on ")[1].split("/ ")[0]
            _, page, _ = get(f"{url}/matches/{logged.match_id}")
            _, answer, _ = get(f"{url}/matches/{logged.match_id}/analysis.json")
        finally:
            server.terminate()
    status = page.split('id="analysis-status">')[1].split("</p>")[0]
    assert status == "Double-dummy analysis needs the strong extra: pip install &#39;oddtrick[strong]&#39;."
    assert json.loads(answer)["status"] == "unavailable"


# ------------------------------------------------------------------ stepping


def _at(page: Any) -> dict[str, Any]:
    return page.evaluate(
        """() => ({
          position: document.getElementById('position').textContent,
          search: location.search,
          calls: [...document.querySelectorAll('#auction tbody td')].filter(td => td.textContent).length,
          held: [...document.querySelectorAll('#table .holding [data-card]')].map(n => n.dataset.card),
          played: [...document.querySelectorAll('#table .holding [data-played-card]')]
            .map(n => n.dataset.playedCard),
          scrubber: +document.getElementById('scrubber').value,
        })"""
    )


async def test_stepping_as_viewers_step_autoplay_scrubber_tricks_auction_rotation(played):
    logged = played["contract"]
    hands = logged_cards(logged)
    calls, cards = hands[1]

    def drive(url: str) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with browser_page() as page:
            page.goto(f"{url}/matches/{logged.match_id}?hand=1&card=0")
            page.keyboard.press("ArrowLeft")  # into the auction, call by call
            page.wait_for_function("n => location.search.includes('call=' + n)", arg=calls - 1)
            seen["auction"] = _at(page)
            page.goto(f"{url}/matches/{logged.match_id}?hand=1&card=0&call=1")
            seen["call_link"] = _at(page)
            page.keyboard.press("Shift+ArrowRight")
            page.keyboard.press("Shift+ArrowRight")
            page.wait_for_function("() => location.search.includes('card=8')")
            seen["two_tricks"] = _at(page)
            page.click("#trick-list > li:first-child button.trick-jump")
            page.wait_for_function("() => location.search.includes('card=4')")
            seen["trick_one"] = _at(page)
            page.fill("#scrubber", str(calls + 30))
            page.wait_for_function("() => location.search.includes('card=30')")
            seen["scrubbed"] = _at(page)
            page.select_option("#speed", "8")
            page.click("#play")
            page.wait_for_function("() => location.search.includes('card=33')")
            page.keyboard.press(" ")  # the play button has the focus: space pauses, once
            paused = _at(page)["search"]
            page.wait_for_timeout(600)  # five steps at 8×, were it still playing
            seen["paused"] = (paused, _at(page)["search"], page.get_attribute("#play", "aria-pressed"))
            south = page.locator("#table .seat-S").bounding_box()
            page.select_option("#rotate", "E")
            east = page.locator("#table .seat-E").bounding_box()
            west = page.locator("#table .seat-W").bounding_box()
            seen["rotated"] = (south, east, west)
        return seen

    async with trio.open_nursery() as nursery:
        url = await web_for(logged.log_path.parent.parent, nursery)
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert seen["auction"]["position"].endswith(f"call {calls - 1}/{calls}")
    assert seen["auction"]["calls"] == calls - 1
    assert seen["call_link"]["calls"] == 1
    assert seen["call_link"]["scrubber"] == 1
    assert seen["two_tricks"]["position"].endswith("card 8/52")
    played_8 = set(cards[:8])
    assert set(seen["two_tricks"]["played"]) == played_8
    assert set(seen["two_tricks"]["held"]).isdisjoint(played_8)
    assert len(seen["two_tricks"]["held"]) == 52 - 8
    assert seen["trick_one"]["position"].endswith("card 4/52")
    assert seen["scrubbed"]["position"].endswith("card 30/52")
    assert set(seen["scrubbed"]["played"]) == set(cards[:30])
    paused, later, pressed = seen["paused"]
    assert paused == later
    assert pressed == "false"
    south, east, west = seen["rotated"]
    assert east["y"] == south["y"], "East now sits where South sat, at the bottom"
    assert west["y"] < east["y"]


def logged_cards(logged: Logged) -> dict[int, tuple[int, list[str]]]:
    """Each hand's number of calls and its cards in play order, from the log itself."""
    from oddtrick.rules import Card
    from tests.test_replay import logged_hands

    return {
        number: (len(hand["calls"]), [str(Card.parse(text)) for _, text in hand["cards"]])
        for number, hand in logged_hands(logged.log_path).items()
    }
