"""Bot tokens: the one place that makes them, hashes them and checks them.

Every credential a bot presents in its Hello is checked here, wherever it is kept: a
tokens file (``serve --tokens``, transport/tokens.py), the ladder's database
(storage/ladder_store.py), or memory (a tournament's or a sitting's own tokens).

A token is 32 random bytes, URL-safe, never starting with ``-`` (a bot passes it as
``--token TOKEN``, and argparse takes a word starting with ``-`` for another option).
At rest it is one salted SHA-256 of the token, compared in constant time. Why not a
slow password hash: tokens are random secrets, not passwords a person chose, and nobody
guesses 256 random bits whatever the hash costs (API tokens at GitHub and PyPI are
stored the same way); a slow hash would cost every Hello tens of milliseconds of the
referee's CPU, which a stream of bad Hellos could turn against the tables in play. The
salt keeps equal tokens from having equal hashes.

Two stored forms of that hash exist, each kept as it was so that every token already
given out still works:

- a tokens file holds one string, ``sha256$<salt hex>$<digest hex>``, the digest of the
  salt's bytes followed by the token's (:func:`hash_token`, :func:`verify_token`);
- the ladder's database holds two columns, a salt (text, which also names the token: a
  new token gets a new salt) and the digest of ``"<salt>:<token>"``
  (:func:`salted_digest`, :func:`verify_salted`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 32
SALT_BYTES = 16
SCHEME = "sha256"
"""The first field of a tokens file's stored hash."""


def new_token() -> str:
    """A fresh bot token: 43 URL-safe characters, never starting with ``-``."""
    while True:
        token = secrets.token_urlsafe(TOKEN_BYTES)
        if not token.startswith("-"):
            return token


def new_salt() -> str:
    """A fresh salt, as hex text (the ladder stores it as the token's id)."""
    return secrets.token_hex(SALT_BYTES)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_token(token: str, salt: bytes | None = None) -> str:
    """A tokens file's stored form of ``token``: ``sha256$<salt hex>$<digest hex>``."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    return f"{SCHEME}${salt.hex()}${_sha256(salt + token.encode())}"


def verify_token(token: str, stored: str) -> bool:
    """Whether ``token`` is the one ``stored`` (from :func:`hash_token`) was made from."""
    scheme, _, rest = stored.partition("$")
    salt_hex, _, digest = rest.partition("$")
    if scheme != SCHEME or not digest:
        return False
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    return same_token(hash_token(token, salt), stored)


def salted_digest(token: str, salt: str) -> str:
    """The ladder's stored digest of ``token`` under ``salt`` (from :func:`new_salt`)."""
    return _sha256(f"{salt}:{token}".encode())


_NO_SALT = "x"
_NO_DIGEST = "0" * 64


def verify_salted(token: str, salt: str | None, digest: str | None) -> bool:
    """Whether ``token`` hashes to ``digest`` under ``salt``. Given no stored pair (an
    unknown name) it hashes all the same and says no, so that timing does not tell a
    known name from an unknown one."""
    known = salt is not None and digest is not None
    expected = salted_digest(token, salt if salt is not None else _NO_SALT)
    return same_token(expected, digest if digest is not None else _NO_DIGEST) and known


def same_token(expected: str, given: str) -> bool:
    """Constant-time equality of two tokens (or two stored hashes), whatever their
    characters: ``hmac.compare_digest`` refuses text that is not ASCII, and a token is
    what an untrusted bot sent."""
    return hmac.compare_digest(expected.encode(), given.encode())


def fingerprint(token: str) -> str:
    """An unsalted SHA-256 of a token, to remember a checked token by without keeping it
    (a key in memory only, never stored)."""
    return _sha256(token.encode())
