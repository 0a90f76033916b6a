"""No function in server/ or sdk/ is longer than 80 lines: a reader holds one on a screen.

Read with ``ast``: a function's length runs from its first decorator (or ``def``) to its
last line, docstring and comments included; a nested function counts inside the one that
holds it, and by itself. The few listed in :data:`EXCEPTIONS` wait, each for a reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = (ROOT / "server", ROOT / "sdk")
LIMIT = 80

EXCEPTIONS: dict[tuple[str, str], str] = {}
"""(file, function) → why it is still longer than the limit."""


def long_functions(source: str, filename: str) -> list[tuple[int, str, int]]:
    """(line, name, length) of every function in ``source`` longer than :data:`LIMIT`."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            assert node.end_lineno is not None
            length = node.end_lineno - first + 1
            if length > LIMIT:
                found.append((node.lineno, node.name, length))
    return sorted(found)


def _everything() -> dict[tuple[str, str], tuple[int, int]]:
    found = {}
    for path in sorted(path for folder in CHECKED for path in folder.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        where = str(path.relative_to(ROOT))
        for line, name, length in long_functions(path.read_text(encoding="utf-8"), where):
            found[where, name] = (line, length)
    return found


def test_no_function_in_the_server_or_the_sdk_is_longer_than_80_lines() -> None:
    too_long = [
        f"{where}:{line}: {name} is {length} lines (split it into named helpers)"
        for (where, name), (line, length) in _everything().items()
        if (where, name) not in EXCEPTIONS
    ]
    assert not too_long, f"functions over {LIMIT} lines:\n" + "\n".join(too_long)


def test_every_listed_exception_is_still_too_long() -> None:
    still = set(_everything())
    assert set(EXCEPTIONS) <= still, f"short enough now, remove from EXCEPTIONS: {set(EXCEPTIONS) - still}"


def test_the_count_takes_decorators_and_nested_functions() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(LIMIT - 2))
    exactly = f"@decorator\ndef fits():\n{body}\n"
    over = f"@decorator\ndef outer():\n    def inner():\n{body.replace('    ', '        ')}\n"
    assert long_functions(exactly, "fits.py") == []
    assert long_functions(over, "over.py") == [(2, "outer", LIMIT + 1)]
