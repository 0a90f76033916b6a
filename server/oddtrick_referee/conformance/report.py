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
    skipped: bool = False
    """Not judged in this run (``actual`` says why): counted neither passed nor failed."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Report:
    bot: str
    checks: list[Check] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    """Things a person should know that are not checks (the bot's exit, its output file)."""
    never_played: bool = False
    """No scenario could be played (the bot never got its sessions): the text report
    says why first and lists the checks without a failure each."""

    @property
    def judged(self) -> list[Check]:
        return [check for check in self.checks if not check.skipped]

    @property
    def passed(self) -> bool:
        return bool(self.judged) and all(check.passed for check in self.judged)

    def failed(self) -> list[str]:
        return [check.name for check in self.judged if not check.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "bot": self.bot,
            "passed": self.passed,
            "summary": {
                "passed": sum(c.passed for c in self.judged),
                "failed": sum(not c.passed for c in self.judged),
                "skipped": len(self.checks) - len(self.judged),
            },
            "checks": [check.to_dict() for check in self.checks],
            "notes": self.notes,
        }

    def write_json(self, out: TextIO) -> None:
        json.dump(self.to_dict(), out, indent=2)
        out.write("\n")

    def write_text(self, out: TextIO) -> None:
        out.write(f"Conformance of {self.bot} to oddtrick.v1\n\n")
        if self.never_played:
            self._write_never_played(out)
            return
        width = max((len(c.name) for c in self.checks), default=0)
        for check in self.checks:
            mark = "SKIP" if check.skipped else "PASS" if check.passed else "FAIL"
            out.write(f"  {mark}  {check.name:<{width}}  {check.title}\n")
            if check.skipped:
                out.write(f"        {'':<{width}}{check.actual}\n")
            elif not check.passed:
                out.write(f"        {'':<{width}}expected: {check.expected}\n")
                out.write(f"        {'':<{width}}actual:   {check.actual}\n")
        for note in self.notes:
            out.write(f"\nnote: {note}\n")
        judged = self.judged
        passed = sum(c.passed for c in judged)
        failed = len(judged) - passed
        skipped = len(self.checks) - len(judged)
        verdict = "conforms" if self.passed else "does not conform"
        counts = f"{passed} of {len(judged)} checks passed, {failed} failed"
        if skipped:
            counts += f", {skipped} not checked ({', '.join(c.name for c in self.checks if c.skipped)})"
        out.write(f"\n{self.bot} {verdict}: {counts}.\n")

    def _write_never_played(self, out: TextIO) -> None:
        """The cause first: a bot that cannot start fails every check for that one reason."""
        out.write("No scenario was played: the bot never got its sessions.\n")
        for note in self.notes:
            out.write(f"\nnote: {note}\n")
        out.write(
            f"\n{self.bot} does not conform: none of the {len(self.checks)} checks could be judged; "
            "fix what the notes say and run it again (--json lists the checks).\n"
        )
