"""The competitions' common base plays a duplicate set through the referee's front door.

A real referee on a real socket and two SDK bots: both tables of a set are seated at once,
dealt from the set's one seed, sealed until the result is stored, then published; what a
finished table gives the standings (deal points, faults, forfeits) agrees with its log.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import trio

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick_referee.competitions.ladder.service import team_a_scores
from oddtrick_referee.competitions.tournaments.competition import Competition, DuplicateSet, PlayedTable
from oddtrick_referee.play.table import Fault, SeatRecord, TableRules
from tests.referee_support import in_thread, log_records, referee_running, run_sdk_bot

CONFIG = GameConfig.classic(format=MatchFormat.DEALS, deals=2)


def _seating(ns: str, ew: str) -> dict[Seat, str]:
    return {Seat.NORTH: ns, Seat.SOUTH: ns, Seat.EAST: ew, Seat.WEST: ew}


async def test_a_duplicate_set_is_dealt_alike_sealed_until_stored_then_published(tmp_path: Path) -> None:
    async with referee_running(tmp_path, ["alice", "bob"]) as referee:
        competition = Competition(referee)
        deal_set = DuplicateSet(CONFIG, TableRules(), "the-seed", set_id="set-1", table_id="alice v bob")
        specs = [
            deal_set.table(_seating("alice", "bob"), match_id="set-1-t1"),
            deal_set.table(_seating("bob", "alice"), match_id="set-1-t2"),
        ]
        other_set = dataclasses.replace(deal_set, set_id="set-2")
        async with trio.open_nursery() as bots:
            for name in ("alice", "bob"):
                bots.start_soon(in_thread, run_sdk_bot, referee.address, name, 4, 2)
            await referee.wait_for_seats({"alice": 4, "bob": 4}, CONFIG.game)
            seated = competition.seat_tables(specs)
            played = await competition.play_seated_tables(seated, "the other table failed")
            await referee.wait_for_seats({"alice": 4, "bob": 4}, CONFIG.game)
            other = [
                other_set.table(_seating("alice", "bob"), match_id="set-2-t1"),
                other_set.table(_seating("bob", "alice"), match_id="set-2-t2"),
            ]
            await competition.play_seated_tables(competition.seat_tables(other), "the other table failed")
        assert [table.match_id for table in played] == ["set-1-t1", "set-1-t2"]

        sealed_while_storing: list[set[str]] = []

        def store() -> str:
            sealed_while_storing.append(referee.store.withheld_sets())
            return "stored"

        assert (
            await competition.record(store, lambda written: ["set-1"] if written == "stored" else [])
            == "stored"
        )
        assert sealed_while_storing == [{"set-1", "set-2"}]
        assert await referee.sealed_sets() == {"set-2"}

        # A referee told to stop while it stores a result still publishes what it stored.
        with trio.CancelScope() as stopping:

            def store_as_it_stops() -> str:
                trio.from_thread.run_sync(stopping.cancel)
                return "stored"

            await competition.record(store_as_it_stops, lambda written: ["set-2"])
        assert stopping.cancel_called
        assert await referee.sealed_sets() == set()

    for table in played:
        ends = log_records(tmp_path / "data" / "logs" / f"{table.match_id}.jsonl", "hand_result")
        assert table.deals == [
            (r["hand"], r["points"][0] + r["honours"][0], r["points"][1] + r["honours"][1]) for r in ends
        ]
        assert set(table.faults()) == {"alice", "bob"}
        assert sum(table.faults().values()) == 0
        assert table.forfeited() == set()
    seeds = [
        log_records(tmp_path / "data" / "logs" / f"{t.match_id}.jsonl", "match_end")[0]["seed"]
        for t in played
    ]
    assert seeds == ["the-seed", "the-seed"]  # the same cards, dealer and turned trump at both
    # Team A (alice) held North-South at table 1 and East-West at table 2.
    assert team_a_scores(played) == [
        (deal, ns1 - ew1 + ew2 - ns2)
        for (deal, ns1, ew1), (_, ns2, ew2) in zip(played[0].deals, played[1].deals, strict=True)
    ]


def test_a_played_table_counts_faults_and_forfeits_by_bot() -> None:
    seats = {
        Seat.NORTH: SeatRecord("alice", {Fault.TIMEOUT: 2}),
        Seat.SOUTH: SeatRecord("alice", {Fault.ILLEGAL: 1}),
        Seat.EAST: SeatRecord("bob", forfeited=True),
        Seat.WEST: SeatRecord("bob"),
    }
    table = PlayedTable("m", [(1, 10, 0)], seats)
    assert table.faults() == {"alice": 3, "bob": 0}
    assert table.forfeited() == {"bob"}
    assert table.seat_dicts()["N"]["faults"] == {"timeout": 2}
