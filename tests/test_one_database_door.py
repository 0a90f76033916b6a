"""SQL is storage's: no module of the referee outside ``storage/`` opens a SQLite connection,
and none builds a store in a temporary folder to compute with its SQL.

Read from the source with ``ast`` (nothing is imported), so a failure names the file and
the line. The standings are computed from values (``competitions/scoring/counted.py``); a store
persists and loads them, and a reader that must change nothing (the web page) opens the
file through ``storage.sqlite.read_only``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server" / "oddtrick_referee"
STORAGE = SERVER / "storage"


def _outside_storage() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SERVER.rglob("*.py")):
        if STORAGE not in path.parents:
            yield path, ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported(tree: ast.Module, module: str) -> tuple[set[str], set[str]]:
    """The names ``module`` is bound to here, and the names imported from it."""
    aliases, names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == module)
        elif isinstance(node, ast.ImportFrom) and node.module == module:
            names.update(a.asname or a.name for a in node.names)
    return aliases, names


def sqlite_connections(tree: ast.Module) -> list[int]:
    """Lines that call ``sqlite3.connect`` (however it was imported)."""
    aliases, names = _imported(tree, "sqlite3")
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        through_module = (
            isinstance(func, ast.Attribute)
            and func.attr == "connect"
            and isinstance(func.value, ast.Name)
            and func.value.id in aliases
        )
        if through_module or (isinstance(func, ast.Name) and func.id == "connect" and "connect" in names):
            lines.append(node.lineno)
    return lines


def stores_built_beside_temporary_folders(tree: ast.Module) -> list[int]:
    """Lines that build a store (a ``...Store(...)`` call) in a module that makes temporary folders."""
    aliases, names = _imported(tree, "tempfile")
    if not aliases and not names:
        return []
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id.endswith("Store")
    ]


def test_no_module_outside_storage_opens_a_sqlite_connection() -> None:
    found = [
        f"{path.relative_to(SERVER)}:{line}"
        for path, tree in _outside_storage()
        for line in sqlite_connections(tree)
    ]
    assert found == [], f"open SQLite through storage/ (sqlite.connect, sqlite.read_only, a Store): {found}"


def test_no_store_is_built_in_a_temporary_folder_to_compute_with() -> None:
    found = [
        f"{path.relative_to(SERVER)}:{line}"
        for path, tree in _outside_storage()
        for line in stores_built_beside_temporary_folders(tree)
    ]
    assert found == [], f"compute from values (scoring/counted.py), not a throw-away store: {found}"


def test_the_guards_see_what_they_look_for() -> None:
    """Each guard finds the pattern it refuses, however it is imported."""
    caught = ast.parse(
        "import sqlite3 as s\nimport tempfile\ndb = s.connect('x')\nstore = TournamentStore(p)\n"
    )
    assert sqlite_connections(caught) == [3]
    assert stores_built_beside_temporary_folders(caught) == [4]
    assert sqlite_connections(ast.parse("from sqlite3 import connect\nconnect('x')\n")) == [2]
    assert stores_built_beside_temporary_folders(ast.parse("store = TournamentStore(p)\n")) == []
