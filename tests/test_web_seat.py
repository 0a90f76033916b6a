"""A person plays a seat in the browser: ``oddtrick play --web`` run as a command (its referee
on a real socket, the bots as real processes), driven by clicks and keys in a real headless
Chromium. A whole hand of classic Whist and one of Contract Whist are played; an illegal
card is refused with its reason and changes nothing, and so is a greyed call; the page
never receives a card of another hand before it is played; and the log passes
``oddtrick check``."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import trio
from process_support import reap

from oddtrick.rules import Call, Card, GameConfig, Seat, deal_cards
from oddtrick_referee.competitions.people.at_terminal import DEFAULT_BOT, opponent
from oddtrick_referee.competitions.people.in_browser import Sitting, Sittings
from oddtrick_referee.competitions.people.seat_desk import SeatDesk
from oddtrick_referee.play.matchlog import read_log
from tests.test_replay import logged_hands
from tests.web_support import browser_page, chromium_path

GUARD_S = 180.0
"""Guards against a hang only (starting three Python processes on a loaded machine)."""
ASKED = "prev => +(document.body.dataset.asked || -1) > prev || document.body.dataset.over === 'yes'"
LABEL = re.compile(
    r"\b(two|three|four|five|six|seven|eight|nine|ten|jack|queen|king|ace)"
    r" of (clubs|diamonds|hearts|spades)\b"
)
GREYED = '#hand button[aria-disabled="true"]'
PLAYABLE = '#hand button[aria-disabled="false"]'
CALLABLE = '#bidding-box button[aria-disabled="false"]'
GREYED_CALL = '#bidding-box button[aria-disabled="true"]'
RANKS = {"two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8",
         "nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K", "ace": "A"}  # fmt: skip


class Command:
    """An ``oddtrick`` command in a process of its own, whose first line gives its page's URL."""

    def __init__(self, tmp_path: Path, arguments: list[str], address: str) -> None:
        command = [sys.executable, "-m", "oddtrick", *arguments, "--data-dir", str(tmp_path / "data")]
        self.process = subprocess.Popen(
            command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        found = re.search(address, line)
        if not found:
            self.stop()
            raise AssertionError(f"no address in {line!r}")
        self.base, self.url = found.group(1), found.group(0)

    def finish(self) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=GUARD_S)
        return self.process.returncode, out, err

    def stop(self) -> None:
        """After a failure: stop it (Ctrl-C) rather than wait for a match nobody plays."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.communicate(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            reap(self.process)


def play_command(tmp_path: Path, game: str, seed: str) -> Command:
    """``oddtrick play --web``: one deal; the seat's page is on its first line."""
    arguments = [
        "play",
        "--web",
        "127.0.0.1:0",
        "--game",
        game,
        "--deals",
        "1",
        "--seed",
        seed,
        "--name",
        "ada",
    ]
    return Command(tmp_path, arguments, r"(http://\S+)/play/(\S+)")


