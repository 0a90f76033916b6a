"""The web page in a real headless Chromium (Playwright): the replay viewer shows the log at
every step, a shared URL opens at its position, a live match appears card by card, a sealed
match shows nothing, and a screenshot of the viewer is kept for people to look at."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick import Bot, BotView
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.rules import PASS, CallKind, Card, GameConfig, GameState, Phase, Seat, deal_cards
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.live import ArenaLive
from oddtrick_referee.web.server import serve_web, web_beside
from tests.referee_support import in_thread
from tests.replay_support import SEATING, Logged, play_all
from tests.test_replay import logged_hands
from tests.web_support import browser_page, cards_shown, chromium_path, decision_time

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("ODDTRICK_ARTIFACTS", ROOT / "artifacts"))


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    chromium_path()  # skip (or fail under CI) before playing anything
    return play_all(tmp_path_factory.mktemp("browser") / "data", sealed=True)


def expected_positions(logged: Logged, hand_number: int) -> list[dict[str, Any]]:
    """What the table must show after each card of the hand, from the log and the rules engine
    (re-applying the logged actions), independently of the page and of the replay model."""
    records = list(read_log(logged.log_path))
    config = GameConfig.from_dict(records[0]["config"])
    seed = records[-1]["seed"]
    state = GameState(config, seed)
    from_log = logged_hands(logged.log_path)
    for number in range(1, hand_number):
        for seat, text in from_log[number]["calls"] + from_log[number]["cards"]:
            state.apply(Card.parse(text) if state.phase is Phase.PLAY else _call(text), Seat.parse(seat))
        state.start_next_hand()
    for seat, text in from_log[hand_number]["calls"]:
        state.apply(_call(text), Seat.parse(seat))
    deal, _, _ = deal_cards(seed, hand_number, state.dealer)
    cards = from_log[hand_number]["cards"]
    positions = []
    trick: list[str] = []
    for k in range(len(cards) + 1):
        if k:
            seat, text = cards[k - 1]
            if len(trick) == 4:
                trick = []
            trick.append(str(Card.parse(text)))
            state.apply(Card.parse(text), Seat.parse(seat))
        gone = {str(Card.parse(text)) for _, text in cards[:k]}
        positions.append(
            {
                "hands": {str(seat): {str(c) for c in deal[seat]} - gone for seat in Seat},
                "trick": set(trick),
                "tricks": [str(n) for n in state.tricks_won],
            }
        )
    return positions


def _call(text: str) -> Any:
    from oddtrick.rules import Call

    return Call.parse(text)


def shown(page: Any) -> dict[str, Any]:
    return {
        "hands": {seat: set(cards_shown(page, f"#hand-{seat}")) for seat in "NESW"},
        "trick": set(cards_shown(page, "#trick")),
        "tricks": [page.inner_text("#tricks-ns"), page.inner_text("#tricks-ew")],
    }


async def web_for(data_dir: Path, nursery: trio.Nursery) -> str:
    url: str = await nursery.start(serve_web, create_app(data_dir), "127.0.0.1:0")
    return url


@pytest.mark.parametrize(("name", "hand_number"), [("contract-doubling", 1), ("classic-cut", 2)])
async def test_stepping_through_every_card_of_a_hand_shows_the_log_at_every_step(played, name, hand_number):
    logged = played[name]
    expected = expected_positions(logged, hand_number)

    def drive(url: str) -> list[dict[str, Any]]:
        seen = []
        with browser_page() as page:
            page.goto(f"{url}/matches/{logged.match_id}?hand={hand_number}&card=0")
            seen.append(shown(page))
            for k in range(1, len(expected)):
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    "k => document.getElementById('position').textContent.includes('card ' + k + '/')", arg=k
                )
                seen.append(shown(page))
            assert f"hand={hand_number}&card={len(expected) - 1}" in page.url
            assert page.inner_text("#result")
        return seen

    async with trio.open_nursery() as nursery:
        url = await web_for(logged.log_path.parent.parent, nursery)
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert len(seen) == len(expected) == 53
    for k, (page_state, truth) in enumerate(zip(seen, expected, strict=True)):
        assert page_state == truth, f"card {k}"


async def test_a_shared_url_opens_at_its_position_and_the_url_follows_the_steps(played):
    logged = played["contract-game"]
    hand_number = next(
        n for n, hand in logged_hands(logged.log_path).items() if n >= 2 and len(hand["cards"]) == 52
    )
    expected = expected_positions(logged, hand_number)

    def drive(url: str) -> tuple[dict[str, Any], dict[str, Any], str, str, list[str]]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{logged.match_id}?hand={hand_number}&card=17")
            at = shown(page)
            position = page.inner_text("#position")
            page.keyboard.press("ArrowLeft")
            page.wait_for_function("() => location.search.includes('card=16')")
            back = shown(page)
            page.select_option("#hand-picker", "1")
            page.wait_for_function("() => location.search.includes('hand=1&card=0')")
            titles = page.eval_on_selector_all("#auction td[title]", "nodes => nodes.map(n => n.title)")
            return at, back, position, page.input_value("#hand-picker"), titles

    async with trio.open_nursery() as nursery:
        url = await web_for(logged.log_path.parent.parent, nursery)
        at, back, position, picked, titles = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    calls = len(logged_hands(logged.log_path)[1]["calls"])
    first = [r for r in read_log(logged.log_path) if r["type"] == "action" and r["hand"] == 1]
    assert titles == [decision_time(r) for r in first[:calls]]
    assert at == expected[17]
    assert back == expected[16]
    assert position.startswith(f"hand {hand_number} · card 17/")
    assert picked == "1"


async def test_a_sealed_match_page_shows_nothing_of_its_deals(played):
    sealed = played["sealed"]

    def drive(url: str) -> tuple[int, str, int, int]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{sealed.match_id}")
            cards = page.locator("[data-card]").count()
            text = page.inner_text("main")
            log = page.request.get(f"{url}/matches/{sealed.match_id}/log.jsonl")
            pbn = page.request.get(f"{url}/matches/{sealed.match_id}/match.pbn")
            return cards, text, log.status, pbn.status

    async with trio.open_nursery() as nursery:
        url = await web_for(sealed.log_path.parent.parent, nursery)
        cards, text, log_status, pbn_status = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert cards == 0
    assert "sealed until both plays" in text
    assert not any(symbol in text for symbol in "♠♥♦♣")
    assert (log_status, pbn_status) == (404, 404)


async def test_a_screenshot_of_the_replay_viewer_for_people_to_look_at(played):
    """Kept as an artefact (artifacts/), not compared pixel by pixel."""
    logged = played["contract-doubling"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    requested: list[str] = []

    def drive(url: str) -> tuple[int, int]:
        with browser_page(1100, 900) as page:
            page.on("request", lambda request: requested.append(request.url))
            page.goto(f"{url}/matches/{logged.match_id}?hand=1&card=18")
            page.screenshot(path=str(ARTIFACTS / "replay-page.png"), full_page=True)
            page.set_viewport_size({"width": 390, "height": 844})
            page.screenshot(path=str(ARTIFACTS / "replay-page-phone.png"), full_page=True)
            overflow = page.evaluate("() => document.documentElement.scrollWidth")
            colours = page.eval_on_selector_all(
                "#table .card.red, #table .card.black",
                "nodes => new Set(nodes.map(n => getComputedStyle(n).color)).size",
            )
            return overflow, colours

    async with trio.open_nursery() as nursery:
        url = await web_for(logged.log_path.parent.parent, nursery)
        width, colours = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert width <= 390, "the viewer scrolls sideways on a phone-width screen"
    # Works offline: everything the page loads comes from the package's own server.
    assert requested
    assert all(address.startswith(url) or address.startswith("data:") for address in requested), requested
    assert colours == 2, "red and black suits"
    for name in ("replay-page.png", "replay-page-phone.png"):
        data = (ARTIFACTS / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert len(data) > 10_000


# ------------------------------------------------------------------ live


class GatedBot(Bot):
    """Plays the lowest legal action, but holds its first decision until the test lets it go."""

    name = "gated"
    reached: threading.Event
    go: threading.Event

    def _wait(self) -> None:
        type(self).reached.set()
        type(self).go.wait(timeout=30)

    def choose_call(self, view: BotView) -> Any:
        self._wait()
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        self._wait()
        return view.legal_actions[0]


def run_gated(address: str, name: str, bot: type[Bot]) -> None:
    options = ClientOptions(server=address, name=name, token="t", seats=2, max_matches=1, reconnect_for_s=5.0)
    asyncio.run(asyncio.wait_for(run_bot_async(bot, options), timeout=90))


@pytest.mark.parametrize(
    ("where", "open_table"),
    [("beside", False), ("beside", True), ("arena", False)],
    ids=["beside-the-referee", "beside-an-open-table", "through-the-arena-service"],
)
async def test_a_live_match_appears_card_by_card_showing_only_what_a_spectator_may_see(
    tmp_path, where, open_table
):
    """Beside the referee (serve --web) the page follows the table itself; on its own
    (oddtrick web --server) it follows the referee's Arena.WatchMatch."""
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Gated", (GatedBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 2})
    rules = TableRules(deadline_s=60.0, grace_s=5.0, open=open_table)

    def drive(url: str, match_id: str) -> dict[str, Any]:
        with browser_page() as page:
            page.goto(f"{url}/matches/{match_id}")
            page.wait_for_function("() => document.body.dataset.lastSeq")
            before = {seat: len(cards_shown(page, f"#hand-{seat}")) for seat in "NESW"}
            hidden = page.locator(".hidden-hand").count()
            go.set()
            page.wait_for_function("() => document.querySelectorAll('#trick [data-card]').length > 0")
            page.wait_for_function("() => document.querySelectorAll('#trick-list li').length >= 3")
            page.wait_for_function(
                "() => document.getElementById('live-status').textContent.includes('over')"
            )
            return {
                "before": before,
                "hidden": hidden,
                "tricks_listed": page.locator("#trick-list li").count(),
                "last_trick": cards_shown(page, "#trick-list li:last-child"),
                "counts": [page.inner_text("#tricks-ns"), page.inner_text("#tricks-ew")],
                "result": page.inner_text("#result"),
            }

    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        web_beside(referee, "127.0.0.1:0" if where == "beside" else None) as beside_url,
        trio.open_nursery() as nursery,
    ):
        if where == "beside":
            url = beside_url
        else:
            app = create_app(tmp_path / "data", ArenaLive(referee.address))
            url = await nursery.start(serve_web, app, "127.0.0.1:0")
        assert url is not None
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_gated, referee.address, name, bot)
        done: list[Any] = []
        finished = trio.Event()

        async def play() -> None:
            done.append(await referee.play_match(MatchSpec(config, SEATING, rules, match_id="live-1")))
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 30)
        seen = await in_thread(drive, url, "live-1")
        await finished.wait()
        nursery.cancel_scope.cancel()  # the standalone page's server
    record = done[0]
    hands = logged_hands(record.log_path)
    last = [str(Card.parse(text)) for _, text in hands[2]["cards"][-4:]]
    results = [r for r in read_log(record.log_path) if r["type"] == "hand_result"]
    if open_table:
        assert seen["before"] == dict.fromkeys("NESW", 13)
        assert seen["hidden"] == 0
    else:
        assert seen["before"] == dict.fromkeys("NESW", 0)
        assert seen["hidden"] == 4
    assert seen["tricks_listed"] == 13
    assert sorted(seen["last_trick"]) == sorted(last)
    assert seen["counts"] == [str(n) for n in results[-1]["tricks"]]
    assert "match over" in seen["result"]


