"""A bot with one deliberate protocol bug, for the conformance check's own tests.

    python tests/broken_bot.py --bug BUG [--pid-file FILE]

It reads ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS and the token (from
ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN) like any tournament entry, plays the
first legal action, and otherwise behaves: resumes dropped streams and gaps in
the event numbers, retries refused answers, stops on OK. The bugs:

- wrong-id: answers its 5th request with an id the referee never sent;
- never-resume: after a dropped stream, opens a new session instead of resuming;
- strict-enums: dies on an enum value it does not know (as code that maps
  every value through a closed switch would);
- no-retry: never answers a request again after a refusal;
- ignore-gaps: does not look at Event.sequence;
- never-answers: holds its seats but answers nothing;
- late: under a deadline of 1 s or less, answers its 3rd such request after 1.3 s;
- illegal-card: revokes, as a bot that ignores the suit led would: plays a card it holds
  that is not among the legal ones whenever it has one, on every retry too;
- revoke-once: revokes once, the first time it can, and answers legally when refused;
- none: no bug.

``--pid-file`` writes the process id there (to see that it was stopped).
"""

from __future__ import annotations

import argparse
import itertools
import os
import queue
import sys
import threading
import time
from typing import Any

import grpc

from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2, referee_pb2_grpc

_CLOSE = object()
answers = itertools.count(1)
short = itertools.count(1)
revoked = threading.Event()


def strict(enum: Any, value: int) -> str:
    """The enum value's name; raises ValueError for a value this build does not know."""
    name: str = enum.Name(value)
    return name


def gap(update: referee_pb2.Update, sequence: list[int]) -> bool:
    """Whether an event skips a number (``sequence[0]`` is the last one seen, and is advanced)."""
    for event in update.events:
        if event.sequence != sequence[0] + 1:
            print(f"broken bot: event {event.sequence} after {sequence[0]}; resuming", file=sys.stderr)
            return True
        sequence[0] = event.sequence
    return False


def choose(request: referee_pb2.DecisionRequest, bug: str) -> Any:
    """The action to answer with: the first legal one; for illegal-card (and revoke-once, the
    first time) a card held that is not legal, when there is one (the suit led not followed)."""
    legal = request.legal_actions
    if bug in ("illegal-card", "revoke-once") and legal[0].HasField("card") and not revoked.is_set():
        revoke = [card for card in request.hand.cards if all(action.card != card for action in legal)]
        if revoke:
            if bug == "revoke-once":
                revoked.set()
            return cards_pb2.Action(card=revoke[0])
    return legal[0]


def read_token() -> str:
    """From the pipe a tournament hands its entries (no newline at the end), else the variable."""
    fd = os.environ.get("ODDTRICK_TOKEN_FD", "")
    if fd.isdigit():
        with os.fdopen(int(fd), "rb") as pipe:
            return pipe.read().decode("utf-8")
    return os.environ["ODDTRICK_TOKEN"]


def session(stub: referee_pb2_grpc.RefereeStub, bug: str, token: str, failures: list[str]) -> None:
    resume_token: str | None = None
    sequence = [0]
    while True:
        outbox: queue.Queue[Any] = queue.Queue()
        hello = referee_pb2.Hello(
            bot_name=os.environ["ODDTRICK_NAME"],
            token=token,
            protocol=referee_pb2.ProtocolVersion(name="oddtrick.v1"),
            games=[game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT],
        )
        if resume_token is not None and bug != "never-resume":
            hello.resume_token = resume_token
        outbox.put(referee_pb2.BotMessage(hello=hello))
        call = stub.Play(iter(outbox.get, _CLOSE))
        last: referee_pb2.DecisionRequest | None = None
        try:
            for message in call:
                kind = message.WhichOneof("kind")
                request = None
                if kind == "update" and bug != "ignore-gaps" and gap(message.update, sequence):
                    call.cancel()  # events were lost: close the stream and resume
                    break
                if kind == "welcome":
                    resume_token = message.welcome.resume_token
                    if not message.welcome.resumed:
                        sequence[0] = 0
                elif kind == "update" and message.update.HasField("request"):
                    request = message.update.request
                elif kind == "resync":
                    sequence[0] = message.resync.last_sequence
                    if message.resync.HasField("request"):
                        request = message.resync.request
                elif kind == "refusal" and last is not None and bug != "no-retry":
                    if bug == "strict-enums":
                        strict(referee_pb2.RefusalReason, message.refusal.reason)
                    retry = message.refusal.reason != referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST
                    if (
                        retry
                        and message.refusal.request_id == last.request_id
                        and message.refusal.attempts_left
                    ):
                        decision = referee_pb2.Decision(request_id=last.request_id, action=choose(last, bug))
                        outbox.put(referee_pb2.BotMessage(decision=decision))
                        last = None
                if request is None or bug == "never-answers":
                    continue
                if bug == "strict-enums":
                    strict(referee_pb2.DecisionKind, request.kind)
                    strict(referee_pb2.HandPhase, request.hand.phase)
                request_id = request.request_id
                if bug == "late" and request.time_left_ms <= 1000 and next(short) == 3:
                    time.sleep(1.3)
                if bug == "wrong-id" and next(answers) == 5:
                    request_id += 1000
                decision = referee_pb2.Decision(request_id=request_id, action=choose(request, bug))
                outbox.put(referee_pb2.BotMessage(decision=decision))
                last = request
        except grpc.RpcError as error:
            if error.code() is grpc.StatusCode.NOT_FOUND and bug == "never-answers":
                return  # forfeited: the seat is gone
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                failures.append(f"{error.code()}: {error.details()}")
                return
            time.sleep(0.2)  # reconnect after a short pause (a test bot: no backoff needed)
        except ValueError as error:  # strict-enums: the bot dies
            print(f"broken bot: {error}", file=sys.stderr, flush=True)
            os._exit(3)
        else:
            if call.code() is grpc.StatusCode.CANCELLED:
                time.sleep(0.05)  # closed here, on a gap: resume
                continue
            return  # the call ended with OK
        finally:
            outbox.put(_CLOSE)


def main() -> int:
    parser = argparse.ArgumentParser()
    bugs = [
        "wrong-id",
        "never-resume",
        "strict-enums",
        "no-retry",
        "ignore-gaps",
        "never-answers",
        "late",
        "illegal-card",
        "revoke-once",
        "none",
    ]
    parser.add_argument("--bug", choices=bugs, required=True)
    parser.add_argument("--pid-file", default=None)
    args = parser.parse_args()
    bug = args.bug
    if args.pid_file:
        with open(args.pid_file, "w") as out:
            out.write(str(os.getpid()))
    token = read_token()
    channel = grpc.insecure_channel(os.environ["ODDTRICK_SERVER"])
    stub = referee_pb2_grpc.RefereeStub(channel)
    failures: list[str] = []
    threads = [
        threading.Thread(target=session, args=(stub, bug, token, failures), daemon=True)
        for _ in range(int(os.environ.get("ODDTRICK_SEATS", "1")))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print("\n".join(failures), file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
