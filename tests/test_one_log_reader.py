"""A match log is read in one place: the reader, ``oddtrick/_log_records.py``.

It alone turns a log's lines into records (``read_records``, ``records_from_lines``), so
a new field of the log is a change to one record class. Every module of the SDK and the
referee is read with ``ast``, and a failure names the file, the line and what it does
that only the reader may:

- import the bounded openers of ``oddtrick/_logfile.py`` (``open_log``, ``log_lines``,
  ``read_log_text``, ``unpacked``, ``last_bytes``), which only the reader uses;
- unpack gzip data (``gzip.open``, ``gzip.GzipFile`` to read, ``gzip.decompress``,
  ``zlib.decompress``), which only ``_logfile.py`` does;
- parse a log's lines with ``json.loads`` (of a line, a first or last line, lines joined);
- open a log to read it (``open``, ``.open``, ``.read_text``, ``.read_bytes`` of a path
  that names a log or a ``.jsonl`` file, or in a function about a log).

The few modules that must handle a log's bytes without parsing them are listed below
with why; a probe file with the readers this replaced shows that the scan finds them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "sdk" / "oddtrick", ROOT / "server" / "oddtrick_referee")
GENERATED = ROOT / "sdk" / "oddtrick" / "v1"
READER = ROOT / "sdk" / "oddtrick" / "_log_records.py"
LOGFILE = ROOT / "sdk" / "oddtrick" / "_logfile.py"

OPENERS = {"open_log", "log_lines", "read_log_text", "unpacked", "last_bytes"}
"""What ``_logfile.py`` offers to read a log: the reader's alone."""

EXCEPTED: dict[tuple[str, str], str] = {
    (
        "server/oddtrick_referee/competitions/on_workers/distributed_results.py",
        "imports unpacked",
    ): "a worker's logs travel gzipped in its result: they are unpacked, bounded, to files "
    "as they are, never parsed (the tournament reads them with the reader afterwards)",
    (
        "server/oddtrick_referee/competitions/on_workers/distributed_results.py",
        "reads path.read_bytes() in pack_log",
    ): "packs a log's bytes, as they are, into a worker's result",
    (
        "server/oddtrick_referee/play/matchlog.py",
        "reads path.open('rb') in compress_log",
    ): "the log writer compresses a finished log: it copies its bytes into gzip, never parsing them",
}
"""(file, what it does): why it may."""

_LINE_LIKE = re.compile(r"\b(line|lines|first|last)\b|\.join\(|log", re.IGNORECASE)
"""What the argument of a ``json.loads`` of a log's line looks like."""

_LOG_LIKE = re.compile(r"log|\.jsonl", re.IGNORECASE)


def _reading_mode(call: ast.Call, position: int) -> bool:
    """Whether an ``open`` call opens to read (no mode, or one without w, a or x)."""
    mode: ast.expr | None = call.args[position] if len(call.args) > position else None
    for keyword in call.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    if mode is None:
        return True
    return not (
        isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax")
    )


def _functions(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node → the name of the function it is in (``""`` at module level)."""
    owner: dict[ast.AST, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else name
            owner[child] = inner
            visit(child, inner)

    visit(tree, "")
    return owner


def _call_finding(node: ast.Call, function: str) -> str | None:
    """What a call does that only the reader may, or ``None``."""
    func = node.func
    text = ast.unparse(func)
    if text in ("gzip.open", "gzip.decompress", "zlib.decompress", "zlib.decompressobj"):
        return f"unpacks with {text}()"
    if text == "gzip.GzipFile" and _reading_mode(node, 1):
        return "unpacks with gzip.GzipFile()"
    if text == "json.loads" and node.args and _LINE_LIKE.search(ast.unparse(node.args[0])):
        return f"parses json.loads({ast.unparse(node.args[0])})"
    about_log = _LOG_LIKE.search(function) is not None
    if isinstance(func, ast.Name) and func.id == "open" and node.args and _reading_mode(node, 1):
        target = ast.unparse(node.args[0])
        if about_log or _LOG_LIKE.search(target):
            return f"reads open({target})" + (f" in {function}" if function else "")
    if isinstance(func, ast.Attribute) and func.attr in ("open", "read_text", "read_bytes"):
        receiver = ast.unparse(func.value)
        if receiver in ("os", "io", "gzip", "tarfile", "zipfile"):
            return None
        if func.attr == "open" and not _reading_mode(node, 0):
            return None
        if about_log or _LOG_LIKE.search(receiver):
            shown = f"{receiver}.{func.attr}({', '.join(ast.unparse(a) for a in node.args)})"
            return f"reads {shown}" + (f" in {function}" if function else "")
    return None


def findings(path: Path) -> Iterator[tuple[int, str]]:
    """(line, what it does) for each thing in ``path`` that only the reader may do."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    owner = _functions(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "oddtrick._logfile":
            for alias in node.names:
                if alias.name in OPENERS:
                    yield node.lineno, f"imports {alias.name}"
        elif isinstance(node, ast.Call) and (found := _call_finding(node, owner.get(node, ""))):
            yield node.lineno, found


def product_files() -> Iterator[Path]:
    for source in SOURCES:
        for path in sorted(source.rglob("*.py")):
            if not path.is_relative_to(GENERATED) and path not in (READER, LOGFILE):
                yield path


def test_no_module_but_the_reader_reads_a_match_log() -> None:
    outside = []
    used = set()
    for path in product_files():
        name = path.relative_to(ROOT).as_posix()
        for line, found in findings(path):
            if (name, found) in EXCEPTED:
                used.add((name, found))
            else:
                outside.append(f"{name}:{line} {found}")
    assert not outside, "match logs read outside the reader (sdk/oddtrick/_log_records.py):\n" + "\n".join(
        outside
    )
    assert used == set(EXCEPTED), f"exceptions listed that no longer occur: {set(EXCEPTED) - used}"


PROBE = """
import gzip, json
from oddtrick._logfile import log_lines, read_log_text

def progress_of_lines(lines):
    return [json.loads(line) for line in lines]

def check_log(path):
    first, last = "", ""
    start, end = json.loads(first), json.loads(last)
    records = json.loads("[" + ",".join(lines) + "]")
    with gzip.open(path) as raw:
        raw.read()

def replay(record):
    text = record.log_path.read_text()
    with open(folder / "m.jsonl") as file:
        file.read()

def read_log(path):
    with path.open(encoding="utf-8") as file:
        return file.read()

def write_log(path, line):
    with path.open("a", encoding="utf-8") as file:
        file.write(line)
    settings = json.loads(row["details"])
"""


def test_the_scan_finds_the_readers_it_replaced(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    found = sorted(what for _, what in findings(probe))
    assert found == sorted(
        [
            "imports log_lines",
            "imports read_log_text",
            "parses json.loads(line)",
            "parses json.loads(first)",
            "parses json.loads(last)",
            "parses json.loads('[' + ','.join(lines) + ']')",
            "unpacks with gzip.open()",
            "reads record.log_path.read_text() in replay",
            "reads open(folder / 'm.jsonl') in replay",
            "reads path.open() in read_log",
        ]
    )


def test_the_reader_is_where_the_scan_would_look() -> None:
    """The reader itself does what the scan looks for, so an empty answer elsewhere means something."""
    assert {what for _, what in findings(READER)} >= {"imports log_lines", "parses json.loads(line)"}