async def test_a_sealed_match_in_progress_has_no_live_page_and_no_events(tmp_path):
    from tests.web_support import get

    reached, go = threading.Event(), threading.Event()
    bot = type("GatedSealed", (GatedBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
    rules = TableRules(deadline_s=60.0, grace_s=5.0, open=True)  # even an open table stays sealed
    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_gated, referee.address, name, bot)
        finished = trio.Event()

        async def play() -> None:
            await referee.play_match(MatchSpec(config, SEATING, rules, match_id="sealed-live"), sealed=True)
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 30)
        pages = {
            suffix: await in_thread(get, f"{url}/matches/sealed-live{suffix}")
            for suffix in ("", "/events", "/log.jsonl", "/match.pbn", "/replay.json")
        }
        _, listing, _ = await in_thread(get, f"{url}/matches")
        go.set()
        await finished.wait()
    status, body, _ = pages[""]
    assert status == 200
    assert "sealed until both plays" in body
    assert "data-card" not in body
    assert "live-data" not in body
    for suffix in ("/events", "/log.jsonl", "/match.pbn", "/replay.json"):
        assert pages[suffix][0] == 404, suffix
    assert '<td data-label="Status">sealed, playing</td>' in listing


# ------------------------------------------------------------ faults, think time, comments


class TalkingBot(Bot):
    """Plays the lowest legal card and says why, every time."""

    name = "talker"

    def choose_call(self, view: BotView) -> Any:
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        card = view.legal_actions[0]
        return card, f"lowest of {len(view.legal_actions)} <b>legal</b> <!--<script>"


