"""TLS for the referee's listening port: the command-line options and loading the files.

One helper for every command that listens (``serve``, ``tournament``, and any
later one): :func:`add_tls_options` adds ``--tls-cert``, ``--tls-key`` and
``--tls-client-ca`` to a parser, and :func:`server_credentials` turns them
into gRPC server credentials, or a one-line error naming the file at fault.
With ``--tls-client-ca`` the referee asks every caller for a certificate
signed by that CA (mutual TLS) and refuses connections without one.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import grpc

from oddtrick_referee._exceptions import OptionError


@dataclasses.dataclass(frozen=True)
class ServerTls:
    """The referee's certificate and key, and the CA its callers' certificates must chain to."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        """Load the files; OptionError (saying which file and why) if one cannot be used."""
        cert, key = _pem(self.cert, "--tls-cert"), _pem(self.key, "--tls-key")
        client_ca = _pem(self.client_ca, "--tls-client-ca") if self.client_ca is not None else None
        if b"PRIVATE KEY" not in key:
            raise OptionError(f"--tls-key {self.key}: no PEM private key in it")
        return grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )


def _pem(path: Path, option: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise OptionError(f"{option} {path}: {error.strerror or error}") from None
    if b"-----BEGIN" not in data:
        raise OptionError(f"{option} {path}: not a PEM file")
    return data


def add_tls_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("TLS (bots then connect with oddtrick bot --tls [--ca FILE.pem])")
    group.add_argument(
        "--tls-cert",
        type=Path,
        default=None,
        metavar="FILE.pem",
        help="serve TLS with this certificate",
    )
    group.add_argument("--tls-key", type=Path, default=None, metavar="FILE.pem", help="the certificate's key")
    group.add_argument(
        "--tls-client-ca",
        type=Path,
        default=None,
        metavar="FILE.pem",
        help="mutual TLS: accept only callers with a certificate signed by this CA",
    )


def tls_from_args(args: argparse.Namespace) -> ServerTls | None:
    """The TLS the options ask for (None: plaintext); OptionError if they are incomplete."""
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca is not None:
            raise OptionError("--tls-client-ca needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise OptionError("TLS needs both --tls-cert and --tls-key")
    return ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca)


def server_credentials(args: argparse.Namespace) -> grpc.ServerCredentials | None:
    """The options' TLS credentials, loaded (None: plaintext); OptionError with the reason."""
    tls = tls_from_args(args)
    return tls.credentials() if tls is not None else None
