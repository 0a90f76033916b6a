"""proto/ may only grow: `buf breaking` against the descriptor of the last release guards it.

proto/released/oddtrick-v1.binpb is the image of oddtrick.v1 as last released
(built with `buf build proto --exclude-source-info -o proto/released/oddtrick-v1.binpb`).
buf's FILE rules fail on anything that would break a bot built from it:
a removed or renumbered field, a changed type, a renamed field, enum value or
message, a reused number. Additions pass. buf comes from the npm registry,
pinned in tools/buf/package-lock.json.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools" / "buf"
RELEASED = ROOT / "proto" / "released" / "oddtrick-v1.binpb"


@pytest.fixture(scope="module")
def buf() -> Path:
    """The pinned buf binary (`npm ci` in tools/buf on first use)."""
    binary = TOOLS / "node_modules" / ".bin" / "buf"
    if not binary.exists():
        if shutil.which("npm") is None:
            if os.environ.get("CI") == "true":
                pytest.fail("the protocol compatibility guard needs npm (for buf) on CI")
            pytest.skip("the protocol compatibility guard needs npm, to install buf")
        result = subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund"], cwd=TOOLS, capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"`npm ci` in {TOOLS} failed:\n{result.stdout}\n{result.stderr}"
    return binary


def breaking(buf: Path, proto: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(buf), "breaking", str(proto), "--against", str(RELEASED)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_proto_today_keeps_every_promise_of_the_last_release(buf: Path) -> None:
    result = breaking(buf, ROOT / "proto")
    assert result.returncode == 0, (
        "this change to proto/ would break existing bots (see proto/README.md, Compatibility):\n"
        + result.stdout
        + result.stderr
    )


def edited(tmp_path: Path, old: str, new: str, file: str = "referee.proto") -> Path:
    """A copy of proto/ with one change to oddtrick/v1/``file``."""
    copy = tmp_path / "proto"
    shutil.copytree(ROOT / "proto" / "oddtrick", copy / "oddtrick")
    path = copy / "oddtrick" / "v1" / file
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return copy


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        (
            "  uint32 time_left_ms = 4;\n  // The match and",
            "  // The match and",
            'field "4" with name "time_left_ms"',
        ),
        (
            "  uint64 request_id = 1;\n  // What is asked.",
            "  uint64 request_id = 20;\n  // What is asked.",
            "request_id",
        ),
        ("  uint32 max_seats = 6;", "  uint64 max_seats = 6;", 'changed type from "uint32" to "uint64"'),
        ("  string bot_version = 2;", "  string client_version = 2;", 'changed name from "bot_version"'),
        ("  REFUSAL_REASON_NOT_LEGAL = 9;", "  REFUSAL_REASON_OTHER = 9;", "REFUSAL_REASON_NOT_LEGAL"),
    ],
    ids=["removed-field", "renumbered-field", "changed-type", "renamed-field", "renamed-enum-value"],
)
def test_a_breaking_change_fails_the_guard(buf: Path, tmp_path: Path, old: str, new: str, said: str) -> None:
    result = breaking(buf, edited(tmp_path, old, new))
    assert result.returncode != 0
    assert said in result.stdout + result.stderr


def test_an_addition_passes_the_guard(buf: Path, tmp_path: Path) -> None:
    added = "  uint64 last_sequence = 8;\n  // Added later: a hint.\n  string hint = 20;\n"
    result = breaking(buf, edited(tmp_path, "  uint64 last_sequence = 8;\n", added))
    assert result.returncode == 0, result.stdout + result.stderr
