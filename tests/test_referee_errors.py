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
