"""What a tournament plays: its entries, its settings and the table runs they make.

Apart from the running of it (:mod:`.tournament`) so that what reads a stored tournament
(resuming one, the web page's standings) knows its plan without the machinery that plays it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oddtrick import bots
from oddtrick._names import entry_name_problem
from oddtrick._options import OptionValue
from oddtrick.deal_sets import DealSet, MatchDeals
from oddtrick.rules import GameConfig
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.token_scheme import new_token

SHIPPED = "shipped:"
"""The source of an entry that is one of the package's own bots (``shipped:random``)."""
SLOT_MARK = "~"
"""Under duplicate, entries connect as ``name~0`` and ``name~1``: one identity per play."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """A tournament entrant: a bot the referee starts (``command``) or a remote bot.

    ``token`` is its credential; under duplicate it is the one for play 0
    (``name~0``), and ``twin_token`` the one for play 1 (``name~1``).
    """

    name: str
    token: str
    command: tuple[str, ...] | None = None
    source: str = ""
    """What the user gave (a bot file, a command line, or 'remote'), for the settings record."""
    twin_token: str = dataclasses.field(default_factory=new_token)
    cwd: Path | None = None
    """Where a local entry's process runs: its bot file's folder, or for ``cmd:`` the
    folder the tournament was started from."""
    sdk: bool = False
    """A bot file run by ``oddtrick bot`` (else a ``cmd:`` program)."""
    in_process: str = ""
    """A bot (``FILE.py[:Class]``) the referee plays in its own process, with no process,
    sandbox or token: a shipped bot, or a bot file its operator trusts (``--in-process``)."""
    options: Mapping[str, OptionValue] = dataclasses.field(default_factory=dict)
    """The bot's options (``option.NAME=VALUE`` after the entry): a process gets them in
    ``ODDTRICK_OPTIONS``, a bot in the referee's process directly; a remote entry has none."""

    @property
    def local(self) -> bool:
        """Played by a process the referee starts on this machine."""
        return self.command is not None

    @property
    def remote(self) -> bool:
        """Played by a bot that connects by itself, with the entry's tokens."""
        return self.command is None and not self.in_process

    @property
    def trusted_file(self) -> bool:
        """A bot file of the operator's played in the referee's process (not a shipped bot)."""
        return bool(self.in_process) and not self.source.startswith(SHIPPED)

    def described(self) -> list[Any]:
        """The entry in the tournament's stored settings: ``[name, source]``, and its options
        third when it has some (so a tournament stored before options resumes as before)."""
        source = self.source or "remote"
        return [self.name, source, dict(self.options)] if self.options else [self.name, source]

    def identities(self, duplicate: bool) -> dict[str, str]:
        """The bot names this entry plays under, each with its own token."""
        if not duplicate:
            return {self.name: self.token}
        return {f"{self.name}{SLOT_MARK}0": self.token, f"{self.name}{SLOT_MARK}1": self.twin_token}


def remote_entry(text: str, duplicate: bool) -> Entry:
    """``NAME``, ``NAME=TOKEN`` (one play per deal) or ``NAME=TOKEN0,TOKEN1`` (duplicate):
    tokens not given are made here (and printed for the entrant)."""
    name, _, tokens_text = text.partition("=")
    name = name.strip()
    if not name or SLOT_MARK in name or "|" in name or "," in name:
        raise OptionError(
            f"--remote expects NAME[=TOKEN…] with no {SLOT_MARK!r}, '|' or ',' in NAME, not {text!r}"
        )
    tokens = [token.strip() for token in tokens_text.split(",")] if tokens_text else []
    wanted = 2 if duplicate else 1
    if not tokens:
        tokens = [new_token() for _ in range(wanted)]
    elif len(tokens) != wanted or not all(tokens) or len(set(tokens)) != wanted:
        if duplicate:
            raise OptionError(
                f"remote entry {name!r} plays each deal twice, as {name}{SLOT_MARK}0 and "
                f"{name}{SLOT_MARK}1, each with its own token: give --remote {name}=TOKEN0,TOKEN1 "
                f"(two different tokens), or --remote {name} to have them made"
            )
        raise OptionError(f"remote entry {name!r} plays under one token with --no-duplicate: {name}=TOKEN")
    if duplicate:
        return Entry(name, tokens[0], twin_token=tokens[1])
    return Entry(name, tokens[0])


