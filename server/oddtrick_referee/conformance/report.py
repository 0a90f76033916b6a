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
    after: str = ""
    """The failed check this one could not be judged after (it spoiled the play this one
    reads: ``knock_on``); skipped then, and ``actual`` is what the spoiled play showed."""

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
                "not_judged": sum(bool(c.after) for c in self.checks),
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
            self._write_check(out, check, width)
        for note in self.notes:
            out.write(f"\nnote: {note}\n")
        out.write(f"\n{self.bot} {'conforms' if self.passed else 'does not conform'}: {self._counts()}.\n")

    def _write_check(self, out: TextIO, check: Check, width: int) -> None:
        mark = "SKIP" if check.skipped else "PASS" if check.passed else "FAIL"
        out.write(f"  {mark}  {check.name:<{width}}  {check.title}\n")
        pad = f"        {'':<{width}}"
        if check.after:
            out.write(f"{pad}not judged (after {check.after} failed): {check.actual}\n")
        elif check.skipped:
            out.write(f"{pad}{check.actual}\n")
        elif not check.passed:
            out.write(f"{pad}expected: {check.expected}\n")
            out.write(f"{pad}actual:   {check.actual}\n")
            knock_ons = sum(c.after == check.name for c in self.checks)
            if knock_ons:
                out.write(
                    f"{pad}root cause: the {knock_ons} checks marked not judged after {check.name} read "
                    "matches this failure spoiled; fix it first, then run again\n"
                )

    def _counts(self) -> str:
        judged = self.judged
        passed = sum(c.passed for c in judged)
        counts = f"{passed} of {len(judged)} checks passed, {len(judged) - passed} failed"
        for root in dict.fromkeys(c.after for c in self.checks if c.after):
            counts += f", {sum(c.after == root for c in self.checks)} not judged after {root} failed"
        unchecked = [c.name for c in self.checks if c.skipped and not c.after]
        if unchecked:
            counts += f", {len(unchecked)} not checked ({', '.join(unchecked)})"
        return counts

    def _write_never_played(self, out: TextIO) -> None:
        """The cause first: a bot that cannot start fails every check for that one reason."""
        out.write("No scenario was played: the bot never got its sessions.\n")
        for note in self.notes:
            out.write(f"\nnote: {note}\n")
        out.write(
            f"\n{self.bot} does not conform: none of the {len(self.checks)} checks could be judged; "
            "fix what the notes say and run it again (--json lists the checks).\n"
        )