class SleepyBot(Bot):
    """Plays the lowest legal card, but sleeps through its second decision's deadline."""

    name = "sleepy"
    decisions = 0

    def choose_call(self, view: BotView) -> Any:
        return view.legal_actions[0]

    async def choose_card(self, view: BotView) -> Any:
        type(self).decisions += 1
        if type(self).decisions == 2:
            await asyncio.sleep(1.5)
        return view.legal_actions[0]


def run_bot_class(address: str, name: str, bot: type[Bot]) -> None:
    options = ClientOptions(server=address, name=name, token="t", seats=2, max_matches=1, reconnect_for_s=5.0)
    asyncio.run(asyncio.wait_for(run_bot_async(bot, options), timeout=90))


async def test_the_replay_shows_faults_think_times_and_the_bots_comments(tmp_path):
    """A card the referee played for a seat that timed out is marked as the referee's, each
    card's think time is shown, and so is what the bot said about it (escaped, as text)."""
    from tests.web_support import get

    chromium_path()
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
    rules = TableRules(deadline_s=0.5, grace_s=5.0)
    sleepy = type("Sleepy", (SleepyBot,), {"decisions": 0})
    async with (
        running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee,
        trio.open_nursery() as nursery,
    ):
        nursery.start_soon(in_thread, run_bot_class, referee.address, "alice", TalkingBot)
        nursery.start_soon(in_thread, run_bot_class, referee.address, "bob", sleepy)
        record = await referee.play_match(MatchSpec(config, SEATING, rules, seed="faults", match_id="faults"))
        referee.finish()
    plays = [r for r in read_log(record.log_path) if r["type"] == "action"]
    faulted = [k for k, r in enumerate(plays, 1) if r.get("fault") == "timeout"]
    assert faulted, plays  # (its other seat's requests may wait behind the sleep too)
    fault_at = faulted[0]
    after_trick = (fault_at + 3) // 4 * 4  # the end of the faulted card's trick
    talked = [k for k, r in enumerate(plays, 1) if r.get("comment")]
    said_at = next(k for k in talked if k > after_trick)
    said = plays[said_at - 1]
    think = decision_time(said)
    assert think.startswith("thought ")  # the SDK reports its own time

    def drive(url: str) -> dict[str, Any]:
        csp_violations: list[str] = []
        with browser_page() as page:
            page.on(
                "console", lambda m: csp_violations.append(m.text) if "Content Security" in m.text else None
            )
            page.goto(f"{url}/matches/faults?hand=1&card=0")
            for _ in range(fault_at):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => location.search.includes('card={fault_at}')")
            at_fault = {
                "decision": page.inner_text("#decision"),
                "slot_classes": page.eval_on_selector_all(
                    "#trick .card.fault", "nodes => nodes.map(n => [n.dataset.card, n.title])"
                ),
            }
            page.goto(f"{url}/matches/faults?hand=1&card=1")
            page.keyboard.press("End")
            page.wait_for_function("() => location.search.includes('card=52')")
            page.keyboard.press("Home")
            for _ in range(after_trick):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => location.search.includes('card={after_trick}')")
            marks = page.eval_on_selector_all(
                "#trick-list .play:has(.fault)",
                "nodes => nodes.map(n => [n.querySelector('[data-card]').dataset.card, "
                "n.querySelector('.fault').textContent, n.querySelector('.fault').title])",
            )
            thinks = page.eval_on_selector_all("#trick-list .play", "nodes => nodes.map(n => n.title)")
            for _ in range(said_at - after_trick):
                page.keyboard.press("ArrowRight")
            page.wait_for_function(f"() => location.search.includes('card={said_at}')")
            at_comment = {
                "decision": page.inner_text("#decision"),
                "comments": page.eval_on_selector_all(
                    "#comments li", "nodes => nodes.map(n => n.textContent)"
                ),
                "bold": page.locator("#comments b, #decision b").count(),
            }
        return {
            "at_fault": at_fault,
            "marks": marks,
            "thinks": thinks,
            "at_comment": at_comment,
            "csp": csp_violations,
        }

    async with trio.open_nursery() as nursery:
        url = await web_for(tmp_path / "data", nursery)
        seen = await in_thread(drive, url)
        _, server_page, _ = await in_thread(get, f"{url}/matches/faults?hand=1&card={fault_at}")
        nursery.cancel_scope.cancel()
    faulted_card = str(Card.parse(plays[fault_at - 1]["action"]))
    referee_played = "played by the referee: the bot did not answer in time"
    assert referee_played in seen["at_fault"]["decision"]
    assert seen["at_fault"]["slot_classes"] == [[faulted_card, referee_played]]
    assert seen["marks"] == [
        [str(Card.parse(plays[k - 1]["action"])), "timeout", referee_played]
        for k in faulted
        if k <= after_trick
    ]
    assert len(seen["thinks"]) == after_trick
    assert seen["thinks"] == [decision_time(r) for r in plays[:after_trick]]
    assert think in seen["at_comment"]["decision"]
    assert said["comment"] in seen["at_comment"]["decision"]
    assert "played by the referee" not in seen["at_comment"]["decision"]
    assert len(seen["at_comment"]["comments"]) == sum(1 for k in talked if k <= said_at)
    assert seen["at_comment"]["comments"][-1].endswith(said["comment"])
    assert seen["at_comment"]["bold"] == 0  # a bot's comment is text, never markup
    assert seen["csp"] == []
    # Without JavaScript, the server's page says the same.
    assert f"⚠ {referee_played}" in server_page
    assert f'{" fault"}" data-card="{faulted_card}" title="{referee_played}"' in server_page


