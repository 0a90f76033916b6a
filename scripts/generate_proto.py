#!/usr/bin/env python3
"""Regenerate the Python code of the oddtrick protocol from proto/.

Compiles every .proto file under proto/ with grpcio-tools' protoc and the
mypy-protobuf plugins into sdk/, so that proto/oddtrick/v1/cards.proto becomes
sdk/oddtrick/v1/cards_pb2.py (+ .pyi, _pb2_grpc.py, _pb2_grpc.pyi), importable
as ``oddtrick.v1.cards_pb2``. Generated files that no .proto produces any more
are removed. sdk/oddtrick/v1/__init__.py is hand-written; it is created if
missing and otherwise left alone.

    python scripts/generate_proto.py           # regenerate
    python scripts/generate_proto.py --check   # exit 1 if sdk/ is stale

Needs the dev extras (grpcio-tools, mypy-protobuf). The output depends only on
the .proto files and the versions of those two packages.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
OUT_ROOT = ROOT / "sdk"
PACKAGE_INIT = OUT_ROOT / "oddtrick" / "v1" / "__init__.py"
PACKAGE_INIT_TEXT = '"""The oddtrick.v1 protocol: code generated from proto/oddtrick/v1."""\n'
# The files protoc and its plugins write for each .proto file.
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")
PLUGINS = ("protoc-gen-mypy", "protoc-gen-mypy_grpc")


class GenerationError(Exception):
    """protoc or one of its plugins could not run or failed."""


def proto_files() -> list[str]:
    """Every .proto under proto/, relative to it, sorted (so output is stable)."""
    return sorted(path.relative_to(PROTO_ROOT).as_posix() for path in PROTO_ROOT.rglob("*.proto"))


def find_plugin(name: str) -> str:
    """The plugin executable: beside this Python interpreter first, then on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        msg = f"{name} not found; install mypy-protobuf (pip install -e '.[dev]')"
        raise GenerationError(msg)
    return found


def run_protoc(out_dir: Path) -> None:
    """Compile every .proto into out_dir (its package folders are created by protoc)."""
    try:
        from grpc_tools import protoc  # type: ignore[import-untyped]  # dev-only, imported when needed
    except ImportError as exc:
        msg = "grpc_tools not found; install grpcio-tools (pip install -e '.[dev]')"
        raise GenerationError(msg) from exc

    files = proto_files()
    if not files:
        msg = f"no .proto files under {PROTO_ROOT}"
        raise GenerationError(msg)
    well_known = resources.files("grpc_tools") / "_proto"
    args = [
        "grpc_tools.protoc",  # argv[0], ignored
        f"-I{PROTO_ROOT}",
        f"-I{well_known}",
        "--fatal_warnings",
        *(f"--plugin={name}={find_plugin(name)}" for name in PLUGINS),
        f"--python_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_out={out_dir}",
        "--mypy_opt=quiet",
        f"--mypy_grpc_out={out_dir}",
        "--mypy_grpc_opt=quiet",
        *files,
    ]
    if protoc.main(args) != 0:
        msg = "protoc failed (see the messages above)"
        raise GenerationError(msg)


def is_generated(path: Path) -> bool:
    return path.is_file() and path.name.endswith(GENERATED_SUFFIXES)


def generated_files(root: Path) -> dict[str, bytes]:
    """Generated files under root, by path relative to it, with their contents."""
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if is_generated(path)
    }


def compare(fresh: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """Files of sdk/ to write (missing or different) and to delete (no .proto makes them)."""
    to_write = [
        rel
        for rel, content in fresh.items()
        if not (OUT_ROOT / rel).is_file() or (OUT_ROOT / rel).read_bytes() != content
    ]
    package_dirs = {(OUT_ROOT / rel).parent for rel in fresh}
    to_delete = sorted(
        path.relative_to(OUT_ROOT).as_posix()
        for folder in package_dirs
        if folder.is_dir()
        for path in folder.iterdir()
        if is_generated(path) and path.relative_to(OUT_ROOT).as_posix() not in fresh
    )
    return to_write, to_delete


def generate() -> dict[str, bytes]:
    """Compile into a temporary folder and return what was generated."""
    with tempfile.TemporaryDirectory(prefix="oddtrick-proto-") as tmp:
        run_protoc(Path(tmp))
        return generated_files(Path(tmp))


def display(rel: str) -> str:
    return (OUT_ROOT / rel).relative_to(ROOT).as_posix()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=(
            "Regenerate sdk/oddtrick/v1 (the *_pb2.py, *_pb2_grpc.py and .pyi files)"
            " from every .proto file under proto/."
        ),
        epilog=(
            "Exit status: 0 done (or, with --check, up to date); 1 with --check, the"
            " generated code is stale; 2 protoc or a plugin failed or is missing."
        ),
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help=(
            "generate into a temporary folder, change nothing, and exit 1 listing every"
            " generated file of sdk/ that is missing, different or no longer generated"
        ),
    )
    options = parser.parse_args(argv)

    try:
        fresh = generate()
    except GenerationError as exc:
        print(f"generate_proto: {exc}", file=sys.stderr)
        return 2
    to_write, to_delete = compare(fresh)

    if options.check:
        if not to_write and not to_delete:
            print(f"generate_proto: {len(fresh)} generated files are up to date")
            return 0
        print("generate_proto: stale generated code; run python scripts/generate_proto.py")
        for rel in to_write:
            state = "differs" if (OUT_ROOT / rel).exists() else "missing"
            print(f"  {display(rel)} ({state})")
        for rel in to_delete:
            print(f"  {display(rel)} (no .proto generates it)")
        return 1

    for rel in to_write:
        target = OUT_ROOT / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fresh[rel])
        print(f"wrote {display(rel)}")
    for rel in to_delete:
        (OUT_ROOT / rel).unlink()
        print(f"removed {display(rel)}")
    if not PACKAGE_INIT.exists():
        PACKAGE_INIT.write_text(PACKAGE_INIT_TEXT, encoding="utf-8")
        print(f"wrote {PACKAGE_INIT.relative_to(ROOT).as_posix()}")
    if not to_write and not to_delete:
        print(f"generate_proto: {len(fresh)} generated files were already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