def parse_entry(
    text: str, token: str | None = None, options: Mapping[str, OptionValue] | None = None
) -> Entry:
    """``name=path/bot.py[:Class]`` (an SDK bot) or ``name=cmd:COMMAND LINE`` (any program),
    with the bot's ``options``."""
    entry = _parsed_entry(text, token)
    return dataclasses.replace(entry, options=dict(options or {}))


def _parsed_entry(text: str, token: str | None) -> Entry:
    name, equals, target = text.partition("=")
    name = name.strip()
    if not equals or not name or not target.strip():
        raise OptionError(f"--bot expects NAME=FILE.py[:Class] or NAME=cmd:COMMAND, not {text!r}")
    if SLOT_MARK in name or "|" in name:
        raise OptionError(f"entry names may not contain {SLOT_MARK!r} or '|': {name!r}")
    target = target.strip()
    token = token or new_token()
    if target.startswith("cmd:"):
        command = tuple(shlex.split(target[4:]))
        if not command:
            raise OptionError(f"--bot {name}=cmd: needs a command after 'cmd:'")
        return Entry(name, token, command, target, cwd=Path.cwd())
    path_text, colon, attribute = target.rpartition(":")
    if not colon or not attribute.isidentifier():
        path_text, attribute = target, ""
    path = Path(path_text).resolve()
    if not path.is_file():
        raise OptionError(f"bot file not found for {name!r}: {path_text}")
    # Safe-path mode (-P): the working folder never shadows the installed package.
    command = (
        sys.executable,
        "-P",
        "-m",
        "oddtrick",
        "bot",
        f"{path}:{attribute}" if attribute else str(path),
    )
    return Entry(name, token, command, target, cwd=path.parent, sdk=True)


def in_process_entry(text: str, options: Mapping[str, OptionValue] | None = None) -> Entry:
    """``name=path/bot.py[:Class]``, played in the referee's own process (``--in-process``):
    for the operator's own code only, since nothing walls it off from the referee."""
    entry = parse_entry(text)
    if not entry.sdk or entry.command is None:
        raise OptionError(f"--in-process expects NAME=FILE.py[:Class] (a bot of the SDK), not {text!r}")
    return Entry(
        entry.name,
        entry.token,
        source=f"in-process:{entry.source}",
        in_process=entry.command[-1],
        options=dict(options or {}),
    )


def shipped_entry(name: str, kind: str) -> Entry:
    """One of the package's own bots (``random``, ``heuristic``, ``pimc``) as an entry: played
    in the referee's process, as everything the package ships is trusted."""
    return Entry(name, new_token(), source=f"{SHIPPED}{kind}", in_process=str(bots.bot_file(kind)))


def _time_control(rules: TableRules) -> dict[str, Any]:
    record = {"deadline_ms": round(rules.deadline_s * 1000)}
    return {**record, "clock": rules.clock.to_record()} if rules.clock is not None else record


DEFAULT_TIME_CONTROL = _time_control(TableRules())
"""``oddtrick tournament``'s own (``--deadline 5``, no ``--clock``): left out of the identity."""


