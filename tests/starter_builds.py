"""Building the starter bots of examples/ with each language's own tools, all at once.

Each starter builds with the exact commands of its README. Downloads stay in
each tool's usual cache outside the checkout (Go's module and build caches,
~/.cargo, ~/.m2, ~/.npm), and so does Cargo's target folder, the one build
that takes minutes from cold (``CARGO_TARGET_DIR`` in ``$ODDTRICK_BUILD_CACHE``,
by default ~/.cache/oddtrick-starters): a fresh clone on a machine that built
once only checks that nothing changed. The other outputs stay in the git-ignored
folders of the checkout (gen/, target/, node_modules/, dist/). The builds run in
parallel threads, at low priority, from the moment
pytest has collected a run that includes tests/test_starter_bots.py (see
tests/conftest.py): on two cores the slowest (Rust, then Java) sets the time,
and the tests before them run meanwhile.

``python benchmarks/starter_builds.py [--clean]`` prints how long each build takes.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
PROTO = ROOT / "proto"
BUILD_CACHE = Path(os.environ.get("ODDTRICK_BUILD_CACHE", Path.home() / ".cache" / "oddtrick-starters"))
RUST_TARGET = BUILD_CACHE / "rust-target"


@dataclasses.dataclass(frozen=True)
class Starter:
    name: str
    folder: Path
    tools: tuple[str, ...]
    """Programs the build needs on PATH."""
    steps: tuple[tuple[str, ...], ...]
    command: str
    """How to run the built bot, from the repository root (a tournament's cmd: entry)."""
    outputs: tuple[str, ...]
    """Build outputs: inside ``folder`` (git-ignored) or absolute (a cache outside the
    checkout); --clean removes them."""
    fresh_if: str = ""
    """A file that, when newer than every input, means the build can be skipped
    (for Maven and tsc, which otherwise repeat code generation and compiling)."""
    env: tuple[tuple[str, str], ...] = ()
    """Variables the build steps get beside the inherited environment."""


STARTERS: dict[str, Starter] = {
    starter.name: starter
    for starter in (
        Starter(
            "go",
            EXAMPLES / "go_bot",
            ("go", "protoc"),
            (("go", "generate"), ("go", "build", "-o", "gobot", ".")),
            "examples/go_bot/gobot",
            ("gen", ".bin", "gobot"),
        ),
        Starter(
            "rust",
            EXAMPLES / "rust_bot",
            ("cargo", "protoc"),
            (("cargo", "build", "--locked"),),
            str(RUST_TARGET / "debug" / "rustbot"),
            (str(RUST_TARGET),),
            env=(("CARGO_TARGET_DIR", str(RUST_TARGET)),),
        ),
        Starter(
            "java",
            EXAMPLES / "java_bot",
            ("java", "mvn"),
            (("mvn", "-q", "-B", "package"),),
            "java -jar examples/java_bot/target/javabot.jar",
            ("target",),
            fresh_if="target/javabot.jar",
        ),
        Starter(
            "typescript",
            EXAMPLES / "ts_bot",
            ("node", "npm"),
            (("npm", "ci", "--no-audit", "--no-fund"), ("npm", "run", "build")),
            "node examples/ts_bot/dist/bot.js",
            ("node_modules", "dist", "src/gen"),
            fresh_if="dist/bot.js",
        ),
        Starter(
            "javascript",
            EXAMPLES / "node_bot",
            ("node", "npm"),
            (("npm", "ci", "--no-audit", "--no-fund"),),
            "node examples/node_bot/bot.js",
            ("node_modules",),
        ),
    )
}


@dataclasses.dataclass
class Build:
    starter: Starter
    problem: str = ""
    """Why the bot cannot be used: a missing tool (a skip) or a failed build (a failure)."""
    missing_tool: bool = False
    seconds: float = 0.0
    skipped: bool = False
    done: threading.Event = dataclasses.field(default_factory=threading.Event)


def _newest_input(starter: Starter) -> float:
    outputs = [starter.folder / output for output in starter.outputs]
    newest = 0.0
    for base in (starter.folder, PROTO):
        for path in base.rglob("*"):
            if any(path.is_relative_to(output) for output in outputs) or not path.is_file():
                continue
            newest = max(newest, path.stat().st_mtime)
    return newest


def _npm_installed(starter: Starter) -> bool:
    """node_modules matches package-lock.json (npm writes its own copy there on install)."""
    lock = starter.folder / "package-lock.json"
    installed = starter.folder / "node_modules" / ".package-lock.json"
    return installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime


def _build(build: Build) -> None:
    starter = build.starter
    started = time.monotonic()
    try:
        missing = [tool for tool in starter.tools if shutil.which(tool) is None]
        if missing:
            build.missing_tool = True
            build.problem = f"the {starter.name} starter bot needs {', '.join(missing)} on PATH"
            return
        if starter.fresh_if:
            output = starter.folder / starter.fresh_if
            if output.is_file() and output.stat().st_mtime > _newest_input(starter):
                build.skipped = True
                return
        for step in starter.steps:
            if step[:2] == ("npm", "ci") and _npm_installed(starter):
                continue
            # Low priority: the builds run beside other tests, which must not be slowed.
            result = subprocess.run(
                ("nice", "-n", "10", *step) if shutil.which("nice") else step,
                cwd=starter.folder,
                env={**os.environ, **dict(starter.env)},
                capture_output=True,
                text=True,
                check=False,
                timeout=1200,
            )
            if result.returncode != 0:
                output = (result.stdout + result.stderr)[-4000:]
                build.problem = f"`{' '.join(step)}` in {starter.folder} failed:\n{output}"
                return
    except (OSError, subprocess.TimeoutExpired) as error:
        build.problem = f"building the {starter.name} starter failed: {error}"
    finally:
        build.seconds = time.monotonic() - started
        build.done.set()


BUILDS_KEY = pytest.StashKey[dict[str, "Build"]]()
"""Where tests/conftest.py keeps the builds it started when the run was collected."""


def start_builds(names: list[str] | None = None) -> dict[str, Build]:
    """Start every build at once, each in its own thread; wait on ``Build.done``."""
    builds = {name: Build(STARTERS[name]) for name in names or list(STARTERS)}
    for build in builds.values():
        threading.Thread(
            target=_build, args=(build,), daemon=True, name=f"build {build.starter.name}"
        ).start()
    return builds


def clean(starter: Starter) -> None:
    for output in starter.outputs:
        path = starter.folder / output
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
