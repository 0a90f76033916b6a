"""A referee's address as people type it: ``HOST:PORT``, or ``HOST`` alone for the default port.

gRPC reads a bare ``localhost`` as port 443 and then retries for a minute against
whatever is there; a referee listens on 50051 unless told otherwise, so that is
what a missing port means here. A bot may be given several referees (a ladder run on
several): :func:`referee_list` reads ``A,B``.
"""

from __future__ import annotations

DEFAULT_PORT = 50051
"""The port ``oddtrick serve`` and ``oddtrick ladder serve`` listen on by default."""


def with_default_port(server: str) -> str:
    """``server`` with :data:`DEFAULT_PORT` added when it names no port.

    ``localhost`` → ``localhost:50051``; ``::1`` → ``[::1]:50051``; ``HOST:PORT``,
    ``[::1]:PORT`` and gRPC target URIs (``dns:///…``, ``unix:…``) are kept as they are.
    Raises ValueError for an address with an empty or non-numeric port.
    """
    text = server.strip()
    if not text:
        raise ValueError("the referee's address is empty: give --server HOST:PORT")
    if "://" in text or text.startswith(("unix:", "unix-abstract:", "vsock:", "ipv4:", "ipv6:")):
        return text
    if text.startswith("["):
        host, bracket, rest = text.partition("]")
        if not bracket:
            raise ValueError(f"not an address: {server!r} (expected HOST:PORT, e.g. [::1]:50051)")
        if not rest:
            return f"{text}:{DEFAULT_PORT}"
        return _checked(server, host + bracket, rest.removeprefix(":") if rest.startswith(":") else None)
    if text.count(":") > 1:  # a bare IPv6 address
        return f"[{text}]:{DEFAULT_PORT}"
    host, colon, port = text.partition(":")
    if not colon:
        return f"{text}:{DEFAULT_PORT}"
    return _checked(server, host, port)


def _checked(server: str, host: str, port: str | None) -> str:
    if port is None or not port.isdigit() or not host:
        raise ValueError(f"not an address: {server!r} (expected HOST:PORT, e.g. localhost:{DEFAULT_PORT})")
    return f"{host}:{port}"


def referee_list(text: str) -> tuple[str, ...]:
    """``A,B``: several referees' addresses, each as :func:`with_default_port` reads it, in
    the order a bot tries them. Raises ValueError for an empty entry or an address given twice.

    A gRPC ``ipv4:``/``ipv6:`` target is one address even with commas (gRPC's own list of
    one referee's addresses)."""
    if text.strip().startswith(("ipv4:", "ipv6:")):
        return (with_default_port(text),)
    found: list[str] = []
    for part in text.split(","):
        if not part.strip():
            raise ValueError(f"an empty address in {text!r}: give HOST:PORT[,HOST:PORT…]")
        address = with_default_port(part)
        if address in found:
            raise ValueError(f"{address} is listed twice: give each referee once")
        found.append(address)
    return tuple(found)
