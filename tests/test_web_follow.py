"""Sealed tables can be followed, and nothing of their cards leaks: the list of tables in
progress says how far each is (hand and trick), the sealed table's page and the standings
refresh themselves in a real Chromium, and the page becomes the replay once the set is
released. ``tournament --web`` stays up after the tournament, saying so."""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import trio

from oddtrick import Bot, BotView
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.rules import Card, GameConfig
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.progress import progress_of_lines
from oddtrick_referee.web.server import web_beside
from tests.referee_support import in_thread
from tests.replay_support import SEATING
from tests.test_web_accessibility import OUR_CHECKS, axe_problems
from tests.web_support import browser_page, chromium_path, get

ROOT = Path(__file__).resolve().parents[1]
HELD_AT = 10
"""The card at which the bots stop until the test lets them go: hand 1, trick 3."""


class HeldBot(Bot):
    """Plays the lowest legal action; holds its card once the table has seen HELD_AT cards."""

    name = "held"
    cards: list[int]
    reached: threading.Event
    go: threading.Event

    def choose_call(self, view: BotView) -> Any:
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        self.cards[0] += 1
        if self.cards[0] == HELD_AT + 1:
            self.reached.set()
            self.go.wait(timeout=60)
        return view.legal_actions[0]


def run_held(address: str, name: str, bot: type[Bot]) -> None:
    options = ClientOptions(server=address, name=name, token="t", seats=2, max_matches=1, reconnect_for_s=5.0)
    asyncio.run(asyncio.wait_for(run_bot_async(bot, options), timeout=120))


HAND_RESULT = (
    '{"type":"hand_result","hand":2,"outcome":"made","tricks":[7,6],"points":[0,0],'
    '"honours":[0,0],"scores":[0,0],"text":""}'
)


def test_progress_counts_hands_and_tricks_and_knows_when_contract_whists_auction_ends():
    lines = [
        '{"type":"hand_start","hand":2,"dealer":"N"}',
        '{"type":"action","hand":2,"seat":"E","action":"7S"}',
        *['{"type":"action","hand":2,"seat":"S","action":"pass"}'] * 2,
        '{"type":"action","hand":2,"seat":"N","action":"8H"}',
    ]
    assert progress_of_lines(lines, contract=True).text == "hand 2 · auction"
    passes = ['{"type":"action","hand":2,"seat":"E","action":"pass"}'] * 3
    cards = ['{"type":"action","hand":2,"seat":"S","action":"7H"}'] * 5  # (a card, not a bid)
    assert progress_of_lines(lines + passes + cards, contract=True).text == "hand 2 · trick 2"
    assert progress_of_lines(lines[:1] + cards, contract=False).text == "hand 2 · trick 2"
    assert progress_of_lines([*lines[:1], HAND_RESULT], contract=True).text == "hand 2 over"
    assert progress_of_lines([*lines[:1], '{"type":"action","ha'], contract=False).text == "hand 2 · trick 1"