# ------------------------------------------------------------------ layout

CELLS = """() => {
  const scroll = document.querySelector('.scroll');
  const box = scroll ? scroll.getBoundingClientRect() : null;
  return {
    viewport: [innerWidth, innerHeight],
    page: document.documentElement.scrollWidth,
    scroll: scroll ? [scroll.scrollWidth, scroll.clientWidth, box.left, box.right] : null,
    headers: [...document.querySelectorAll('#matches thead th')].map(n => n.textContent),
    rows: [...document.querySelectorAll('#matches tbody tr')].map(tr => [...tr.children].map(td => {
      const r = td.getBoundingClientRect();
      return [td.dataset.label, r.left, r.right, r.width, r.height];
    })),
    headerCells: [...document.querySelectorAll('#matches thead th')].map(th => {
      const r = th.getBoundingClientRect();
      return [th.textContent, r.left, r.right];
    }),
  };
}"""


async def test_every_column_of_the_matches_list_shows_at_desktop_and_phone_widths(played, tmp_path):
    """A ladder's names are long (up to 64 characters): they wrap, and no column is cut off at
    1280 px; on a phone each match is a block with every column a labelled line."""
    import json
    import sqlite3

    from tests.test_web import own_copy

    data_dir = own_copy(played, tmp_path)
    long_ns = "strong-pimc-search-bot-v12.3-experimental-build-20261201-a1b2c3"
    long_ew = "NeuralWhistNetworkWithMonteCarloRolloutsAndDoubleDummyHints64ch"
    with sqlite3.connect(data_dir / "oddtrick.sqlite3") as db:
        players = json.dumps({"N": long_ns, "S": long_ns, "E": long_ew, "W": long_ew})
        db.execute("UPDATE matches SET players = ?", (players,))

    def drive(url: str) -> tuple[dict[str, Any], dict[str, Any]]:
        with browser_page(1280, 800) as page:
            page.goto(f"{url}/matches")
            desktop = page.evaluate(CELLS)
            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()
            phone = page.evaluate(CELLS)
        return desktop, phone

    async with trio.open_nursery() as nursery:
        url = await web_for(data_dir, nursery)
        desktop, phone = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    columns = ["Match", "Game", "NS", "EW", "Status", "Result", "Started"]
    assert desktop["headers"] == columns
    scroll_width, client_width, left, right = desktop["scroll"]
    assert scroll_width <= client_width, "the list scrolls sideways at 1280 px"
    for name, _, cell_right in desktop["headerCells"]:
        assert cell_right <= right + 0.5, f"{name} is cut off at 1280 px"
    assert len(desktop["rows"]) == len(played)
    for row in desktop["rows"]:
        assert [label for label, *_ in row] == columns
        for label, cell_left, cell_right, width, _ in row:
            assert left - 0.5 <= cell_left, label
            assert cell_right <= right + 0.5, f"{label} is cut off at 1280 px"
            assert width > 0
    # A phone: nothing sideways, every column of every match inside the screen.
    assert phone["page"] <= 390, "the list scrolls sideways on a phone"
    assert len(phone["rows"]) == len(played)
    for row in phone["rows"]:
        assert [label for label, *_ in row] == columns
        for label, cell_left, cell_right, width, height in row:
            assert cell_left >= 0, label
            assert cell_right <= 390 + 0.5, f"{label} is off the phone's screen"
            assert width > 100, label
            assert height > 0, label


