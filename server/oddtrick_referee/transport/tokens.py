"""Bot tokens at rest: a file of salted hashes, never the tokens themselves.

The file (``serve --tokens FILE.json``) is JSON::

    {"format": "oddtrick-tokens/2", "bots": {"alice": "sha256$<salt hex>$<digest hex>", ...}}

``oddtrick tokens add FILE NAME`` makes a token (32 random bytes), stores its
hash and prints the token once; ``oddtrick tokens convert FILE`` turns a file
of the earlier format (``{"name": "token"}``, tokens in plain text) into this
one, which the referee otherwise refuses to load.

How tokens are made, hashed and checked is token_scheme.py's (one scheme for the
referee's every store of tokens).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from oddtrick_referee._exceptions import TokensFileError
from oddtrick_referee.token_scheme import SCHEME, hash_token, new_token

FORMAT = "oddtrick-tokens/2"
MIN_TOKEN_LENGTH = 16
"""Shorter tokens (from a hand-written file of the earlier format) are refused at conversion."""


def load_token_hashes(path: Path) -> dict[str, str]:
    """Bot name → token hash, from a tokens file; TokensFileError says what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise TokensFileError(f"{path}: {error.strerror or error}") from None
    except ValueError as error:
        raise TokensFileError(f"{path} is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise TokensFileError(f"{path} must hold a JSON object")
    if data.get("format") != FORMAT:
        if data and all(isinstance(value, str) for value in data.values()) and "format" not in data:
            raise TokensFileError(
                f"{path} holds tokens in plain text (the format before {FORMAT}); convert it once "
                f"with: oddtrick tokens convert {path}  (bots keep their tokens; only hashes are kept)"
            )
        raise TokensFileError(f"{path} is not a tokens file of format {FORMAT}")
    bots = data.get("bots")
    if not isinstance(bots, dict) or not all(
        isinstance(value, str) and value.startswith(f"{SCHEME}$") for value in bots.values()
    ):
        raise TokensFileError(f"{path}: 'bots' must map each bot name to a token hash")
    return dict(bots)


def save_token_hashes(path: Path, hashes: Mapping[str, str]) -> None:
    """Write the file readable by its owner only, replacing it in one step."""
    text = json.dumps({"format": FORMAT, "bots": dict(sorted(hashes.items()))}, indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    temporary.replace(path)


def add_bot(path: Path, name: str) -> str:
    """Make a token for ``name`` (replacing any it had), store its hash; returns the token."""
    hashes = load_token_hashes(path) if path.exists() else {}
    token = new_token()
    hashes[name] = hash_token(token)
    save_token_hashes(path, hashes)
    return token


def convert(path: Path) -> int:
    """Replace a plain-text tokens file by its hashes; returns how many bots it holds."""
    try:
        plain = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TokensFileError(f"cannot read {path}: {error}") from None
    if isinstance(plain, dict) and plain.get("format") == FORMAT:
        raise TokensFileError(f"{path} is already in format {FORMAT}: nothing to convert")
    if not isinstance(plain, dict) or not all(isinstance(v, str) for v in plain.values()):
        raise TokensFileError(f'{path} is not a tokens file of the earlier format {{"name": "token", ...}}')
    short = sorted(name for name, token in plain.items() if len(token) < MIN_TOKEN_LENGTH)
    if short:
        raise TokensFileError(
            f"tokens shorter than {MIN_TOKEN_LENGTH} characters for {', '.join(short)}: give those bots "
            f"new tokens (oddtrick tokens add {path} NAME) after removing them from the file"
        )
    save_token_hashes(path, {name: hash_token(token) for name, token in plain.items()})
    return len(plain)
