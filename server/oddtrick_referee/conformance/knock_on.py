"""A root cause and its knock-ons: the checks that could not be judged after another failed.

A bot that answers with an illegal card has it refused, then played for it, and two
fallbacks in a row end the scenario. Every check that reads such a scenario then fails
as well (its match has faults, its probe never fired, no match was played to its end),
and a report of one bug listed a dozen failures. Here the root check fails, and a
failed check that reads a scenario the root spoiled is marked as not judged after it,
so that its own verdict waits for a run without the root's bug. A check that passed
there still passes: it was judged, and held.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection

from oddtrick.rules import GameKind
from oddtrick_referee.conformance.report import Check
from oddtrick_referee.conformance.scenarios import PROBED_LATE, SCENARIOS

_ALL = frozenset(s.name for s in SCENARIOS)
_MAIN = _ALL - set(PROBED_LATE)
"""The scenarios the general checks read (the late probes are judged by their own checks)."""

READS: dict[str, frozenset[str]] = {
    "several-seats": _MAIN,
    "refusal-retry": frozenset({"classic-cut"}),
    "stale-refusal": frozenset({"classic-cut"}),
    "deadline": frozenset({"classic-rotation"}),
    "update-without-request": frozenset({"classic-rotation"}),
    "resume": frozenset({"resume"}),
    "event-gap": frozenset({"event-gap"}),
    "match-end": _ALL,
    "turned-card": frozenset({"classic-turned-card"}),
    "scoring-classic": frozenset(s.name for s in SCENARIOS if s.config.game is GameKind.CLASSIC) & _MAIN,
    "scoring-contract": frozenset(s.name for s in SCENARIOS if s.config.game is GameKind.CONTRACT) & _MAIN,
    **{name: frozenset({name}) for name in PROBED_LATE},
}
"""The scenarios each check reads its verdict from (``play:NAME`` reads its own); a check
not named here (the Hello, the environment, the ids, the stop on OK) reads no scenario's
play, and is never a knock-on."""


def scenarios_read(check: str) -> frozenset[str]:
    """The scenarios whose play ``check`` is judged by (empty: none)."""
    if check.startswith("play:"):
        return frozenset({check.removeprefix("play:")})
    return READS.get(check, frozenset())


def after_root(checks: list[Check], root: str, spoiled: Collection[str]) -> list[Check]:
    """``checks`` with every failed check (``root`` aside) that reads one of the ``spoiled``
    scenarios marked as not judged after ``root`` failed."""
    if not spoiled or not any(c.name == root and not c.passed and not c.skipped for c in checks):
        return checks
    return [
        not_judged(check, root)
        if check.name != root
        and not check.passed
        and not check.skipped
        and scenarios_read(check.name) & set(spoiled)
        else check
        for check in checks
    ]


def not_judged(check: Check, root: str) -> Check:
    """``check``, counted neither passed nor failed: it could not be judged after ``root`` failed."""
    return dataclasses.replace(check, skipped=True, after=root)
