"""The command-line options that several commands share: the game's rules and the data folder.

Below every command module (the referee's, the ladder's, ``oddtrick play``'s), so each
imports them without importing another command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from oddtrick.rules import ConfigError, GameConfig, GameKind, MatchFormat, TrumpSelection
from oddtrick_referee._exceptions import OptionError


def add_game_options(parser: argparse.ArgumentParser) -> None:
    """Every option of the rules (docs/rules.md), shared by the commands that start matches."""
    group = parser.add_argument_group("game (the options of docs/rules.md)")
    group.add_argument("--game", choices=[g.value for g in GameKind], default=None, help="default: contract")
    group.add_argument(
        "--trumps",
        choices=[t.value for t in TrumpSelection],
        default=None,
        help="classic Whist: how trumps are chosen (default turn_last_card)",
    )
    group.add_argument(
        "--no-trump-every-fifth",
        action="store_true",
        help="classic fixed_rotation: every 5th deal at no trumps",
    )
    group.add_argument("--honours", action="store_true", help="classic Whist: score honours")
    group.add_argument(
        "--target", type=int, default=None, help="game target (default 5 classic, 100 contract)"
    )
    group.add_argument("--doubling", action="store_true", help="Contract Whist: allow doubles")
    group.add_argument(
        "--format",
        choices=[f.value for f in MatchFormat],
        default=None,
        help="hand, game, rubber or deals (default: game; 'deals' with --deals)",
    )
    group.add_argument("--deals", type=int, default=None, metavar="N", help="play a fixed number of deals")
    group.add_argument("--config", type=Path, default=None, metavar="FILE.json", help="game options as JSON")


ARENA_KEYS = ("deadline", "grace", "seed", "open", "matches", "ns", "ew", "north", "east", "south", "west")
"""Keys a ``serve --config`` file may hold besides the game's options."""


def config_from_args(args: argparse.Namespace, arena_keys: bool = False) -> GameConfig:
    """The game configuration the options describe; raises ConfigError with the reason.

    A ``--config`` file gives defaults; options on the command line win. With
    ``arena_keys``, the file may also set the arena's flags (ARENA_KEYS).
    """
    data: dict[str, Any] = {}
    if args.config is not None:
        data.update(_config_file(args.config))
    if arena_keys:
        for key in ARENA_KEYS:
            if key in data and getattr(args, key) is None:
                setattr(args, key, data.pop(key))
            data.pop(key, None)
    if args.game is not None:
        data["game"] = args.game
    data.setdefault("game", "contract")
    if args.trumps:
        data["trump_selection"] = args.trumps
    for flag in ("no_trump_every_fifth", "honours", "doubling"):
        if getattr(args, flag):
            data[flag] = True
    if args.target is not None:
        data["target"] = args.target
    if args.deals is not None:
        data["deals"] = args.deals
        data.setdefault("format", "deals")
    if args.format is not None:
        data["format"] = args.format
    return GameConfig.from_dict(data)


def _config_file(path: Path) -> dict[str, Any]:
    """A ``--config`` file's JSON object; OptionError (or ConfigError) says what is wrong."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise OptionError(f"--config {path}: {error.strerror or error}") from None
    except ValueError as error:  # not JSON, or not UTF-8
        raise OptionError(f"--config {path} is not JSON: {error}") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path} must hold a JSON object")
    return loaded


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path("oddtrick-data"),
        help="where match logs and the SQLite file go (default ./oddtrick-data)",
    )
