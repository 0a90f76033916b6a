"""What a tournament-set job carries, as typed values: written once at submission, read by workers.

A job's payload is JSON in the work queue, written by whoever submitted the run
and read by any worker: :meth:`SetPayload.from_dict` is the one place it is read,
and it checks every field, so a payload that is not what a submitter writes (a
hand-made job, a field of another type) is refused with :class:`BadJob` naming
the field, and the worker marks the job failed with that reason instead of
crashing halfway through a play. :meth:`SetPayload.to_dict` is the one place it is
written, in the form earlier submitters wrote, so jobs already queued still read.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from oddtrick.rules import ConfigError, GameConfig
from oddtrick_referee._exceptions import BadJob, OptionError
from oddtrick_referee.competitions.tournaments.tournament_plan import Entry, TableRun, parse_entry
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.json_checks import RecordInvalid, checked, optional

WHAT = "a tournament-set job's payload"


def bot_file(entry: Entry) -> Path:
    """The file whose content names the bot: the bot file, or a ``cmd:``'s first word's file."""
    assert entry.command is not None
    if entry.sdk:
        target = entry.command[-1]  # the resolved FILE.py[:Class] that ``oddtrick bot`` is given
        path_text, colon, attribute = target.rpartition(":")
        return Path(path_text if colon and attribute.isidentifier() else target)
    first = entry.command[0]
    if "/" in first:
        return (entry.cwd or Path.cwd()) / first
    found = shutil.which(first)
    return Path(found) if found else Path(first)


def file_hash(path: Path) -> str:
    """SHA-256 of the file's bytes (OptionError with what to do when it cannot be read)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as error:
        raise OptionError(f"cannot read {path} to take its hash: {error.strerror or error}") from error


@dataclasses.dataclass(frozen=True)
class EntryRecord:
    """What a job says of an entry: how to start it on a worker and the hash it must have."""

    name: str
    source: str
    target: str
    """What the worker starts: the resolved ``FILE.py[:Class]`` of a bot file, or the source."""
    cwd: str
    file: str
    """The file whose SHA-256 names the bot (:func:`bot_file`)."""
    sha256: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def of(cls, entry: Entry) -> EntryRecord:
        if not entry.local:
            raise OptionError(
                f"entry {entry.name!r} is remote: workers start their entries themselves, so every entry "
                "of a distributed run is a bot file or a cmd: program installed on every worker"
            )
        assert entry.command is not None
        path = bot_file(entry)
        return cls(
            name=entry.name,
            source=entry.source,
            target=entry.command[-1] if entry.sdk else entry.source,
            cwd=str(entry.cwd),
            file=str(path),
            sha256=file_hash(path),
            options=dict(entry.options),
        )

    def to_dict(self) -> dict[str, Any]:
        names = ("name", "source", "target", "cwd", "file", "sha256")
        record = {name: getattr(self, name) for name in names}
        # Only when the bot has options, so a run submitted before them is still the same run.
        return {**record, **({"options": dict(self.options)} if self.options else {})}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], what: str = "an entry") -> EntryRecord:
        """:class:`RecordInvalid` names the field that is missing or wrong."""
        fields = {
            name: checked(data, name, str, what) for name in ("name", "source", "target", "cwd", "file")
        }
        options = optional(data, "options", Mapping, what, {})
        return cls(**fields, sha256=checked(data, "sha256", str, what), options=dict(options))

    def entry(self) -> Entry:
        """The entry a worker starts (its file here is checked by :meth:`hash_problem`)."""
        entry = parse_entry(f"{self.name}={self.target}", options=self.options or None)
        cwd = Path(self.cwd)
        if not entry.sdk and cwd.is_dir():
            entry = dataclasses.replace(entry, cwd=cwd)
        return dataclasses.replace(entry, source=self.source)

    def hash_problem(self) -> str | None:
        """Why this machine's copy of the entry's bot is not the one submitted (None: it is)."""
        path = Path(self.file)
        try:
            found = file_hash(path)
        except OptionError as error:
            return f"bot {self.name!r}: {error}; install the submitted bot at the same path"
        if found != self.sha256:
            return (
                f"bot {self.name!r}: {path} here has sha256 {found[:12]}…, the run was submitted "
                f"with {self.sha256[:12]}…: install the same bot on this worker"
            )
        return None


def _none_planned() -> list[Any]:
    raise RecordInvalid(f"{WHAT} has no table runs")


def run_to_dict(run: TableRun) -> dict[str, Any]:
    return dataclasses.asdict(run)


def run_from_dict(data: Mapping[str, Any], what: str = "a table run") -> TableRun:
    """A planned table run from its JSON; :class:`RecordInvalid` names the field that is
    missing or wrong."""
    return TableRun(
        match_key=checked(data, "match_key", str, what),
        set_number=checked(data, "set_number", int, what),
        table_no=checked(data, "table_no", int, what),
        ns_entry=checked(data, "ns_entry", str, what),
        ew_entry=checked(data, "ew_entry", str, what),
        deals=checked(data, "deals", int, what),
        seed=checked(data, "seed", str, what),
        first_deal=optional(data, "first_deal", int, what, None),
    )


@dataclasses.dataclass(frozen=True)
class SetPayload:
    """One job of a distributed run: a duplicate set's two table runs, or a batch of an
    SPRT's deal pairs, with what a worker needs to play them as one machine would."""

    tournament: str
    entries: tuple[EntryRecord, ...]
    config: GameConfig
    rules: TableRules
    index: int
    """The job's place in the run's plan (0-based)."""
    runs: tuple[TableRun, ...]
    run: str = ""
    """The run's name (the queue's ``payload->>'run'``), given when the run is created."""

    def to_dict(self) -> dict[str, Any]:
        payload = {
            "tournament": self.tournament,
            "entries": [entry.to_dict() for entry in self.entries],
            "config": self.config.to_dict(),
            "rules": self.rules.to_record(),
            "index": self.index,
            "runs": [run_to_dict(run) for run in self.runs],
        }
        return {**payload, "run": self.run} if self.run else payload

    @classmethod
    def from_dict(cls, data: Any) -> SetPayload:
        """The payload as submitted; :class:`BadJob` saying which field is missing or wrong."""
        try:
            entries = checked(data, "entries", list, WHAT)
            runs = checked(data, "runs", list, WHAT) or _none_planned()
            return cls(
                tournament=checked(data, "tournament", str, WHAT),
                entries=tuple(EntryRecord.from_dict(e, f"{WHAT}'s entry {n}") for n, e in enumerate(entries)),
                config=GameConfig.from_dict(checked(data, "config", Mapping, WHAT)),
                rules=TableRules.from_record(checked(data, "rules", Mapping, WHAT)),
                index=checked(data, "index", int, WHAT),
                runs=tuple(run_from_dict(r, f"{WHAT}'s run {n}") for n, r in enumerate(runs)),
                run=optional(data, "run", str, WHAT, ""),
            )
        except (ValueError, ConfigError, KeyError, TypeError) as error:
            raise BadJob(
                f"{WHAT} cannot be read: {error}; submit the run again with this oddtrick's "
                "`oddtrick tournament --workers` (or `oddtrick sprt --workers`)"
            ) from error

    def describe(self) -> str:
        """A few words for a progress line: which set, or which deal pairs."""
        first = self.runs[0]
        what = f"{first.match_key.replace('|', ' v ')} set {first.set_number}"
        if len(self.runs) > 2:
            what = f"{len(self.runs) // 2} deal pairs from {what}"
        return f"{self.run or '?'}: {what}"
