"""One module makes, hashes and checks every bot token: the hashes stored before it (a
tokens file's, the ladder database's) still admit their tokens, and nothing else does."""

from __future__ import annotations

import pytest

from oddtrick_referee.token_scheme import (
    hash_token,
    new_token,
    salted_digest,
    same_token,
    verify_salted,
    verify_token,
)

FILE_TOKEN = "alice-token-0123456789"
FILE_HASH = (
    "sha256$000102030405060708090a0b0c0d0e0f$230d01599d66623f7d0478b696fe6bd581a824f68cb3842ae593b4b4504bdaa7"
)
"""A tokens file's entry as `oddtrick tokens` wrote it before the scheme had one module."""

LADDER_TOKEN = "bob-token-0123456789"
LADDER_SALT = "00112233445566778899aabbccddeeff"
LADDER_DIGEST = "75261179879d59670cfe3a84b623d7be82cff64597e53046dd75bcead4c0841a"
"""A ladder entrant's token_salt and token_hash columns as the store wrote them before."""


def test_a_tokens_file_hash_stored_before_still_admits_its_token_only() -> None:
    assert verify_token(FILE_TOKEN, FILE_HASH)
    assert hash_token(FILE_TOKEN, bytes(range(16))) == FILE_HASH
    assert not verify_token(FILE_TOKEN[:-1] + "8", FILE_HASH)
    assert not verify_token(FILE_TOKEN, FILE_HASH.replace("sha256$", "md5$"))
    assert not verify_token(FILE_TOKEN, "sha256$not-hex$00")


def test_a_ladder_digest_stored_before_still_admits_its_token_only() -> None:
    assert salted_digest(LADDER_TOKEN, LADDER_SALT) == LADDER_DIGEST
    assert verify_salted(LADDER_TOKEN, LADDER_SALT, LADDER_DIGEST)
    assert not verify_salted(LADDER_TOKEN + "x", LADDER_SALT, LADDER_DIGEST)
    assert not verify_salted(LADDER_TOKEN, None, None)  # an unknown name


@pytest.mark.parametrize("given", ["tokén", "", "x" * 5000])
def test_a_token_of_any_text_is_refused_not_an_error(given: str) -> None:
    """A bot's token is untrusted text: a non-ASCII one made ``compare_digest`` raise."""
    assert not same_token("the-expected-token", given)
    assert not verify_token(given, FILE_HASH)
    assert not verify_salted(given, LADDER_SALT, LADDER_DIGEST)


def test_a_new_token_hashes_and_checks_in_both_stored_forms() -> None:
    token = new_token()
    assert verify_token(token, hash_token(token))
    assert hash_token(token) != hash_token(token)  # salted: equal tokens, unequal hashes
    assert verify_salted(token, LADDER_SALT, salted_digest(token, LADDER_SALT))
    assert same_token(token, token)
