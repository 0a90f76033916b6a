"""The seat's page as a person sees it, on a desktop (1280×800) and a phone (390×844), in
both games: ``oddtrick play --web`` run as a command (its referee on a real socket, the bots
as real processes) and played by clicks in a real headless Chromium.

At the match's end the page shows the match's result and no turn prompt; Contract Whist's
auction is drawn in seat columns (the replay's own table), so the hand is on the first
screen when the play starts, and classic Whist shows no auction table at all; a click on
a greyed card says why in a live region and changes nothing (no refusal reaches the log)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.model import replay_log
from tests.test_web_seat import ASKED, GUARD_S, play_command
from tests.web_support import browser_page, chromium_path

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
GREYED = '#hand button[aria-disabled="true"], #hand button:disabled'
"""The hand's greyed cards, however the page greys them."""
PLAYABLE = '#hand button:enabled:not([aria-disabled="true"])'
SAYS_WHY = """card => {
  const live = '[aria-live], [role="alert"], [role="status"]';
  return [...document.querySelectorAll(live)].some((region) => region.offsetParent !== null
    && /\\bmust follow\\b/.test(region.textContent)) && document.body.dataset.yourTurn === 'yes';
}"""
HAND_TOP = "() => document.querySelector('#hand button').getBoundingClientRect().bottom + window.scrollY"
"""Where the hand's first card ends, down the page."""
AUCTION = """() => {
  const table = document.querySelector('#auction');
  if (!table || table.offsetParent === null) return null;
  return {
    heads: [...table.querySelectorAll('thead th')].map((th) => th.textContent),
    rows: [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
  };
}"""


def greyed_click(page: Any) -> dict[str, Any]:
    """Click the first greyed card as a person would (the mouse on it), then see what the
    page says and whether anything changed."""
    card = page.eval_on_selector_all(GREYED, "b => b.map(x => x.dataset.card)")[0]
    before = page.eval_on_selector_all("#hand button", "b => b.map(x => x.dataset.card)")
    asked = page.evaluate("() => document.body.dataset.asked")
    page.locator(f'#hand button[data-card="{card}"]').click(force=True)  # force: a disabled one too
    try:
        page.wait_for_function(SAYS_WHY, arg=card, timeout=10_000)
        said = page.evaluate(
            """() => [...document.querySelectorAll('[aria-live], [role="alert"], [role="status"]')]
              .map((r) => r.textContent).find((t) => /must follow/.test(t))"""
        )
    except Exception:  # the page said nothing: recorded, and asserted on below
        said = None
    after = page.eval_on_selector_all("#hand button", "b => b.map(x => x.dataset.card)")
    still = page.evaluate("() => document.body.dataset.asked") == asked
    return {"card": card, "said": said, "unchanged": before == after and still}


def play_observing(page: Any, height: int) -> dict[str, Any]:
    """Play the hand by clicking legal cards and calls, noting the hand's place and the
    auction when the play starts, and a greyed card's click once."""
    seen: dict[str, Any] = {"greyed": None, "hand_top": None, "auction": None, "asked_in_play": 0}
    asked = -1
    while True:
        page.wait_for_function(ASKED, arg=asked, timeout=GUARD_S * 1000)
        if page.evaluate("() => document.body.dataset.over === 'yes'"):
            break
        asked = int(page.evaluate("() => document.body.dataset.asked"))
        if page.evaluate("() => document.body.dataset.phase") == "auction":
            legal = page.eval_on_selector_all(
                "#bidding-box button[aria-disabled='false']", "b => b.map(x => x.dataset.call)"
            )
            bids = [
                call for call in legal if call not in ("pass", "double") and int(call[:-1].rstrip("N")) <= 9
            ]
            page.click(f'#bidding-box button[data-call="{bids[0] if bids else "pass"}"]')  # a long auction
            continue
        if seen["hand_top"] is None:
            page.evaluate("() => window.scrollTo(0, 0)")
            seen["hand_top"] = page.evaluate(HAND_TOP)
            seen["auction"] = page.evaluate(AUCTION)
            seen["overflow"] = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        seen["asked_in_play"] += 1
        if seen["greyed"] is None and page.locator(GREYED).count():
            seen["greyed"] = greyed_click(page)
        playable = page.eval_on_selector_all(PLAYABLE, "b => b.map(x => x.dataset.card)")
        page.click(f'#hand button[data-card="{playable[-1]}"]')
    seen["end_text"] = page.inner_text("body")
    seen["turn"] = page.inner_text("#turn")
    return seen


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("game", "seed"), [("classic", "a click at a time"), ("contract", "bid and play")])
def test_the_seat_page_ends_with_the_result_shows_the_auction_in_columns_and_says_why_a_card_is_greyed(
    tmp_path: Path, game: str, seed: str, size: str
) -> None:
    chromium_path()
    width, height = SIZES[size]
    command = play_command(tmp_path, game, seed)
    try:
        with browser_page(width, height) as page:
            page.goto(command.url)
            seen = play_observing(page, height)
    except BaseException:
        command.stop()
        raise
    code, out, err = command.finish()
    assert code == 0, err
    log_path = Path(re.search(r"log: (\S+)", out).group(1))
    document = match_to_json(replay_log(log_path))
    records = list(read_log(log_path))
    print(f"{game} {size}: the hand's first card ends {seen['hand_top']:.0f} px down at the play's start")

    ended = document["events"][-1]
    assert ended["type"] == "match_ended"
    assert ended["text"] in seen["end_text"], "the page does not show the match's result"
    assert "your turn" not in seen["end_text"].lower(), "a turn prompt after the match's end"
    assert seen["turn"] == ""

    calls = [e["call"] for e in document["events"] if e["type"] == "call_made"]
    if game == "classic":
        assert seen["auction"] is None, "classic Whist has no auction, yet a table is shown"
    else:
        auction = seen["auction"]
        assert auction is not None, "no auction table"
        assert auction["heads"] == ["West", "North", "East", "South"]
        assert all(len(row) == 4 for row in auction["rows"]), auction["rows"]
        assert [cell for row in auction["rows"] for cell in row if cell] == calls
    assert seen["hand_top"] < height, (
        f"the hand's first card ends {seen['hand_top']:.0f} px down: off the first screen"
    )
    assert seen["overflow"] <= 0, "the page is wider than the screen"

    greyed = seen["greyed"]
    assert greyed is not None, "no hand had a greyed card"
    assert greyed["said"], "a click on a greyed card said nothing"
    assert greyed["said"].startswith("you must follow suit"), greyed["said"]
    assert greyed["unchanged"]
    assert not [r for r in records if r["type"] == "refusal"], "the greyed card reached the referee"
    checked = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(log_path)],
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
