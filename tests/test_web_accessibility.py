"""Every page passes axe-core's checks (WCAG 2.1 A and AA, and its best practices) in a real
headless Chromium, and ours beside them: controls labelled, landmarks, an aria-live region for
the card played and the score, every chart titled, every control reachable by the keyboard.

axe-core comes inside the ``axe-playwright-python`` wheel (a dev dependency), so nothing is
fetched at test time; Playwright evaluates it in the page, past the page's own CSP. A failure
names the rule and the element."""

from __future__ import annotations

import io
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick import Bot, BotView
from oddtrick.rules import PASS, CallKind, Card, GameConfig
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.server import serve_web, web_beside
from tests.referee_support import in_thread
from tests.replay_support import SEATING
from tests.test_replay import logged_hands
from tests.test_web_browser import GatedBot, run_gated
from tests.test_web_pages import _plan, ladder_with_two_rated_matches
from tests.test_web_seat import ASKED, GUARD_S, Command, by_keyboard, play_command
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
    // A greyed card (aria-disabled) is reached too: Enter on it says why it may not be played.
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
    from oddtrick_referee.competitions.tournaments.tournament import run_tournament

    data_dir = tmp_path_factory.mktemp("a11y")
    trio.run(lambda: run_tournament(_plan("a11y cup", "a11y", 2, 2), data_dir, progress_stream=io.StringIO()))
    match_id = TournamentStore(data_dir / "oddtrick.sqlite3").table_runs("a11y cup")[0].match_id
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


# ------------------------------------------------------------ pages of a match in progress


def page_problems(page: Any) -> list[str]:
    return axe_problems(page) + page.evaluate(OUR_CHECKS)


class HeldMidHand(Bot):
    """Bids the lowest bid and passes after it; holds the third card of the match until the
    test lets it go, so the live page is caught mid-trick."""

    name = "held"
    cards = 0
    lock = threading.Lock()
    reached: threading.Event
    go: threading.Event

    def choose_call(self, view: BotView) -> Any:
        if any(call.kind is CallKind.BID for _, call in view.auction):
            return PASS
        return min((call for call in view.legal_actions if call is not PASS), key=lambda bid: bid.step)

    def choose_card(self, view: BotView) -> Any:
        cls = type(self)
        with cls.lock:
            cls.cards += 1
            third = cls.cards == 3
        if third:
            cls.reached.set()
            cls.go.wait(timeout=60)
        return view.legal_actions[0]


async def test_the_live_view_passes_mid_hand_and_at_the_hands_end(tmp_path: Path) -> None:
    """A closed Contract Whist table followed live: checked with two cards of a trick on the
    table and the next seat to play, then at the hand's end with the four hands shown; the
    card played and whose turn it is are said in an aria-live region."""
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Held", (HeldMidHand,), {"reached": reached, "go": go, "cards": 0, "lock": threading.Lock()})
    config = GameConfig.from_dict({"game": "contract", "format": "deals", "deals": 1})
    rules = TableRules(deadline_s=60.0, grace_s=5.0)

    def drive(url: str) -> dict[str, Any]:
        with browser_page() as page:
            page.goto(f"{url}/matches/a11y-live")
            page.wait_for_function("() => document.querySelectorAll('#trick [data-card]').length === 2")
            page.wait_for_function("() => document.querySelector('.seat.to-play')")
            said = page.inner_text("#announce")
            status = page.get_attribute("#live-status", "role")
            mid = page_problems(page)
            page.goto(f"{url}/matches")
            matches = page_problems(page)
            page.goto(f"{url}/matches/a11y-live")
            page.wait_for_function("() => document.querySelectorAll('#trick [data-card]').length === 2")
            go.set()
            page.wait_for_function(MATCH_OVER)
            page.wait_for_function(DEAL_SHOWN)
            return {
                "said": said,
                "status": status,
                "mid": mid,
                "matches": matches,
                "end": page_problems(page),
            }

    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        assert url is not None
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_gated, referee.address, name, bot)
        done: list[Any] = []
        finished = trio.Event()

        async def play() -> None:
            done.append(await referee.play_match(MatchSpec(config, SEATING, rules, match_id="a11y-live")))
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 60)
        try:
            seen = await in_thread(drive, url)
        finally:
            go.set()
        await finished.wait()
    problems = [f"{what}: {p}" for what in ("mid", "matches", "end") for p in seen[what]]
    assert not problems, "\n".join(problems)
    second = logged_hands(done[0].log_path)[1]["cards"][1]
    assert f"{SEAT_NAMES[second[0]]} played {Card.parse(second[1]).pretty}" in seen["said"], seen["said"]
    assert seen["said"].endswith(" to play"), seen["said"]
    assert seen["status"] == "status", "a lost connection is not said"


MATCH_OVER = "() => document.getElementById('live-status').textContent.includes('over')"
DEAL_SHOWN = (
    "() => document.querySelectorAll('.holding [data-card], .holding [data-played-card]').length === 52"
)
"""The four hands as dealt, at the hand's end: the deal diagram, every card played."""
SEAT_NAMES = {"N": "North", "E": "East", "S": "South", "W": "West"}


