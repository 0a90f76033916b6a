"""Opening a match log, plain or gzip-compressed: the one door every reader goes through.

A referee may compress a finished log in place (same name, gzip inside: see
docs/match-log.md, "Compressed logs"), so no reader may assume plain text. The
kind is told by the file's first two bytes, gzip's magic number, not by its name.

A log may come from anyone (``oddtrick check`` a file sent by mail, a worker's result,
an analysis submitted to the queue), so the door also bounds it: a reader never gets
more than :data:`MAX_LOG_BYTES` of text, nor a line longer than :data:`MAX_LINE_CHARS`,
however small the compressed file (a gzip bomb), and compressed data that is damaged or
cut short is one :class:`LogFileError`, never gzip's or zlib's own errors.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final, Protocol, TextIO

GZIP_MAGIC: Final = b"\x1f\x8b"

MAX_LOG_BYTES: Final = 128 * 1024 * 1024
"""The most text a match log may hold: some 20,000 deals (a deal's lines are 5 to 7 KiB),
far more than any match the referee's formats play, and small enough for a reader that
keeps a whole log (the replay, the page) to keep it."""

MAX_LINE_CHARS: Final = 1024 * 1024
"""The longest line a match log may hold (its longest, the header, is a few KiB)."""


class LogFileError(OSError):
    """A match log that cannot be read: its compressed data is damaged or cut short, or it
    holds more than a log may. An :class:`OSError`, as a file that cannot be read is, so
    every reader that already reports an unreadable log reports this one the same way."""


class LogTooLarge(LogFileError):
    """A match log (or what its compressed data unpacks to) larger than its reader allows."""


def is_compressed(path: Path) -> bool:
    """Whether the log at ``path`` is gzip-compressed (an empty or short file is plain)."""
    with path.open("rb") as file:
        return file.read(2) == GZIP_MAGIC


def last_bytes(path: Path, count: int) -> bytes:
    """The last ``count`` bytes of the file at ``path`` as stored (a plain log's tail),
    read without the rest of it."""
    with path.open("rb") as file:
        size = file.seek(0, io.SEEK_END)
        file.seek(max(0, size - count))
        return file.read(count)


def _megabytes(count: int) -> str:
    return f"{count / (1024 * 1024):g} MiB"


class _Source(Protocol):
    """What :class:`_Capped` reads from: a plain file or gzip's decompressing reader."""

    def readinto(self, buffer: Any, /) -> int: ...

    def close(self) -> None: ...


class _Capped(io.RawIOBase):
    """A binary stream that stops with :class:`LogTooLarge` after ``limit`` bytes and turns
    the decompressor's errors into :class:`LogFileError`: the reader above it holds at most
    a buffer, whatever the data below unpacks to."""

    def __init__(self, inner: _Source, closing: list[_Source], limit: int) -> None:
        super().__init__()
        self._inner = inner
        self._closing = closing
        self._limit = limit
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any, /) -> int:
        try:
            count = self._inner.readinto(buffer)
        except EOFError:
            raise LogFileError("its compressed data is cut short (a truncated gzip file)") from None
        except (gzip.BadGzipFile, zlib.error) as error:
            raise LogFileError(f"its compressed data is damaged ({error})") from None
        self._total += count
        if self._total > self._limit:
            raise LogTooLarge(
                f"it holds more than {_megabytes(self._limit)} of text, more than a match log may"
            )
        return count

    def close(self) -> None:
        for stream in self._closing:
            stream.close()
        super().close()


def unpacked(raw: io.BufferedIOBase, limit: int = MAX_LOG_BYTES) -> io.BufferedReader:
    """The bytes of a log's data read from ``raw``, gunzipped if they are gzip, as a stream
    of at most ``limit`` bytes (see :class:`_Capped`); closing it closes ``raw``."""
    try:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
    except BaseException:
        raw.close()
        raise
    if not compressed:
        return io.BufferedReader(_Capped(raw, [raw], limit))
    packed = gzip.GzipFile(fileobj=raw, mode="rb")
    return io.BufferedReader(_Capped(packed, [packed, raw], limit))


def open_log(path: Path, limit: int = MAX_LOG_BYTES) -> TextIO:
    """The log at ``path`` as UTF-8 text, whether it is stored plain or gzip-compressed.

    Raises :class:`OSError` as :func:`open` does; while it is read, :class:`LogTooLarge`
    past ``limit`` bytes of text and :class:`LogFileError` for damaged compressed data.
    """
    return io.TextIOWrapper(unpacked(path.open("rb"), limit), encoding="utf-8")


_CHUNK_CHARS: Final = 256 * 1024
"""How much text :func:`log_lines` reads at a time: lines are split from chunks, not read
one ``readline`` at a time (a log has a line per action; reading them one by one costs as
much as checking them)."""


def log_lines(path: Path, limit: int = MAX_LOG_BYTES) -> Iterator[str]:
    """Each whole line of the log at ``path``, without its newline, read as a stream; a torn
    last line (a crash mid-write) is left out. A line over :data:`MAX_LINE_CHARS` raises
    :class:`LogTooLarge` before much more than that is held."""
    with open_log(path, limit) as file:
        torn = ""
        while chunk := file.read(_CHUNK_CHARS):
            lines = (torn + chunk).split("\n") if torn else chunk.split("\n")
            torn = lines.pop()
            if len(torn) > MAX_LINE_CHARS or (lines and len(lines[0]) > MAX_LINE_CHARS):
                raise LogTooLarge(
                    f"it has a line longer than {_megabytes(MAX_LINE_CHARS)}, longer than a match log's"
                )
            yield from lines


def read_log_text(path: Path, limit: int = MAX_LOG_BYTES) -> str:
    """The whole text of the log at ``path``, at most ``limit`` bytes (see :func:`open_log`)."""
    with open_log(path, limit) as file:
        return file.read()
