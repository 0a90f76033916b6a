"""What a newcomer runs into in the first hour, each answered in a line or two."""

from __future__ import annotations

import asyncio

import pytest
import trio
from referee_support import GUARD_S, SeededBot, in_thread, log_records, referee_running, run_sdk_bot, token_of

from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee import MatchSpec, RefereeSettings, TableRules, check_log, running_referee
from oddtrick_referee.competitions.standings import FaultCounts, compute_standings
from oddtrick_referee.play.table import Fault


async def test_a_second_referee_on_a_busy_port_fails_at_start(tmp_path):
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path / "one")) as first:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{first.port}: the port is in use"):
            async with running_referee(RefereeSettings(port=first.port, data_dir=tmp_path / "two")):
                pass


class Clumsy(SeededBot):
    """Raises on every third card it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def choose_card(self, view):
        self.asked += 1
        if self.asked % 3 == 0:
            raise KeyError("QH")
        return super().choose_card(view)


def run_clumsy(address: str, name: str) -> None:
    options = ClientOptions(server=address, name=name, token=token_of(name), seats=2, max_matches=1)
    asyncio.run(asyncio.wait_for(run_bot_async(Clumsy, options), timeout=60))


async def test_a_bot_that_raises_is_recorded_with_a_fault_of_its_own_and_the_game_goes_on(tmp_path):
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=1)
    seating = {Seat.NORTH: "clumsy", Seat.SOUTH: "clumsy", Seat.EAST: "steady", Seat.WEST: "steady"}
    async with referee_running(tmp_path, ["clumsy", "steady"]) as referee:
        with trio.fail_after(GUARD_S * 2):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(in_thread, run_clumsy, referee.address, "clumsy")
                nursery.start_soon(in_thread, run_sdk_bot, referee.address, "steady", 2, 1)
                record = await referee.play_match(MatchSpec(config, seating, TableRules()), wait_s=GUARD_S)
    errors = sum(record.seats[seat].faults.get(Fault.BOT_ERROR, 0) for seat in (Seat.NORTH, Seat.SOUTH))
    assert errors == 2 * (13 // 3)  # each seat is asked for 13 cards; every third raised
    assert all(Fault.BOT_ERROR not in record.seats[seat].faults for seat in (Seat.EAST, Seat.WEST))
    assert record.state.match_result is not None
    reported = [r for r in log_records(record.log_path, "action") if "bot_error" in r]
    assert len(reported) == errors
    assert {r["bot_error"] for r in reported} == {"KeyError: 'QH'"}
    assert all(r["think_ms"] is not None and "fault" not in r for r in reported)
    end = log_records(record.log_path, "match_end")[0]
    assert sum(end["seats"][s]["faults"].get("bot_error", 0) for s in "NS") == errors
    assert check_log(record.log_path).ok


def test_the_standings_show_bot_errors_as_their_own_kind():
    standings = compute_standings(["a", "b"], [], {"a": FaultCounts(bot_errors=3)}, [], duplicate=True)
    assert "E3" in standings.render()
    assert "E bot errors" in standings.render()
    assert standings.to_json()["entries"][0]["faults"]["bot_errors"] in (0, 3)
