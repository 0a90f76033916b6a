"""Every third-party module the shipped code imports comes from a dependency pyproject.toml declares.

A user gets exactly what ``pyproject.toml`` declares, nothing that happened to be
installed on the machine where the tests ran. So every ``import`` in ``sdk/`` and
``server/`` (the sample bots are ``sdk/oddtrick/bots/``), including imports inside
functions, is checked against the declared dependencies, through the installed
distributions' own lists of the modules they provide:

- a module the package imports must come from a *core* dependency, declared
  directly (arriving as some other package's dependency is not enough: that
  package may drop it);
- an *extra* may provide a module only where the import is deferred into a
  function (or guarded by ``except ImportError``) and its file tells the user
  which extra to install
  (``pip install 'oddtrick[strong]'``), so the command says so instead of failing
  with ``ModuleNotFoundError``;
- the tests may also use the ``dev`` extra.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"oddtrick", "oddtrick_referee"}
TEST_HELPERS = {"tests"} | {path.stem for path in (ROOT / "tests").glob("*.py")}


@dataclasses.dataclass(frozen=True)
class Import:
    path: Path
    line: int
    module: str
    """The top-level module name (``psycopg`` for ``from psycopg.rows import dict_row``)."""
    deferred: bool
    """Inside a function, so importing the file does not import the module, or guarded by
    ``except ImportError``, so the module's absence is turned into a message."""

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


@dataclasses.dataclass(frozen=True)
class Declared:
    core: frozenset[str]
    extras: dict[str, frozenset[str]]
    """Each extra's own distributions (a reference to another extra is resolved)."""


def normalized(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalized(re.split(r"[\s\[<>=!~;]", requirement.strip(), maxsplit=1)[0])


def declared_dependencies(pyproject: Path) -> Declared:
    project = tomllib.loads(pyproject.read_text())["project"]
    own = normalized(project["name"])
    core = frozenset(requirement_name(item) for item in project["dependencies"])
    raw = project.get("optional-dependencies", {})

    def resolve(extra: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        names: set[str] = set()
        for item in raw[extra]:
            name = requirement_name(item)
            if name == own:
                for referenced in re.findall(r"\[([^\]]+)\]", item)[0].split(","):
                    if referenced.strip() not in seen:
                        names |= resolve(referenced.strip(), seen | {extra})
            else:
                names.add(name)
        return frozenset(names)

    return Declared(core, {extra: resolve(extra) for extra in raw})


def imports_in(path: Path) -> Iterator[Import]:
    """Every absolute import in ``path``, with whether it is deferred or guarded."""
    tree = ast.parse(path.read_text(), filename=str(path))
    deferred_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or (
            isinstance(node, ast.Try) and any(catches_import_error(handler) for handler in node.handlers)
        ):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    deferred_lines.add(inner.lineno)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            yield Import(path, node.lineno, module.split(".")[0], node.lineno in deferred_lines)


def catches_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(
        isinstance(name, ast.Name) and name.id in {"ImportError", "ModuleNotFoundError"} for name in names
    )


def python_files(*folders: str) -> list[Path]:
    return sorted(path for folder in folders for path in (ROOT / folder).rglob("*.py"))


def third_party(found: Import) -> bool:
    return found.module not in sys.stdlib_module_names and found.module not in FIRST_PARTY


@functools.cache
def installed_modules() -> dict[str, set[str]]:
    """Top-level module -> the installed distributions that provide it."""
    return {
        module: {normalized(name) for name in names}
        for module, names in importlib.metadata.packages_distributions().items()
    }


def providers(module: str) -> set[str]:
    return installed_modules().get(module, set())


def undeclared_in_shipped_code(declared: Declared) -> list[str]:
    problems = []
    for path in python_files("sdk", "server"):
        text = path.read_text()
        for found in filter(third_party, imports_in(path)):
            provided_by = providers(found.module)
            if not provided_by:
                problems.append(
                    f"{found.where()}: imports {found.module!r}, which no installed package provides"
                )
            elif provided_by & declared.core:
                continue
            else:
                extras = [
                    name for name, dists in declared.extras.items() if provided_by & dists and name != "dev"
                ]
                advised = [extra for extra in extras if f"oddtrick[{extra}]" in text]
                if found.deferred and advised:
                    continue
                if extras:
                    problems.append(
                        f"{found.where()}: imports {found.module!r} from the {extras[0]!r} extra "
                        f"{'at import time' if not found.deferred else 'without saying'}: defer it into "
                        f"a function and tell the user to pip install 'oddtrick[{extras[0]}]', "
                        "or make it a core dependency"
                    )
                else:
                    problems.append(
                        f"{found.where()}: imports {found.module!r} (from {', '.join(sorted(provided_by))}), "
                        "which pyproject.toml does not declare as a core dependency"
                    )
    return problems


def test_every_import_of_the_package_is_declared() -> None:
    problems = undeclared_in_shipped_code(declared_dependencies(ROOT / "pyproject.toml"))
    assert not problems, "\n".join(problems)


def test_every_import_of_the_tests_is_declared() -> None:
    declared = declared_dependencies(ROOT / "pyproject.toml")
    allowed = declared.core | declared.extras["dev"]
    problems = []
    for path in python_files("tests"):
        for found in filter(third_party, imports_in(path)):
            if found.module in TEST_HELPERS:
                continue
            if not providers(found.module) & allowed:
                problems.append(f"{found.where()}: imports {found.module!r}, not declared in core or [dev]")
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_missing_declaration(tmp_path: Path) -> None:
    """Without openskill and psycopg declared (as once happened), the check names both."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    kept = [
        item
        for item in pyproject["project"]["dependencies"]
        if requirement_name(item) not in {"openskill", "psycopg", "anyio"}
    ]
    lines = "".join(f"    {item!r},\n" for item in kept)
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "oddtrick"\ndependencies = [\n{lines}]\n'
        '[project.optional-dependencies]\nstrong = ["endplay>=0.5.12"]\n'
    )
    problems = "\n".join(undeclared_in_shipped_code(declared_dependencies(tmp_path / "pyproject.toml")))
    assert "ratings.py" in problems
    assert "'openskill'" in problems
    assert "database.py" in problems
    assert "'psycopg'" in problems
    assert "'anyio'" in problems