def play_the_hand(page: Any, illegal: bool, keyboard: bool) -> dict[str, Any]:
    """Answer every question of the seat by clicking a legal card or call; on the first card
    that has an illegal one beside it, try that first (and, once, play by the keyboard)."""
    seen: dict[str, Any] = {"cards": 0, "calls": 0, "refusal": None, "keyboard": None, "announced": []}
    seen["call_refusal"] = None
    asked = -1
    bid = False
    while True:
        page.wait_for_function(ASKED, arg=asked, timeout=GUARD_S * 1000)
        if page.evaluate("() => document.body.dataset.over === 'yes'"):
            break
        asked = int(page.evaluate("() => document.body.dataset.asked"))
        if page.evaluate("() => document.body.dataset.phase") == "auction":
            legal = page.eval_on_selector_all(CALLABLE, "b => b.map(x => x.dataset.call)")
            assert legal, "asked for a call with no call enabled"
            assert not page.locator(PLAYABLE).count(), "a card may be clicked in the auction"
            greyed_calls = page.eval_on_selector_all(GREYED_CALL, "b => b.map(x => x.dataset.call)")
            if illegal and seen["call_refusal"] is None:
                seen["call_refusal"] = refuse_call(page, greyed_calls)
            choice = next((c for c in legal if c not in ("pass", "double")), "pass") if not bid else "pass"
            bid = True
            page.click(f'#bidding-box button[data-call="{choice}"]')
            seen["calls"] += 1
            continue
        seen["announced"].append(page.inner_text("#announce"))
        enabled = page.eval_on_selector_all(PLAYABLE, "b => b.map(x => x.dataset.card)")
        greyed = page.eval_on_selector_all(GREYED, "b => b.map(x => x.dataset.card)")
        assert enabled
        assert not page.locator(CALLABLE).count(), "a call may be clicked in the play"
        if illegal and greyed and seen["refusal"] is None:
            seen["refusal"] = refuse(page, greyed[0])
        if keyboard and seen["keyboard"] is None:
            seen["keyboard"] = by_keyboard(page)
        else:
            page.click(f'#hand button[data-card="{enabled[-1]}"]')
        seen["cards"] += 1
    seen["received"] = page.evaluate("() => window.oddtrickSeat.received")
    seen["live"] = page.get_attribute("#announce", "aria-live")
    seen["result"] = page.inner_text("#result")
    seen["match_result"] = page.inner_text("#match-end")
    seen["tricks"] = [page.inner_text("#tricks-ns"), page.inner_text("#tricks-ew")]
    seen["labels"] = page.eval_on_selector_all(
        "#bidding-box button", "b => b.map(x => x.getAttribute('aria-label'))"
    )
    return seen


def refuse(page: Any, card: str) -> dict[str, Any]:
    """Click a greyed card, then post it straight to the endpoint: the page says why it may
    not be played, in the rules' words the desk refuses it with, and nothing changes."""
    before = page.eval_on_selector_all("#hand button", "b => b.map(x => x.dataset.card)")
    label = page.get_attribute(f'#hand button[data-card="{card}"]', "aria-label")
    page.click(f'#hand button[data-card="{card}"]', force=True)  # force: it is greyed
    page.wait_for_selector("#refusal:not([hidden])")
    shown = page.inner_text("#refusal")
    origin = page.evaluate("() => location.origin")
    answer = page.evaluate("() => JSON.parse(document.getElementById('seat-data').textContent).answer")
    direct = page.request.post(
        origin + answer,
        data=json.dumps({"action": card}),
        headers={"Content-Type": "application/json", "Origin": origin},
    )
    foreign = page.request.post(
        origin + answer,
        data=json.dumps({"action": card}),
        headers={"Content-Type": "application/json", "Origin": "http://elsewhere.example"},
    )
    after = page.eval_on_selector_all("#hand button", "b => b.map(x => x.dataset.card)")
    return {
        "card": card,
        "label": label,
        "shown": shown,
        "direct": (direct.status, direct.json()["error"]),
        "foreign": foreign.status,
        "unchanged": before == after and page.evaluate("() => document.body.dataset.yourTurn") == "yes",
    }


def refuse_call(page: Any, greyed: list[str]) -> dict[str, Any]:
    """Click greyed calls of the bidding box (the highest bid below the standing one if
    there is one, and double, which this game does not allow): the page says why each may
    not be made, in the rules' words, and the seat is still asked."""
    bids = [call for call in greyed if call not in ("pass", "double")]
    tried = [*bids[-1:], "double"]
    shown: dict[str, str] = {}
    for call in tried:
        page.click(f'#bidding-box button[data-call="{call}"]', force=True)  # force: it is greyed
        page.wait_for_selector("#refusal:not([hidden])")
        shown[call] = page.inner_text("#refusal")
    return {"shown": shown, "still_asked": page.evaluate("() => document.body.dataset.yourTurn") == "yes"}


