"""Every fault of a match is shown at the card where it happened, and counted per seat.

One real match on a real referee, with local seats: a bot whose code raises (its SDK
plays a fallback, the log keeps its message), one that answers a card it does not hold
(refused, then it answers again), and one that does not answer in time (it waits on an
event the test sets only once the match is over, so its decisions time out). Its log is
then replayed by ``oddtrick replay`` and ``oddtrick export --json`` (real processes) and
by the web page in Chromium: each shows each fault at its card, with the bot's message,
the refused card and the rules' reason, and the same counts per seat as the referee's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import trio
from referee_support import PATIENCE_S, in_thread, referee_running

import oddtrick
from oddtrick.bots.random_bot import RandomBot
from oddtrick.rules import Card, GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, TableRules, read_log
from oddtrick_referee.play.local_seat import bot_entrant
from tests.test_local_seats import Illegal, Raising
from tests.test_web_browser import web_for
from tests.web_support import browser_page, chromium_path

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
RAISED = "the bot's own code failed: its SDK played a fallback: RuntimeError: deliberate bug in a local bot"
TIMED_OUT = "played by the referee: the bot did not answer in time"


def blocked(released: threading.Event) -> type[oddtrick.Bot]:
    """A bot that waits, on its seat's worker thread, until ``released``: never in time."""

    class Blocked(oddtrick.Bot):
        name = "blocked"

        def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
            return oddtrick.PASS

        def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
            released.wait(PATIENCE_S)
            return view.legal_actions[0]

    return Blocked


async def play_faulty_match(tmp_path: Path) -> tuple[Path, dict[Seat, Any]]:
    """The match's log and the referee's record of each seat."""
    config = GameConfig.classic(format=MatchFormat.HAND)
    rules = TableRules(deadline_s=0.3, grace_s=1.0)
    released = threading.Event()
    try:
        async with referee_running(tmp_path, []) as referee:
            for name, bot in (("blocked", blocked(released)), ("raising", Raising), ("illegal", Illegal)):
                referee.add_local(bot_entrant(name, bot))
            referee.add_local(bot_entrant("random", RandomBot))
            seating = {N: "blocked", E: "raising", S: "illegal", W: "random"}
            with trio.fail_after(PATIENCE_S):
                record = await referee.play_match(
                    MatchSpec(config, seating, rules, seed="faults", match_id="faults")
                )
                referee.finish()
    finally:
        released.set()
    return record.log_path, record.seats


def expected_faults(log: Path) -> dict[int, list[tuple[str, str]]]:
    """From the log itself: each card (1-based, a classic hand has no calls) and its faults
    as (seat, words), in the order logged."""
    faults: dict[int, list[tuple[str, str]]] = {}
    pending: list[tuple[str, str]] = []
    card = 0
    for record in read_log(log):
        if record["type"] == "refusal":
            pending.append((record["seat"], f"the referee refused {record['action']}: {record['reason']}"))
        elif record["type"] == "action":
            card += 1
            if record.get("fault") == "timeout":
                pending.append((record["seat"], TIMED_OUT))
            if record.get("bot_error"):
                pending.append((record["seat"], RAISED))
            if pending:
                faults[card], pending = pending, []
    return faults


def oddtrick_command(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "oddtrick", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=PATIENCE_S,
    )
    return done.stdout


