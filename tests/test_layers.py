"""The code imports downward only: rules → SDK → the referee's ground floor → play →
referee → competitions → web → commands, with no import circle anywhere.

Read from the source with ``ast`` (nothing is imported), so a failure names the file, the
line and the import that crosses a layer or closes a circle. Imports under
``TYPE_CHECKING`` and imports inside functions count like any other: a circle that only
type-checking or a deferred import keeps importable is still a circle to a reader. An
import inside a function is refused too, but for the few deferrals listed in
:data:`DEFERRED`, each a command (or the SDK's lazy attribute) that keeps an optional
part from loading until it is used, and for the SDK's imports of the referee, which is
installed apart: each is inside a function a command defers to (its handler, an option's
type, what they call), or listed in :data:`SDK_USES_OF_THE_REFEREE` with why.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk", ROOT / "server")
FIRST_PARTY = ("oddtrick", "oddtrick_referee")

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("rules", ("oddtrick.rules",)),
    ("sdk", ("oddtrick",)),
    (
        "ground",
        (
            "oddtrick_referee._exceptions",
            "oddtrick_referee.collector",
            "oddtrick_referee.command_runner",
            "oddtrick_referee.storage",
            "oddtrick_referee.token_scheme",
            "oddtrick_referee.transport",
        ),
    ),
    ("play", ("oddtrick_referee.play",)),
    ("referee", ("oddtrick_referee.referee", "oddtrick_referee")),
    (
        "competitions",
        (
            "oddtrick_referee.competitions",
            "oddtrick_referee.conformance",
            "oddtrick_referee.replay",
            "oddtrick_referee.workers",
        ),
    ),
    ("web", ("oddtrick_referee.web",)),
    (
        "commands",
        (
            "oddtrick_referee.cli",
            "oddtrick_referee.serve",
            "oddtrick_referee.options",
            "oddtrick_referee.competitions.tournaments.demo",
            "oddtrick_referee.competitions.people.play_command",
            "oddtrick_referee.competitions.tournaments.tournament_command",
            "oddtrick_referee.competitions.ladder.cli",
            "oddtrick_referee.conformance.cli",
            "oddtrick_referee.replay.cli",
            "oddtrick_referee.web.cli",
            "oddtrick_referee.workers.cli",
        ),
    ),
)
"""Bottom first. A module belongs to the layer of the longest prefix that names it."""

DEFERRED: dict[tuple[str, str], str] = {
    ("oddtrick", "oddtrick._run"): "the client (gRPC, asyncio) loads on first use: the rules stay light",
    ("oddtrick", "oddtrick._tls"): "as the client: TLS options load on first use",
    ("oddtrick._cli", "oddtrick._run"): "`oddtrick bot` loads the client only when it runs a bot",
    ("oddtrick._cli", "oddtrick._watch"): "`oddtrick watch` loads the watcher only when it watches",
    (
        "oddtrick._cli",
        "oddtrick._tls",
    ): "gRPC's credentials load in the commands that connect: `--version` is instant",
    ("oddtrick._strong_cli", "oddtrick.analysis"): "`oddtrick analyze` needs the strong extra (endplay)",
    ("oddtrick._strong_cli", "oddtrick._run"): "`oddtrick sprt` loads the bots it compares only when it runs",
    ("oddtrick._strong_cli", "oddtrick.duplicate"): "`oddtrick sprt` plays duplicate pairs only when it runs",
    ("oddtrick._strong_cli", "oddtrick.sprt"): "`oddtrick sprt` needs the strong extra for its bots",
    ("oddtrick_referee.workers.cli", "oddtrick.analysis"): (
        "`oddtrick analyze --results` renders with the strong extra (endplay); --json needs none"
    ),
    ("oddtrick_referee.workers.kinds", "oddtrick.analysis"): (
        "an analysis job needs the strong extra (endplay), only on the workers that do one"
    ),
    ("oddtrick_referee.competitions.scoring.dd_skill_logs", "oddtrick.analysis"): (
        "the double-dummy skill needs the strong extra (endplay)"
    ),
    ("oddtrick_referee.web.analysis", "oddtrick.double_dummy"): (
        "the replay page's analysis needs the strong extra (endplay); the page says so without it"
    ),
    ("oddtrick_referee.web.deal_table", "oddtrick.double_dummy"): (
        "a traveller's double-dummy table needs the strong extra (endplay); the page says so without it"
    ),
    ("oddtrick_referee.web.deal_table", "oddtrick.analysis"): (
        "a Contract Whist traveller's par needs the strong extra (endplay)"
    ),
    ("oddtrick_referee.replay.play_on_players", "oddtrick.bots.pimc_bot"): (
        "playing a hand on with pimc needs the strong extra (endplay); the other bots do not"
    ),
    ("oddtrick_referee.replay.play_on_players", "oddtrick.double_dummy"): (
        "playing a hand on double dummy needs the strong extra (endplay); the other bots do not"
    ),
    ("oddtrick_referee.competitions.tournaments.tournament_command", "oddtrick.analysis"): (
        "`--dd-skill` needs the strong extra (endplay)"
    ),
}
"""(module, imported module) → why the import waits for the command that needs it."""

SDK_USES_OF_THE_REFEREE: dict[tuple[str, str], str] = {
    ("oddtrick._cli", "build_parser"): (
        "the referee's commands join `oddtrick`'s parser when the referee is installed "
        "(an ImportError there: the SDK alone, with its own commands only)"
    ),
}
"""(SDK module, function) → why a function that is no command's imports the referee.