def by_keyboard(page: Any) -> str:
    """Tab to a legal card (past greyed ones, which Tab reaches too) and press Enter: the card
    played is the one focused."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    for _ in range(100):
        page.keyboard.press("Tab")
        focused = page.evaluate(
            "() => document.activeElement.closest('#hand button[aria-disabled=\"false\"]')"
            " ? document.activeElement.dataset.card : ''"
        )
        if focused:
            page.keyboard.press("Enter")
            return focused
    raise AssertionError("no card of the hand could be reached with Tab")


def mentioned(message: dict[str, Any]) -> set[Card]:
    """Every card a message names, by its code or in words (a question's calls, 7H, are not
    cards: its legal calls and the calls its reasons are for are left out, the reasons kept)."""
    if message.get("kind") == "call":
        message = {key: value for key, value in message.items() if key != "legal"}
        message["why_not"] = list(message["why_not"].values())
    text = json.dumps(message, ensure_ascii=False)
    cards = {Card.parse(code) for code in re.findall(r'"([2-9TJQKA][CDHS])"', text)}
    cards |= {Card.parse(RANKS[rank] + suit[0].upper()) for rank, suit in LABEL.findall(text)}
    return cards


def assert_only_what_the_seat_may_see(received: list[dict[str, Any]], log_path: Path, seat: Seat) -> None:
    """No event or question the page received names a card of another hand before that
    card was played (the turned and cut cards are public; the hand's end shows the four
    hands once all were played)."""
    records = list(read_log(log_path))
    seed = records[-1]["seed"]
    dealers = {r["hand"]: Seat.parse(r["dealer"]) for r in records if r["type"] == "hand_start"}
    hands = logged_hands(log_path)
    number, played, checked = 0, 0, 0
    for message in received:
        if message.get("type") == "hand_started":
            number, played = message["hand"], 0
            assert set(message["hands"]) == {str(seat)}, message["hands"]
        if message.get("type") == "card_played":
            played += 1
        if number < 1:
            assert not mentioned(message), message
            continue
        deal, turned, cut = deal_cards(seed, number, dealers[number])
        shown = [Card.parse(text) for _, text in hands[number]["cards"]][:played]
        others = mentioned(message) - set(deal[seat]) - {turned, cut}
        if message.get("type") == "hand_ended":
            assert played == 52 or not message["hands"], message  # shown once all were played
            continue
        assert others <= set(shown), (message.get("type"), others - set(shown))
        checked += 1
    assert checked > 13


@pytest.mark.parametrize(("game", "seed"), [("classic", "a click at a time"), ("contract", "bid and play")])
def test_a_person_plays_a_whole_hand_in_the_browser_and_the_log_checks(
    tmp_path: Path, game: str, seed: str
) -> None:
    chromium_path()
    command = play_command(tmp_path, game, seed)
    try:
        with browser_page() as page:
            stranger = page.request.get(f"{command.base}/play/not-the-seat/events").status
            page.goto(command.url)
            seen = play_the_hand(page, illegal=True, keyboard=True)
    except BaseException:
        command.stop()
        raise
    code, out, err = command.finish()
    assert code == 0, err
    log_path = Path(re.search(r"log: (\S+)", out).group(1))
    checked = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(log_path)],
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    records = list(read_log(log_path))
    ours = [r for r in records if r["type"] == "action" and r["seat"] == "S"]
    hands = logged_hands(log_path)
    assert seen["cards"] == 13 == len([s for s, _ in hands[1]["cards"] if s == "S"])
    assert seen["calls"] == len([s for s, _ in hands[1]["calls"] if s == "S"])
    assert len(ours) == seen["cards"] + seen["calls"]
    assert not [r for r in records if r["type"] == "refusal"], "an illegal card reached the referee"
    if game == "contract":
        assert seen["calls"] >= 1
        assert "7♠ seven spades" in seen["labels"]
        assert "13NT thirteen no trumps" in seen["labels"]

    refusal = seen["refusal"]
    assert refusal is not None, "no hand had a card to refuse"
    card = Card.parse(refusal["card"])
    assert refusal["label"].startswith(f"{card.pretty} ")
    assert " of " in refusal["label"]
    assert refusal["shown"].startswith("you must follow suit"), refusal["shown"]
    assert "\n" not in refusal["shown"]
    assert refusal["direct"][0] == 409
    assert refusal["direct"][1] == refusal["shown"]
    assert refusal["foreign"] == 403
    assert refusal["unchanged"]
    played = {Card.parse(text) for seat, text in hands[1]["cards"] if seat == "S"}
    assert Card.parse(seen["keyboard"]) in played
    if game == "contract":
        call_refusal = seen["call_refusal"]
        assert call_refusal["still_asked"]
        shown = call_refusal["shown"]
        assert shown.pop("double").startswith("you cannot double now"), shown
        for call, why in shown.items():  # a bid below the standing one, when there was one
            assert why.startswith(f"{Call.parse(call).pretty} is not higher than the bid so far"), why

    result = next(r for r in records if r["type"] == "hand_result")
    assert seen["result"].startswith(result["text"]), seen["result"]
    assert seen["tricks"] == [str(result["tricks"][0]), str(result["tricks"][1])]
    assert seen["match_result"].startswith("match over:")
    assert stranger == 404
    assert seen["live"] == "polite"
    assert any(LABEL.search(said) and " played " in said for said in seen["announced"]), seen["announced"]
    assert all(said.endswith("your turn to play") for said in seen["announced"]), seen["announced"]
    assert_only_what_the_seat_may_see(seen["received"], log_path, Seat.SOUTH)


def test_the_play_button_starts_a_match_in_the_browser_only_when_the_operator_turns_it_on(
    tmp_path: Path,
) -> None:
    """``oddtrick web --play``: the home page's Play button, the game and seat chosen, a whole
    hand played, then its replay; without ``--play`` there is neither button nor route."""
    chromium_path()
    web = Command(tmp_path, ["web", "--play", "--port", "0"], r"(http://\S+?)/? ")
    try:
        with browser_page() as page:
            page.goto(web.base + "/")
            page.click("text=Play against the bots")
            page.select_option("select[name=game]", "contract")
            page.select_option("select[name=seat]", "W")
            page.click("#play-button")
            page.wait_for_url(re.compile(r"/play/[A-Za-z0-9_-]+$"))
            page.wait_for_function("() => document.body.dataset.asked")
            seat = page.inner_text("#seat-title")
            seen = play_the_hand(page, illegal=False, keyboard=False)
            page.click("#after a")
            page.wait_for_selector("#position")
            replay = page.inner_text("main")
            match_id = page.url.rsplit("/", 1)[1].split("?")[0]
    except BaseException:
        web.stop()
        raise
    web.stop()
    log_path = next((tmp_path / "data" / "logs").glob(f"{match_id}.jsonl*"))
    checked = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(log_path)],
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    records = list(read_log(log_path))
    assert records[0]["config"]["game"] == "contract"
    assert seat == "Your seat: West"
    ours = [r for r in records if r["type"] == "action" and r["seat"] == "W"]
    assert len(ours) == seen["cards"] + seen["calls"]
    assert seen["cards"] == 13
    assert "guest-" in replay
    assert_only_what_the_seat_may_see(seen["received"], log_path, Seat.WEST)

    plain = Command(tmp_path, ["web", "--port", "0"], r"(http://\S+?)/? ")
    try:
        with browser_page() as page:
            page.goto(plain.base + "/matches")
            buttons = page.locator("text=Play against the bots").count()
            form = page.request.get(plain.base + "/play").status
            start = page.request.post(
                plain.base + "/play", form={"game": "classic"}, headers={"Origin": plain.base}
            )
    finally:
        plain.stop()
    assert (buttons, form, start.status) == (0, 404, 404)


def test_an_answer_is_json_whatever_the_parameters_of_its_content_type(tmp_path: Path) -> None:
    """``application/json; charset=utf-8`` (what many clients send) is JSON; only another
    media type is refused as not from the seat's page."""
    command = play_command(tmp_path, "classic", "content-type")
    try:
        answer = f"{command.url}/answer"

        def post(content_type: str) -> tuple[int, str]:
            request = urllib.request.Request(
                answer,
                data=json.dumps({"action": "not-a-card"}).encode(),
                headers={"Content-Type": content_type, "Origin": command.base},
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return response.status, json.loads(response.read())["ok"]
            except urllib.error.HTTPError as error:
                return error.code, json.loads(error.read())["error"]

        sent = {
            kind: post(kind) for kind in ("application/json; charset=utf-8", "Application/JSON", "text/plain")
        }
    finally:
        command.stop()
    for kind in ("application/json; charset=utf-8", "Application/JSON"):
        assert sent[kind][0] == 409, sent  # read, and refused by the desk: not the seat's turn, or no card
    assert sent["text/plain"] == (403, "a card is played only from the seat's own page, as JSON")


async def test_a_match_whose_seat_no_page_follows_is_stopped_and_its_bots_with_it(tmp_path: Path) -> None:
    """Under the Play button (``web --play``) a visitor who never opens the seat's page, or
    closes it, does not keep the bots and the place for good."""
    sittings = Sittings(tmp_path / "data", io.StringIO(), abandon_s=1.0)
    ended = trio.Event()
    seen: list[Any] = []

    def end(desk: SeatDesk, record: Any) -> None:
        seen.append((desk, record))
        ended.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(sittings.run)
        partner = opponent(str(DEFAULT_BOT), "partner")
        opponents = opponent(str(DEFAULT_BOT), "opponents")
        config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 1})
        sittings.start(Sitting(config, Seat.SOUTH, partner, opponents, "absent"), on_end=end)
        with trio.fail_after(GUARD_S):
            await ended.wait()
        playing = sittings.desks.playing()
        nursery.cancel_scope.cancel()
    desk, record = seen[0]
    assert record is None
    assert desk.over
    assert desk.error == "the match was stopped: no page followed the seat for 1 s"
    assert playing == 0
    assert desk.answer("QS") == "the match is over"