async def test_every_fault_is_shown_at_its_card_in_the_terminal_the_export_and_the_page(
    tmp_path: Path,
) -> None:
    chromium_path()
    log, seats = await play_faulty_match(tmp_path)
    faults = expected_faults(log)
    counted = {
        str(seat): {
            **{fault.value: n for fault, n in record.faults.items()},
            **({"refusal": record.refusals} if record.refusals else {}),
        }
        for seat, record in seats.items()
    }
    # The match has each kind, as the referee counted them.
    assert counted["E"] == {"bot_error": 13}
    assert counted["S"] == {"refusal": 1}
    assert set(counted["N"]) == {"timeout"}
    assert counted["W"] == {}
    plays = [r for r in read_log(log) if r["type"] == "action"]

    # The export: each card's faults, and the panel's counts.
    exported = json.loads(oddtrick_command("export", str(log), "--json"))
    shown = {
        k: [(f["seat"], f["text"]) for f in play["faults"]]
        for k, play in enumerate(exported["hands"][0]["plays"], 1)
        if play["faults"]
    }
    assert set(shown) == set(faults)
    for k, each in faults.items():  # a refusal's words end with the rules' message
        assert [seat for seat, _ in shown[k]] == [seat for seat, _ in each]
        assert all(text.startswith(words) for (_, text), (_, words) in zip(shown[k], each, strict=True)), k
    assert exported["faults"] == counted
    cards = [e for e in exported["events"] if e["type"] == "card_played"]
    assert {k: [(f["seat"], f["text"]) for f in cards[k - 1]["faults"]] for k in faults} == shown

    # The terminal: a line at each faulted card, its trick and its card, and the panel.
    printed = oddtrick_command("replay", str(log), "--print").splitlines()
    fault_lines = [line for line in printed if line.startswith("fault ")]
    expected_lines = []
    for k, each in sorted(faults.items()):
        card = Card.parse(plays[k - 1]["action"]).pretty
        for seat, _ in each:
            expected_lines.append((f"trick {(k + 3) // 4:>2}", seat, card))
    assert [(line[9:17], line[19], line[21:].split()[0]) for line in fault_lines] == expected_lines
    texts = [line[21:].split(None, 1)[1] for line in fault_lines]
    assert [t for t in texts if t.startswith("the bot's own")] == [RAISED] * 13
    assert [t for t in texts if t.startswith("played by")] == [TIMED_OUT] * counted["N"]["timeout"]
    refused = [t for t in texts if t.startswith("the referee refused")]
    assert len(refused) == 1, refused
    assert "CARD_NOT_HELD" in refused[0], refused
    panel = printed[printed.index("faults:") + 1 :]
    assert panel[:3] == [
        f"  North  blocked: timeout {counted['N']['timeout']}",
        "  East   raising: bot_error 13",
        "  South  illegal: refusal 1",
    ]

    # The web page, in Chromium: the last card's panel at each faulted card, and the counts.
    def drive(url: str) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        with browser_page() as page:
            for k in sorted(faults):
                page.goto(f"{url}/matches/faults?hand=1&card={k}")
                page.wait_for_function(f"() => location.search.includes('card={k}')")
                seen[k] = page.eval_on_selector_all(
                    "#decision .fault-text", "nodes => nodes.map(n => [n.dataset.faultKind, n.textContent])"
                )
            seen["panel"] = page.eval_on_selector_all(
                "#faults-panel tr[data-seat]",
                "rows => rows.map(r => [r.dataset.seat, [...r.querySelectorAll('.fault-count')]"
                ".map(c => [c.dataset.kind, c.textContent])])",
            )
        return seen

    async with trio.open_nursery() as nursery:
        url = await web_for(log.parent.parent, nursery)
        seen = await in_thread(drive, url)
        nursery.cancel_scope.cancel()
    for k in faults:
        assert [text for _, text in seen[k]] == [f"⚠ {text}" for _, text in shown[k]], k
    assert dict(seen["panel"]) == {
        seat: [[kind, f"{kind} {count}"] for kind, count in sorted(kinds.items())]
        for seat, kinds in counted.items()
    }


async def test_a_live_pages_events_are_the_first_events_of_the_finished_matchs_document(
    tmp_path: Path,
) -> None:
    """The live page is sent the events of the one JSON shape of a match, as they happen:
    each is the finished document's event of the same number, less what spectators are not
    told during play (think times, faults, comments; the hands at a closed table)."""
    from oddtrick_referee.replay.json_export import match_to_json
    from oddtrick_referee.replay.model import replay_log
    from oddtrick_referee.web.live import RefereeLive

    config = GameConfig.contract(format=MatchFormat.DEALS, deals=2)
    live: list[dict[str, Any]] = []
    async with referee_running(tmp_path, []) as referee, trio.open_nursery() as nursery:
        for name in ("n", "e", "s", "w"):
            referee.add_local(bot_entrant(name, RandomBot))
        follower = RefereeLive(referee)

        async def follow(match_id: str) -> None:
            async for event in follower.follow(match_id):
                live.append(event)

        def started(match_id: str, _: Path) -> None:
            assert follower.can_follow(match_id)
            nursery.start_soon(follow, match_id)

        seating = {N: "n", E: "e", S: "s", W: "w"}
        with trio.fail_after(PATIENCE_S):
            record = await referee.play_match(
                MatchSpec(config, seating, TableRules(deadline_s=5.0, grace_s=5.0), seed="live"),
                on_start=started,
            )
        referee.finish()
    events = match_to_json(replay_log(record.log_path))["events"]
    assert live, "the page followed nothing"
    assert [e["seq"] for e in live] == list(range(1, len(live) + 1))
    assert live[-1]["type"] == "match_ended"
    assert len(live) == len(events)
    for shown, whole in zip(live, events, strict=True):
        differing = {key for key, value in shown.items() if whole.get(key) != value}
        assert differing <= (
            {"hands"} if shown["type"] == "hand_started" and not shown["hands"] else set()
        ), (
            shown,
            whole,
        )
