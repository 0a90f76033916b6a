"""Seats played in the referee's own process: no process, no connection, no token.

A :class:`LocalSeat` is the table's :class:`~.seat.TableSeat` for a player the referee
trusts to run beside it: a shipped bot (the demo's, the ladder's house bots,
``oddtrick play``'s partner and opponents, the conformance kit's opponents), a bot file
the operator runs in-process on purpose, or a person. It is sent the same messages as a
remote seat (the outbox decides them) and answers with the same ``Decision`` messages,
which the table reads, refuses and times exactly as a remote bot's: only the transport is
gone. A local seat never disconnects, so it has no grace period and no resume.

What plays the seat is a :class:`LocalPlayer`: :class:`BotPlayer` runs an SDK bot, its
decisions (and hooks) on a worker thread, one at a time per seat, so a slow bot delays
its own seat only and the table's deadline still cuts it short (the thread is then left
to finish on its own and its late answer is dropped, as a remote bot's would be).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import Protocol

import trio

from oddtrick import __version__
from oddtrick._bot import Bot
from oddtrick._in_process import BotSide
from oddtrick.rules import Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.seat import TableSeat
from oddtrick_referee.transport.sessions import NumberedEvents


class LocalPlayer(Protocol):
    """What plays a local seat: it is shown the seat's messages and answers its requests."""

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        """A message the table sends the seat (on the referee's loop: must not block)."""

    async def decide(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        """The answer to ``request`` (cancelled when the decision's deadline passes)."""

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        """The answer to send after a refusal, or None to let the referee act for the seat."""

    def finish(self) -> None:
        """The match is over for the seat: take in what it was told last."""


@dataclasses.dataclass(frozen=True)
class LocalEntrant:
    """A name the referee seats in its own process, and how to make a player for one seat."""

    name: str
    player: Callable[[], LocalPlayer]
    version: str = __version__
    seats: int | None = None
    """Matches it plays at once (None: as many as are asked of it)."""
    trusted_file: str = ""
    """The bot file, when an operator chose to run a bot file in-process (said in the
    standings' header); "" for the shipped bots and people."""


class BotPlayer:
    """An SDK bot playing one local seat: its decisions and hooks on a worker thread."""

    def __init__(self, make: Callable[[], Bot]) -> None:
        self._side = BotSide(make)
        self._limiter = trio.CapacityLimiter(1)
        """One thread at a time per seat: a decision left running past its deadline makes
        the seat's next one wait for it (and so count against its time), never run beside it."""

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        self._side.receive(message)

    async def decide(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        return await trio.to_thread.run_sync(
            self._side.answer, request, limiter=self._limiter, abandon_on_cancel=True
        )

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        return self._side.again(refusal)

    def finish(self) -> None:
        if not self._limiter.borrowed_tokens:  # else a decision still runs: it reads them itself
            self._side.read_inbox()


def bot_entrant(
    name: str, make: Callable[[], Bot], seats: int | None = None, trusted_file: str = ""
) -> LocalEntrant:
    """A local entrant played by fresh instances of an SDK bot."""
    return LocalEntrant(name, lambda: BotPlayer(make), seats=seats, trusted_file=trusted_file)


class LocalSeat(NumberedEvents):
    """A :class:`~.seat.TableSeat` played in the referee's process (see the module's docstring)."""

    def __init__(self, seat: Seat, entrant: LocalEntrant) -> None:
        self.seat = seat
        self.bot_name = entrant.name
        self.bot_version = entrant.version
        self.player = entrant.player()
        self._forfeited = False
        self._open_request = 0
        self._pending: referee_pb2.DecisionRequest | None = None
        """The open request, not yet handed to the player."""
        self._answers: collections.deque[referee_pb2.Decision] = collections.deque()

    # --------------------------------------------------------------- telling

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        self.player.receive(message)
        kind = message.WhichOneof("kind")
        if kind == "update" and message.update.HasField("request"):
            self._pending = message.update.request
        elif kind == "refusal" and (again := self.player.again(message.refusal)) is not None:
            self._answers.append(again.decision)

    # -------------------------------------------------------------- deciding

    def ask(self, request_id: int) -> None:
        self._open_request = request_id
        self._answers.clear()

    def asked(self) -> None:
        self._open_request = 0
        self._pending = None

    @property
    def answers_waiting(self) -> bool:
        return bool(self._answers)

    async def answer(self) -> referee_pb2.Decision | None:
        await trio.lowlevel.checkpoint_if_cancelled()
        while True:
            if self._answers:
                decision = self._answers.popleft()
                if decision.request_id == self._open_request:
                    return decision
                continue
            request = self._pending
            if request is None or request.request_id != self._open_request:
                await trio.sleep_forever()  # nothing more will come: the deadline decides
                continue
            self._pending = None
            answered = await self.player.decide(request)
            self._answers.append(answered.decision)

    # ---------------------------------------------------------- coming and going

    @property
    def connected(self) -> bool:
        return True

    async def wait_for_return(self) -> bool:
        return False

    @property
    def forfeited(self) -> bool:
        return self._forfeited

    def forfeit(self) -> None:
        self._forfeited = True

    def bind_table(
        self,
        on_resume: Callable[[TableSeat], None],
        on_detach: Callable[[TableSeat], None],
        on_unknown: Callable[[TableSeat, referee_pb2.Refusal], None],
    ) -> None:
        """A local seat never goes away, comes back, or answers an id never issued."""

    def release(self) -> None:
        """The match is over: the player takes in its last messages."""
        self.player.finish()
