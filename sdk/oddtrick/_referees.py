"""The referees a bot may play at, in order, and which one its seats use now.

A ladder may run on several referees sharing one database (docs/ladder.md): a bot
given all their addresses plays at the first that answers and, when that one goes
away, at the next. The seats of one bot move together, so its streams stay at one
referee (which then sees all of them, as ``--seats`` said); one channel per
referee is opened when first used and kept, since a seat may come back to it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc

from oddtrick._tls import TlsOptions, aio_channel

log = logging.getLogger("oddtrick.bot")


class Referees:
    """The addresses in order, the one in use, and a channel to each one used."""

    def __init__(
        self, addresses: Sequence[str], tls: TlsOptions | None, channel_options: list[tuple[str, int]]
    ) -> None:
        if not addresses:
            raise ValueError("no referee address")
        self.addresses = tuple(addresses)
        self._tls = tls
        self._channel_options = channel_options
        self._channels: dict[int, grpc.aio.Channel] = {}
        self.current = 0
        """Which address the seats use now (an index into :attr:`addresses`)."""

    def address(self, index: int) -> str:
        return self.addresses[index]

    def described(self) -> str:
        """``A`` or ``A or B``: for messages."""
        return " or ".join(self.addresses)

    def channel(self, index: int) -> grpc.aio.Channel:
        if index not in self._channels:
            self._channels[index] = aio_channel(self.addresses[index], self._tls, self._channel_options)
        return self._channels[index]

    def unreachable(self, index: int) -> bool:
        """A seat could not reach the referee at ``index``: every seat moves on to the next
        address (unless another seat has moved them already). True when this went round to
        the first address again, all of them tried: time to wait longer before the next try."""
        if len(self.addresses) == 1:
            return True
        if index != self.current:
            return False
        self.current = (index + 1) % len(self.addresses)
        log.info("no referee answers at %s; trying %s", self.addresses[index], self.addresses[self.current])
        return self.current == 0

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
