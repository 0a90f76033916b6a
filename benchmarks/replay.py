"""Replay speed: checking logs, rendering a match page, and live updates reaching a browser.

Run ``python benchmarks/replay.py``. It prints ``name: value`` lines on stdout,
progress on stderr:

* ``check_hands`` and ``check_s``: ``oddtrick check`` (the real command, which
  checks many logs on every core) over 100 logs of 100 deals each (half
  classic Whist, half Contract Whist), 10,000 hands in all; ``check_s`` is the
  command's wall time, its start-up included, ``check_cpu_s`` the CPU it used
  (all its processes), and ``check_in_process_one_core_cpu_s`` the same check
  in this process on one core, without start-up. On a busy machine the wall
  time follows the CPU the command gets: read it with ``machine_load_1min``.
  The logs are written here by the referee's own log writer from games played
  through the rules engine (random legal actions), in the format a table
  writes (the checker accepts only that). Goal < 2 s.
* ``render_cold_ms_p50``/``_p99``: the server side of a 10-deal match page
  that is not cached yet: reading its log, re-creating the match through the
  rules engine, the viewer's data and the HTML; ``render_warm_ms_p50``/``_p99``:
  the same page over HTTP on loopback once the match is cached, as a client
  sees it (request sent → last byte).
* ``analysis_first_view_ms_p50``/``_p99``: the replay page of a 10-deal Contract Whist
  match with its double-dummy analysis, not yet computed: from requesting the page to
  the page's ``analysis.json`` answering with every card's analysis (the solver runs
  in the page server's background while the page asks again every 200 ms);
  ``analysis_cached_ms_p50``/``_p99``: the same page once the analysis is kept in the
  data folder, the analysis in the page itself (request sent → last byte).
  The solver runs at the lowest CPU priority (a referee's tables come first), so on a
  busy machine the first view's wall time follows the load: ``analysis_first_view_cpu_s_p50``
  is the CPU this process spent (the solver's threads, all cores), ``machine_load_1min`` the load.
  ``python benchmarks/replay.py analysis`` measures only these.
* ``live_ms_p50``/``_p99`` (goal p99 < 100 ms): from a bot answering with a card
  (the moment its ``choose_card`` returns) to a headless Chromium on the live
  page receiving the card's event, through the referee, its table's spectator
  stream and the page's server-sent events; over every card of a 10-deal match
  played by two SDK bots that think 20 ms a card. ``live_server_to_browser_ms_p99``
  is the part from the page's server writing the event to the browser.

Timings are wall-clock on this machine, shared with whatever else runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import trio

from oddtrick import Bot, BotView
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._log_records import read_records
from oddtrick.rules import GameConfig, GameState, Phase, Seat, commitment
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.play.matchlog import LOG_FORMAT, MatchLogWriter, check_log
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec
from oddtrick_referee.replay.model import replay_records
from oddtrick_referee.web.app import WebApp
from oddtrick_referee.web.server import web_beside

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SEATING = {Seat.NORTH: "alice", Seat.SOUTH: "alice", Seat.EAST: "bob", Seat.WEST: "bob"}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def write_log(path: Path, config: GameConfig, seed: str, rng: random.Random) -> int:
    """A match played with random legal actions, logged as a table logs it; returns its hands."""
    state = GameState(config, seed)
    writer = MatchLogWriter(path)
    writer.write(
        {
            "type": "match_start",
            "format": LOG_FORMAT,
            "match_id": path.stem,
            "table_id": path.stem,
            "started_at_ms": 0,
            "config": config.to_dict(),
            "rules": {"deadline_ms": 5000, "grace_ms": 30000},
            "players": {str(seat): {"name": name, "version": "0"} for seat, name in SEATING.items()},
            "seed_commitment": commitment(seed),
        }
    )
    while True:
        writer.write({"type": "hand_start", "hand": state.hand_number, "dealer": str(state.dealer)})
        while state.phase in (Phase.AUCTION, Phase.PLAY):
            seat = state.to_act
            assert seat is not None
            action = rng.choice(state.legal_actions)
            state.apply(action, seat)
            writer.write_action(state.hand_number, seat, str(action), 3)
        result = state.hand_results[-1]
        writer.write(
            {
                "type": "hand_result",
                "hand": result.hand_number,
                "outcome": result.outcome.value,
                "tricks": list(result.tricks),
                "points": list(result.points),
                "honours": list(result.honours),
                "scores": list(result.scores_after),
                "text": result.describe(),
            }
        )
        if state.phase is Phase.MATCH_OVER:
            break
        state.start_next_hand()
    match = state.match_result
    assert match is not None
    writer.write(
        {
            "type": "match_end",
            "result": {
                "winner": None if match.winner is None else match.winner.short,
                "totals": list(match.totals),
                "games_won": list(match.games_won),
                "hands": match.hands_played,
                "reason": match.reason,
            },
            "seats": {},
            "seed": seed,
        }
    )
    writer.close()
    return state.hand_number


def bench_check(folder: Path) -> None:
    rng = random.Random(1)
    logs = []
    hands = 0
    for number in range(100):
        game = "classic" if number % 2 else "contract"
        config = GameConfig.from_dict({"game": game, "format": "deals", "deals": 100})
        path = folder / f"bench-{number:03}.jsonl"
        hands += write_log(path, config, f"bench-{number}", rng)
        logs.append(str(path))
    say(f"wrote {len(logs)} logs, {hands} hands; checking them with oddtrick check")
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", *logs], capture_output=True, text=True, check=False
    )
    elapsed = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0 or run.stdout.count(": OK") != len(logs):
        raise SystemExit(f"oddtrick check failed:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    one_core = time.process_time()
    for path in logs:
        check_log(Path(path))
    one_core = time.process_time() - one_core
    print(f"check_hands: {hands}")
    print(f"check_s: {elapsed:.2f}")
    print(f"check_cpu_s: {cpu:.2f}")
    print(f"check_in_process_one_core_cpu_s: {one_core:.2f}")
    print(f"machine_load_1min: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


class PacedBot(Bot):
    """Lowest legal action after a short think; records when each card leaves."""

    name = "paced"
    sent: dict[tuple[int, str], float]
    think_s = 0.02

    def choose_call(self, view: BotView) -> Any:
        time.sleep(self.think_s)
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        time.sleep(self.think_s)
        card = random.choice(view.legal_actions)
        type(self).sent[(view.hand_number, str(card))] = time.time() * 1000
        return card


def run_bot(address: str, name: str, bot: type[Bot], matches: int) -> None:
    options = ClientOptions(server=address, name=name, token="t", seats=2, max_matches=matches)
    asyncio.run(asyncio.wait_for(run_bot_async(bot, options), timeout=600))


def browser_follow(url: str, match_id: str, started: threading.Event) -> list[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.add_init_script(
            "window.__seen = []; window.oddtrickOnEvent = e => window.__seen.push([e.type, e.hand || 0, "
            "e.card || '', e.sent_ms || 0, Date.now()]);"
        )
        page.goto(f"{url}/matches/{match_id}")
        page.wait_for_function("() => document.body.dataset.lastSeq")
        started.set()
        page.wait_for_function(
            "() => document.getElementById('live-status').textContent.includes('over')", timeout=600_000
        )
        seen: list[Any] = page.evaluate("() => window.__seen")
        browser.close()
    return seen


def _random_call(self: Bot, view: BotView) -> Any:
    return random.choice(view.legal_actions)


def bench_analysis(url: str, data_dir: Path, match_id: str, runs: int = 5) -> None:
    """The replay page with its analysis: first view (computed now) and kept."""
    kept = data_dir / "analysis" / f"{match_id}.json"
    first, cpu = [], []
    for run in range(runs):
        kept.unlink(missing_ok=True)
        started, cpu_started = time.perf_counter(), time.process_time()
        with urllib.request.urlopen(f"{url}/matches/{match_id}", timeout=30) as response:
            response.read()
        while True:
            with urllib.request.urlopen(f"{url}/matches/{match_id}/analysis.json", timeout=30) as response:
                if b'"ready"' in response.read():
                    break
            time.sleep(0.2)  # what the page does: it asks again
        first.append((time.perf_counter() - started) * 1000)
        cpu.append(time.process_time() - cpu_started)
        say(f"analysis {run + 1}/{runs}: {first[-1]:.0f} ms")
    hands = json.loads(kept.read_text())["analysis"]["hands"]
    say(f"analysed {len(hands)} hands played out of 10")
    cached = _fetch_times(f"{url}/matches/{match_id}?hand=5&card=20", 100)
    with urllib.request.urlopen(f"{url}/matches/{match_id}", timeout=30) as response:
        assert b'"status":"ready"' in response.read()
    print(f"analysis_first_view_ms_p50: {statistics.median(first):.0f}")
    print(f"analysis_first_view_ms_p99: {percentile(first, 99):.0f}")
    print(f"analysis_cached_ms_p50: {statistics.median(cached):.1f}")
    print(f"analysis_cached_ms_p99: {percentile(cached, 99):.1f}")
    print(f"analysis_first_view_cpu_s_p50: {statistics.median(cpu):.1f}")
    print(f"machine_load_1min: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


async def bench_pages_and_live(folder: Path, only_analysis: bool = False) -> None:
    sent: dict[tuple[int, str], float] = {}
    bot = type("Paced", (PacedBot,), {"sent": sent})
    gate = threading.Event()

    class Held(PacedBot):
        """Waits for the browser before the match's first card."""

        def choose_card(self, view: BotView) -> Any:
            gate.wait(60)
            return super().choose_card(view)

    held = type("HeldPaced", (Held,), {"sent": sent})
    config = GameConfig.from_dict({"game": "contract", "format": "deals", "deals": 10})
    async with (
        running_referee(RefereeSettings(port=0, data_dir=folder / "data")) as referee,
        web_beside(referee, "127.0.0.1:0") as url,
        trio.open_nursery() as nursery,
    ):
        assert url is not None
        # A finished 10-deal match to render.
        for name in ("alice", "bob"):
            nursery.start_soon(trio.to_thread.run_sync, run_bot, referee.address, name, bot, 1)
        record = await referee.play_match(MatchSpec(config, SEATING, seed="render"))
        say(f"played {record.match_id} (10 deals); rendering its page")
        web = WebApp(folder / "data")
        cold = []
        for _ in range(3 if only_analysis else 30):
            web.data._cache.clear()
            started = time.perf_counter()
            match = replay_records(read_records(record.log_path))
            assert len(match.hands) == 10
            web.data._cache.clear()
            response = await _render(web, record.match_id)
            cold.append((time.perf_counter() - started) * 1000)
            assert b"data-card" in response
        page_url = f"{url}/matches/{record.match_id}?hand=5&card=20"
        warm = await trio.to_thread.run_sync(_fetch_times, page_url, 20 if only_analysis else 200)
        print(f"render_cold_ms_p50: {statistics.median(cold):.1f}")
        print(f"render_cold_ms_p99: {percentile(cold, 99):.1f}")
        print(f"render_warm_ms_p50: {statistics.median(warm):.1f}")
        print(f"render_warm_ms_p99: {percentile(warm, 99):.1f}")
        # A 10-deal match whose hands are bid and played out (random legal calls and cards).
        bidder = type("Bidder", (PacedBot,), {"sent": {}, "think_s": 0.0, "choose_call": _random_call})
        for name in ("alice", "bob"):
            nursery.start_soon(trio.to_thread.run_sync, run_bot, referee.address, name, bidder, 1)
        analysed = await referee.play_match(MatchSpec(config, SEATING, seed="analysis"))
        await trio.to_thread.run_sync(bench_analysis, url, folder / "data", analysed.match_id)
        if only_analysis:
            referee.finish()
            nursery.cancel_scope.cancel()
            return

        # A live match followed by a browser.
        sent.clear()
        live_config = GameConfig.from_dict({"game": "classic", "format": "deals", "deals": 10})
        for name in ("alice", "bob"):
            nursery.start_soon(trio.to_thread.run_sync, run_bot, referee.address, name, held, 1)
        started_event = threading.Event()
        seen_box: list[Any] = []

        async def follow() -> None:
            while "live" not in referee.live:  # the match is set up in the nursery below
                await trio.sleep(0.01)
            seen_box.append(await trio.to_thread.run_sync(browser_follow, url, "live", started_event))

        async def release() -> None:
            await trio.to_thread.run_sync(started_event.wait)
            gate.set()

        say("following a live 10-deal match in Chromium")
        async with trio.open_nursery() as live:
            live.start_soon(follow)
            live.start_soon(release)
            await referee.play_match(
                MatchSpec(live_config, SEATING, TableRules(deadline_s=60), seed="live", match_id="live")
            )
        seen = seen_box[0]
        latencies, last_leg = [], []
        hand = 0
        for kind, event_hand, card, sent_ms, received in seen:
            if kind == "hand_started":
                hand = event_hand
            if kind == "card_played":
                latencies.append(received - sent[(hand, card)])
                last_leg.append(received - sent_ms)
        print(f"live_cards: {len(latencies)}")
        print(f"live_ms_p50: {statistics.median(latencies):.1f}")
        print(f"live_ms_p99: {percentile(latencies, 99):.1f}")
        print(f"live_server_to_browser_ms_p99: {percentile(last_leg, 99):.1f}")
        referee.finish()
        nursery.cancel_scope.cancel()


async def _render(web: WebApp, match_id: str) -> bytes:
    from starlette.requests import Request

    scope = {
        "type": "http",
        "method": "GET",
        "path": f"/matches/{match_id}",
        "path_params": {"match_id": match_id},
        "query_string": b"hand=5&card=20",
        "headers": [],
    }
    response = await web.match(Request(scope))
    return bytes(response.body)


def _fetch_times(url: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        with urllib.request.urlopen(url, timeout=30) as response:
            response.read()
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="oddtrick-replay-bench-") as tmp:
        folder = Path(tmp)
        only_analysis = sys.argv[1:] == ["analysis"]
        if not only_analysis:
            bench_check(folder)
        trio.run(bench_pages_and_live, folder, only_analysis)


if __name__ == "__main__":
    main()
