"""What seating the package's own bots in the referee's process saves. A benchmark, not a test.

    python benchmarks/compare.py --same-benchmark --rounds 1 OLD NEW seats.py -- --ladder-seconds 300

prints ``name: value`` lines (progress on stderr):

* ``demo_wall_s``: ``python -m oddtrick demo`` from an empty folder, start to exit.
* ``ladder_processes``, ``ladder_rss_mb``, ``ladder_pss_mb``, ``ladder_referee_rss_mb``:
  ``oddtrick ladder serve`` with its default house bots (7) and no entrant, after
  ``--ladder-seconds``: every process of its tree (the referee, and whatever it started),
  their resident memory summed, and the proportional share (shared pages counted once).
* ``remote_*`` and ``local_*``: a table of four random bots played for ``--seconds``,
  match after match, as four bot processes (remote seats, over loopback) and as four
  local seats: the referee process's CPU per decision (for local seats it includes the
  bots' own work, which runs in that process), the CPU of the referee and the bots
  together, and decisions a second. An older tree has no local seats: it prints the
  remote figures only.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
TICKS = os.sysconf("SC_CLK_TCK")


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- demo


def demo_wall_s() -> float:
    with tempfile.TemporaryDirectory(prefix="oddtrick-bench-demo-") as folder:
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "oddtrick", "demo"],
            cwd=folder,
            check=True,
            capture_output=True,
            timeout=600,
        )
        return time.monotonic() - started


# ------------------------------------------------------------------------- ladder


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def _tree(root: int) -> list[int]:
    children, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _memory_kb(pid: int, field: str, name: str) -> int:
    try:
        for line in (Path("/proc") / str(pid) / name).read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def ladder_memory(seconds: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="oddtrick-bench-ladder-") as folder:
        process = subprocess.Popen(
            [sys.executable, "-m", "oddtrick", "ladder", "serve", "--data-dir", "data", "--port", "0"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            time.sleep(seconds)
            pids = _tree(process.pid)
            rss = sum(_memory_kb(pid, "VmRSS", "status") for pid in pids)
            pss = sum(_memory_kb(pid, "Pss", "smaps_rollup") for pid in pids)
            return {
                "ladder_processes": len(pids),
                "ladder_rss_mb": rss / 1024,
                "ladder_pss_mb": pss / 1024,
                "ladder_referee_rss_mb": _memory_kb(process.pid, "VmRSS", "status") / 1024,
            }
        finally:
            process.terminate()
            process.wait(timeout=30)


# -------------------------------------------------------------------- a table's CPU


def _cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / TICKS


async def table_cpu(local: bool, seconds: float, data_dir: Path) -> dict[str, float] | None:
    names = {seat: f"bench-{seat.name.lower()}" for seat in Seat}
    tokens = {name: f"token-{name}" for name in names.values()}
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=8)
    kind = "local" if local else "remote"
    bots: list[subprocess.Popen[bytes]] = []
    async with running_referee(RefereeSettings(port=0, data_dir=data_dir, tokens=tokens)) as referee:
        if local:
            try:
                from oddtrick.bots.random_bot import RandomBot
                from oddtrick_referee.play.local_seat import bot_entrant
            except ImportError:
                return None  # a tree from before local seats
            for name in names.values():
                referee.add_local(bot_entrant(name, RandomBot))
        else:
            for name, token in tokens.items():
                command = [
                    sys.executable,
                    "-m",
                    "oddtrick",
                    "bot",
                    str(RANDOM_BOT),
                    "--server",
                    referee.address,
                ]
                command += ["--name", name, "--token", token, "--seats", "1"]
                bots.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        try:
            spec = MatchSpec(config, names, TableRules(deadline_s=5.0))
            await referee.play_match(spec, wait_s=60)  # warm-up
            pids = [bot.pid for bot in bots]
            own_before, bots_before = time.process_time(), _cpu_s(pids)
            started, decisions = time.monotonic(), 0
            while time.monotonic() - started < seconds:
                record = await referee.play_match(spec)
                decisions += sum(seat.decisions for seat in record.seats.values())
            elapsed = time.monotonic() - started
            own = time.process_time() - own_before
            everything = own + _cpu_s(pids) - bots_before
        finally:
            for bot in bots:
                bot.terminate()
    say(f"{kind}: {decisions} decisions in {elapsed:.1f} s")
    return {
        f"{kind}_referee_cpu_ms_per_decision": own * 1000 / decisions,
        f"{kind}_total_cpu_ms_per_decision": everything * 1000 / decisions,
        f"{kind}_decisions_per_s": decisions / elapsed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="per table phase (default 10)")
    parser.add_argument("--ladder-seconds", type=float, default=300.0, help="the ladder's run (default 300)")
    parser.add_argument("--skip", action="append", default=[], choices=["demo", "ladder", "table"])
    args = parser.parse_args()
    figures: dict[str, float] = {}
    if "demo" not in args.skip:
        say("demo …")
        figures["demo_wall_s"] = demo_wall_s()
    if "ladder" not in args.skip:
        say(f"ladder for {args.ladder_seconds:g} s …")
        figures.update(ladder_memory(args.ladder_seconds))
    if "table" not in args.skip:
        for local in (False, True):
            with tempfile.TemporaryDirectory(prefix="oddtrick-bench-table-") as folder:
                found = trio.run(table_cpu, local, args.seconds, Path(folder))
            figures.update(found or {})
    for name, value in figures.items():
        print(f"{name}: {value:.3f}")


if __name__ == "__main__":
    main()
