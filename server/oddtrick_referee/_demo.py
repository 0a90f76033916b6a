"""``oddtrick demo``: the whole product in one command, on embedded defaults."""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

import trio

from oddtrick.rules import GameConfig, Seat
from oddtrick_referee._referee import MatchRecord
from oddtrick_referee._table import TableRules
from oddtrick_referee._tournament import TournamentSettings, parse_entry, run_tournament

SAMPLE_BOTS = Path(__file__).resolve().parents[2] / "sample_bots"
SEAT_NAMES = {seat: f"random-{seat.name.lower()}" for seat in Seat}


def bot_command(bot: str, server: str, name: str, token: str, seats: int = 1) -> list[str]:
    return [
        sys.executable, "-m", "oddtrick", "bot", bot,
        "--server", server, "--name", name, "--token", token, "--seats", str(seats),
    ]  # fmt: skip


def run_demo(data_dir: Path, deals: int) -> int:
    """A short duplicate round robin of the sample bots in each game, standings at the end."""
    bots = {name: SAMPLE_BOTS / f"{name}_bot.py" for name in ("random", "heuristic")}
    missing = [str(path) for path in bots.values() if not path.is_file()]
    if missing:
        print(
            f"oddtrick demo: sample bots not found ({', '.join(missing)}); run it from a checkout",
            file=sys.stderr,
        )
        return 1
    started = time.monotonic()
    for config in (GameConfig.classic(), GameConfig.contract()):
        entries = tuple(parse_entry(f"{name}={path}") for name, path in bots.items())
        settings = TournamentSettings(
            entries=entries,
            config=config,
            deals=deals,
            set_size=max(1, deals // 2),
            tables=2,
            rules=TableRules(deadline_s=5.0, grace_s=5.0),
            name=f"demo-{config.game.value}-{secrets.token_hex(3)}",
        )
        title = f"{config.game.value.title()} Whist: duplicate round robin, {deals} deals, each played twice"
        print(f"\n{title}", flush=True)

        def listening(address: str) -> None:
            print(f"referee on {address}; 4 bot processes (2 per entry, one per play of a deal)", flush=True)

        standings = trio.run(run_tournament, settings, data_dir, "127.0.0.1", 0, sys.stdout, listening)
        print()
        print(standings.render())
    print(f"\nmatch logs: {(data_dir / 'logs').resolve()}  (replay and verify one: oddtrick check LOG.jsonl)")
    print(f"results: {(data_dir / 'oddtrick.sqlite3').resolve()}")
    print(f"finished in {time.monotonic() - started:.1f} s")
    return 0


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
