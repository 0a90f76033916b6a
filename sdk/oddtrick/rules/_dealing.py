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
from typing import Final

from oddtrick.rules._cards import PACK, Card, Deal
from oddtrick.rules._seats import SEATS, Seat

_DOMAIN: Final = b"oddtrick-deal-v1"
_TWO_32: Final = 1 << 32


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
    seed_bytes = seed.encode("utf-8")
    # 52 draws need 52 words unless a word is rejected (about 1 in 10^8 per
    # draw), so seven blocks are hashed up front and more only when needed.
    words = _words(seed_bytes, deal_number, 0, 7)
    position = 0
    pack = list(range(52))
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
            pack[i], pack[j] = pack[j], pack[i]
    return pack, word % 52


def shuffled_pack(seed: str, deal_number: int) -> tuple[tuple[Card, ...], Card]:
    """The shuffled pack for a deal and the card a cut would draw from a second pack."""
    pack, cut = shuffled_indices(seed, deal_number)
    return tuple(PACK[index] for index in pack), PACK[cut]


def deal_cards(seed: str, deal_number: int, dealer: Seat) -> tuple[Deal, Card, Card]:
    """The deal, the card turned up (the dealer's last) and the cut card."""
    pack, cut = shuffled_indices(seed, deal_number)
    first = (dealer + 1) % 4
    hands = {seat: [PACK[i] for i in sorted(pack[(seat - first) % 4 :: 4])] for seat in SEATS}
    return Deal.trusted(hands), PACK[pack[51]], PACK[cut]
