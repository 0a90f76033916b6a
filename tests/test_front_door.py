"""Competitions, commands and the web use the referee through its front door only.

``front_door.FrontDoor`` lists what a running referee offers; everything else ``Referee``
holds (its lobby, its match index, its live tables, its nursery, its settings) is its own.
Read from the source with ``ast``: every attribute taken from something called
``referee`` (``referee.x``, ``self.referee.x``, ``self._referee.x``, ``ladder.referee.x``)
outside the referee's own modules must be a member of the front door, and a failure names
the file and the line. The members are read from the two classes themselves, so a
collaborator added to ``Referee`` is private until the front door declares it.

Tests are not read: they look inside the referee on purpose.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk", ROOT / "server")
PACKAGE = ROOT / "server" / "oddtrick_referee"

OWN = {
    PACKAGE / "referee.py": "the referee itself",
    PACKAGE / "arena.py": "the referee's Arena service, which it registers beside the bots' (ArenaSource)",
    PACKAGE / "front_door.py": "the front door",
}
"""The referee's own modules: they may use its collaborators."""

EXCEPTIONS: dict[tuple[str, str], str] = {}
"""(file, attribute) → why that file still reaches past the front door, until it is changed."""


def _class(path: Path, name: str) -> ast.ClassDef:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == name)


def members(cls: ast.ClassDef) -> set[str]:
    """Methods, properties, class attributes, and what ``__init__`` sets on ``self``."""
    found: set[str] = set()
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.add(node.target.id)
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            found.add(node.attr)
    return found


REFEREE = members(_class(PACKAGE / "referee.py", "Referee"))
DOOR = members(_class(PACKAGE / "front_door.py", "FrontDoor"))


def _receiver(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def reaches_past_the_door(source: str, filename: str) -> list[tuple[int, str]]:
    """(line, attribute) of every referee member used in ``source`` that the front door lacks."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Attribute):
            continue
        receiver = _receiver(node.value)
        if receiver is None or not receiver.lstrip("_").endswith("referee"):
            continue
        if node.attr in DOOR and not node.attr.startswith("_"):
            continue
        if node.attr in REFEREE or node.attr.startswith("_"):
            found.append((node.lineno, node.attr))
    return sorted(found)


def test_nothing_outside_the_referee_touches_what_its_front_door_does_not_offer() -> None:
    problems = []
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if path in OWN or path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
                continue
            where = str(path.relative_to(ROOT))
            for line, attribute in reaches_past_the_door(path.read_text(encoding="utf-8"), where):
                if (where, attribute) not in EXCEPTIONS:
                    problems.append(f"{where}:{line}: .{attribute} is not on the referee's front door")
    assert not problems, (
        "code outside the referee reaches past front_door.FrontDoor (use a member it declares, "
        "or declare one):\n" + "\n".join(problems)
    )


def test_every_listed_exception_is_still_needed() -> None:
    used = {
        (where, attribute)
        for where, _ in EXCEPTIONS
        for _, attribute in reaches_past_the_door((ROOT / where).read_text(encoding="utf-8"), where)
    }
    assert set(EXCEPTIONS) <= used, f"listed but no longer reaching past the door: {set(EXCEPTIONS) - used}"


def test_the_referee_has_every_member_of_its_front_door() -> None:
    assert not DOOR - REFEREE, f"declared on the front door but missing on Referee: {DOOR - REFEREE}"


def test_the_scan_finds_a_reach_past_the_door_and_only_that() -> None:
    """The scan sees the lobby, the index and a private member under every spelling of the
    referee, and lets a competition's own store and the front door's members through."""
    source = "\n".join(
        [
            "referee.lobby.wait_for(needs, game)",
            "self.referee.store.count()",
            "self._referee._nursery.cancel_scope",
            "ladder.referee.live",
            "self.store.finished_runs(x)",
            "referee.release_set(set_id)",
            "self.referee.wait_for_seats(needs, game)",
        ]
    )
    assert reaches_past_the_door(source, "example.py") == [
        (1, "lobby"),
        (2, "store"),
        (3, "_nursery"),
        (4, "live"),
    ]
    assert {"lobby", "store", "live", "settings"} <= REFEREE - DOOR
    assert {"play_match", "release_set", "connected", "wait_for_seats"} <= DOOR
