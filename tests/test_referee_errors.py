"""The referee's errors are one family: every one is a RefereeError, defined in one module.

A command catches RefereeError to say one line; a class raised on purpose outside the
family would reach the user as a traceback, and one defined elsewhere is one a reader
does not find in the list at the top of ``_exceptions.py``.
"""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

from oddtrick_referee import _exceptions
from oddtrick_referee._exceptions import RefereeError

SERVER = Path(__file__).resolve().parents[1] / "server" / "oddtrick_referee"
BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}


def test_every_error_of_the_module_is_a_referee_error() -> None:
    errors = [
        value
        for value in vars(_exceptions).values()
        if inspect.isclass(value) and issubclass(value, Exception)
    ]
    ours = [error for error in errors if error.__module__ == _exceptions.__name__]
    assert len(ours) >= 12
    assert all(issubclass(error, RefereeError) for error in ours), [
        e for e in ours if not issubclass(e, RefereeError)
    ]
    assert all(error.__name__ in (_exceptions.__doc__ or "") for error in ours)


def test_no_error_class_is_defined_outside_the_module() -> None:
    defined_here = {name for name, value in vars(_exceptions).items() if inspect.isclass(value)}
    elsewhere = []
    for path in SERVER.rglob("*.py"):
        if path.name == "_exceptions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}
                if bases & (BUILTIN_ERRORS | defined_here):
                    elsewhere.append(f"{path.relative_to(SERVER)}:{node.lineno} {node.name}")
    assert not elsewhere, "error classes outside oddtrick_referee/_exceptions.py: " + ", ".join(elsewhere)


def test_the_errors_keep_the_builtin_kinds_callers_catch() -> None:
    assert issubclass(_exceptions.StorageError, OSError)
    assert issubclass(_exceptions.DataDirInUse, OSError)
    assert issubclass(_exceptions.DatabaseError, RuntimeError)
    assert issubclass(_exceptions.LadderError, ValueError)
    assert issubclass(_exceptions.HouseBotTaken, _exceptions.LadderError)
    assert issubclass(_exceptions.ReplayError, ValueError)
    assert issubclass(_exceptions.TokensFileError, ValueError)
    assert issubclass(_exceptions.EntrantExited, RuntimeError)
    assert issubclass(_exceptions.OptionError, ValueError)
    assert issubclass(_exceptions.CannotListen, OSError)
    assert issubclass(_exceptions.NoSuchMatch, KeyError)
    assert issubclass(_exceptions.SittingRefused, RuntimeError)


BUILTIN_RAISES: dict[tuple[str, str], tuple[int, str]] = {
    ("competitions/scoring/standings.py", "ValueError"): (
        11,
        "input the runner could not have made: a bug in it",
    ),
    ("competitions/scoring/standings.py", "KeyError"): (
        1,
        "Standings.row, a lookup as a mapping's, of an entry it has",
    ),
    ("competitions/scoring/intervals.py", "ValueError"): (
        2,
        "a quantile outside its domain, as math's functions say it",
    ),
    ("competitions/ladder/ratings.py", "ValueError"): (
        1,
        "a rating method set in code, never from an option",
    ),
    ("replay/pbn.py", "ValueError"): (1, "a pass handed over as a bid"),
    ("replay/json_export.py", "TypeError"): (
        1,
        "a value the export has no JSON form for, as json.dumps says it",
    ),
    ("competitions/entries/launcher.py", "OSError"): (
        1,
        "a C library call's failure with its errno, as os raises it",
    ),
    ("play/matchlog.py", "FileExistsError"): (
        1,
        "a log that exists already, with its errno, as os raises it",
    ),
    ("referee.py", "LookupError"): (1, "seating a bot without idle sessions: callers count them first"),
    ("transport/sessions.py", "LookupError"): (
        1,
        "taking a session that is not idle: callers count them first",
    ),
    ("arena.py", "AssertionError"): (3, "after grpc's abort, which raises: never reached"),
    ("competitions/tournaments/tournament.py", "AssertionError"): (
        1,
        "after a loop that returns or raises: never reached",
    ),
    ("workers/worker.py", "KeyboardInterrupt"): (2, "the worker's stop, raised as Ctrl-C raises it"),
    ("workers/tournament_job.py", "KeyboardInterrupt"): (1, "the worker's stop, passed on as Ctrl-C"),
}
"""(file, builtin error) → how many raises of it, and why each is a bug if it happens, or a
protocol Python asks for, rather than a RefereeError (docs/architecture.md, "Errors")."""


def builtin_raises() -> dict[tuple[str, str], int]:
    """Where ``server/`` raises a builtin error by name (not a re-raise), counted by file and kind."""
    found: dict[tuple[str, str], int] = {}
    for path in sorted(SERVER.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(raised, ast.Name) and raised.id in BUILTIN_ERRORS:
                key = (path.relative_to(SERVER).as_posix(), raised.id)
                found[key] = found.get(key, 0) + 1
    return found


def test_builtin_errors_are_raised_only_where_listed_with_a_reason() -> None:
    """An error raised on purpose for a user or another module is a RefereeError; a builtin
    one is a bug if it happens, or Python's protocol, and is listed here with why."""
    found = builtin_raises()
    listed = {key: count for key, (count, _) in BUILTIN_RAISES.items()}
    unlisted = {key: count for key, count in found.items() if count > listed.get(key, 0)}
    assert not unlisted, (
        f"builtin errors raised where none is listed: {unlisted}; raise a RefereeError "
        "(oddtrick_referee/_exceptions.py), or list it in BUILTIN_RAISES with why it is a bug or a protocol"
    )
    assert found == listed, f"BUILTIN_RAISES lists more than is raised: {listed} != {found}"


def test_the_scan_finds_a_builtin_raise() -> None:
    assert builtin_raises()[("competitions/scoring/standings.py", "ValueError")] == 11
