"""Untrusted input that unpacks or grows far past its size, and the peak memory of the
``oddtrick`` command that reads it, measured in a process of its own."""

from __future__ import annotations

import gzip
import io
import subprocess
import sys
from pathlib import Path

MEMORY_CEILING = 200 * 1024 * 1024
"""The most a command reading one bomb may hold at its peak (about 70 MiB is the
interpreter and oddtrick's imports alone)."""

_MEASURE = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[2:], capture_output=True, text=True)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
with open(sys.argv[1], "w") as report:
    report.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024))
sys.exit(done.returncode)
"""
"""A parent that runs the command and writes its child's peak resident size (Linux gives
``ru_maxrss`` in KiB): the test process's own memory, and its other children, stay out."""


def oddtrick_measured(
    report: Path, *words: str, timeout: float = 300
) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run ``oddtrick WORDS`` in a fresh process; its result and its peak memory in bytes."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(report), sys.executable, "-m", "oddtrick", *words],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done, int(report.read_text())


def gzip_bomb(first: bytes, fill: bytes, megabytes: int) -> bytes:
    """Gzip data of ``first`` then ``fill`` repeated to ``megabytes`` MiB or more: a few hundred KiB
    that unpack to all of it (built a MiB at a time, so the test holds no more)."""
    chunk = fill * max(1, 1024 * 1024 // len(fill))  # whole copies of fill: lines stay whole
    packed = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=packed, compresslevel=9, mtime=0) as out:
        out.write(first)
        written = 0
        while written < megabytes * 1024 * 1024:
            written += out.write(chunk)
    return packed.getvalue()
