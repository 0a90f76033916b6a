"""Opening the referee's SQLite file the one way every store uses it."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import threading
from collections.abc import Iterator
from pathlib import Path


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.row_factory = sqlite3.Row
    return db


@contextlib.contextmanager
def connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A short-lived connection in autocommit mode, closed on exit.

    WAL lets the gRPC thread read while a table writes; ``synchronous=FULL``
    makes a committed match survive a power cut, not just a crash.
    """
    db = _open(path)
    try:
        yield db
    finally:
        db.close()


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A connection that cannot write, closed on exit: for a reader of a data folder that
    may be a running referee's (the web page), which must change nothing in it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        yield db
    finally:
        db.close()


def owner_only(path: Path) -> None:
    """Take away every permission of the group and of others, and nothing else: a file or
    folder the operator made read-only stays read-only."""
    path.chmod(stat.S_IMODE(path.stat().st_mode) & 0o700)


class Store:
    """A set of tables in the referee's SQLite file: created on first use,
    written one transaction at a time (the lock), read by any thread."""

    schema = ""

    def __init__(self, path: Path, keep_connections: bool = False) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # The file holds master seeds: the referee's user alone may read it (SQLite
        # gives its -wal and -shm files the same mode). An older file is tightened.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        owner_only(path)
        self._lock = threading.Lock()
        self._keep = keep_connections
        self._local = threading.local()
        with self._connect() as db:
            db.executescript(self.schema)

    def _connect(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        """A connection for this thread. A long-lived store (the referee's own index) keeps
        one open per worker thread: opening one costs more than the write it is for
        (about 5 ms against 1 ms here), and a seat coming free waits for that write."""
        if not self._keep:
            return connect(self.path)
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = _open(self.path)
        return contextlib.nullcontext(db)
