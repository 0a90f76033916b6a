"""Play on from here, in Chromium: beside a real referee, the replay page of a finished match
of each game is stepped to a position, seats and a bot are picked, and the continuation the
page shows is re-checked by the rules engine (legal, and scored as the rules score it) beside
the log's own play. A sealed play is not played on; bad input is answered with what to do;
no request leaves the host."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import trio

from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.web.server import web_beside
from tests.play_on_support import check_as_played, check_played_on
from tests.referee_support import in_thread
from tests.replay_support import CONFIGS, Logged, play_logged
from tests.web_support import browser_page, chromium_path

LINE = """
line => {
  const box = document.querySelector("#play-on-result [data-line=" + line + "]");
  const letters = { North: "N", East: "E", South: "S", West: "W" };
  const plays = [];
  box.querySelectorAll("li").forEach((li, t) => {
    const number = box.querySelector("ol").start + t;
    const arrow = li.textContent.lastIndexOf("→ ");
    const winner = arrow < 0 ? null : letters[li.textContent.slice(arrow + 2).trim()];
    const spans = [...li.querySelectorAll(".play")];
    spans.forEach((span, i) => plays.push({
      seat: span.dataset.seat, card: span.querySelector("[data-card]").dataset.card, trick: number,
      winner: i === spans.length - 1 ? winner : null,
    }));
  });
  const outcome = box.querySelector(".outcome");
  return {
    plays,
    tricks: outcome.dataset.tricks.split("-").map(Number),
    points: outcome.dataset.points.split("-").map(Number),
    text: outcome.textContent.slice(outcome.textContent.indexOf(" · ") + 3),
  };
}
"""


def played_out(logged: Logged) -> int:
    return next(hand.number for hand in replay_log(logged.log_path).hands if len(hand.plays) == 52)


def play_on_in_page(
    page: Any, url: str, match_id: str, hand: int, card: int, seats: str, bot: str
) -> dict[str, Any]:
    """Step the replay to ``hand``:``card`` (one card forward from the one before, as a
    reader would), pick ``seats`` and ``bot``, play on; the page's two lines of play."""
    page.goto(f"{url}/matches/{match_id}?hand={hand}&card={card - 1}")
    page.click("button[data-step=forward]")
    page.wait_for_function("k => location.search.includes('card=' + k)", arg=card)
    for seat in seats:
        page.check(f"#play-on-form input[value={seat}]")
    page.select_option("#play-on-bot", bot)
    page.select_option("#play-on-others", "dd")
    page.click("#play-on-run")
    page.wait_for_selector("#play-on-result [data-line=as-played] .outcome", timeout=120_000)
    return {
        "played_on": page.evaluate(LINE, "played-on"),
        "as_played": page.evaluate(LINE, "as-played"),
        "status": page.inner_text("#play-on-status"),
        "who": page.inner_text(".play-on-who"),
    }


def drive(url: str, games: list[tuple[Logged, int]], sealed: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    with browser_page(1280, 800) as page:
        hosts: set[str] = set()
        page.on("request", lambda request: hosts.add(urlsplit(request.url).netloc))
        for (logged, hand), (seats, bot) in zip(games, [("NS", "heuristic"), ("W", "random")], strict=True):
            seen[logged.name] = play_on_in_page(page, url, logged.match_id, hand, 5, seats, bot)
        page.uncheck("#play-on-form input[value=W]")
        page.click("#play-on-run")
        page.wait_for_function("() => document.getElementById('play-on-status').textContent.includes('Pick')")
        seen["no seats"] = (page.inner_text("#play-on-status"), page.inner_text("#play-on-result"))
        asks = {
            "sealed": f"{url}/matches/{sealed}/play-on.json?hand=1&card=0&seats=N&bot=random",
            "bot": f"{url}/matches/{games[0][0].match_id}/play-on.json?hand=1&card=0&seats=N&bot=deep",
            "step": f"{url}/matches/{games[0][0].match_id}/play-on.json?hand=1&card=60&seats=N&bot=random",
        }
        for name, ask in asks.items():
            answer = page.request.get(ask)
            seen[name] = (answer.status, json.loads(answer.text())["message"])
        seen["hosts"] = hosts
    return seen


async def test_play_on_from_here_in_the_page_is_legal_and_scored_for_both_games(tmp_path):
    chromium_path()
    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
    ):
        assert url is not None
        classic = await play_logged(referee, CONFIGS["classic-turned"], "page-classic", match_id="po-classic")
        contract = await play_logged(
            referee, CONFIGS["contract-doubling"], "page-contract", match_id="po-contract"
        )
        sealed = await play_logged(
            referee, CONFIGS["classic-turned"], "page-sealed", match_id="po-sealed", sealed=True
        )
        games = [(classic, played_out(classic)), (contract, played_out(contract))]
        with trio.fail_after(300):
            seen = await in_thread(drive, url, games, sealed.match_id)
    for logged, hand in games:
        shown = seen[logged.match_id]
        check_played_on(logged.log_path, hand, 5, shown["played_on"])
        check_as_played(logged.log_path, hand, 5, shown["as_played"])
        assert shown["status"].startswith(f"Hand {hand} played on from card 5 of 52")
    assert "North heuristic (picked)" in seen[classic.match_id]["who"]
    assert "East dd" in seen[classic.match_id]["who"]
    assert "West random (picked)" in seen[contract.match_id]["who"]
    assert seen["no seats"] == ("Pick at least one seat for the bot to play.", "")
    assert seen["sealed"][0] == 404
    assert "duplicate pair whose deals are still to be played" in seen["sealed"][1]
    assert seen["bot"] == (400, "seats 'N=deep': no bot 'deep'; give one of random, heuristic, pimc or dd")
    assert seen["step"] == (400, "hand 1 is over after card 52: give a step from 1:0 to 1:51")
    assert seen["hosts"] == {urlsplit(url).netloc}
