"""A person's click to the card shown elsewhere: ``oddtrick play --web`` in a headless Chromium.

Run ``python benchmarks/browser_seat.py [--deals N]`` (default 2). It prints ``name: value``
lines on stdout, progress on stderr:

* ``click_to_spectator_ms_p50``/``_p99``: from the person's click on a card in the seat's
  page to that card appearing in the trick on a spectator's page (the live view,
  ``/matches/ID``) in the same browser: the page's POST, the seat's client (the SDK's, in
  the command's process) sending the decision to the referee over gRPC, the table, its
  spectator stream and the live page's server-sent events, and the page drawing it.
* ``click_to_seat_ms_p50``/``_p99``: the same click to the card shown back on the seat's
  own page (the seat's events, through the referee).

The command runs as a person runs it (its referee on a localhost socket, the heuristic
bots as processes); the person plays the lowest legal card at once. Both pages read the
clock as ``performance.timeOrigin + performance.now()``. Timings are wall-clock on this
machine, shared with whatever else runs (``machine_load_1min``).
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = os.environ.get("ODDTRICK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]
GUARD_MS = 180_000
ASKED = "prev => +(document.body.dataset.asked || -1) > prev || document.body.dataset.over === 'yes'"
WATCH_TRICK = """() => {
  window.shownAt = [];
  const seen = new Set();
  new MutationObserver(() => {
    const now = performance.timeOrigin + performance.now();
    const here = new Set();
    for (const node of document.querySelectorAll('#trick [data-card]')) {
      here.add(node.dataset.card);
      if (!seen.has(node.dataset.card)) window.shownAt.push({card: node.dataset.card, at: now});
    }
    seen.clear();
    for (const card of here) seen.add(card);
  }).observe(document.getElementById('trick'), {childList: true, subtree: true});
}"""


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def lags(clicks: list[dict[str, Any]], shown: list[dict[str, Any]]) -> list[float]:
    """For each click, the time to the first showing of its card after it."""
    out = []
    for click in clicks:
        later = [s["at"] for s in shown if s["card"] == click["action"] and s["at"] >= click["at"]]
        if later:
            out.append(min(later) - click["at"])
    return out


def play(page: Any, spectator: Any, base: str) -> None:
    """Play every card of the seat as soon as it is asked, the spectator page open."""
    page.wait_for_function("() => document.body.dataset.matchId", timeout=GUARD_MS)
    spectator.goto(f"{base}/matches/{page.evaluate('() => document.body.dataset.matchId')}")
    spectator.wait_for_selector("#trick", timeout=GUARD_MS)
    spectator.evaluate(WATCH_TRICK)
    page.evaluate(WATCH_TRICK)
    asked = -1
    while True:
        page.wait_for_function(ASKED, arg=asked, timeout=GUARD_MS)
        if page.evaluate("() => document.body.dataset.over === 'yes'"):
            return
        asked = int(page.evaluate("() => document.body.dataset.asked"))
        enabled = page.locator("#hand button[aria-disabled=false], #bidding-box button[aria-disabled=false]")
        enabled.last.click()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=2, help="deals of classic Whist to play (default 2)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        data = str(Path(folder) / "data")
        command = [sys.executable, "-m", "oddtrick", "play", "--web", "127.0.0.1:0", "--game", "classic",
                   "--deals", str(args.deals), "--seed", "benchmark", "--data-dir", data]  # fmt: skip
        process = subprocess.Popen(command, cwd=folder, stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout is not None
            found = re.search(r"(http://\S+)/play/\S+", process.stdout.readline())
            assert found, "no seat address"
            say(f"playing {args.deals} deal(s) at {found.group(0)}")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page, spectator = browser.new_page(), browser.new_page()
                page.goto(found.group(0))
                play(page, spectator, found.group(1))
                clicks = page.evaluate("() => window.oddtrickSeat.clicks")
                to_spectator = lags(clicks, spectator.evaluate("() => window.shownAt"))
                to_seat = lags(clicks, page.evaluate("() => window.shownAt"))
                browser.close()
            process.communicate(timeout=GUARD_MS / 1000)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                process.communicate(timeout=60)
    print(f"clicks: {len(clicks)}")
    for name, values in (("click_to_spectator_ms", to_spectator), ("click_to_seat_ms", to_seat)):
        print(f"{name}_shown: {len(values)}")
        print(f"{name}_p50: {percentile(values, 50):.1f}")
        print(f"{name}_p99: {percentile(values, 99):.1f}")
        print(f"{name}_mean: {statistics.fmean(values):.1f}")
    print(f"machine_load_1min: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
