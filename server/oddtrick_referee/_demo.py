"""``oddtrick demo``: the whole product in one command, on embedded defaults."""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path
from typing import IO

import trio
from oddtrick.rules import GameConfig, MatchFormat, Seat

from oddtrick_referee._referee import MatchRecord, MatchSpec, RefereeSettings, running_referee
from oddtrick_referee._table import TableRules

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
SEAT_NAMES = {seat: f"random-{seat.name.lower()}" for seat in Seat}


def bot_command(bot: str, server: str, name: str, token: str, seats: int = 1) -> list[str]:
    return [
        sys.executable, "-m", "oddtrick", "bot", bot,
        "--server", server, "--name", name, "--token", token, "--seats", str(seats),
    ]  # fmt: skip


def run_demo(data_dir: Path, deals: int) -> int:
    random_bot = SAMPLE_BOTS / "random_bot.py"
    if not random_bot.is_file():
        print(
            f"oddtrick demo: sample bots not found at {SAMPLE_BOTS}; run it from a checkout", file=sys.stderr
        )
        return 1
    return trio.run(_demo, data_dir, deals, random_bot)


async def _demo(data_dir: Path, deals: int, random_bot: Path) -> int:
    tokens = {name: secrets.token_hex(8) for name in SEAT_NAMES.values()}
    settings = RefereeSettings(port=0, data_dir=data_dir, tokens=tokens)
    bot_logs = data_dir / "bot-output"
    bot_logs.mkdir(parents=True, exist_ok=True)
    records: list[MatchRecord] = []
    started = time.monotonic()
    async with running_referee(settings) as referee:
        print(f"referee listening on {referee.address}; logs in {referee.log_dir.resolve()}", flush=True)
        async with trio.open_nursery() as bots:
            for name, token in tokens.items():
                output = (bot_logs / f"{name}.log").open("w")
                command = bot_command(f"{random_bot}:RandomBot", referee.address, name, token)
                bots.start_soon(_run_quietly, command, output)
            print("started 4 sample-bot processes: " + ", ".join(tokens), flush=True)
            for config in (
                GameConfig.classic(format=MatchFormat.DEALS, deals=deals),
                GameConfig.contract(format=MatchFormat.DEALS, deals=deals),
            ):
                print(f"playing {config.describe()} ...", end=" ", flush=True)
                begun = time.monotonic()
                record = await referee.play_match(
                    MatchSpec(config, SEAT_NAMES, TableRules(deadline_s=5.0, grace_s=5.0)), wait_s=30
                )
                print(f"done in {time.monotonic() - begun:.1f} s", flush=True)
                records.append(record)
            bots.cancel_scope.cancel()
    print()
    print(results_table(records))
    print()
    print(f"match logs: {referee.log_dir.resolve()}  (check one: oddtrick check LOG.jsonl)")
    print(f"finished in {time.monotonic() - started:.1f} s")
    return 0


async def _run_quietly(command: list[str], output: IO[str]) -> None:
    try:
        await trio.run_process(command, stdout=output, stderr=output, check=False)
    finally:
        output.close()


def results_table(records: list[MatchRecord]) -> str:
    rows = [("match", "game", "North-South", "East-West", "NS", "EW", "result", "faults")]
    for record in records:
        state = record.state
        result = state.match_result
        assert result is not None
        faults = sum(sum(seat.faults.values()) for seat in record.seats.values())
        rows.append(
            (
                record.match_id,
                state.config.describe(),
                f"{record.seats[Seat.NORTH].bot_name} / {record.seats[Seat.SOUTH].bot_name}",
                f"{record.seats[Seat.EAST].bot_name} / {record.seats[Seat.WEST].bot_name}",
                str(result.totals[0]),
                str(result.totals[1]),
                result.reason,
                str(faults),
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        if index == 0:
            lines.append("  ".join("─" * width for width in widths))
    return "\n".join(lines)