async def test_a_sealed_table_is_followed_by_hand_and_trick_and_no_card_reaches_any_page(tmp_path):
    chromium_path()
    reached, go = threading.Event(), threading.Event()
    bot = type("Held", (HeldBot,), {"reached": reached, "go": go, "cards": [0]})
    config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
    data_dir = tmp_path / "data"
    tournament = "follow cup"
    set_id = f"{tournament}/alice|bob/1"
    spec = MatchSpec(config, SEATING, TableRules(deadline_s=60.0), match_id="sealed-1", set_id=set_id)
    TournamentStore(data_dir / "oddtrick.sqlite3").open_tournament(
        tournament,
        {
            "entries": [["alice", "a"], ["bob", "b"]],
            "config": config.to_dict(),
            "deals": 1,
            "duplicate": True,
        },
        "seed",
        1,
    )
    bodies: dict[str, str] = {}

    def while_held(url: str) -> dict[str, Any]:
        for path in (
            "/matches",
            "/matches?status=in_progress",
            "/matches?status=sealed",
            "/matches/sealed-1",
            "/matches/sealed-1/replay.json",
            "/matches/sealed-1/analysis.json",
            "/matches/sealed-1/log.jsonl",
            "/matches/sealed-1/match.pbn",
            "/matches/sealed-1/events",
            "/matches/sealed-1/deals/1",
            "/tournaments/follow%20cup",
            "/bots/alice",
        ):
            bodies[path] = get(url + path)[1]
        with browser_page() as page:
            page.goto(url + "/matches/sealed-1")
            before = page.inner_text("#progress")
            problems = axe_problems(page) + page.evaluate(OUR_CHECKS)
            page.goto(url + "/matches?status=in_progress")
            problems += axe_problems(page) + page.evaluate(OUR_CHECKS)
            page.goto(url + "/matches/sealed-1")
            go.set()
            page.wait_for_function(
                "() => document.getElementById('progress').textContent.includes('is over')", timeout=60_000
            )
            after = page.inner_text("#progress")
            return {"before": before, "after": after, "problems": problems}

    async with (
        running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        assert url is not None
        for name in ("alice", "bob"):
            nursery.start_soon(in_thread, run_held, referee.address, name, bot)
        finished = trio.Event()

        async def play() -> None:
            await referee.play_match(spec, sealed=True)
            finished.set()

        nursery.start_soon(play)
        assert await in_thread(reached.wait, 60)
        seen = await in_thread(while_held, url)
        await finished.wait()
        await referee.release_set(set_id)

        def released() -> str:
            with browser_page() as page:
                page.goto(url + "/matches/sealed-1")
                return str(page.locator("#match-data").count())

        replayable = await in_thread(released)
    log = list(read_log(data_dir / "logs" / "sealed-1.jsonl"))
    played = [str(Card.parse(r["action"])) for r in log if r["type"] == "action"][:HELD_AT]
    assert seen["before"] == "Being played: hand 1 · trick 3."
    assert not seen["problems"], "\n".join(seen["problems"])
    assert "This play is over" in seen["after"]
    listing = bodies["/matches?status=in_progress"]
    row = re.search(r'<tr class="status-sealed" data-match="sealed-1">(.*?)</tr>', listing, re.S)
    assert row is not None, listing
    assert "sealed, playing" in row[1]
    assert "hand 1 · trick 3" in row[1]
    assert "alice" not in row[1]
    assert "bob" not in row[1]
    standings = bodies["/tournaments/follow%20cup"]
    assert 'data-match="sealed-1"' in standings.split('id="playing"')[1]
    assert "data-follow" in standings
    for path, body in bodies.items():
        assert not any(symbol in body for symbol in "♠♥♦♣"), path
        assert "data-card" not in body, path
        for card in played:
            assert not re.search(rf"\b{card}\b", body), (path, card)
    assert replayable == "1"


def test_tournament_web_stays_up_after_the_tournament_and_says_how_to_stop_it(tmp_path):
    random_bot = ROOT / "sample_bots" / "random_bot.py"
    command = [
        sys.executable, "-m", "oddtrick", "tournament",
        "--bot", f"a={random_bot}", "--bot", f"b={random_bot}", "--deals", "1", "--name", "short cup",
        "--web", "0", "--data-dir", str(tmp_path),
    ]  # fmt: skip
    marker = "the tournament is over; its web page stays up on "
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as process:
        try:
            assert process.stderr is not None
            line = next((line for line in process.stderr if marker in line), "")
            assert line.rstrip().endswith("(Ctrl-C to stop)"), line
            url = line.split(marker, 1)[1].split()[0].rstrip("/")
            status, body, _ = get(url + "/tournaments/short%20cup")
            process.send_signal(signal.SIGINT)
            code = process.wait(timeout=30)
        finally:
            process.kill()
    assert status == 200
    assert "No table of this tournament is playing now." in body
    assert code == 0
