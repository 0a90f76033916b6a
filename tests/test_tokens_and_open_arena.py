"""Bot tokens are stored as salted hashes; a file of plain-text tokens is refused until
converted; without tokens the referee listens on loopback only, unless told otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from referee_support import RawBot, StreamEnded, in_thread

from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.referee import open_arena_problem
from oddtrick_referee.transport.tokens import load_token_hashes

ODDTRICK = [sys.executable, "-m", "oddtrick"]


def oddtrick(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ODDTRICK, *args], capture_output=True, text=True, timeout=timeout)


def hello_status(address: str, name: str, token: str) -> grpc.StatusCode:
    bot = RawBot(address, name, token)
    bot.send_hello()
    try:
        bot.next_message("welcome")
        bot.leave()
    except StreamEnded:  # refused: the call ended without a Welcome
        pass
    code, _ = bot.wait_status()
    bot.close()
    return code


async def test_tokens_are_stored_hashed_and_checked(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.json"
    made = oddtrick("tokens", "add", str(tokens_file), "alice")
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip()
    assert len(token) >= 32
    assert token not in tokens_file.read_text()
    assert tokens_file.stat().st_mode & 0o077 == 0  # the owner's only
    again = oddtrick("tokens", "add", str(tokens_file), "bob")
    assert again.returncode == 0, again.stderr
    hashes = load_token_hashes(tokens_file)
    assert set(hashes) == {"alice", "bob"}
    settings = RefereeSettings(port=0, data_dir=tmp_path / "data", token_hashes=hashes)
    async with running_referee(settings) as referee:
        right = await in_thread(hello_status, referee.address, "alice", token)
        wrong_token = token[:-1] + ("1" if token.endswith("0") else "0")  # differs always
        wrong = await in_thread(hello_status, referee.address, "alice", wrong_token)
        other = await in_thread(hello_status, referee.address, "bob", token)
    assert right is grpc.StatusCode.OK
    assert wrong is grpc.StatusCode.UNAUTHENTICATED
    assert other is grpc.StatusCode.UNAUTHENTICATED


async def test_a_plain_text_tokens_file_is_refused_until_converted(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.json"
    plain = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789"}
    tokens_file.write_text(json.dumps(plain))
    refused = oddtrick("serve", "--port", "0", "--tokens", str(tokens_file), "--ns", "alice", "--ew", "bob")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert f"oddtrick tokens convert {tokens_file}" in refused.stderr
    assert json.loads(tokens_file.read_text()) == plain  # nothing changed

    converted = oddtrick("tokens", "convert", str(tokens_file))
    assert converted.returncode == 0, converted.stderr
    text = tokens_file.read_text()
    assert "alice-token" not in text
    assert "bob-token" not in text
    settings = RefereeSettings(
        port=0, data_dir=tmp_path / "data", token_hashes=load_token_hashes(tokens_file)
    )
    async with running_referee(settings) as referee:
        assert await in_thread(hello_status, referee.address, "alice", plain["alice"]) is grpc.StatusCode.OK
        assert (
            await in_thread(hello_status, referee.address, "bob", "wrong") is grpc.StatusCode.UNAUTHENTICATED
        )

    short = tmp_path / "short.json"
    short.write_text(json.dumps({"carol": "abc"}))
    too_short = oddtrick("tokens", "convert", str(short))
    assert too_short.returncode == 1
    assert "carol" in too_short.stderr
    assert json.loads(short.read_text()) == {"carol": "abc"}


async def test_without_tokens_the_referee_listens_on_loopback_only_unless_told(tmp_path: Path) -> None:
    refused = oddtrick(
        "serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", str(tmp_path), "--ns", "a", "--ew", "b"
    )
    assert refused.returncode == 2
    assert refused.stderr.startswith("oddtrick serve: refusing to listen on 0.0.0.0 without bot tokens")
    assert "--allow-any-token" in refused.stderr
    assert not (tmp_path / "oddtrick.sqlite3").exists()
    with pytest.raises(ValueError, match="refusing to listen"):
        async with running_referee(RefereeSettings(host="0.0.0.0", port=0, data_dir=tmp_path)):
            pass
    allowed = RefereeSettings(host="0.0.0.0", port=0, data_dir=tmp_path, allow_any_token=True)
    async with running_referee(allowed) as referee:
        assert referee.port
    for loopback in ("127.0.0.1", "localhost"):
        async with running_referee(RefereeSettings(host=loopback, port=0, data_dir=tmp_path)) as referee:
            assert referee.lobby.credentials.open
    assert open_arena_problem(RefereeSettings(host="::1")) is None
    assert open_arena_problem(RefereeSettings(host="::")) is not None
    assert open_arena_problem(RefereeSettings(host="192.0.2.7")) is not None
