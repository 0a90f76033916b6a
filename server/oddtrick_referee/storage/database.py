"""One small door to SQL for stores that run on SQLite or PostgreSQL alike.

Stores write portable SQL with ``?`` placeholders; the PostgreSQL side turns
them into psycopg's ``%s``. Every unit of work is one transaction
(:meth:`Database.transaction`), so a store's invariants hold whichever
back-end it is on and whichever process shares the database.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from oddtrick_referee._exceptions import DatabaseError, DatabaseUnreachable

Row = dict[str, Any]


class Cursor(Protocol):
    """What a transaction offers: run a statement, read its rows."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run one statement; return the number of rows it changed."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a query; return its rows as dicts."""


class Database(Protocol):
    url: str
    """Where the data is, with no password: for messages and the server's info."""
    dialect: str
    """``"sqlite"`` or ``"postgresql"``."""

    def transaction(self) -> contextlib.AbstractContextManager[Cursor]: ...

    def close(self) -> None: ...


class _SQLiteCursor:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._db.execute(sql, tuple(params)).rowcount

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return [dict(row) for row in self._db.execute(sql, tuple(params))]


class SQLiteDatabase:
    """The embedded default: one file, one writer at a time (a lock here, and
    ``BEGIN IMMEDIATE`` against other processes)."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.url = f"sqlite:///{path}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
        except (OSError, sqlite3.Error) as error:
            raise DatabaseError(f"cannot open the SQLite database {path}: {error}") from error
        self._db.row_factory = sqlite3.Row
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Cursor]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as error:
                raise DatabaseError(f"cannot write to {self.path}: {error}") from error
            try:
                yield _SQLiteCursor(self._db)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        self._db.close()


_PLACEHOLDER = re.compile(r"\?")


class _PostgresCursor:
    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._cursor.execute(_PLACEHOLDER.sub("%s", sql), tuple(params))
        return int(self._cursor.rowcount)

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._cursor.execute(_PLACEHOLDER.sub("%s", sql), tuple(params))
        return list(self._cursor.fetchall())


class PostgresDatabase:
    """A PostgreSQL server through psycopg 3: one connection, one transaction at a time.

    Several referees may share the database; what they must not both do is
    claimed inside a transaction (see the ladder store's ``claim_match``).
    """

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        import psycopg
        from psycopg.rows import dict_row

        self.url = _without_password(url)
        self._full_url = url
        self._psycopg = psycopg
        self._row_factory = dict_row
        self._db = self._connect()
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(
                self._full_url, row_factory=self._row_factory, autocommit=True, connect_timeout=10
            )
        except self._psycopg.Error as error:
            raise DatabaseUnreachable(f"cannot connect to PostgreSQL at {self.url}: {error}") from error

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Cursor]:
        """One transaction; a connection the server dropped (a restart, a failover) is
        opened again first, so the caller's next try after an error finds the server back."""
        with self._lock:
            if self._db.closed or self._db.broken:
                self._db = self._connect()
            with self._db.transaction(), self._db.cursor() as cursor:
                yield _PostgresCursor(cursor)

    def close(self) -> None:
        self._db.close()


def _without_password(url: str) -> str:
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1:***@", url)


def url_to_print(url: str) -> str:
    """``url`` as a printed command may carry it: its password left out rather than masked,
    so the command still works as printed where libpq finds the password (PGPASSWORD,
    ~/.pgpass), and a terminal or a log never shows it."""
    return re.sub(r"(//[^:/@]+):[^@]*@", r"\1@", url)


def open_database(url: str | None, data_dir: Path, file_name: str) -> Database:
    """``postgresql://…`` opens PostgreSQL; anything else (or nothing) SQLite in ``data_dir``."""
    if url and url.startswith(("postgresql://", "postgres://")):
        return PostgresDatabase(url)
    if url and url.startswith("sqlite:///"):
        return SQLiteDatabase(Path(url.removeprefix("sqlite:///")))
    if url:
        raise DatabaseError(f"--database must be postgresql://… or sqlite:///PATH, not {url!r}")
    return SQLiteDatabase(data_dir / file_name)
