"""A throw-away PostgreSQL server for the tests that need a real one.

The cluster lives in a temporary folder, listens on a free loopback port and
is stopped when the test session ends. ``initdb`` refuses to run as root, so
as root the cluster belongs to the ``postgres`` user (``runuser``).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a cluster and yield its URL; skip (fail under CI=true) when PostgreSQL is missing."""
    binaries = _binaries()
    if binaries is None:
        message = "PostgreSQL server binaries not found (Debian: apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    as_root = os.geteuid() == 0
    prefix = ["runuser", "-u", "postgres", "--"] if as_root else []
    root = Path(tempfile.mkdtemp(prefix="oddtrick-pg-"))
    data, sockets = root / "data", root / "sockets"
    sockets.mkdir()
    if as_root:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    port = _free_port()

    def run(*command: str) -> None:
        subprocess.run([*prefix, *command], check=True, capture_output=True, cwd=root)

    run(str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", "oddtrick", "--no-sync")
    run(
        str(binaries / "pg_ctl"),
        "-D",
        str(data),
        "-l",
        str(root / "server.log"),
        "-w",
        "-o",
        f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off",
        "start",
    )
    try:
        yield f"postgresql://oddtrick@127.0.0.1:{port}/postgres"
    finally:
        run(str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server, so tests do not see each other's rows."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"
