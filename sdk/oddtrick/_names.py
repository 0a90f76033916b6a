"""The rule for a bot's name, in one place: the referee refuses a Hello whose name breaks it,
and the commands that name bots up front (a tournament's and sprt's entries) check it before
they start anything, so a name is refused at once and never becomes a file name first."""

from __future__ import annotations

import re

MAX_NAME_LENGTH = 64
BOT_NAME = re.compile(rf"[A-Za-z0-9._~-]{{1,{MAX_NAME_LENGTH}}}")
BOT_NAME_RULE = f"1-{MAX_NAME_LENGTH} ASCII letters, digits, '.', '_', '-' or '~'"
""":data:`BOT_NAME` in words, for the messages that refuse a name."""
PLAY_MARK = "~"
"""Under duplicate, a tournament entry plays as ``NAME~0`` and ``NAME~1``: kept out of entry names."""


def valid_bot_name(name: str) -> bool:
    return BOT_NAME.fullmatch(name) is not None


def entry_name_problem(name: str, duplicate: bool = True) -> str | None:
    """Why ``name`` cannot name an entry, or None.

    An entry plays under its name (``NAME~0`` and ``NAME~1`` under duplicate), so that name
    must pass the referee's rule for bot names, with ``~`` left for the plays.
    """
    longest = MAX_NAME_LENGTH - 2 if duplicate else MAX_NAME_LENGTH
    if PLAY_MARK not in name and 1 <= len(name) <= longest and valid_bot_name(name):
        return None
    plays = f" (it plays as {name}~0 and {name}~1)" if duplicate and name and PLAY_MARK not in name else ""
    return (
        f"{name!r} cannot name an entry{plays}: an entry's name is the bot name it plays under, and "
        f"the referee's rule for bot names is {BOT_NAME_RULE}; an entry's name takes 1-{longest} "
        f"ASCII letters, digits, '.', '_' or '-' ('~' is kept for the plays of a duplicate set)"
    )
