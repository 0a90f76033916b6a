"""Real matches for the replay tests: played through the referee by SDK bots, logged as usual.

Matches are played once per test session (they take a few seconds) and their
logs shared by the tests that only read them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import trio

from oddtrick.rules import GameConfig, Seat
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.referee import MatchSpec, Referee
from tests.referee_support import in_thread, run_sdk_bot

SEATING = {Seat.NORTH: "alice", Seat.SOUTH: "alice", Seat.EAST: "bob", Seat.WEST: "bob"}

CONFIGS = {
    "classic-turned": GameConfig.from_dict(
        {"game": "classic", "format": "deals", "deals": 3, "honours": True}
    ),
    "classic-cut": GameConfig.from_dict({"game": "classic", "trump_selection": "cut", "format": "game"}),
    "classic-rotation": GameConfig.from_dict(
        {
            "game": "classic",
            "trump_selection": "fixed_rotation",
            "no_trump_every_fifth": True,
            "format": "deals",
            "deals": 5,
        }
    ),
    "classic-rubber": GameConfig.from_dict({"game": "classic", "format": "rubber", "target": 5}),
    "contract-doubling": GameConfig.from_dict(
        {"game": "contract", "doubling": True, "format": "deals", "deals": 4}
    ),
    "contract-game": GameConfig.from_dict({"game": "contract", "target": 50, "format": "game"}),
}


@dataclasses.dataclass(frozen=True)
class Logged:
    name: str
    match_id: str
    log_path: Path
    config: GameConfig


async def play_logged(
    referee: Referee, config: GameConfig, seed: str, match_id: str | None = None, sealed: bool = False
) -> Logged:
    """Play one match between two SDK bots (a partnership each) on a running referee."""
    async with trio.open_nursery() as bots:
        for name in ("alice", "bob"):
            bots.start_soon(in_thread, run_sdk_bot, referee.address, name, 2, 1)
        record = await referee.play_match(
            MatchSpec(config, SEATING, seed=seed, match_id=match_id), sealed=sealed
        )
    return Logged(record.match_id, record.match_id, record.log_path, config)


def play_all(data_dir: Path, sealed: bool = False) -> dict[str, Logged]:
    """Every configuration of :data:`CONFIGS`, played once, in a referee of its own; with
    ``sealed``, also a sealed play of a duplicate pair (``"sealed"``), as a tournament seals it."""

    async def main() -> dict[str, Logged]:
        played = {}
        async with running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee:
            for name, config in CONFIGS.items():
                logged = await play_logged(referee, config, seed=f"replay-{name}", match_id=f"m-{name}")
                played[name] = dataclasses.replace(logged, name=name)
            if sealed:
                config = CONFIGS["classic-turned"]
                logged = await play_logged(referee, config, "replay-sealed", match_id="m-sealed", sealed=True)
                played["sealed"] = dataclasses.replace(logged, name="sealed")
            referee.finish()
        return played

    return trio.run(main)