async def test_on_a_phone_the_replay_controls_and_south_fit_one_screen(played):
    logged = played["contract-doubling"]

    def drive(url: str) -> dict[str, Any]:
        with browser_page(390, 844) as page:
            page.goto(f"{url}/matches/{logged.match_id}?hand=1&card=5")
            return page.evaluate(
                """() => ({
                  controls: document.getElementById('controls').getBoundingClientRect().toJSON(),
                  north: document.querySelector('.seat-N').getBoundingClientRect().toJSON(),
                  south: document.querySelector('.seat-S').getBoundingClientRect().toJSON(),
                  page: document.documentElement.scrollWidth,
                  height: innerHeight,
                  scrolled: scrollY,
                })"""
            )

    async with trio.open_nursery() as nursery:
        url = await web_for(logged.log_path.parent.parent, nursery)
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    assert seen["scrolled"] == 0
    assert seen["page"] <= 390
    assert seen["controls"]["top"] >= 0
    assert seen["controls"]["bottom"] < seen["north"]["top"]
    assert seen["south"]["bottom"] <= seen["height"], "South's hand is below the screen with the controls"


class BiddingGatedBot(Bot):
    """Opens the auction with the lowest bid and passes after it (so every hand has a
    contract), and holds its first card until the test lets it go."""

    name = "bidder"
    reached: threading.Event
    go: threading.Event

    def choose_call(self, view: BotView) -> Any:
        if any(call.kind is CallKind.BID for _, call in view.auction):
            return PASS
        return min((call for call in view.legal_actions if call is not PASS), key=lambda bid: bid.step)

    def choose_card(self, view: BotView) -> Any:
        if not type(self).reached.is_set():
            type(self).reached.set()
            type(self).go.wait(timeout=30)
        return view.legal_actions[0]


