"""Every request's HandState, built incrementally by the table, equals the engine's view.

The table advances one public HandState event by event instead of encoding
``state.view(seat)`` per request; the SDK advances its own copy from the same
events. These tests drive a Table through whole matches of every
configuration with in-memory seat links (the transport is tested end to end
elsewhere) and compare, at every decision, the request with
``hand_state(view)`` and with what an SDK ``SeatState`` rebuilt from the events.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import trio
from referee_support import PATIENCE_S

from oddtrick._codec import hand_state
from oddtrick._seat_state import SeatState
from oddtrick.rules import GameConfig, MatchFormat, Seat, TrumpSelection
from oddtrick.v1 import referee_pb2
from oddtrick_referee.play.matchlog import MatchLogWriter, read_log
from oddtrick_referee.play.table import Table, TableRules
from oddtrick_referee.transport.sessions import SeatLink, Session

CONFIGS = {
    "classic-turn": GameConfig.classic(format=MatchFormat.DEALS, deals=6),
    "classic-cut-honours": GameConfig.classic(
        trump_selection=TrumpSelection.CUT, honours=True, format=MatchFormat.DEALS, deals=6
    ),
    "classic-rotation-nt": GameConfig.classic(
        trump_selection=TrumpSelection.FIXED_ROTATION,
        no_trump_every_fifth=True,
        format=MatchFormat.DEALS,
        deals=6,
    ),
    "contract-doubling": GameConfig.contract(doubling=True, format=MatchFormat.DEALS, deals=8),
}


class CheckingStream:
    """Stands in for a bot's stream: checks each request, then answers it at random."""

    def __init__(self, table_box: list[Table], seat: Seat, rng: random.Random) -> None:
        self.table_box = table_box
        self.seat = seat
        self.rng = rng
        self.link: SeatLink | None = None
        self.peer = f"memory:{seat}"
        self.closed = False
        self.sdk = SeatState()
        self.requests = 0

    def send(self, message: referee_pb2.RefereeMessage) -> None:
        assert message.WhichOneof("kind") == "update", message
        update = message.update
        self.sdk.apply(update.events)
        if not update.HasField("request"):
            return
        request = update.request
        state = self.table_box[0].state
        assert state.to_act is self.seat
        expected = hand_state(state.view(self.seat))
        assert request.hand == expected, (
            f"request {request.request_id} to {self.seat}:\n{request.hand}\n!=\n{expected}"
        )
        from_events = referee_pb2.HandState()
        from_events.CopyFrom(self.sdk.hand)
        from_events.turn = request.hand.turn
        assert from_events == request.hand
        self.requests += 1
        assert self.link is not None
        answer = self.rng.choice(list(request.legal_actions))
        self.link.deliver(referee_pb2.Decision(request_id=request.request_id, action=answer))

    def close(self, *args: Any) -> None:
        self.closed = True


@pytest.mark.parametrize("name", sorted(CONFIGS))
async def test_every_request_matches_the_engine_view(name: str, tmp_path: Path) -> None:
    for match in range(2):
        rng = random.Random(f"{name}-{match}")
        table_box: list[Table] = []
        streams = {seat: CheckingStream(table_box, seat, rng) for seat in Seat}
        links = {}
        for seat, stream in streams.items():
            session = Session(stream, referee_pb2.Hello(bot_name=f"bot-{seat}", bot_version="1"), frozenset())  # type: ignore[arg-type]
            links[seat] = stream.link = SeatLink(seat, session, grace_s=5.0)
        log_path = tmp_path / f"{name}-{match}.jsonl"
        table = Table(
            match_id=f"{name}-{match}",
            table_id="memory",
            config=CONFIGS[name],
            seed=f"seed-{name}-{match}",
            rules=TableRules(deadline_s=5.0),
            links=links,
            log_writer=MatchLogWriter(log_path),
            max_attempts=8,
            max_comment_bytes=256,
        )
        table_box.append(table)
        with trio.fail_after(PATIENCE_S):
            state = await table.run()
        assert state.match_result is not None
        assert sum(stream.requests for stream in streams.values()) == sum(
            1 for record in read_log(log_path) if record["type"] == "action"
        )
        for stream in streams.values():
            assert stream.sdk.match_result is not None
            assert stream.sdk.seed == state.seed


@pytest.mark.parametrize(("think_ms", "bot_think_ms"), [(0, None), (7, 3), (12345, 12001), (None, None)])
def test_fast_action_lines_are_the_json_the_log_format_defines(
    think_ms: int | None, bot_think_ms: int | None, tmp_path: Path
) -> None:
    """``write_action`` formats by hand; it must give exactly what ``write`` gives."""
    from oddtrick.rules import DOUBLE, PASS, Call, Card, Denomination

    actions = [*(Card.from_index(i) for i in range(52)), PASS, DOUBLE, Call.bid(7, Denomination.NO_TRUMPS)]
    fast, slow = MatchLogWriter(tmp_path / "fast.jsonl"), MatchLogWriter(tmp_path / "slow.jsonl")
    for number, action in enumerate(actions):
        seat = Seat(number % 4)
        fast.write_action(number + 1, seat, str(action), think_ms, bot_think_ms)
        record = {
            "type": "action",
            "hand": number + 1,
            "seat": str(seat),
            "action": str(action),
            "think_ms": think_ms,
        }
        if bot_think_ms is not None:
            record["bot_think_ms"] = bot_think_ms
        slow.write(record)
    fast.close()
    slow.close()
    assert (tmp_path / "fast.jsonl").read_bytes() == (tmp_path / "slow.jsonl").read_bytes()
