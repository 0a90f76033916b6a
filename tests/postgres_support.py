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


class Cluster:
    """A throw-away cluster that a test may stop and start again (a database restart)."""

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries
        self.as_root = os.geteuid() == 0
        self.prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        self.root = Path(tempfile.mkdtemp(prefix="oddtrick-pg-"))
        self.data, self.sockets = self.root / "data", self.root / "sockets"
        self.sockets.mkdir()
        if self.as_root:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.sockets, "postgres")
        self.port = _free_port()
        self.url = f"postgresql://oddtrick@127.0.0.1:{self.port}/postgres"
        self._run(
            str(binaries / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "oddtrick", "--no-sync"
        )

    def _run(self, *command: str) -> None:
        subprocess.run([*self.prefix, *command], check=True, capture_output=True, cwd=self.root)

    def start(self) -> None:
        self._run(
            str(self.binaries / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.root / "server.log"),
            "-w",
            "-o",
            f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c max_connections=200",
            "start",
        )

    def stop(self, mode: str = "immediate") -> None:
        self._run(str(self.binaries / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """Start a cluster of its own and yield it; skip (fail under CI=true) when PostgreSQL is missing."""
    binaries = _binaries()
    if binaries is None:
        message = "PostgreSQL server binaries not found (Debian: apt-get install postgresql)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    cluster = Cluster(binaries)
    cluster.start()
    try:
        yield cluster
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            cluster.stop()
        cluster.remove()


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """Start a cluster and yield its URL; skip (fail under CI=true) when PostgreSQL is missing."""
    with postgres_cluster() as cluster:
        yield cluster.url


def fresh_database(url: str, name: str) -> str:
    """A new empty database on the server, so tests do not see each other's rows."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}"