async def test_an_answer_out_of_turn_or_after_the_match_is_refused_with_its_reason() -> None:
    """The desk's own refusals, which a page sees only when it sends at the wrong time."""
    desk = SeatDesk()
    assert desk.answer("QS") == "it is not your turn: wait until the page asks you"
    desk.publish({"seq": 1, "type": "match_started"})
    assert desk.answer("QS") == "it is not your turn: wait until the page asks you"
    assert desk.asked is None
    desk.close()
    assert desk.answer("QS") == "the match is over"
    assert [m["seq"] for m in desk.events] == [1]


async def test_a_person_in_the_browser_is_a_local_seat_with_no_connection_and_no_bot_process(
    tmp_path: Path,
) -> None:
    """The page's seat and the default bots are local seats of the referee, in its trio run:
    while the match plays, the referee has no session and this process started no process;
    the page's answers (the desk's, as the page sends them) play the whole match."""
    from tests.test_ladder import child_pids

    sittings = Sittings(tmp_path / "data", io.StringIO())
    ended = trio.Event()
    seen: list[Any] = []
    during: list[tuple[int, set[int]]] = []

    def end(desk: SeatDesk, record: Any) -> None:
        seen.append(record)
        ended.set()

    async with trio.open_nursery() as nursery:
        referee = await nursery.start(sittings.run)
        partner = opponent(str(DEFAULT_BOT), "partner")
        opponents = opponent(str(DEFAULT_BOT), "opponents")
        config = GameConfig.from_dict({"game": "contract", "format": "deals", "deals": 1})
        sitting = Sitting(config, Seat.SOUTH, partner, opponents, "ada", seed="a local seat")  # not thrown in
        desk = sittings.start(sitting, on_end=end)
        with trio.fail_after(GUARD_S):
            async for kind, shown in desk.follow():
                if kind == "asked":
                    during.append((len(referee.lobby.sessions), child_pids(os.getpid())))
                    assert desk.answer(shown["legal"][0]) is None
            await ended.wait()
        nursery.cancel_scope.cancel()
    (record,) = seen
    assert record is not None
    assert record.state.match_result is not None
    assert len(during) >= 13  # a call at least, and 13 cards
    assert all(state == (0, set()) for state in during), during
    logged = read_log(record.log_path)
    assert [r for r in logged if r["type"] == "match_end"]
