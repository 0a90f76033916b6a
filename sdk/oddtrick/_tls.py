"""TLS for the SDK's connections to a referee: ``--tls``, ``--ca`` and a client certificate.

A referee started with a certificate speaks only TLS; one that also asks for
client certificates (mutual TLS) accepts only bots that present one signed by
its client CA. Without ``--ca`` the system's trusted roots check the referee.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import grpc

from oddtrick._address import with_default_port


@dataclasses.dataclass(frozen=True)
class TlsOptions:
    """How a bot checks the referee, and proves who it is, over TLS."""

    ca: Path | None = None
    """PEM certificates trusted for the referee (None: the system's roots)."""
    cert: Path | None = None
    """The bot's own certificate chain (PEM), for a referee that asks for one."""
    key: Path | None = None
    """The private key of ``cert`` (PEM)."""

    def credentials(self) -> grpc.ChannelCredentials:
        """The channel credentials; a missing or unreadable file raises ValueError saying which."""
        if (self.cert is None) != (self.key is None):
            raise ValueError("a client certificate needs both --tls-cert and --tls-key")
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca, "--ca"),
            private_key=_read(self.key, "--tls-key"),
            certificate_chain=_read(self.cert, "--tls-cert"),
        )


def _read(path: Path | None, option: str) -> bytes | None:
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"{option} {path}: {error.strerror or error}") from None
    if b"-----BEGIN" not in data:
        raise ValueError(f"{option} {path}: not a PEM file")
    return data


def aio_channel(server: str, tls: TlsOptions | None, options: list[tuple[str, int]]) -> grpc.aio.Channel:
    """A grpc.aio channel to ``server`` (the default port if it names none): TLS when
    ``tls`` is given, else plaintext."""
    server = with_default_port(server)
    if tls is None:
        return grpc.aio.insecure_channel(server, options=options)
    return grpc.aio.secure_channel(server, tls.credentials(), options=options)


def channel(server: str, tls: TlsOptions | None) -> grpc.Channel:
    """A blocking channel to ``server`` (for ``oddtrick watch``; the default port if it names none)."""
    server = with_default_port(server)
    if tls is None:
        return grpc.insecure_channel(server)
    return grpc.secure_channel(server, tls.credentials())


def tls_from_args(tls: bool, ca: Path | None, cert: Path | None, key: Path | None) -> TlsOptions | None:
    """The command-line choice: any of ``--ca``, ``--tls-cert`` or ``--tls-key`` implies ``--tls``."""
    if not (tls or ca or cert or key):
        return None
    return TlsOptions(ca, cert, key)
