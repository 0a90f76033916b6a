"""Wire messages are built in one place: the codec (``oddtrick/_codec*.py``).

Every call of a protobuf message class (``referee_pb2.Welcome(...)``, a name imported from
a ``*_pb2`` module, a nested message) in the SDK and the referee is found with ``ast`` and
resolved against the generated modules, so a failure names the file, the line and the
message built outside the codec. The generated code builds its own; the conformance
kit's probes, whose job is to craft odd messages, are excepted.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

from google.protobuf.message import Message

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk" / "oddtrick", ROOT / "server" / "oddtrick_referee")
CODEC = ("_codec.py", "_codec_protocol.py", "_codec_arena.py", "_codec_hand.py", "_codec_text.py")
EXCEPTED = (ROOT / "sdk" / "oddtrick" / "v1", ROOT / "server" / "oddtrick_referee" / "conformance")


def _pb2_names(tree: ast.Module) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """Names bound to generated modules, and names imported from them (→ module, attribute)."""
    modules: dict[str, str] = {}
    members: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if alias.name.endswith("_pb2"):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                elif node.module.endswith("_pb2"):
                    members[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.endswith("_pb2"):
                    modules[alias.asname or alias.name] = alias.name
    return modules, members


def _chain(node: ast.expr) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(module: str, attributes: list[str]) -> object:
    value: object = importlib.import_module(module)
    for attribute in attributes:
        value = getattr(value, attribute, None)
    return value


def messages_built(path: Path) -> Iterator[tuple[int, str]]:
    """(line, message) for each protobuf message class called in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    modules, members = _pb2_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or (chain := _chain(node.func)) is None:
            continue
        if chain[0] in modules:
            target = _resolve(modules[chain[0]], chain[1:])
        elif chain[0] in members:
            module, name = members[chain[0]]
            target = _resolve(module, [name, *chain[1:]])
        else:
            continue
        if isinstance(target, type) and issubclass(target, Message):
            yield node.lineno, ".".join(chain)


def product_files() -> Iterator[Path]:
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if not any(path.is_relative_to(excepted) for excepted in EXCEPTED):
                yield path


def test_no_wire_message_is_built_outside_the_codec() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line} builds {message}"
        for path in product_files()
        if path.name not in CODEC or path.parent != ROOT / "sdk" / "oddtrick"
        for line, message in messages_built(path)
    ]
    assert not outside, "wire messages built outside the codec (sdk/oddtrick/_codec*.py):\n" + "\n".join(
        outside
    )


def test_the_scan_finds_the_codecs_own_messages() -> None:
    """The codec builds messages of every kind of call the scan resolves, so an empty
    answer elsewhere means something."""
    codec = ROOT / "sdk" / "oddtrick"
    built = {message for name in CODEC for _, message in messages_built(codec / name)}
    assert "referee_pb2.Welcome" in built  # a module's attribute
    assert "arena_pb2.GetServerInfoResponse" in built
    assert "game_pb2.SeatRecord" in built
    assert len(built) > 40
    probes = ROOT / "server" / "oddtrick_referee" / "conformance" / "proxy.py"
    assert list(messages_built(probes)), "the conformance probes craft messages of their own"


def test_an_enum_helper_is_not_a_message(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        "from oddtrick.v1 import referee_pb2\nreferee_pb2.RefusalReason.Name(1)\nreferee_pb2.Leave()\n",
        encoding="utf-8",
    )
    assert list(messages_built(path)) == [(3, "referee_pb2.Leave")]
