"""Bot options checked before anything is played, and handed to each bot.

An entry's options (``--bot NAME=FILE.py option.think_seconds=2``) are checked against
the bot's own (``Bot.options``) before a tournament is stored or a match starts, so a
misspelt name or a wrong type is one line of error and changes nothing. A bot in the
referee's process is the operator's code: it is loaded here and checked at once. A bot
file that runs as a process is untrusted code, never loaded by the referee: it is run
behind the launcher's walls, as when it plays, with ``--check-options`` (it loads its
file, checks ``ODDTRICK_OPTIONS`` and exits). A ``cmd:`` program is opaque: it gets its
options in ``ODDTRICK_OPTIONS`` and says itself what it makes of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import trio

from oddtrick._options import VARIABLE, OptionValue, to_variable
from oddtrick._run import bot_factory
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.competitions.entries.entrants import BotProcess, Identity, check_bot_process
from oddtrick_referee.competitions.tournaments.tournament_plan import Entry
from oddtrick_referee.front_door import FrontDoor


def options_env(options: Mapping[str, OptionValue]) -> dict[str, str]:
    """The variable that carries a bot process's options (none without options): the one
    the launcher passes besides its allowlist."""
    return {VARIABLE: to_variable(options)} if options else {}


def in_process_problem(spec: str, options: Mapping[str, OptionValue]) -> str | None:
    """Why a bot played in the referee's process (``FILE.py[:Class]``) does not take
    ``options``, or None: it is loaded and the options set, as when it plays."""
    if not options:
        return None
    try:
        bot_factory(spec, options)
    except (OSError, ImportError, AttributeError, TypeError, ValueError, SyntaxError) as error:
        return str(error)
    return None


async def process_problem(
    command: Sequence[str],
    cwd: Path,
    options: Mapping[str, OptionValue],
    identity: Identity | None,
    data_dir: Path,
) -> str | None:
    """Why a bot file run as a process (``command``: its ``oddtrick bot FILE.py``) does not
    take ``options``, or None: it checks them itself, behind the walls it plays behind."""
    if not options:
        return None
    spec = BotProcess(
        entry="",
        name="",
        command=(*command, "--check-options"),
        env=options_env(options),
        cwd=cwd,
        token="",
        output=data_dir / "bot-output" / "options-check.log",  # (unused: the output is read)
        hide=(data_dir,),
    )
    status, lines = await check_bot_process(spec, identity)
    if status == 0:
        return None
    said = lines[-1] if lines else f"it exited with status {status} and said nothing"
    return said.removeprefix("oddtrick bot: ")


async def check_entries(
    entries: Sequence[Entry], identities: Mapping[str, Identity | None], data_dir: Path
) -> None:
    """ValueError, naming the entry and what to do, for the first entry whose bot does not
    take its options (a ``cmd:`` program's are its own to check). The bot files' processes
    check at once, each taking as long as a bot's start."""
    problems: dict[str, str | None] = {}

    async def check(entry: Entry) -> None:
        assert entry.command is not None
        assert entry.cwd is not None
        who = identities.get(entry.name)
        problems[entry.name] = await process_problem(entry.command, entry.cwd, entry.options, who, data_dir)

    async with trio.open_nursery() as nursery:
        for entry in entries:
            if entry.in_process:
                problems[entry.name] = in_process_problem(entry.in_process, entry.options)
            elif entry.sdk and entry.options:
                nursery.start_soon(check, entry)
    for entry in entries:
        if (problem := problems.get(entry.name)) is not None:
            raise OptionError(f"entry {entry.name!r}: {problem}; nothing was played")


def declare_options(referee: FrontDoor, names: Sequence[str], options: Mapping[str, OptionValue]) -> None:
    """Tell the referee the options the bots ``names`` play with, for their match logs."""
    if options:
        for name in names:
            referee.declare_options(name, options)
