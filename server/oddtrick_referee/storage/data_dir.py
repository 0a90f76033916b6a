"""The data folder (match logs and the SQLite file) and what to say when it cannot be written.

A folder that cannot be written is found at start, before any bot is seated,
and reported in one line; a write that fails later (the disk fills, the
folder is made read-only) stops the referee with the same kind of one-line
error, after marking what it can (the match aborted, finished tables kept).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from oddtrick_referee._exceptions import StorageError
from oddtrick_referee.storage.sqlite import connect


def reason(error: BaseException) -> str:
    """The cause of a storage failure in a few words (no traceback, no errno noise)."""
    if isinstance(error, OSError) and error.strerror:
        where = f": {error.filename}" if error.filename else ""
        return f"{error.strerror.lower()}{where}"
    return str(error)


@contextlib.contextmanager
def storage_errors(what: str, data_dir: Path) -> Iterator[None]:
    """Turn a failed write into a :class:`StorageError` naming ``what`` failed and where."""
    try:
        yield
    except StorageError:
        raise
    except (OSError, sqlite3.Error) as error:
        raise StorageError(
            f"cannot write to the data folder {data_dir} while {what} ({reason(error)}); "
            "make it writable (or free some space) and run again, or give another --data-dir"
        ) from error


def check_writable(data_dir: Path) -> None:
    """Make sure logs and the SQLite file can be written, or raise :class:`StorageError`."""
    with storage_errors("checking it at start", data_dir):
        logs = data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        probe = logs / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        with connect(data_dir / "oddtrick.sqlite3") as db:
            db.execute("BEGIN IMMEDIATE")  # takes the write lock: fails on a read-only file or folder
            db.execute("ROLLBACK")
