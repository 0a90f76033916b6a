"""The double-dummy skill of a tournament's entries, from the logs it left in its data folder.

Finds the tournament's tables (its store), their logs (the referee's index),
solves them with :func:`oddtrick.analysis.analyze_logs` (the ``strong``
extra), and hands the figures to :mod:`oddtrick_referee.competitions.scoring.dd_skill`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from oddtrick_referee.competitions.scoring.dd_skill import DdSkill, dd_samples, dd_skill
from oddtrick_referee.competitions.tournaments.tournament_plan import SLOT_MARK
from oddtrick_referee.storage.match_index import MatchStore
from oddtrick_referee.storage.tournament_store import TournamentStore

MISSING_EXTRA = (
    "--dd-skill needs the double-dummy solver: pip install 'oddtrick[strong]' (or pip install endplay)"
)


def missing_extra() -> str | None:
    """The one line to show when the ``strong`` extra is not installed, else None."""
    return MISSING_EXTRA if importlib.util.find_spec("endplay") is None else None


def tournament_analysis(
    data_dir: Path, tournament_id: str, progress: Callable[[int, int], None] | None = None
) -> tuple[dict[str, Any], Callable[[str | None, int], Hashable]]:
    """Every played table of the tournament solved double-dummy (no par: not needed), and
    the function naming the deal each log's hand was (its match, set and deal number)."""
    from oddtrick.analysis import analyze_logs

    index = data_dir / "oddtrick.sqlite3"
    tables = TournamentStore(index).table_matches(tournament_id)
    matches = MatchStore(index)
    paths: list[Path] = []
    deal_group: dict[str, tuple[str, int]] = {}
    for match_id, match_key, set_number in tables:
        row = matches.get(match_id)
        if row is None or not Path(row["log_path"]).is_file():
            continue
        paths.append(Path(row["log_path"]))
        deal_group[match_id] = (match_key, set_number)

    def deal_of(match_id: str | None, hand: int) -> Hashable:
        return (*deal_group.get(match_id or "", (match_id or "", 0)), hand)

    analysis = analyze_logs(paths, progress, par=False) if paths else {"logs": [], "hands": 0}
    return analysis, deal_of


def entry_namer(entries: list[str]) -> Callable[[str], str | None]:
    """The entry behind a player name at the referee (None for a name of no entry)."""
    known = set(entries)

    def entry_of(player: str) -> str | None:
        name, mark, slot = player.rpartition(SLOT_MARK)
        entry = name if mark and slot.isdigit() else player
        return entry if entry in known else None

    return entry_of


def tournament_dd_skill(
    data_dir: Path, tournament_id: str, entries: list[str], progress: Callable[[int, int], None] | None = None
) -> dict[str, DdSkill]:
    """Every entry's double-dummy loss per deal over the tournament's played tables."""
    analysis, deal_of = tournament_analysis(data_dir, tournament_id, progress)
    return dd_skill(entries, analysis, entry_namer(entries), deal_of)


def tournament_dd_samples(
    data_dir: Path, tournament_id: str, entries: list[str]
) -> dict[str, dict[Hashable, float]]:
    """Per entry, per deal (match key, set, deal number): the tricks its cards lost (for the
    benchmark that compares measures deal by deal)."""
    analysis, deal_of = tournament_analysis(data_dir, tournament_id)
    return dd_samples(analysis, entry_namer(entries), deal_of)