RECORD_HAND_ENDS = """
window.handEnds = [];
window.oddtrickOnEvent = (event) => {
  if (event.type !== "hand_ended") return;
  const shown = {};
  for (const seat of ["N", "E", "S", "W"]) {
    const box = "#hand-" + seat;
    const dealt = document.querySelectorAll(box + " [data-card], " + box + " [data-played-card]");
    shown[seat] = [...dealt].map((n) => n.dataset.card || n.dataset.playedCard);
  }
  window.handEnds.push(shown);
};
"""


async def _follow_a_contract_match(tmp_path: Path, match_id: str) -> tuple[dict[str, Any], Path]:
    """A closed Contract Whist table of two deals, followed live beside the referee: what the
    page shows as the first card is awaited, and at each hand's end."""
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Bidding", (BiddingGatedBot,), {"reached": reached, "go": go})
    config = GameConfig.from_dict({"game": "contract", "format": "deals", "deals": 2})
    rules = TableRules(deadline_s=60.0, grace_s=5.0)

    def drive(url: str) -> dict[str, Any]:
        with browser_page() as page:
            page.add_init_script(RECORD_HAND_ENDS)
            page.goto(f"{url}/matches/{match_id}")
            page.wait_for_function(
                "() => document.getElementById('hand-title').textContent.includes('contract')"
            )
            to_play = page.eval_on_selector_all(".seat.to-play", "nodes => nodes.map(n => n.dataset.seat)")
            go.set()
            page.wait_for_function(
                "() => document.getElementById('live-status').textContent.includes('over')"
            )
            return {"to_play": to_play, "hand_ends": page.evaluate("() => window.handEnds")}

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
            done.append(await referee.play_match(MatchSpec(config, SEATING, rules, match_id=match_id)))
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 30)
        seen = await in_thread(drive, url)
        await finished.wait()
    return seen, done[0].log_path


