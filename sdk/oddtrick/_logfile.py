"""Opening a match log, plain or gzip-compressed: the one door every reader goes through.

A referee may compress a finished log in place (same name, gzip inside: see
docs/match-log.md, "Compressed logs"), so no reader may assume plain text. The
kind is told by the file's first two bytes, gzip's magic number, not by its name.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path
from typing import Final, TextIO

GZIP_MAGIC: Final = b"\x1f\x8b"


def is_compressed(path: Path) -> bool:
    """Whether the log at ``path`` is gzip-compressed (an empty or short file is plain)."""
    with path.open("rb") as file:
        return file.read(2) == GZIP_MAGIC


def open_log(path: Path) -> TextIO:
    """The log at ``path`` as UTF-8 text, whether it is stored plain or gzip-compressed.

    Raises :class:`OSError` as :func:`open` does; a damaged compressed log raises
    :class:`OSError` (``gzip.BadGzipFile``) or :class:`EOFError` while it is read.
    """
    raw = path.open("rb")
    try:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    if not compressed:
        return io.TextIOWrapper(raw, encoding="utf-8")
    raw.close()  # a compressed log is never turned back into a plain one: reopening is safe
    return gzip.open(path, "rt", encoding="utf-8")


def read_log_text(path: Path) -> str:
    """The whole text of the log at ``path`` (see :func:`open_log`)."""
    with open_log(path) as file:
        return file.read()