async def test_a_sealed_tables_progress_page_and_its_tournament_in_play_pass(tmp_path: Path) -> None:
    """A sealed table of a duplicate tournament, held mid-hand: its progress page, the
    tournament's standings with the table playing, and the list of tournaments."""
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("HeldSealed", (GatedBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
    data_dir = tmp_path / "data"
    set_id = "a11y sealed cup/alice|bob/1"
    spec = MatchSpec(config, SEATING, TableRules(deadline_s=60.0), match_id="a11y-sealed", set_id=set_id)
    entries = {"entries": [["alice", "a"], ["bob", "b"]], "config": config.to_dict(), "deals": 1}
    store = TournamentStore(data_dir / "oddtrick.sqlite3")
    store.open_tournament("a11y sealed cup", {**entries, "duplicate": True}, "seed", 1)
    pages = {
        "sealed table": "/matches/a11y-sealed",
        "standings in play": "/tournaments/a11y%20sealed%20cup",
        "tournaments": "/tournaments",
        "matches in progress": "/matches?status=in_progress",
    }

    def drive(url: str) -> tuple[str, str, list[str]]:
        found: list[str] = []
        with browser_page() as page:
            for what, path in pages.items():
                page.goto(url + path)
                found += [f"{what}: {p}" for p in page_problems(page)]
            page.goto(url + pages["standings in play"])
            playing = page.inner_text("#playing")
            page.goto(url + pages["sealed table"])
            return page.inner_text("#progress"), playing, found

    async with (
        running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        assert url is not None
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_gated, referee.address, name, bot)
        finished = trio.Event()

        async def play() -> None:
            await referee.play_match(spec, sealed=True)
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 30)
        try:
            progress, playing, problems = await in_thread(drive, url)
        finally:
            go.set()
        await finished.wait()
    assert progress.startswith("Being played"), progress
    assert "a11y-sealed" in playing, playing
    assert not problems, "\n".join(problems)


PLAYABLE = '#hand button:enabled:not([aria-disabled="true"])'
"""A card the seat may play: a greyed card is a button too, marked aria-disabled, so that a
click on it can say why it may not be played."""

FOCUSED_CARD = """() => document.activeElement.closest('#hand button:enabled:not([aria-disabled="true"])')
  ? document.activeElement.dataset.card : ''"""


def test_the_seat_in_the_browser_passes_in_the_auction_and_the_play(tmp_path: Path) -> None:
    """``oddtrick play --web`` at Contract Whist: the seat's page is checked when it is asked
    for a call and when it is asked for a card, then the hand is played out; after a card
    played by the keyboard, the focus is on a card of the hand when the seat is asked again."""
    chromium_path()
    command = play_command(tmp_path, "contract", "a11y seat")
    found: dict[str, list[str]] = {}
    turns: dict[str, str] = {}
    try:
        with browser_page() as page:
            page.goto(command.url)
            asked, bid = -1, False
            while True:
                page.wait_for_function(ASKED, arg=asked, timeout=GUARD_S * 1000)
                if page.evaluate("() => document.body.dataset.over === 'yes'"):
                    break
                asked = int(page.evaluate("() => document.body.dataset.asked"))
                phase = page.evaluate("() => document.body.dataset.phase")
                if phase not in found:
                    found[phase] = page_problems(page)
                    turns[phase] = page.inner_text("#announce")
                if phase == "auction":
                    legal = page.eval_on_selector_all(
                        "#bidding-box button[aria-disabled='false']", "b => b.map(x => x.dataset.call)"
                    )
                    bids = [c for c in legal if c not in ("pass", "double")] if not bid else []
                    bid = True
                    page.click(f'#bidding-box button[data-call="{(bids or ["pass"])[0]}"]')
                elif "keyboard" not in turns:
                    turns["keyboard"] = by_keyboard(page)
                elif "focus" not in turns:
                    turns["focus"] = page.evaluate(FOCUSED_CARD)
                    if turns["focus"]:
                        page.keyboard.press("Enter")
                    else:
                        page.locator(PLAYABLE).first.click()
                else:
                    page.locator(PLAYABLE).first.click()
            found["over"] = page_problems(page)
    except BaseException:
        command.stop()
        raise
    code, _, err = command.finish()
    assert code == 0, err
    assert set(found) == {"auction", "play", "over"}, set(found)
    problems = [f"{what}: {p}" for what, listed in found.items() for p in listed]
    assert not problems, "\n".join(problems)
    assert turns["auction"].endswith("your turn to call"), turns
    assert turns["play"].endswith("your turn to play"), turns
    assert turns["focus"], "after a card played by the keyboard, the focus left the hand"


def test_the_play_form_passes(tmp_path: Path) -> None:
    """``oddtrick web --play``: the home page with its Play button, and the Play form."""
    chromium_path()
    web = Command(tmp_path, ["web", "--play", "--port", "0"], r"(http://\S+?)/? ")
    try:
        with browser_page() as page:
            page.goto(web.base + "/")
            home = page_problems(page)
            page.click("text=Play against the bots")
            page.wait_for_selector("#play-button")
            form = page_problems(page)
    finally:
        web.stop()
    problems = [f"home: {p}" for p in home] + [f"play form: {p}" for p in form]
    assert not problems, "\n".join(problems)
