"""Logs written by an earlier referee still check, and replay and export exactly as they did.

The fixtures in tests/data/match_logs were written by the referee before its match log
became typed records; their replays (JSON and PBN) were exported by that same code. A
reader that drifts from the format breaks these, whatever the writer of the day does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oddtrick_referee.play.matchlog import check_log
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.replay.pbn import match_to_pbn

LOGS = sorted((Path(__file__).parent / "data" / "match_logs").glob("*.jsonl"))


def test_there_are_old_logs_of_every_kind() -> None:
    kinds = {json.loads(line)["type"] for log in LOGS for line in log.read_text().splitlines()}
    assert {"match_start", "hand_start", "action", "disconnect", "reconnect", "forfeit"} <= kinds
    assert {"hand_result", "match_end"} <= kinds
    games = {json.loads(log.read_text().splitlines()[0])["config"]["game"] for log in LOGS}
    assert games == {"classic", "contract"}


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
def test_an_old_log_checks(log: Path) -> None:
    report = check_log(log)
    assert report.ok, report.describe()
    assert report.actions == sum('"type":"action"' in line for line in log.read_text().splitlines())


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
def test_an_old_log_replays_to_the_same_json_and_pbn(log: Path) -> None:
    """Every field the earlier export wrote is there with the same value (the format adds
    fields, never changes one: docs/match-log.md)."""
    match = replay_log(log)
    assert match.finished
    expected = json.loads(log.with_suffix(".replay.json").read_text())
    assert unchanged(json.loads(json.dumps(match_to_json(match))), expected) == []
    assert match_to_pbn(match) == log.with_suffix(".pbn").read_text()


def unchanged(now: object, before: object, where: str = "") -> list[str]:
    """Where ``now`` lacks or differs from a field of ``before`` (added fields are fine)."""
    if isinstance(before, dict):
        if not isinstance(now, dict):
            return [f"{where}: not an object"]
        return [
            difference
            for key, value in before.items()
            for difference in (
                unchanged(now[key], value, f"{where}.{key}") if key in now else [f"{where}.{key}: missing"]
            )
        ]
    if isinstance(before, list):
        if not isinstance(now, list) or len(now) != len(before):
            return [f"{where}: not a list of {len(before)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(now, before, strict=True))
            for d in unchanged(a, b, f"{where}[{i}]")
        ]
    return [] if now == before else [f"{where}: {now!r} instead of {before!r}"]