async def test_the_live_contract_view_highlights_the_leader_once_the_auction_is_over(tmp_path):
    """The declarer's left leads to the first trick: the "to play" mark moves there (not
    to the declarer, whose side's last pass ended the auction)."""
    seen, log_path = await _follow_a_contract_match(tmp_path, "live-leader")
    first_card = logged_hands(log_path)[1]["cards"][0]
    assert seen["to_play"] == [first_card[0]]


async def test_the_live_view_shows_the_four_hands_at_each_hands_end(tmp_path):
    """A hand's end shows all four hands as dealt (hand_ended carries them), even at a
    closed table, until the next hand is dealt: the deal diagram, its cards played (as the
    replay shows the hand's last card), not four seats of "0 cards"."""
    seen, log_path = await _follow_a_contract_match(tmp_path, "live-hands")
    records = list(read_log(log_path))
    seed = records[-1]["seed"]
    starts = [r for r in records if r["type"] == "hand_start"]
    expected = []
    for start in starts:
        deal, _, _ = deal_cards(seed, start["hand"], Seat.parse(start["dealer"]))
        expected.append({str(seat): sorted(str(card) for card in deal[seat]) for seat in Seat})
    shown = [{seat: sorted(cards) for seat, cards in end.items()} for end in seen["hand_ends"]]
    assert len(expected) == 2
    assert shown == expected
