"""The replay's autoplay pace in a headless Chromium, in real time: steps a second against
the speed chosen.

Run ``python benchmarks/autoplay.py [--seconds S]`` (default 5). It plays ``oddtrick demo``
(two deals) into a temporary folder, serves it with ``oddtrick web``, opens a Contract
Whist match's replay at its first card, chooses each speed, presses play and counts the
positions shown after ``S`` seconds of the wall clock. It prints ``name: value`` lines on
stdout, progress on stderr:

* ``steps_per_s_at_Nx``: the steps taken a second at speed N, from the first position
  autoplay showed to its last (a drawing that shows several steps due at once counts one);
* ``pace_at_Nx``: that against N steps a second (1.0 is the speed chosen);
* ``draw_ms_p50``: how long one position takes to draw (the replay's ``show``), stepped
  by the → key, for the page's own cost beside the pace;
* ``machine_load_1min``: the machine's load, shared with whatever else runs.

The pass/fail check is tests/test_web_replay_controls.py's, on Playwright's clock.
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

CHROMIUM = os.environ.get("ODDTRICK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
]
SPEEDS = ("1", "4", "8")
WATCH = """() => {
  window.stepsAt = [];
  const step = () => parseInt(document.getElementById('scrubber').value, 10);
  new MutationObserver(() => window.stepsAt.push([performance.now(), step()]))
    .observe(document.getElementById('position'), { childList: true, characterData: true, subtree: true });
}"""
DRAW_MS = """async () => {
  const times = [];
  for (let k = 0; k < 30; k++) {
    const start = performance.now();
    document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
    times.push(performance.now() - start);
  }
  return times;
}"""


def oddtrick(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *words], capture_output=True, text=True, timeout=600
    )


def contract_match(data_dir: Path) -> str:
    """A Contract Whist match id of the demo's folder."""
    for log in sorted((data_dir / "logs").rglob("*.jsonl*")):
        with log.open("rb") as raw:
            head = raw.read(4000)
        if b'"contract"' in head:
            return log.name.split(".jsonl")[0]
    raise SystemExit("the demo played no Contract Whist match")


def measure(url: str, match_id: str, seconds: float) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    found: dict[str, float] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for speed in SPEEDS:
            page.goto(f"{url}/matches/{match_id}?hand=1&card=0")
            page.select_option("#speed", speed)
            page.evaluate(WATCH)
            page.click("#play")
            page.wait_for_timeout(seconds * 1000)
            page.click("#play")
            shown: list[list[float]] = page.evaluate("() => window.stepsAt")
            (first_ms, first), (last_ms, last) = shown[0], shown[-1]
            rate = (last - first) / ((last_ms - first_ms) / 1000) if last_ms > first_ms else 0.0
            found[f"steps_per_s_at_{speed}x"] = round(rate, 2)
            found[f"pace_at_{speed}x"] = round(rate / float(speed), 3)
            print(f"{speed}×: {last - first} steps in {(last_ms - first_ms) / 1000:.2f} s", file=sys.stderr)
        page.goto(f"{url}/matches/{match_id}?hand=1&card=0")
        found["draw_ms_p50"] = round(statistics.median(page.evaluate(DRAW_MS)), 2)
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds of autoplay per speed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data_dir = Path(folder) / "data"
        print("playing the demo…", file=sys.stderr)
        done = oddtrick("demo", "--data-dir", str(data_dir), "--deals", "2")
        if done.returncode != 0:
            raise SystemExit(f"oddtrick demo failed: {done.stderr}")
        match_id = contract_match(data_dir)
        web = subprocess.Popen(
            [sys.executable, "-m", "oddtrick", "web", "--data-dir", str(data_dir), "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert web.stdout is not None
            line = web.stdout.readline()
            served = re.search(r"(http://\S+?)/? ", line)
            if not served:
                raise SystemExit(f"oddtrick web did not start: {line!r}")
            found = measure(served.group(1), match_id, args.seconds)
        finally:
            web.send_signal(signal.SIGINT)
            web.communicate(timeout=60)
    for name, value in found.items():
        print(f"{name}: {value}")
    print(f"machine_load_1min: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
