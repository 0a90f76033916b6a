"""How many Hellos with a bad token one address may send: a token bucket per address.

Checking a token can cost a database transaction (the ladder's tokens live in
its database), so Hellos with bad tokens are a way to make the referee work
for nothing. Each address has a budget of ``burst`` failed Hellos, refilled
at ``per_s``; once it is spent, that address's Hellos are held until there
is room again and refused (RESOURCE_EXHAUSTED) before any database is
asked, except those the referee can admit from memory (a token it verified
before). So a flood costs the database ``per_s`` look-ups a second per
address, and honest bots that share the address and are known still get in.

IPv6 addresses are counted by their /64 network: one host is usually given
a whole /64, and would otherwise have 2⁶⁴ budgets.
"""

from __future__ import annotations

import ipaddress
import re

MAX_ADDRESSES = 10_000
"""Budgets kept at once; beyond this the oldest are forgotten (a spent one is then full
again: an attacker with this many addresses has other means)."""

_PEER = re.compile(r"^(?:ipv4:(?P<v4>[0-9.]+)|ipv6:\[(?P<v6>[0-9A-Fa-f:.%]+)\]):[0-9]+$")


def address_of(peer: str) -> str:
    """The address a gRPC peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``) counts
    under: the IPv4 address, the IPv6 /64, or the whole string for anything else."""
    found = _PEER.match(peer)
    if found is None:
        return peer
    if found["v4"]:
        return found["v4"]
    try:
        address = ipaddress.IPv6Address(found["v6"].split("%")[0])
    except ValueError:
        return peer
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


class FailedHellos:
    """Per-address budgets of failed Hellos (trio's clock: one referee, one thread)."""

    def __init__(self, burst: int, per_s: float, max_addresses: int = MAX_ADDRESSES) -> None:
        self.burst = burst
        self.per_s = per_s
        self.max_addresses = max_addresses
        self._buckets: dict[str, tuple[float, float]] = {}
        """address → (failures still allowed, when that was counted)."""

    def _left(self, address: str, now: float) -> float:
        left, at = self._buckets.get(address, (float(self.burst), now))
        return min(float(self.burst), left + (now - at) * self.per_s)

    def wait_s(self, address: str, now: float) -> float:
        """0 if a Hello from ``address`` may be checked now, else how long until it may."""
        left = self._left(address, now)
        return 0.0 if left >= 1.0 else (1.0 - left) / self.per_s

    def failed(self, address: str, now: float) -> None:
        """Count one failed Hello from ``address``."""
        left = self._left(address, now) - 1.0
        self._buckets.pop(address, None)
        self._buckets[address] = (left, now)
        while len(self._buckets) > self.max_addresses:
            del self._buckets[next(iter(self._buckets))]
