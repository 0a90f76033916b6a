"""A strong bot that cannot think says so, and the standings warn of it.

Through a real tournament (a referee on a socket, every entry its own bot
process, the referee's deadline running): the strong bot with no time to
think (``option.think_seconds=0``: every search's budget is spent before it
starts, as on a machine whose other work takes all the CPU) answers with the
heuristic bot's choices and comments each ``fallback: …``; the same bot at
level 1, which has time for its two samples, comments the samples it solved.
The referee counts the fallbacks from the comments, the match logs' last lines
keep the counts, and the standings name the starved entry, not the other.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tournament_support import run_tournament, sample_bot


def _comments(data_dir: Path) -> dict[str, list[str | None]]:
    """Every answered decision's comment by entry, over every match log, and the
    fallbacks the logs' last lines counted, by entry, under ``"#counted"`` keys."""
    said: dict[str, list[str | None]] = {}
    for path in sorted((data_dir / "logs").rglob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        players = next(r for r in records if r["type"] == "match_start")["players"]
        entry_of = {seat: player["name"].split("~")[0] for seat, player in players.items()}
        for record in records:
            if record["type"] == "action" and record["think_ms"] is not None:
                said.setdefault(entry_of[record["seat"]], []).append(record.get("comment"))
            if record["type"] == "match_end":
                for seat, result in record["seats"].items():
                    counted = result.get("times", {}).get("fallbacks", 0)
                    said.setdefault(f"#counted {entry_of[seat]}", []).extend([None] * counted)
    return said


def test_a_starved_strong_bot_reports_its_fallbacks_and_the_standings_warn(tmp_path: Path) -> None:
    pimc = sample_bot("pimc")
    bots = {
        "starved": [pimc, "option.think_seconds=0"],
        "level1": [pimc, "option.level=1"],
        "heuristic": sample_bot("heuristic"),
    }
    result = run_tournament(tmp_path, "--seed", "starved", deals=1, bots=bots, timeout=900)
    said = _comments(tmp_path)

    starved = said["starved"]
    fallbacks = _fallbacks(starved)
    # Every decision with a choice fell back; only a last card, or a call with no
    # contract to estimate, had nothing to search.
    assert fallbacks > 0.1 * len(starved)
    searched_nothing = re.compile(r"fallback: 0 of (24|12) samples solved|the only legal card|no contract")
    assert all(comment is not None and searched_nothing.match(comment) for comment in starved), starved
    solved = [c for c in said["level1"] if c is not None and re.match(r"[12] of [12] samples solved", c)]
    assert solved, said["level1"]

    warning = next(line for line in result.stdout.splitlines() if line.startswith("short of time:"))
    assert f"starved {fallbacks} of {len(starved)} " in warning
    assert "heuristic" not in warning
    # The referee counted what the comments said; the level-1 bot, which had time to think,
    # is named only if it too fell back more than a tenth of the time (a very busy machine).
    for entry in ("starved", "level1"):
        assert len(said.get(f"#counted {entry}", [])) == _fallbacks(said[entry])
    assert ("level1 " in warning) == (_fallbacks(said["level1"]) > 0.1 * len(said["level1"]))


def _fallbacks(comments: list[str | None]) -> int:
    return sum(1 for comment in comments if comment is not None and comment.startswith("fallback:"))