@dataclasses.dataclass(frozen=True)
class TournamentSettings:
    entries: tuple[Entry, ...]
    config: GameConfig
    """Per table: with duplicate, its format is ignored (deals are played in sets)."""
    deals: int = 20
    duplicate: bool = True
    gauntlet: bool = False
    set_size: int = 10
    tables: int = 2
    rules: TableRules = dataclasses.field(default_factory=TableRules)
    remote_wait_s: float = 60.0
    bot_user: str | None = None
    """Who local entries' processes run as when the referee is root (default ``nobody``)."""
    seed: str | None = None
    name: str | None = None
    deal_set: DealSet | None = None
    """``--deals-from``: the tables play these deals, in order, instead of deals from seeds."""

    def __post_init__(self) -> None:
        """Every entry's name is checked here, before anything is stored or started: a name
        becomes its bots' log files' names and the names they connect under, so one the
        referee would refuse must stop the tournament now, not after its settings are kept."""
        for entry in self.entries:
            problem = entry_name_problem(entry.name, self.duplicate)
            if problem:
                raise OptionError(problem)

    def describe(self) -> dict[str, Any]:
        """What identifies the tournament: re-running with the same settings resumes it."""
        time_control = self.time_control()
        return {
            # A bot's options make it another entrant: an entry resumed with other ones is refused.
            "entries": [entry.described() for entry in self.entries],
            "config": self.config.to_dict(),
            "deals": self.deals,
            "duplicate": self.duplicate,
            "gauntlet": self.gauntlet,
            "set_size": self.set_size,
            "seed": self.seed,
            # Only with a deal set, so a tournament begun before the option resumes as before.
            **({"deal_set": self.deal_set.sha256} if self.deal_set is not None else {}),
            # Only when not the default, for the same reason: a tournament is also its time
            # control (the same bots at 1 s a decision are another tournament than at 5 s).
            **({"time_control": time_control} if time_control != DEFAULT_TIME_CONTROL else {}),
        }

    def time_control(self) -> dict[str, Any]:
        """The rules that decide how strong the bots can play: the deadline and the clock."""
        return _time_control(self.rules)

    @property
    def tournament_id(self) -> str:
        """The ``--name``, or a digest of the settings but the entries: running it again with an
        entry added extends the same tournament, which then plays only the new pairs."""
        if self.name:
            return self.name
        rest = {key: value for key, value in self.describe().items() if key != "entries"}
        digest = hashlib.sha256(json.dumps(rest, sort_keys=True).encode()).hexdigest()
        return f"t-{digest[:12]}"

    @property
    def legacy_tournament_id(self) -> str:
        """The id an earlier version derived from every setting, entries included."""
        if self.name:
            return self.name
        digest = hashlib.sha256(json.dumps(self.describe(), sort_keys=True).encode()).hexdigest()
        return f"t-{digest[:12]}"


@dataclasses.dataclass(frozen=True)
class TableRun:
    """One table's play of one set of one match."""

    match_key: str
    set_number: int
    table_no: int
    ns_entry: str
    ew_entry: str
    deals: int
    seed: str
    first_deal: int | None = None
    """With a deal set: the index (0-based) in the set of this run's first deal."""

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.match_key, self.set_number, self.table_no)


def pairings(entries: Sequence[str], gauntlet: bool) -> list[tuple[str, str]]:
    if gauntlet:
        return [(entries[0], other) for other in entries[1:]]
    return [(a, b) for i, a in enumerate(entries) for b in entries[i + 1 :]]


def plan_runs(settings: TournamentSettings, master_seed: str) -> list[TableRun]:
    """Every table run, both plays of a set next to each other so they run together.

    With a deal set, the sets take the file's deals in order, pairing after pairing, and
    start again from its first deal past its end (as cutechess reads an opening book):
    run N's deals depend on the plan alone, so a resumed tournament deals the same.
    """
    names = [entry.name for entry in settings.entries]
    runs = []
    taken = 0
    for first, second in pairings(names, settings.gauntlet):
        key = f"{first}|{second}"
        if not settings.duplicate:
            start = None
            if settings.deal_set is not None:
                start, taken = taken, taken + len(settings.deal_set.deals)
            runs.append(TableRun(key, 1, 0, first, second, 0, f"{master_seed}/{key}/1", start))
            continue
        sets = math.ceil(settings.deals / settings.set_size)
        for number in range(1, sets + 1):
            size = min(settings.set_size, settings.deals - (number - 1) * settings.set_size)
            seed = f"{master_seed}/{key}/{number}"
            start = None
            if settings.deal_set is not None:
                start, taken = taken, taken + size
            runs.append(TableRun(key, number, 0, first, second, size, seed, start))
            runs.append(TableRun(key, number, 1, second, first, size, seed, start))
    return runs


def run_deals(settings: TournamentSettings, run: TableRun) -> MatchDeals | None:
    """The fixed deals a table run plays (None: it deals from its seed)."""
    if settings.deal_set is None or run.first_deal is None:
        return None
    count = run.deals if settings.duplicate else len(settings.deal_set.deals)
    return settings.deal_set.take(run.first_deal, count)
