"""What one flooding bot costs the other tables: normal tables with and without a flood.

Run ``python benchmarks/flood.py``. The referee runs in this process; the bots
are light raw gRPC clients in other processes (``benchmarks/raw_bots.py``).
``--tables`` normal tables (each two bots answering at once) play
``--deals`` Contract Whist deals, beside one more table where three bots
play normally and the fourth is, in the *quiet* phase, a normal bot too, and
in the *flood* phase a flooder: at each of its requests it sends
``--burst`` malformed answers on the open request id, is cut off
(RESOURCE_EXHAUSTED after max_attempts + max_unsolicited + 1 of them), resumes
its seat and floods again, until its match ends. It prints ``name: value``
lines on stdout, per phase:

* ``normal_think_p50_ms``, ``normal_think_p99_ms``, ``normal_think_max_ms``:
  the think times the referee logged at the normal tables (request sent to
  answer received, whole milliseconds);
* ``normal_added_p99_ms`` and ``normal_added_max_ms``: the referee's own
  delay at those tables (answer received to next request sent);
* ``normal_decisions_per_s``: the normal tables' decisions over their play;
* ``referee_cpu_ms_per_normal_decision``: the referee's CPU over the phase per
  decision of the normal tables (what the flood adds shows here), and
  ``flooder_process_cpu_share``: the flooding bot's own CPU, which competes
  with everything else on a small machine;
* ``flood_messages`` and ``flooder_cut_offs`` (flood phase; ``flooder_end``:
  how its last call ended, NOT_FOUND once its match is over and its seat
  gone), and
  ``referee_cpu_share``: this process's CPU over the phase (1.0 = one CPU).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, RefereeSettings, running_referee

HERE = Path(__file__).resolve()
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int | str = "self") -> float:
    """User + system CPU seconds of a process so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def percentile(values: list[float], fraction: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(fraction * len(values)))] if values else float("nan")


async def phase(data_dir: Path, tables: int, deals: int, burst: int) -> dict[str, float]:
    normal = [f"n{index}-{side}" for index in range(tables) for side in ("ns", "ew")]
    flooded = {Seat.NORTH: "calm-n", Seat.EAST: "calm-e", Seat.SOUTH: "calm-s", Seat.WEST: "flooder"}
    names = [*normal, *flooded.values()]
    tokens = {name: f"token-{name}" for name in names}
    settings = RefereeSettings(port=0, data_dir=data_dir, tokens=tokens)
    records: dict[str, MatchRecord] = {}
    async with running_referee(settings) as referee:
        specs = [f"{name}:{tokens[name]}:2" for name in normal]
        specs += [f"{name}:{tokens[name]}:1" for name in ("calm-n", "calm-e", "calm-s")]
        flooder = [f"flooder:{tokens['flooder']}:1" + (f":flood={burst}" if burst else "")]
        clients = [
            subprocess.Popen(
                [sys.executable, str(HERE.parent / "raw_bots.py"), referee.address, *group],
                stdout=subprocess.PIPE,
                text=True,
            )
            for group in (specs, flooder)
        ]
        await referee.lobby.wait_for(dict.fromkeys(names, 1), GameConfig.contract().game)
        cpu_before, started = cpu_of(), time.perf_counter()
        flooder_before = cpu_of(clients[1].pid)
        normal_wall: list[float] = []

        async def play(key: str, spec: MatchSpec) -> None:
            records[key] = await referee.play_match(spec, wait_s=60)

        async def normal_tables() -> None:
            config = GameConfig.contract(format=MatchFormat.DEALS, deals=deals)
            rules = TableRules(deadline_s=5.0, grace_s=5.0)
            begun = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for index in range(tables):
                    ns, ew = f"n{index}-ns", f"n{index}-ew"
                    seating = {Seat.NORTH: ns, Seat.SOUTH: ns, Seat.EAST: ew, Seat.WEST: ew}
                    nursery.start_soon(play, f"normal-{index}", MatchSpec(config, seating, rules))
            normal_wall.append(time.perf_counter() - begun)

        async with trio.open_nursery() as nursery:
            one_deal = GameConfig.contract(format=MatchFormat.DEALS, deals=1)
            harsh = TableRules(deadline_s=0.5, grace_s=2.0)
            nursery.start_soon(play, "flooded", MatchSpec(one_deal, flooded, harsh))
            nursery.start_soon(normal_tables)
        cpu = cpu_of() - cpu_before
        wall = time.perf_counter() - started
        flooder_cpu = cpu_of(clients[1].pid) - flooder_before
        referee.finish()  # a flooder caught between its match's end and a resume waits in the lobby
        outcomes = [json.loads((await trio.to_thread.run_sync(client.communicate))[0]) for client in clients]
    think = [
        float(line["think_ms"])
        for key, record in records.items()
        if key.startswith("normal")
        for line in read_log(record.log_path)
        if line["type"] == "action" and line["think_ms"] is not None
    ]
    added = [s * 1000 for key, r in records.items() if key.startswith("normal") for s in r.added_latency_s]
    decisions = sum(
        seat.decisions for key, r in records.items() if key.startswith("normal") for seat in r.seats.values()
    )
    faults = sum(
        sum(seat.faults.values())
        for key, r in records.items()
        if key.startswith("normal")
        for seat in r.seats.values()
    )
    return {
        "normal_think_p50_ms": percentile(think, 0.5),
        "normal_think_p99_ms": percentile(think, 0.99),
        "normal_think_max_ms": max(think),
        "normal_added_p99_ms": round(percentile(added, 0.99), 3),
        "normal_added_max_ms": round(max(added), 3),
        "normal_decisions_per_s": round(decisions / normal_wall[0]),
        "normal_faults": faults,
        "flood_messages": outcomes[1]["flood_messages"],
        "flooder_cut_offs": outcomes[1]["cut_off"],
        "referee_cpu_share": round(cpu / wall, 2),
        "referee_cpu_ms_per_normal_decision": round(cpu / decisions * 1000, 3),
        "flooder_process_cpu_share": round(max(0.0, flooder_cpu) / wall, 2),
        "flooder_end": (outcomes[1]["failures"] or ["OK"])[0].split(" ")[1 if outcomes[1]["failures"] else 0],
    }


async def main(tables: int, deals: int, burst: int) -> None:
    for name, flood in (("quiet", 0), ("flood", burst)):
        with tempfile.TemporaryDirectory(prefix="oddtrick-flood-") as data_dir:
            print(f"{name} phase ...", file=sys.stderr, flush=True)
            figures = await phase(Path(data_dir), tables, deals, flood)
        for key, value in figures.items():
            print(f"{name}_{key}: {value}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="normal tables (default 4)")
    parser.add_argument("--deals", type=int, default=40, help="deals per normal table (default 40)")
    parser.add_argument("--burst", type=int, default=2000, help="messages per flood burst (default 2000)")
    args = parser.parse_args()
    trio.run(main, args.tables, args.deals, args.burst)
