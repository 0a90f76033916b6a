"""Every error the referee raises on purpose, under one base, the cause in the type.

:class:`RefereeError` is the base: a command catches it to say one line instead of a
traceback, and anything else that escapes is a bug. Below it each class names what
went wrong, and keeps the builtin kind callers already catch (a refused input is a
``ValueError``, a data folder that cannot be written an ``OSError``)::

    RefereeError
    ├── OptionError (ValueError)    an option, or what it names, the command cannot use
    ├── CannotListen (OSError)      an address the referee, its page or a probe cannot listen on
    │   └── MetricsUnavailable      the --metrics address cannot be served
    ├── StorageError (OSError)      the data folder cannot be written
    ├── DataDirInUse (OSError)      another referee holds the data folder
    ├── DatabaseError (RuntimeError)  the database cannot be opened or used
    │   ├── DatabaseUnreachable     the server cannot be reached now (worth another try)
    │   └── WorkQueueError          the work queue cannot be used (not PostgreSQL, …)
    ├── TokensFileError (ValueError)  the tokens file cannot be used
    ├── LadderError (ValueError)    an operator's request the ladder refuses
    │   └── HouseBotTaken           a house bot's name is another referee's
    ├── ReplayError (ValueError)    a log that cannot be replayed
    ├── LogUnreadable (OSError)     a match log that cannot be unpacked (damaged, too large)
    ├── ResultRefused (ValueError)  a table's result its own match log does not bear out
    ├── NoSuchMatch (KeyError)      no match of that id here (a page answers 404)
    ├── BadJob (ValueError)         a queued job's payload no worker can do
    ├── RecordInvalid (ValueError)  a record read back (a row, a payload, a result) not of its form
    ├── HandBack                    a leased job this worker cannot do (given back)
    ├── NotVisible                  a spectator may not see this of a match
    ├── PlayOnStopped               a play-on given up before its end (its page's player closing)
    ├── Refused                     a bot's handshake failed (with its gRPC status)
    ├── SittingRefused (RuntimeError)  a match from the page cannot start now (full, name busy)
    ├── EntrantExited (RuntimeError)  a local entry's process ended too soon
    └── EntryFailed (RuntimeError)  a local entry's program never connected

The module imports nothing of the referee's, so any layer can raise these. The few
builtin errors the referee still raises are bugs if they happen or a protocol Python
asks for (docs/architecture.md, "Errors", lists them).
"""

from __future__ import annotations

import re
from pathlib import Path

import grpc


class RefereeError(Exception):
    """Base of every error the referee raises on purpose; the message says why."""


class OptionError(RefereeError, ValueError):
    """An option given to a command, or what it names (a bot file, a certificate, a
    tournament's name), that cannot be used; the message names it and says what to give."""


class CannotListen(RefereeError, OSError):
    """An address that cannot be listened on (a port in use, an address not here); the
    message names it and what to do (another port, or 0 for any free one)."""


class MetricsUnavailable(CannotListen):
    """``--metrics`` names an address this process cannot listen on; the message names the
    command and what to choose instead."""


class StorageError(RefereeError, OSError):
    """The data folder could not be written; the message says what, where and what to do."""


class DataDirInUse(RefereeError, OSError):
    """Another referee holds the data directory."""


class DatabaseError(RefereeError, RuntimeError):
    """The database could not be opened or used; the message says which and why."""


class WorkQueueError(DatabaseError):
    """The work queue cannot be used (not PostgreSQL, a newer schema, bad input); the message says why."""


class DatabaseUnreachable(DatabaseError):
    """The database server could not be reached (down, restarting, cut off): worth another try."""


class RecordInvalid(RefereeError, ValueError):
    """A record read back (a store's row, a job's payload or result) is not of its form;
    the message names the field that is missing or wrong."""


class BadJob(RefereeError, ValueError):
    """A queued job's payload cannot be done by any worker; the message says why."""


class HandBack(RefereeError):
    """A leased job this worker cannot do (its bot differs from the one submitted, a bot
    that dies at start): given back with the reason, the attempt counted.
    ``not_here``: this worker should not lease it again (another worker may do it)."""

    def __init__(self, reason: str, not_here: bool = False) -> None:
        super().__init__(reason)
        self.not_here = not_here


class TokensFileError(RefereeError, ValueError):
    """The tokens file cannot be used; the message says why and what to do."""


class LadderError(RefereeError, ValueError):
    """An operator's request the ladder refuses; the message says why and what to do."""


class HouseBotTaken(LadderError):
    """The house bot of that name is run by another referee sharing the database."""

    def __init__(self, name: str, owner: str) -> None:
        super().__init__(
            f"house bot {name!r} is run by the ladder referee {owner!r} on the same database: "
            "give this ladder's house bots other names"
        )
        self.name = name
        self.owner = owner


class ReplayError(RefereeError, ValueError):
    """The log cannot be replayed; the message says why and what to do."""


class LogUnreadable(RefereeError, OSError):
    """A match log that cannot be read or unpacked: damaged, cut short, or larger than a
    log may be (a gzip bomb); the message says which log and why."""


class ResultRefused(RefereeError, ValueError):
    """A finished table's result is not counted: its match log fails the rules' check, or
    says other than the figures reported beside it. The message says which table and why."""


class NoSuchMatch(RefereeError, KeyError):
    """No match of that id is known here; its one argument is the id asked for."""


class NotVisible(RefereeError):
    """The match exists but a spectator may not see this of it; the message says why."""


class PlayOnStopped(RefereeError):
    """A play-on given up before its end: its owner (the page's player) is closing."""


class Refused(RefereeError):
    """The handshake failed; the call ends with this status."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class SittingRefused(RefereeError, RuntimeError):
    """A match played from the page cannot start now (as many are playing as may, a bot's
    name is playing already, the page's referee is not running); the message says which."""


TAIL_LINES = 2
"""Lines of a dead bot's output quoted in the error (the rest is in its log)."""


class EntrantExited(RefereeError, RuntimeError):
    """A local entry's process ended while the tournament still needed it."""

    def __init__(self, entry: str, process: str, status: int, tail: list[str], output: Path) -> None:
        self.entry = entry
        self.status = status
        self.tail = tail
        how = f"was killed by signal {-status}" if status < 0 else f"exited with status {status}"
        said = last_words(tail) or "(it printed nothing)"
        super().__init__(
            f"local entry {entry!r} (process {process}) {how}: {said}\n  its whole output: {output}"
        )


class EntryFailed(RefereeError, RuntimeError):
    """A local entry's program did not connect to the referee."""


_PYTHON_PLACE = re.compile(r'^File "(?P<file>[^"]+)", line (?P<line>\d+)')
_PYTHON_ERROR = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")


def last_words(lines: list[str]) -> str:
    """What a dead bot said last, in a line: a Python traceback's error with the place
    it was raised (``NameError: … (at bot.py:3)``); otherwise its last two lines."""
    if not lines:
        return ""
    if _PYTHON_ERROR.match(lines[-1]):
        for line in reversed(lines[:-1]):
            if place := _PYTHON_PLACE.match(line):
                return f"{lines[-1]} (at {Path(place['file']).name}:{place['line']})"
        return lines[-1]
    return "; ".join(lines[-TAIL_LINES:])
