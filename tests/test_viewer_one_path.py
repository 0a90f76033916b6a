"""The page's script has one path from a match to the table: it folds the events of the
match's one JSON document into positions. A live match is followed in Chromium beside a
real referee, the table recorded at each event as it came; then the same match, finished,
is stepped through in the replay viewer: every position the replay shows is the one the
live page showed once that position's events had arrived. And the script, read as text,
reads nothing of the document but its events."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick import Bot, BotView
from oddtrick.rules import PASS, CallKind, GameConfig
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.web.app import STATIC
from oddtrick_referee.web.server import web_beside
from tests.referee_support import in_thread
from tests.replay_support import SEATING
from tests.test_web_browser import run_gated
from tests.web_support import browser_page, chromium_path

TABLE_NOW = """
window.tableNow = () => {
  const all = (selector) => [...document.querySelectorAll(selector)];
  const seats = {};
  for (const seat of ["N", "E", "S", "W"]) {
    seats[seat] = {
      held: all("#hand-" + seat + " [data-card]").map((n) => n.dataset.card),
      played: all("#hand-" + seat + " [data-played-card]").map((n) => n.dataset.playedCard),
      hidden: all("#hand-" + seat + " .hidden-hand").map((n) => n.textContent),
    };
  }
  return {
    title: document.getElementById("hand-title").textContent,
    seats,
    trick: all("#trick [data-card]").map((n) => n.dataset.card + (n.classList.contains("won") ? " won" : "")),
    tricks: ["ns", "ew"].map((side) => document.getElementById("tricks-" + side).textContent),
    auction: all("#auction tbody tr").map((tr) => [...tr.children].map((td) => td.textContent)),
    done: all("#trick-list > li").map((li) =>
      [...li.querySelectorAll(".play [data-card]")].map((n) => n.dataset.card).join(" ")
      + li.textContent.slice(li.textContent.lastIndexOf("→"))),
    result: document.getElementById("result").textContent,
    score: document.getElementById("score").textContent,
    toPlay: all(".seat.to-play").map((n) => n.dataset.seat),
    said: document.getElementById("announce").textContent,
  };
};
window.liveSeen = [];
window.oddtrickOnEvent = (event) => window.liveSeen.push([event.type, window.tableNow()]);
"""

MATCH_OVER = "() => document.getElementById('live-status').textContent.includes('over')"

STEPS = {"hand_started", "call_made", "card_played"}
"""The events that start a position; the others complete the position before them."""


class OpeningBot(Bot):
    """Bids the lowest bid when nobody has (so a hand has a contract and is played), passes
    after it, plays the lowest legal card; holds its first decision until the page follows."""

    name = "opening"
    reached: threading.Event
    go: threading.Event

    def _wait(self) -> None:
        type(self).reached.set()
        type(self).go.wait(timeout=30)

    def choose_call(self, view: BotView) -> Any:
        self._wait()
        if any(call.kind is CallKind.BID for _, call in view.auction):
            return PASS
        return min((call for call in view.legal_actions if call is not PASS), key=lambda bid: bid.step)

    def choose_card(self, view: BotView) -> Any:
        self._wait()
        return view.legal_actions[0]


def live_positions(seen: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """What the live page showed at each position: the table once the position's last event
    (before the next call, card or hand) had arrived."""
    positions: list[dict[str, Any]] = []
    for kind, table in seen:
        if kind in STEPS:
            positions.append(table)
        elif positions:
            positions[-1] = table
    return positions


@pytest.mark.parametrize("game", ["classic", "contract"])
async def test_the_viewer_shows_a_finished_match_as_it_showed_it_live(tmp_path: Path, game: str) -> None:
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Opening", (OpeningBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": game, "format": "deals", "deals": 2})
    rules = TableRules(deadline_s=60.0, grace_s=5.0, open=True)  # the hands are public live too
    match_id = f"one-path-{game}"

    def follow(url: str) -> list[tuple[str, dict[str, Any]]]:
        with browser_page() as page:
            page.add_init_script(TABLE_NOW)
            page.goto(f"{url}/matches/{match_id}")
            page.wait_for_function("() => document.body.dataset.lastSeq")
            go.set()
            page.wait_for_function(MATCH_OVER)
            seen: list[tuple[str, dict[str, Any]]] = page.evaluate("() => window.liveSeen")
        return seen

    def replay(url: str, steps: int) -> tuple[list[dict[str, Any]], str]:
        shown = []
        with browser_page() as page:
            page.add_init_script(TABLE_NOW)
            page.goto(f"{url}/matches/{match_id}?hand=1&card=0&call=0")
            page.wait_for_selector("#position")
            shown.append(page.evaluate("() => window.tableNow()"))
            for _ in range(steps):
                page.keyboard.press("ArrowRight")
                shown.append(page.evaluate("() => window.tableNow()"))
            at = page.inner_text("#position")
            page.keyboard.press("ArrowRight")  # the match's last position: no step further
            assert page.inner_text("#position") == at
        return shown, at

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
            await referee.play_match(MatchSpec(config, SEATING, rules, match_id=match_id))
            finished.set()

        nursery.start_soon(play)
        try:
            assert await in_thread(reached.wait, 60)
            seen = await in_thread(follow, url)
        finally:
            go.set()
        await finished.wait()
        live = live_positions(seen)
        replayed, last = await in_thread(replay, url, len(live) - 1)
    assert [kind for kind, _ in seen].count("hand_started") == 2
    assert sum(len(table["done"]) == 13 for table in live) == 2, "both hands were played out"
    assert last == "hand 2 · card 52/52"
    assert live[-1]["result"]
    assert live[0]["seats"]["N"]["held"], "an open table's hands are shown live"
    for k, (shown_live, shown_replay) in enumerate(zip(live, replayed, strict=True)):
        assert shown_replay == shown_live, f"position {k}"


VIEWER = STATIC / "viewer.js"


def test_the_viewer_reads_a_match_only_as_events_folded_by_one_function() -> None:
    """The finished match and the live one enter the script the same way: every event
    through ``folder().add``, every table drawn from a folded position; the document is
    read for its events and its id, nothing of a per-hand structure beside them."""
    script = VIEWER.read_text(encoding="utf-8")
    assert set(re.findall(r"\bdoc\.(\w+)", script)) == {"events", "match_id"}
    assert len(re.findall(r"= folder\(\)", script)) == 2  # the replay's and the live page's
    assert re.findall(r"\bfolded\.add\((\w+)\)", script) == ["e", "event"]
    assert set(re.findall(r"(?<!function )\brenderTable\(([^)]*\)?)\)", script)) == {"s", "folded.latest()"}
    old = re.findall(r"\b(scores_before|scores_after|data\.hands|h\.deal|info\.\w+\.)", script)
    assert not old, old
    entries = re.findall(r"\b(replay|live)\(JSON\.parse\((\w+)\.textContent\)\)", script)
    assert entries == [("replay", "matchData"), ("live", "liveData")]


SEAT = STATIC / "seat.js"


def test_the_seat_page_folds_and_draws_its_events_with_the_viewer_s_own_functions() -> None:
    """The seat's page reads the same events through the viewer's one fold and draws the
    table (the auction's seat columns among it) with the viewer's renderTable; it draws no
    table, trick or auction of its own."""
    script = SEAT.read_text(encoding="utf-8")
    assert re.findall(r"= viewer\.folder\(\)", script) == ["= viewer.folder()"]
    assert re.findall(r"\bfolded\.add\((\w+)\)", script) == ["e"]
    assert re.findall(r"\bviewer\.renderTable\(([^)]*)\)", script) == ["state"]
    own = re.findall(r"#auction|#trick|trick-list|tricks-ns|\"li\"|snapshot", script)
    assert not own, own