The SDK is installed without the referee, so it imports the referee only inside a function
that a command defers to: a command's handler (``set_defaults(handler=F)``), an option's
type (``type=F``), or a function of the module they call, so that a command of the
referee's (or an option of one) loads it when it runs, and nothing else does."""


@dataclasses.dataclass(frozen=True)
class Import:
    module: str
    target: str
    path: Path
    line: int
    in_function: bool
    function: str = ""
    """The module-level function the import is in ("" at the top of the module)."""

    def where(self) -> str:
        inside = f" in {self.function}" if self.function else ""
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.module} imports {self.target}{inside})"


def module_paths() -> dict[str, Path]:
    found = {}
    for source in SOURCES:
        for path in source.rglob("*.py"):
            parts = list(path.relative_to(source).with_suffix("").parts)
            if parts[0] not in FIRST_PARTY or parts[-1].endswith(("_pb2", "_pb2_grpc")):
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = module_paths()


def _known(name: str) -> str | None:
    """The first-party module ``name`` is, or is inside (``pkg.module.attr`` → ``pkg.module``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def imports_of(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    in_function = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    outermost = {
        id(node): function.name
        for function in tree.body
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
    }
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            names = [source, *(f"{source}.{alias.name}" for alias in node.names)]
        for name in names:
            if name.split(".")[0] not in FIRST_PARTY:
                continue
            target = _known(name)
            if target is not None and target != module:
                yield Import(
                    module, target, path, node.lineno, id(node) in in_function, outermost.get(id(node), "")
                )


IMPORTS = sorted(
    {(i.module, i.target, i.line): i for m, p in MODULES.items() for i in imports_of(m, p)}.values(),
    key=lambda i: (i.module, i.line, i.target),
)


def layer_of(module: str) -> int:
    best, depth = -1, -1
    for number, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = number, len(prefix)
    assert best >= 0, f"{module} is in no layer: add it to LAYERS"
    return best


def command_functions(tree: ast.Module) -> set[str]:
    """The module-level functions a command defers to: the handlers of its commands
    (``set_defaults(handler=F)``), the types of their options (``type=F``), and every
    function of the module these call, and those call, and so on."""
    functions = {
        node.name: node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    found = {
        keyword.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for keyword in node.keywords
        if keyword.arg in ("handler", "type") and isinstance(keyword.value, ast.Name)
    } & set(functions)
    waiting = list(found)
    while waiting:
        for node in ast.walk(functions[waiting.pop()]):
            called = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else ""
            if called in functions and called not in found:
                found.add(called)
                waiting.append(called)
    return found


COMMANDS = {
    module: command_functions(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    for module, path in MODULES.items()
    if module.split(".")[0] == "oddtrick"
}


def sdk_uses_the_referee(i: Import) -> bool:
    return i.module.split(".")[0] == "oddtrick" and i.target.split(".")[0] == "oddtrick_referee"


def deferred_by_a_command(i: Import) -> bool:
    """An SDK import of the referee inside a function a command defers to (or listed)."""
    return sdk_uses_the_referee(i) and (
        (i.in_function and i.function in COMMANDS[i.module])
        or (i.module, i.function) in SDK_USES_OF_THE_REFEREE
    )


def allowed(i: Import) -> bool:
    """An import that may go up a layer, or wait inside a function."""
    return (i.module, i.target) in DEFERRED or deferred_by_a_command(i)


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_go_down_the_layers_only() -> None:
    upward = [
        f"{i.where()}: {LAYERS[layer_of(i.module)][0]} must not import {LAYERS[layer_of(i.target)][0]}"
        for i in IMPORTS
        if layer_of(i.target) > layer_of(i.module) and not allowed(i)
    ]
    assert not upward, "imports that cross a layer upward:\n" + "\n".join(upward)


def find_circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle (as a path that comes back to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(edges.get(module, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (circle := visit(target)):
                return circle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(edges):
        if module not in state and (circle := visit(module)):
            return circle
    return None


def test_there_is_no_import_circle() -> None:
    edges: dict[str, set[str]] = {}
    lines: dict[tuple[str, str], Import] = {}
    for i in IMPORTS:
        edges.setdefault(i.module, set()).add(i.target)
        lines.setdefault((i.module, i.target), i)
    circle = find_circle(edges)
    assert circle is None, "an import circle:\n" + "\n".join(
        lines[a, b].where() for a, b in itertools.pairwise(circle)
    )


def test_no_first_party_import_waits_inside_a_function_unless_a_command_defers_it() -> None:
    inside = [i.where() for i in IMPORTS if i.in_function and not allowed(i)]
    assert not inside, "imports inside functions (move them to the top of the module):\n" + "\n".join(inside)


def test_every_listed_deferral_is_still_made() -> None:
    made = {(i.module, i.target) for i in IMPORTS if i.in_function}
    assert set(DEFERRED) <= made, f"listed but no longer deferred: {sorted(set(DEFERRED) - made)}"
    uses = {(i.module, i.function) for i in IMPORTS if sdk_uses_the_referee(i)}
    listed = set(SDK_USES_OF_THE_REFEREE)
    assert listed <= uses, f"listed but no longer importing the referee: {sorted(listed - uses)}"


def test_the_sdk_imports_the_referee_only_where_a_command_defers_to_it() -> None:
    """The SDK is installed without the referee: an import of it at the top of an SDK
    module, or in a function no command defers to, would fail (or load the referee) for
    every user of the SDK."""
    refused = [i.where() for i in IMPORTS if sdk_uses_the_referee(i) and not deferred_by_a_command(i)]
    assert not refused, (
        "the SDK imports the referee outside a function a command defers to (import it in the "
        "command's handler, or list the function in SDK_USES_OF_THE_REFEREE with why):\n" + "\n".join(refused)
    )


def test_the_sdk_rule_knows_a_command_from_any_function() -> None:
    """The rule finds a handler, an option's type and what they call, and nothing else."""
    tree = ast.parse(
        """
def add(commands):
    command = commands.add_parser("x")
    command.add_argument("--clock", type=_clock)
    command.set_defaults(handler=_x)

def _clock(text): ...
def _x(args): return _helper(args)
def _helper(args): ...
def _other(): ...
"""
    )
    assert command_functions(tree) == {"_clock", "_x", "_helper"}
    assert {i.function for i in IMPORTS if sdk_uses_the_referee(i)} >= {"_sprt", "_clock", "build_parser"}


@pytest.mark.parametrize(
    ("edges", "circle"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, ["a", "b", "c", "a"]),
        ({"a": {"b"}, "b": {"c"}}, None),
    ],
)
def test_the_circle_finder_finds_a_circle_and_only_a_circle(
    edges: dict[str, set[str]], circle: list[str] | None
) -> None:
    assert find_circle(edges) == circle


def test_the_scan_sees_imports_of_every_kind() -> None:
    """The scan finds a plain import, a relative one, one under TYPE_CHECKING and one inside
    a function, so a clean result means something."""
    seen = {(i.module, i.target) for i in IMPORTS}
    assert ("oddtrick._cli", "oddtrick_referee.cli") in seen  # inside a function
    assert ("oddtrick_referee.web.live", "oddtrick_referee.referee") in seen  # under TYPE_CHECKING
    assert ("oddtrick_referee.cli", "oddtrick_referee.options") in seen
    assert len(seen) > 300
