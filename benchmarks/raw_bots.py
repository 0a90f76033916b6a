"""Light bots for the load and flood benchmarks: many raw grpc.aio sessions in one process.

Each session is a bare protocol client (no SDK, no rules engine): Hello,
answer every request with its first legal action, Leave after its match.
A *flooder* session answers each request with a burst of malformed answers
(each one refused, then counted as unsolicited, then the call is cut off),
resumes its seat with its resume token and floods again, until its match
ends. Run as a process:

    python benchmarks/raw_bots.py ADDRESS [--think-ms=MS] [--stay] [--report-think] SPEC...

(``--think-ms``: wait that long before each answer, as a bot that thinks;
``--stay``: stay seated for match after match until the referee ends the
session, rather than Leave after the first; ``--report-think``: send the
bot's own time with each answer, ``Decision.bot_think_ms``, from reading the
request to writing the answer, and count the answers the referee timed out
anyway, with that time, and how late this process's event loop wakes up),
where each SPEC is ``name:token:sessions[:flood=N]``. It prints one JSON line
when every session is over: sessions, decisions answered, flood messages sent,
and the sessions that ended badly (with ``--report-think`` also ``think_ms``
and ``loop_lag_ms``, histograms of the bot's own time and of its loop's
lateness, and ``late``, the own times of the answers that were timed out).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

import grpc

from oddtrick._timing import Histogram
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2, referee_pb2_grpc

PROTOCOL = referee_pb2.ProtocolVersion(name="oddtrick.v1", minor=0)
GAMES = [1, 2]
SESSIONS_PER_CHANNEL = 64
"""Streams per HTTP/2 connection (one connection per this many sessions)."""


@dataclass
class Tally:
    decisions: int = 0
    flood_messages: int = 0
    cut_off: int = 0
    failures: list[str] = field(default_factory=list)
    think: Histogram = field(default_factory=Histogram)
    """The bot's own time per answer, ms (with --report-think)."""
    late: list[int] = field(default_factory=list)
    """The own times of answers the referee timed out all the same."""
    timed_out_unanswered: int = 0
    """Time-outs of requests this bot never answered (none, for these bots)."""
    loop_lag: Histogram = field(default_factory=Histogram)


LOOP_PROBE_S = 0.01
"""The loop-lag probe sleeps this long and records how much later it wakes."""


async def probe_loop(tally: Tally, stop: asyncio.Event) -> None:
    """How late this process's event loop runs what is due: every answer waits as long."""
    while not stop.is_set():
        asked = time.perf_counter()
        await asyncio.sleep(LOOP_PROBE_S)
        tally.loop_lag.add(round((time.perf_counter() - asked - LOOP_PROBE_S) * 1000))


def _own_timeout(events: Iterable[referee_pb2.Event], seat: int) -> bool | None:
    """Whether the events settle this seat's decision: True when the referee timed it
    out, False when the seat's own action was taken, None when they do not settle it."""
    for event in events:
        kind = event.WhichOneof("kind")
        if kind in ("card_played", "call_made"):
            action = getattr(event, kind)
            if action.seat == seat:
                return bool(action.by_referee and action.fault == game_pb2.FAULT_KIND_TIMEOUT)
    return None


def first_choice(request: referee_pb2.DecisionRequest) -> cards_pb2.Action:
    """Open the auction with the lowest bid (so every deal is played out), else pass or the
    first legal card."""
    if request.kind == referee_pb2.DECISION_KIND_CALL and not any(
        call.call.HasField("bid") for call in request.hand.auction
    ):
        return next((a for a in request.legal_actions if a.call.HasField("bid")), request.legal_actions[0])
    return request.legal_actions[0]


