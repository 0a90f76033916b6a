"""The one interface a table has to a seat, whoever plays it.

A table asks a seat for a decision and shows it events through :class:`TableSeat`, and
knows nothing else of it. Two families implement it:

- the remote seat, ``transport/sessions.py``'s ``SeatLink``: a bot process anywhere,
  over a gRPC stream, with everything a connection brings (resuming a dropped stream
  within a grace period, answers to ids never issued, floods);
- the local seats, :mod:`.local_seat`: a seat played in the referee's own process (a
  shipped bot, a bot file the operator trusts, a person at a terminal or a browser), with
  no process, connection or token.

Both are sent the same messages, made by the outbox (``outbox.py``), the one place that
decides what a seat is shown: a local seat can see no more than a remote one. Both answer
with the same ``Decision`` messages, read by the same codec and held to the same
deadline, attempts and faults by the table (``table.py``). A new kind of seat implements
this protocol in ``play/`` (see docs/architecture.md, "Where to add… a kind of seat").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from oddtrick.rules import Seat
from oddtrick.v1 import referee_pb2


class TableSeat(Protocol):
    """A seat at a table, as the table uses it."""

    seat: Seat
    bot_name: str
    bot_version: str

    # --------------------------------------------------------------- telling

    @property
    def sequence(self) -> int:
        """The last event number sent on this seat."""

    def number(self, events: Sequence[referee_pb2.Event]) -> None:
        """Number events about to be sent on this seat, in order, after the last sent."""

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        """Send the seat a message (never waits; a seat that is away misses it)."""

    # -------------------------------------------------------------- deciding

    def ask(self, request_id: int) -> None:
        """A request is open on the seat: its answers (and only its) reach :meth:`answer`."""

    def asked(self) -> None:
        """The open request is decided (or given up): later answers to it are not passed on."""

    async def answer(self) -> referee_pb2.Decision | None:
        """The next answer to the open request, or ``None`` if the seat went away."""

    @property
    def answers_waiting(self) -> bool:
        """An answer is there to take without waiting."""

    # ---------------------------------------------------------- coming and going

    @property
    def connected(self) -> bool:
        """Whether the seat can be asked now (a remote seat whose stream dropped cannot)."""

    async def wait_for_return(self) -> bool:
        """Wait (within the decision's deadline) for a seat that went away to come back:
        whether it did, before its grace period ran out."""

    @property
    def forfeited(self) -> bool:
        """The seat's grace ran out: the referee decides for it to the end of the match."""

    def forfeit(self) -> None:
        """From now on the referee decides for the seat."""

    def bind_table(
        self,
        on_resume: Callable[[TableSeat], None],
        on_detach: Callable[[TableSeat], None],
        on_unknown: Callable[[TableSeat, referee_pb2.Refusal], None],
    ) -> None:
        """The table to tell when the seat comes back, goes away, or answers an unknown id."""
