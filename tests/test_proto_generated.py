"""The generated protocol code must be exactly what proto/ produces today."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_code_matches_the_proto_files():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "generate_proto.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, (
        "generated code in sdk/oddtrick/v1 is stale; run `python scripts/generate_proto.py`\n"
        + result.stdout
        + result.stderr
    )


def test_installed_package_uses_the_checked_in_generated_code():
    import oddtrick.v1.referee_pb2 as referee_pb2

    assert Path(referee_pb2.__file__).resolve().parent == ROOT / "sdk" / "oddtrick" / "v1"
