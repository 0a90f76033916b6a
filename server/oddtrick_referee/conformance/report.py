"""The conformance report: each check with what was expected and what the bot did."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TextIO


@dataclasses.dataclass(frozen=True)
class Check:
    """One thing a bot must do, judged from what crossed the wire."""

    name: str
    """A stable identifier, for --json readers and for --only."""
    title: str
    passed: bool
    expected: str
    actual: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Report:
    bot: str
    checks: list[Check] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    """Things a person should know that are not checks (the bot's exit, its output file)."""

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(check.passed for check in self.checks)

    def failed(self) -> list[str]:
        return [check.name for check in self.checks if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "passed": self.passed,
            "summary": {
                "passed": sum(c.passed for c in self.checks),
                "failed": sum(not c.passed for c in self.checks),
            },
            "checks": [check.to_dict() for check in self.checks],
            "notes": self.notes,
        }

    def write_json(self, out: TextIO) -> None:
        json.dump(self.to_dict(), out, indent=2)
        out.write("\n")

    def write_text(self, out: TextIO) -> None:
        out.write(f"Conformance of {self.bot} to oddtrick.v1\n\n")
        width = max((len(c.name) for c in self.checks), default=0)
        for check in self.checks:
            mark = "PASS" if check.passed else "FAIL"
            out.write(f"  {mark}  {check.name:<{width}}  {check.title}\n")
            if not check.passed:
                out.write(f"        {'':<{width}}expected: {check.expected}\n")
                out.write(f"        {'':<{width}}actual:   {check.actual}\n")
        for note in self.notes:
            out.write(f"\nnote: {note}\n")
        passed = sum(c.passed for c in self.checks)
        failed = len(self.checks) - passed
        verdict = "conforms" if self.passed else "does not conform"
        out.write(f"\n{self.bot} {verdict}: {passed} of {len(self.checks)} checks passed, {failed} failed.\n")
