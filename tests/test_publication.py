"""One publication rule: a deal's log is served only when no table of its competition
will deal it again. Attacked as a remote entrant would: ask the Arena for every finished
table's log, with no token, before each table is dealt."""

from __future__ import annotations

import io
import json
from pathlib import Path

import grpc
import pytest
import trio

from oddtrick.deal_sets import read_deal_set
from oddtrick.rules import GameConfig
from oddtrick.v1 import arena_pb2, arena_pb2_grpc
from oddtrick_referee.competitions.scoring.publication import PlannedTable, deal_keys, publishable
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.tournaments.tournament import Progress, Tournament, run_tournament
from oddtrick_referee.competitions.tournaments.tournament_plan import parse_entry, plan_runs, run_deals
from tests.test_deal_sets import DEAL_1, DEAL_2, game, pbn
from tests.test_tournament import RANDOM_BOT, settings

DEAL_3 = "S:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"
DEAL_4 = "W:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


def served_deals(address: str, match_ids: list[str]) -> set[int]:
    """The deal-file indices of every log the Arena serves, to anyone, now."""
    found: set[int] = set()
    refused: list[grpc.StatusCode] = []
    with grpc.insecure_channel(address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        for match_id in match_ids:
            try:
                served = arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id=match_id), timeout=10)
            except grpc.RpcError as error:
                refused.append(error.code())
                continue
            end = json.loads(served.lines[-1])
            found |= set(end["fixed_deals"]["indices"])
    assert set(refused) <= {grpc.StatusCode.FAILED_PRECONDITION}, refused  # withheld, not lost
    return found


@pytest.mark.parametrize("duplicate", [True, False], ids=["duplicate", "one-play"])
async def test_a_deal_files_deals_are_withheld_until_no_pairing_will_deal_them(
    tmp_path: Path, duplicate: bool
) -> None:
    file = tmp_path / "four.pbn"
    file.write_text(
        pbn(game(DEAL_1, "N", 1), game(DEAL_2, "E", 2), game(DEAL_3, "S", 3), game(DEAL_4, "W", 4))
    )
    deal_set = read_deal_set(file)
    entries = tuple(parse_entry(f"{name}={RANDOM_BOT}") for name in ("ann", "bob", "cy"))
    plan = settings(
        entries,
        config=GameConfig.classic(),
        deals=4,
        set_size=2,
        deal_set=deal_set,
        duplicate=duplicate,
        tables=1,
    )
    known_before_dealt: list[tuple[str, set[int]]] = []
    served_at_end: set[int] = set()

    async def play(tournament: Tournament, progress: Progress, master_seed: str) -> Standings:
        runs = plan_runs(tournament.settings, master_seed)
        match_ids: list[str] = []
        for number, run in enumerate(runs):
            deals = run_deals(tournament.settings, run)
            assert deals is not None
            public = await trio.to_thread.run_sync(served_deals, tournament.referee.address, match_ids)
            known_before_dealt.append((tournament.run_id(run), public & set(deals.indices)))
            await tournament.play_run(run, progress)
            row = await tournament.referee.played_run(tournament.run_id(run))
            assert row is not None
            match_ids.append(row["match_id"])
            assert number < len(runs)
        served_at_end.update(
            await trio.to_thread.run_sync(served_deals, tournament.referee.address, match_ids)
        )
        return tournament.standings()

    await run_tournament(plan, tmp_path / "data", progress_stream=io.StringIO(), play=play)
    assert len(known_before_dealt) == (12 if duplicate else 3)
    assert [leak for leak in known_before_dealt if leak[1]] == []
    assert served_at_end == {0, 1, 2, 3}  # once no pairing will deal them, every log is served


def test_the_rule_releases_a_set_once_its_tables_are_over_and_its_deals_dealt_no_more() -> None:
    twins = frozenset({"seed of s1"})
    assert publishable([PlannedTable("s1", twins, True), PlannedTable("s1", twins, False)]) == []
    assert publishable([PlannedTable("s1", twins, True), PlannedTable("s1", twins, True)]) == ["s1"]
    shared = frozenset({"deal 0 of f"})
    later = PlannedTable("s2", shared | {"deal 1 of f"}, False)
    assert publishable([PlannedTable("s1", shared, True), later]) == []
    assert publishable(
        [PlannedTable("s1", shared, True), PlannedTable("s3", frozenset({"deal 2 of f"}), False)]
    ) == ["s1"]
    assert deal_keys("s1", None) != deal_keys("s2", None)
