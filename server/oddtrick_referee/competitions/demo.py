"""``oddtrick demo``: the whole product in one command, on embedded defaults."""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

from oddtrick import bots
from oddtrick._terminal import plural
from oddtrick.rules import GameConfig
from oddtrick_referee._errors import interrupted, run_command, sole_error
from oddtrick_referee.competitions.standings_table import print_standings
from oddtrick_referee.competitions.tournament import TournamentSettings, parse_entry, run_tournament
from oddtrick_referee.play.table import TableRules


def run_demo(data_dir: Path, deals: int) -> int:
    """A short duplicate round robin of the sample bots in each game, standings at the end."""
    sample_bots = {name: bots.bot_file(name) for name in ("random", "heuristic")}
    started = time.monotonic()
    for config in (GameConfig.classic(), GameConfig.contract()):
        entries = tuple(parse_entry(f"{name}={path}") for name, path in sample_bots.items())
        settings = TournamentSettings(
            entries=entries,
            config=config,
            deals=deals,
            set_size=max(1, deals // 2),
            tables=2,
            rules=TableRules(deadline_s=5.0, grace_s=5.0),
            name=f"demo-{config.game.value}-{secrets.token_hex(3)}",
        )
        kind = f"{config.game.value.title()} Whist"
        title = f"{kind}: duplicate round robin, {plural(deals, 'deal')}, each played twice"
        print(f"\n{title}", flush=True)

        def listening(address: str) -> None:
            print(f"referee on {address}; 4 bot processes (2 per entry, one per play of a deal)", flush=True)

        try:
            standings = run_command(run_tournament, settings, data_dir, "127.0.0.1", 0, sys.stdout, listening)
        except BaseException as error:
            if interrupted(error):
                print(f"stopped (Ctrl-C); what was played is in {data_dir.resolve()}", file=sys.stderr)
                return 130
            error = sole_error(error)
            if isinstance(error, OSError | RuntimeError | ValueError):
                print(f"oddtrick demo: {error}", file=sys.stderr)
                return 1
            raise
        print()
        print_standings(standings, sys.stdout)
    print(f"\nmatch logs: {(data_dir / 'logs').resolve()}  (replay and verify one: oddtrick check LOG.jsonl)")
    print(f"results: {(data_dir / 'oddtrick.sqlite3').resolve()}")
    print(f"finished in {time.monotonic() - started:.1f} s")
    return 0
