"""Which tournament a run is, and which others in its data folder are left unfinished.

A tournament is identified by its settings (or ``--name``), so running it again
with one option changed starts another tournament in the same data folder. The
run says so at its start: this tournament's id, whether it is new or resumed,
and for every other unfinished one, how far it got, how its options differ and
the command that resumes it (its entries, its options and its ``--name``).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from oddtrick._options import shown
from oddtrick.rules import GameConfig
from oddtrick_referee.competitions.tournaments.tournament_plan import Entry, TournamentSettings, plan_runs
from oddtrick_referee.play.clock import ClockRule
from oddtrick_referee.storage.tournament_store import StoredTournament

SHOWN = 3
"""Other unfinished tournaments named one by one; more are counted."""


def tables_done(stored: StoredTournament) -> tuple[int, int]:
    """Tables finished (a forfeited match's count as done) and tables planned."""
    runs = plan_runs(_settings_of(stored.settings), "")
    done = sum(1 for run in runs if run.key in stored.played or run.match_key in stored.forfeited)
    return done, len(runs)


def _settings_of(described: Mapping[str, Any]) -> TournamentSettings:
    """Enough of the settings a stored description came from to plan its tables."""
    return TournamentSettings(
        entries=tuple(Entry(entry[0], "") for entry in described["entries"]),
        config=GameConfig.from_dict(described["config"]),
        deals=int(described["deals"]),
        duplicate=bool(described["duplicate"]),
        gauntlet=bool(described["gauntlet"]),
        set_size=int(described["set_size"]),
    )


def options(described: Mapping[str, Any]) -> list[str]:
    """The command-line options that give a tournament these settings, as a list of words
    (entries apart): what ``oddtrick tournament`` needs to find it again."""
    config = described["config"]
    words = ["--game", config["game"]]
    if (
        config["game"] == "classic"
        and config.get("trump_selection")
        and not _default(config, "trump_selection")
    ):
        words += ["--trumps", config["trump_selection"]]
    for key in ("no_trump_every_fifth", "honours", "doubling"):
        if config.get(key):
            words.append("--" + key.replace("_", "-"))
    if config.get("target") is not None and not _default(config, "target"):
        words += ["--target", str(config["target"])]
    words += ["--format", config["format"]]
    deals = described["deals"] or config.get("deals")
    if deals:
        words += ["--deals", str(deals)]
    if not described["duplicate"]:
        words.append("--no-duplicate")
    else:
        words += ["--set-size", str(described["set_size"])]
    if described["gauntlet"]:
        words.append("--gauntlet")
    if described.get("seed") is not None:
        words += ["--seed", str(described["seed"])]
    time_control = described.get("time_control")
    if time_control is not None:
        words += ["--deadline", f"{time_control['deadline_ms'] / 1000:g}"]
        if time_control.get("clock"):
            words += ["--clock", str(ClockRule.from_record(time_control["clock"]))]
    return words


def _default(config: Mapping[str, Any], key: str) -> bool:
    """Whether ``config[key]`` is what the game takes when the option is not given (the
    command is then the shorter for leaving it out, and finds the same tournament)."""
    without = {name: value for name, value in config.items() if name != key}
    try:
        return GameConfig.from_dict(without).to_dict() == dict(config)
    except ValueError:
        return False


def resume_command(stored: StoredTournament, data_dir: Path) -> str:
    words = ["oddtrick", "tournament"]
    for name, source, *rest in stored.settings["entries"]:
        words += ["--remote", name] if source == "remote" else ["--bot", f"{name}={source}"]
        words += [f"option.{option}={shown(value)}" for option, value in (rest[0] if rest else {}).items()]
    words += options(stored.settings)
    words += ["--name", stored.tournament_id, "--data-dir", str(data_dir)]
    return shlex.join(words)


def differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    """The options in which two tournaments differ, as ``--deals 20 (this run: 6)``."""
    before, after = _pairs(options(old)), _pairs(options(new))
    said = []
    for flag in [*before, *(f for f in after if f not in before)]:
        if before.get(flag, False) == after.get(flag, False):
            continue
        said.append(
            f"{_shown(flag, before.get(flag, False))} (this run: {_shown(flag, after.get(flag, False))})"
        )
    return ", ".join(said) or "its --name only"


def _pairs(words: list[str]) -> dict[str, str | bool]:
    pairs: dict[str, str | bool] = {}
    index = 0
    while index < len(words):
        flag = words[index]
        if index + 1 < len(words) and not words[index + 1].startswith("--"):
            pairs[flag] = words[index + 1]
            index += 2
        else:
            pairs[flag] = True
            index += 1
    return pairs


def _shown(flag: str, value: str | bool) -> str:
    if value is False:
        return f"no {flag}"
    return flag if value is True else f"{flag} {value}"


def announce(
    tournament_id: str,
    described: Mapping[str, Any],
    resumed: bool,
    others: Iterable[StoredTournament],
    data_dir: Path,
) -> list[str]:
    """The lines a tournament prints as it starts: which one it is, then each other
    unfinished tournament of the data folder with the command that resumes it."""
    lines = [f"tournament {tournament_id} ({'resumed' if resumed else 'new'}; data in {data_dir})"]
    unfinished = []
    for other in others:
        if other.tournament_id == tournament_id:
            continue
        done, total = tables_done(other)
        if done < total:
            unfinished.append((other, done, total))
    for other, done, total in unfinished[-SHOWN:]:
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(other.created_ms / 1000))
        lines.append(
            f"  another tournament here is unfinished: {other.tournament_id}, {done} of {total} tables "
            f"played, started {started}; it differs in {differences(other.settings, described)}. "
            f"To resume it: {resume_command(other, data_dir)}"
        )
    if len(unfinished) > SHOWN:
        lines.append(f"  and {len(unfinished) - SHOWN} older unfinished tournaments")
    return lines
