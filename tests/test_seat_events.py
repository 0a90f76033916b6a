"""The seat's page is sent the one JSON shape of a match: the events of the finished match's
document (``replay/json_export.py``), as the seat is told them while it plays. A person's
seat is played on a real referee (its Sittings, the sample bots as local seats), the
desk answered with the first legal action at every question; then the events the page
was sent are compared with ``match_to_json`` of the match's log, filtered to the seat:
the same events, numbered the same, each hand's start holding the seat's own cards and
no other, and nothing of how a decision was made (what spectators are not told)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
import trio

from oddtrick.rules import GameConfig, Seat
from oddtrick_referee.competitions.people.at_terminal import DEFAULT_BOT, opponent
from oddtrick_referee.competitions.people.browser_seat import BIDDING_BOX
from oddtrick_referee.competitions.people.in_browser import Sitting, Sittings
from oddtrick_referee.competitions.people.seat_desk import SeatDesk
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.model import replay_log

GUARD_S = 120.0
DECIDED = {"think_ms", "bot_think_ms", "clock_ms", "fault", "comment", "faults"}
"""What the finished document says of a decision and no one is told during play."""


def as_seat_sees(event: dict[str, Any], seat: Seat) -> dict[str, Any]:
    """A document event as ``seat`` is told it during play."""
    shown = {key: value for key, value in event.items() if key not in DECIDED}
    if shown["type"] == "hand_started":
        shown["hands"] = {str(seat): event["hands"][str(seat)]}
    return shown


async def play_from_the_desk(tmp_path: Path, game: str, seat: Seat) -> tuple[list[Any], Any, SeatDesk]:
    """One match of two deals, every question answered with its first legal action."""
    sittings = Sittings(tmp_path / "data", io.StringIO())
    ended = trio.Event()
    records: list[Any] = []
    followed: list[Any] = []

    def end(desk: SeatDesk, record: Any) -> None:
        records.append(record)
        ended.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(sittings.run)
        partner = opponent(str(DEFAULT_BOT), "partner")
        opponents = opponent(str(DEFAULT_BOT), "opponents")
        config = GameConfig.from_dict({"game": game, "format": "deals", "deals": 2})
        desk = sittings.start(
            Sitting(config, seat, partner, opponents, "ada", seed=f"{game} shape"), on_end=end
        )
        with trio.fail_after(GUARD_S):
            async for kind, shown in desk.follow():
                followed.append((kind, shown))
                if kind == "asked":
                    assert desk.answer(shown["legal"][0]) is None
            await ended.wait()
        nursery.cancel_scope.cancel()
    return followed, records[0], desk


@pytest.mark.parametrize(("game", "seat"), [("classic", Seat.NORTH), ("contract", Seat.WEST)])
async def test_the_seat_page_is_sent_the_match_document_s_events_as_the_seat_sees_them(
    tmp_path: Path, game: str, seat: Seat
) -> None:
    followed, record, desk = await play_from_the_desk(tmp_path, game, seat)
    assert record is not None
    document = match_to_json(replay_log(record.log_path))
    events = [shown for kind, shown in followed if kind == "event"]
    assert events == [as_seat_sees(event, seat) for event in document["events"]]
    assert events == desk.events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))

    questions = [shown for kind, shown in followed if kind == "asked"]
    ours = [e for e in events if e["type"] in ("call_made", "card_played") and e["seat"] == str(seat)]
    assert len(questions) == len(ours) >= 26  # 13 cards a deal, and the calls
    for asked in questions:
        assert set(asked) == {"asked", "after", "kind", "legal", "why_not"}
        following = events[asked["after"]]  # the event after the question: the seat's answer
        assert following["type"] in ("call_made", "card_played")
        assert following["seat"] == str(seat)
        assert (following.get("card") or following["call"]) in asked["legal"] or asked["kind"] == "call"
        if asked["kind"] == "card":
            assert all(why.startswith("you must follow suit") for why in asked["why_not"].values())
            continue
        # A call: every other call of the bidding box, with the rules' reason.
        assert set(asked["why_not"]) | set(asked["legal"]) == {str(call) for call in BIDDING_BOX}
        for call, why in asked["why_not"].items():
            reason = "you cannot double now" if call == "double" else "is not higher than the bid so far"
            assert reason in why, (call, why)
    assert any(asked["why_not"] for asked in questions if asked["kind"] == "card"), "no card was ever greyed"