async def session(
    stub: referee_pb2_grpc.RefereeStub,
    name: str,
    token: str,
    flood: int,
    tally: Tally,
    think_s: float,
    stay: bool = False,
    report: bool = False,
) -> None:
    resume: str | None = None
    pending: int | None = None  # the own time of the answer not yet settled
    seat = 0
    while True:
        hello = referee_pb2.Hello(
            bot_name=name, bot_version="raw", token=token, protocol=PROTOCOL, games=GAMES
        )
        if resume is not None:
            hello.resume_token = resume
        call = stub.Play()
        await call.write(referee_pb2.BotMessage(hello=hello))
        ended = False
        try:
            async for message in call:
                kind = message.WhichOneof("kind")
                request = None
                if kind == "welcome":
                    resume = message.welcome.resume_token
                elif kind == "update":
                    if report and seat:
                        settled = _own_timeout(message.update.events, seat)
                        if settled is not None:
                            if settled:
                                if pending is None:
                                    tally.timed_out_unanswered += 1
                                else:
                                    tally.late.append(pending)
                            pending = None
                    if any(event.HasField("match_ended") for event in message.update.events):
                        ended = True
                        if not stay:
                            await call.write(referee_pb2.BotMessage(leave=referee_pb2.Leave()))
                    if message.update.HasField("request"):
                        request = message.update.request
                elif kind == "resync" and message.resync.HasField("request"):
                    request = message.resync.request
                if request is None:
                    continue
                received = time.perf_counter()
                seat = request.seat
                pending = None
                if flood:
                    bad = referee_pb2.BotMessage(
                        decision=referee_pb2.Decision(
                            request_id=request.request_id, action=cards_pb2.Action()
                        )
                    )
                    for _ in range(flood):
                        try:
                            await call.write(bad)
                        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
                            break  # cut off: reading the call says how
                        tally.flood_messages += 1
                    continue
                if think_s:
                    await asyncio.sleep(think_s)
                decision = referee_pb2.Decision(request_id=request.request_id, action=first_choice(request))
                if report:
                    own = round((time.perf_counter() - received) * 1000)
                    decision.bot_think_ms = own
                    tally.think.add(own)
                    pending = own
                await call.write(referee_pb2.BotMessage(decision=decision))
                tally.decisions += 1
        except grpc.aio.AioRpcError as error:
            if flood and not ended and error.code() is not grpc.StatusCode.NOT_FOUND:
                # Cut off (RESOURCE_EXHAUSTED; grpc's client can also report the cut as an
                # INTERNAL error while it was still writing): resume the seat, flood again.
                tally.cut_off += 1
                continue
            if ended and error.code() is grpc.StatusCode.OK:
                return
            tally.failures.append(f"{name}: {error.code().name} {error.details()}")
            return
        else:
            return  # ended with OK after the Leave


async def main(address: str, specs: list[str]) -> None:
    tally = Tally()
    think_s = 0.0
    if specs and specs[0].startswith("--think-ms="):
        think_s = float(specs.pop(0).removeprefix("--think-ms=")) / 1000
    stay = bool(specs) and specs[0] == "--stay"
    if stay:
        specs.pop(0)
    report = bool(specs) and specs[0] == "--report-think"
    if report:
        specs.pop(0)
    plan = []
    for spec in specs:
        name, token, count, *rest = spec.split(":")
        flood = int(rest[0].removeprefix("flood=")) if rest else 0
        plan += [(name, token, flood)] * int(count)
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.http2.bdp_probe", 0)])
        for _ in range(0, len(plan), SESSIONS_PER_CHANNEL)
    ]
    stubs = [referee_pb2_grpc.RefereeStub(channel) for channel in channels]
    stop = asyncio.Event()
    probe = asyncio.ensure_future(probe_loop(tally, stop)) if report else None
    await asyncio.gather(
        *(
            session(stubs[index // SESSIONS_PER_CHANNEL], name, token, flood, tally, think_s, stay, report)
            for index, (name, token, flood) in enumerate(plan)
        )
    )
    stop.set()
    if probe is not None:
        await probe
    for channel in channels:
        await channel.close()
    print(
        json.dumps(
            {
                "sessions": len(plan),
                "decisions": tally.decisions,
                "flood_messages": tally.flood_messages,
                "cut_off": tally.cut_off,
                "failures": tally.failures[:10],
                **(
                    {
                        "think_ms": tally.think.to_dict(),
                        "late": tally.late,
                        "timed_out_unanswered": tally.timed_out_unanswered,
                        "loop_lag_ms": tally.loop_lag.to_dict(),
                    }
                    if report
                    else {}
                ),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
