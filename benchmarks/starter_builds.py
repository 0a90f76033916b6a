"""How long the starter bots of examples/ take to build, all at once, as the tests build them.

Run ``python benchmarks/starter_builds.py`` for the warm figures (what a test
run adds when nothing changed) or with ``--clean`` to remove every build output
first (gen/, target/, node_modules/, dist/): the cold figures of a fresh
clone, with the toolchains' own download and build caches (Go's, ~/.cargo,
~/.m2, ~/.npm) as they are on this machine. Prints one line per language and
the wall time of all of them together.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from starter_builds import STARTERS, clean, start_builds


def main() -> int:
    if "--clean" in sys.argv:
        for starter in STARTERS.values():
            clean(starter)
    started = time.monotonic()
    builds = start_builds()
    for name, build in builds.items():
        build.done.wait()
        state = (
            "up to date" if build.skipped else (build.problem.splitlines()[0] if build.problem else "built")
        )
        print(f"{name}_build_s: {build.seconds:.1f}  ({state})")
    print(f"all_builds_wall_s: {time.monotonic() - started:.1f}  (in parallel, {os.cpu_count()} cores)")
    return 1 if any(build.problem for build in builds.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
