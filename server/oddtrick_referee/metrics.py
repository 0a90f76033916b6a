"""What a referee, a ladder or a worker exposes to Prometheus (``--metrics [HOST:]PORT``).

Each process keeps its figures in a registry of its own (:class:`Metrics`), never the
client library's global one: a referee started in a test, or two in one process, count
their own decisions only. The figures are the ones an operator of many machines watches:

- ``oddtrick_decisions_total``: decisions taken at this process's tables (a bot's or the
  fallback the referee took for it); ``rate()`` of it is decisions per second.
- ``oddtrick_faults_total{kind}``: decisions that ended in a fault, by its kind
  (``timeout``, ``clock``, ``illegal``, ``disconnected``, ``forfeited``).
- ``oddtrick_tables_in_play``: tables being played now.
- ``oddtrick_lease_wait_seconds``: a worker's wait from asking for work to holding a
  lease; a ladder's wait from planning a match to its bots being seated.
- ``oddtrick_queue_depth``: jobs of a worker's kinds waiting in its queue; matches a
  ladder planned that wait for their bots' streams.

:func:`serve_metrics` serves the registry's text exposition at ``/metrics`` with the
client library's own HTTP server, in a thread, so a scrape never waits on a table.
"""

from __future__ import annotations

import argparse
import threading
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from oddtrick_referee._exceptions import MetricsUnavailable

LEASE_WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, float("inf"))
"""From a lease taken at once to a worker idle for a quarter of an hour."""


class Metrics:
    """One process's figures, in its own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.decisions = Counter(
            "oddtrick_decisions", "Decisions taken at this process's tables", registry=self.registry
        )
        self.faults = Counter(
            "oddtrick_faults", "Decisions that ended in a fault, by kind", ["kind"], registry=self.registry
        )
        self.tables_in_play = Gauge(
            "oddtrick_tables_in_play", "Tables being played now", registry=self.registry
        )
        self.lease_wait = Histogram(
            "oddtrick_lease_wait_seconds",
            "Seconds from asking for work (a worker) or planning a match (a ladder) to holding it",
            buckets=LEASE_WAIT_BUCKETS,
            registry=self.registry,
        )
        self.queue_depth = Gauge(
            "oddtrick_queue_depth",
            "Jobs waiting in the work queue (a worker), matches waiting for their bots (a ladder)",
            registry=self.registry,
        )

    def decided(self, fault: str | None) -> None:
        """A decision was taken; ``fault``: the kind of fault it ended in, if any."""
        self.decisions.inc()
        if fault is not None:
            self.faults.labels(kind=fault).inc()


class MetricsServer:
    """``/metrics`` served from a thread until :meth:`close`."""

    def __init__(self, server: WSGIServer, thread: threading.Thread) -> None:
        self._server, self._thread = server, thread
        host, port = str(server.server_address[0]), int(server.server_address[1])
        self.url = f"http://{host if ':' not in host else f'[{host}]'}:{port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_metrics(metrics: Metrics, host: str, port: int) -> MetricsServer:
    """Serve ``metrics`` on ``host:port`` (port 0: any free one); OSError if it cannot bind."""
    server, thread = start_http_server(port, host, registry=metrics.registry)
    return MetricsServer(server, thread)


def metrics_address(text: str) -> tuple[str, int]:
    """``--metrics``' ``PORT`` or ``HOST:PORT`` (the host 127.0.0.1 unless given)."""
    host, colon, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give PORT or HOST:PORT for /metrics, e.g. 9464 or 0.0.0.0:9464 (0: any free port)"
        )
    return (host.strip("[]") or "127.0.0.1") if colon else "127.0.0.1", int(port)


def add_metrics_option(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--metrics",
        type=metrics_address,
        default=None,
        metavar="[HOST:]PORT",
        help=f"serve Prometheus metrics of {what} at http://HOST:PORT/metrics (the host defaults to "
        "127.0.0.1; 0 as the port: any free one): decisions, faults by kind, tables in play, lease "
        "waits, queue depth (docs/workers.md lists them)",
    )


def start_metrics(
    address: tuple[str, int] | None, command: str
) -> tuple[Metrics | None, MetricsServer | None]:
    """The process's figures and their server for ``--metrics`` (both None without it);
    :class:`MetricsUnavailable` says in one line why the address cannot be served."""
    if address is None:
        return None, None
    metrics = Metrics()
    try:
        return metrics, serve_metrics(metrics, *address)
    except OSError as error:
        raise MetricsUnavailable(
            f"{command}: cannot serve /metrics on {address[0]}:{address[1]}: {error.strerror or error} "
            "(choose another --metrics port, or 0 for any free one)"
        ) from None
