"""Deals from a seed, re-creatable in any language (docs/dealing.md).

The algorithm, exactly:

1. The seed is a text string; its bytes are its UTF-8 encoding. The match's
   commitment is the lowercase hex SHA-256 of those bytes.
2. For deal number ``d`` (1 for the first hand of a match), a stream of 32-bit
   words comes from SHA-256 in counter mode: block ``c`` (0, 1, 2, …) is
   ``SHA-256(b"oddtrick-deal-v1" + d.to_bytes(4, "big") + c.to_bytes(4, "big") + seed)``
   and yields eight big-endian unsigned 32-bit words, used in order.
3. ``draw(n)``, a uniform integer in ``[0, n)``: take words until one is below
   ``2**32 - (2**32 % n)`` (rejection sampling, so there is no modulo bias),
   and return that word modulo ``n``.
4. The pack starts in index order (``suit * 13 + rank - 2``: 2♣ … A♣, 2♦ … A♠).
   Fisher–Yates: for ``i`` from 51 down to 1, swap positions ``i`` and ``draw(i + 1)``.
5. With trump selection ``cut``, the next value ``draw(52)`` is the index of the
   card cut from the second pack.
6. Position ``k`` of the shuffled pack goes to seat ``(dealer + 1 + k) % 4``
   (seats numbered N=0, E=1, S=2, W=3), so the dealer receives position 51,
   the card turned up in classic Whist.
"""

from __future__ import annotations

import hashlib
import secrets
import struct
from hashlib import sha256 as _sha256
from operator import mod
from typing import Final, TypeVar

from oddtrick.rules._cards import PACK, Card, Deal, fast_deal
from oddtrick.rules._seats import Seat

_DOMAIN: Final = b"oddtrick-deal-v1"
_TWO_32: Final = 1 << 32
_T = TypeVar("_T")


def _words(seed: bytes, deal_number: int, first_block: int, blocks: int) -> tuple[int, ...]:
    """Words of blocks ``first_block`` … of the deal's SHA-256 counter-mode stream."""
    prefix = _DOMAIN + deal_number.to_bytes(4, "big")
    digest = b"".join(
        _sha256(prefix + c.to_bytes(4, "big") + seed).digest()
        for c in range(first_block, first_block + blocks)
    )
    return struct.unpack(f">{8 * blocks}I", digest)


_LIMITS: Final = tuple(_TWO_32 - (_TWO_32 % n) if n else 0 for n in range(53))
"""Rejection thresholds: a word below ``_LIMITS[n]`` maps uniformly onto ``[0, n)``."""

# The fast path of the shuffle (see _shuffle) ---------------------------------
_COUNTERS: Final = tuple(c.to_bytes(4, "big") for c in range(7))
_UNPACK_7_BLOCKS: Final = struct.Struct(">56I").unpack
_NEVER_REJECTED: Final = min(_LIMITS[2:])
"""A word below this is accepted by every ``draw(n)`` of a deal (n = 2 … 52)."""
_MAY_BE_REJECTED: Final = b"\xff\xff\xff"
"""How a word that some draw might reject starts (as ``_NEVER_REJECTED >= 0xFFFFFF00``)."""
assert _NEVER_REJECTED >= 0xFFFFFF00
_SWAP_AT: Final = tuple(range(51, 0, -1))
_DRAW_SIZES: Final = tuple(range(52, 1, -1))
_INDICES: Final = tuple(range(52))
_BITS: Final = tuple(1 << i for i in range(52))


def new_seed() -> str:
    """A fresh random seed: 64 hex characters (256 bits)."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """The SHA-256 of the seed, published before the first card is dealt."""
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()


def shuffled_indices(seed: str, deal_number: int) -> tuple[list[int], int]:
    """The shuffled pack as card indices, and the index a cut would draw."""
    if deal_number < 1:
        raise ValueError(f"deal numbers start at 1, not {deal_number}")
    return _shuffle(seed.encode("utf-8"), deal_number, _INDICES)


def _shuffle(seed_bytes: bytes, deal_number: int, pack: tuple[_T, ...]) -> tuple[list[_T], int]:
    """Fisher-Yates over a copy of ``pack`` (the 52 cards in index order, as
    indices or as anything else standing for them), and the index of the cut card.

    Fast path for speed: seven blocks give 56 words, and when none of them is
    high enough to be rejected by any draw (all but about one deal in a million)
    the 51 swaps and the cut use words 0 … 51 in order, with no bookkeeping.
    """
    prefix = _DOMAIN + deal_number.to_bytes(4, "big")
    stream = b"".join([_sha256(prefix + counter + seed_bytes).digest() for counter in _COUNTERS])
    words = _UNPACK_7_BLOCKS(stream)
    # Searching the bytes is cheaper than max(words); a hit is rare and may be
    # a false alarm (three 0xFF bytes across two words), so look again exactly.
    if _MAY_BE_REJECTED in stream and max(words) >= _NEVER_REJECTED:
        return _shuffle_with_rejection(seed_bytes, deal_number, pack, words)
    shuffled = list(pack)
    for i, j in zip(_SWAP_AT, map(mod, words, _DRAW_SIZES), strict=True):
        shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled, words[51] % 52


def _shuffle_with_rejection(
    seed_bytes: bytes, deal_number: int, pack: tuple[_T, ...], words: tuple[int, ...]
) -> tuple[list[_T], int]:
    """The general algorithm, word by word; ``words`` are the first seven blocks."""
    position = 0
    shuffled = list(pack)
    limits = _LIMITS
    # Fisher-Yates from the top; n == 1 is the extra draw(52) for the cut card.
    for i in range(51, -1, -1):
        n = i + 1 if i else 52
        while True:
            if position == len(words):
                words += _words(seed_bytes, deal_number, len(words) // 8, 1)
            word = words[position]
            position += 1
            if word < limits[n]:
                break
        if i:
            j = word % n
            shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
    return shuffled, word % 52


def shuffled_pack(seed: str, deal_number: int) -> tuple[tuple[Card, ...], Card]:
    """The shuffled pack for a deal and the card a cut would draw from a second pack."""
    pack, cut = shuffled_indices(seed, deal_number)
    return tuple(PACK[index] for index in pack), PACK[cut]


def deal_cards(seed: str, deal_number: int, dealer: Seat) -> tuple[Deal, Card, Card]:
    """The deal, the card turned up (the dealer's last) and the cut card."""
    if deal_number < 1:
        raise ValueError(f"deal numbers start at 1, not {deal_number}")
    # Shuffle the cards' bits rather than their indices: a hand's mask is then
    # the sum of its positions, and its sorted cards come from the mask.
    pack, cut = _shuffle(seed.encode("utf-8"), deal_number, _BITS)
    first = (dealer + 1) % 4
    # Position k goes to seat (first + k) % 4, so seat s gets positions (s - first) % 4, +4, …
    masks = (
        sum(pack[-first % 4 :: 4]),
        sum(pack[(1 - first) % 4 :: 4]),
        sum(pack[(2 - first) % 4 :: 4]),
        sum(pack[(3 - first) % 4 :: 4]),
    )
    return fast_deal(masks), PACK[pack[51].bit_length() - 1], PACK[cut]
