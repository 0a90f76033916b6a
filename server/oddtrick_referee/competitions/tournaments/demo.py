"""``oddtrick demo``: the whole product in one command, on embedded defaults."""

from __future__ import annotations

import secrets
import sys
import time
from pathlib import Path

from oddtrick._terminal import plural
from oddtrick.rules import GameConfig
from oddtrick_referee.command_runner import interrupted, run_command, sole_error
from oddtrick_referee.competitions.scoring.standings_table import print_standings
from oddtrick_referee.competitions.tournaments.tournament import TournamentSettings, run_tournament
from oddtrick_referee.competitions.tournaments.tournament_plan import shipped_entry
from oddtrick_referee.play.table import TableRules


def run_demo(data_dir: Path, deals: int) -> int:
    """A short duplicate round robin of the sample bots in each game, standings at the end.

    The sample bots are the package's own code: they play in the referee's process (no
    process, sandbox or token), so the demo runs the same on any machine, as any user."""
    started = time.monotonic()
    for config in (GameConfig.classic(), GameConfig.contract()):
        entries = tuple(shipped_entry(name, name) for name in ("random", "heuristic"))
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
            print(
                f"referee on {address}; the sample bots play in its process, a fresh bot per seat", flush=True
            )

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
