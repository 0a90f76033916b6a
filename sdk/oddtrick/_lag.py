"""How much time the referee counts against a seat beyond the bot's own.

The referee measures each answer from sending the request to receiving the
answer and reports it as ``think_ms`` in the seat's own ``card_played`` or
``call_made`` event. The client knows its own part: from receiving the request
to sending the answer. The difference is what neither the bot nor its search
controls (the network both ways, and scheduling in the referee and in this
process before the request was read), and a bot that means to answer in time
must hold back at least that much. The meter keeps the last few differences;
their worst is the figure a deadline is planned with, so one slow round trip
raises the margin at once and it falls back only as slow ones age out.
"""

from __future__ import annotations

import collections

from oddtrick.v1 import referee_pb2

WINDOW = 256
"""Round trips remembered: the margin answers for the worst of these. Lag on a
loaded machine comes in rare spikes (the worst of a thousand answers several
times the 99th percentile), so the memory is long: about fifteen hands of
one seat's decisions."""


class LagMeter:
    """One seat's transport lag, measured from its own answers' ``think_ms``."""

    def __init__(self, window: int = WINDOW) -> None:
        self._lags: collections.deque[float] = collections.deque(maxlen=window)
        self._worst: float | None = None
        """``max(self._lags)``, kept as lags come and go: it is read for every request."""
        self._own_s: float | None = None

    def answered(self, own_s: float) -> None:
        """The seat answered a request ``own_s`` seconds after receiving it."""
        self._own_s = own_s

    def forget(self) -> None:
        """The answer in flight will not be reported (a resumed session, a new match)."""
        self._own_s = None

    def observe(self, event: referee_pb2.Event, seat: int) -> None:
        """Take in one event: the seat's own accepted action closes a round trip."""
        kind = event.WhichOneof("kind")
        if kind == "card_played":
            self.observe_action(event.card_played, seat)
        elif kind == "call_made":
            self.observe_action(event.call_made, seat)

    def observe_action(self, action: referee_pb2.CardPlayed | referee_pb2.CallMade, seat: int) -> None:
        """Take in one card or call: the seat's own accepted action closes a round trip."""
        if action.seat != seat or self._own_s is None:
            return
        own_s, self._own_s = self._own_s, None
        if action.by_referee or not action.HasField("think_ms"):
            return  # a fallback: the answer never counted, so there is nothing to compare
        lag = max(0.0, action.think_ms / 1000 - own_s)
        lags = self._lags
        leaving = lags[0] if len(lags) == lags.maxlen else None
        lags.append(lag)
        if self._worst is None or lag >= self._worst:
            self._worst = lag
        elif leaving == self._worst:
            self._worst = max(lags)  # the worst just aged out: find the next

    @property
    def lag_ms(self) -> float | None:
        """The worst recent lag in milliseconds, or ``None`` before any was measured."""
        return self._worst * 1000 if self._worst is not None else None
