"""The rules package stays pure: standard library only, and no I/O, networking or event loop."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import oddtrick.rules

RULES_DIR = Path(oddtrick.rules.__file__).resolve().parent
MODULES = sorted(RULES_DIR.glob("*.py"))

ALLOWED = {
    "__future__",
    "abc",
    "array",
    "bisect",
    "collections",
    "collections.abc",
    "contextlib",
    "dataclasses",
    "enum",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "re",
    "secrets",  # fresh seeds
    "string",
    "struct",
    "types",
    "typing",
}
"""Pure standard-library modules the rules may use."""

FORBIDDEN = {
    "asyncio",
    "google",
    "grpc",
    "io",
    "os",
    "pathlib",
    "random",
    "socket",
    "sqlite3",
    "subprocess",
    "threading",
    "trio",
}
"""Named here so that widening ALLOWED by mistake cannot let these in."""


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                names.add("oddtrick.rules")  # a relative import stays inside the package
            elif node.module is not None:
                names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("<dynamic __import__>")
    return names


def test_the_package_has_modules_to_check() -> None:
    assert {path.name for path in MODULES} >= {"__init__.py", "_state.py", "_dealing.py"}


@pytest.mark.parametrize("path", MODULES, ids=[path.name for path in MODULES])
def test_rules_module_imports_only_allowed_modules(path: Path) -> None:
    for name in imported_modules(path):
        if name == "oddtrick.rules" or name.startswith("oddtrick.rules."):
            continue
        top = name.split(".")[0]
        assert top not in FORBIDDEN, f"{path.name} imports {name}"
        assert name in ALLOWED, f"{path.name} imports {name}, which is not on the allow-list"


def test_the_forbidden_modules_are_not_allowed() -> None:
    assert not {name.split(".")[0] for name in ALLOWED} & FORBIDDEN
    assert "secrets" in ALLOWED


def test_the_import_scan_sees_every_kind_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nimport grpc.aio as g\nfrom trio import run\nfrom . import _cards\n"
        "def f():\n    import socket\n    __import__('random')\n",
        encoding="utf-8",
    )
    assert imported_modules(sample) == {
        "os",
        "grpc.aio",
        "trio",
        "oddtrick.rules",
        "socket",
        "<dynamic __import__>",
    }


HEAVY_PROBE = (
    "import sys\n"
    "heavy = ('grpc', 'trio', 'asyncio', 'socket', 'sqlite3')\n"
    "bad = sorted(m for m in sys.modules\n"
    "             if m.split('.')[0] in heavy or m.startswith('google.protobuf'))\n"
    "print(','.join(bad))\n"
)

ALONE = (
    "import importlib.util, sys, types\n"
    "# Load oddtrick.rules without running sdk/oddtrick/__init__.py (the SDK around it).\n"
    "spec = importlib.util.find_spec('oddtrick')\n"
    "package = types.ModuleType('oddtrick')\n"
    "package.__path__ = list(spec.submodule_search_locations)\n"
    "sys.modules['oddtrick'] = package\n"
)


def heavy_modules_after(code: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-c", code + HEAVY_PROBE],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    return [name for name in run.stdout.strip().split(",") if name]


def test_the_rules_package_loads_no_grpc_trio_or_protobuf() -> None:
    assert heavy_modules_after(ALONE + "import oddtrick.rules\nassert oddtrick.rules.GameState\n") == []


def test_importing_oddtrick_rules_loads_no_grpc_trio_or_protobuf() -> None:
    """As users write it: the parent package (the SDK) must not drag the client in either."""
    heavy = heavy_modules_after("import oddtrick.rules\n")
    assert heavy == [], (
        f"'import oddtrick.rules' loads {', '.join(heavy[:5])}; the rules alone load "
        f"{heavy_modules_after(ALONE + 'import oddtrick.rules' + chr(10)) or 'nothing heavy'}"
    )


def test_the_subprocess_check_would_notice_a_heavy_import() -> None:
    """The same probe reports a module when it is loaded, so an empty answer means something."""
    code = "import sys, asyncio\nprint('asyncio' in sys.modules)\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert run.stdout.strip() == "True"
