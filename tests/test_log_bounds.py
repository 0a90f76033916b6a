"""A match log is untrusted input: ``oddtrick check`` reads one from anywhere. Whatever a
log unpacks to (a gzip bomb: a few hundred KiB that unpack to hundreds of MiB), and however
it is damaged, the check holds a bounded amount of memory and says one line of what is
wrong with which file, and fails."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from bounds_support import MEMORY_CEILING, gzip_bomb, oddtrick_measured

from oddtrick._log_records import read_records

LOGS = Path(__file__).with_name("data") / "match_logs"
LINES = (LOGS / "classic_demo.jsonl").read_bytes().split(b"\n")
START, ACTION = LINES[0] + b"\n", LINES[2] + b"\n"


@pytest.mark.parametrize(
    ("fill", "said"),
    [
        pytest.param(b" ", "a line longer than 1 MiB", id="one-endless-line"),
        pytest.param(b'{"type":"x"}\n', "more than 128 MiB of text", id="endless-short-lines"),
    ],
)
def test_a_gzip_bomb_is_one_line_of_error_in_bounded_memory(tmp_path: Path, fill: bytes, said: str) -> None:
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip_bomb(START, fill, 400))
    assert bomb.stat().st_size < 1024 * 1024
    done, peak = oddtrick_measured(tmp_path / "peak", "check", str(bomb))
    assert done.returncode == 1
    assert done.stderr == ""
    assert done.stdout.splitlines() == [
        f"{bomb}: cannot read: {done.stdout.split(': cannot read: ')[1].strip()}"
    ]
    assert said in done.stdout
    assert peak < MEMORY_CEILING, f"checking the bomb held {peak / 2**20:.0f} MiB"


def test_every_reader_of_a_log_stops_at_the_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.jsonl"
    bomb.write_bytes(gzip_bomb(START, ACTION, 129))
    with pytest.raises(OSError, match="more than 128 MiB"):
        for _ in read_records(bomb):
            pass


def test_an_analysis_is_not_submitted_from_a_log_past_its_limit(tmp_path: Path) -> None:
    from oddtrick_referee._exceptions import BadJob
    from oddtrick_referee.storage.analysis_jobs import analysis_payload

    bomb = tmp_path / "bomb.jsonl"
    bomb.write_bytes(gzip_bomb(START, ACTION, 17))  # 17 MiB of text in a few KiB
    with pytest.raises(BadJob, match="holds more than 16 MiB of text, too large to submit"):
        analysis_payload(bomb, par=True)


def test_a_truncated_gzip_log_is_one_line_naming_the_file_and_fails(tmp_path: Path) -> None:
    whole = gzip.compress((LOGS / "classic_demo.jsonl").read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) - 30])
    good = tmp_path / "good.jsonl.gz"
    good.write_bytes(whole)
    done = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(cut), str(good)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"{cut}: cannot read: its compressed data is cut short (a truncated gzip file)"
    )
    assert done.stdout.splitlines()[1].startswith(f"{good}: OK")
