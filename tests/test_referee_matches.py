"""Whole matches on a real referee: SDK bots in threads and in processes, the
Arena service, health and reflection, and what each seat may see.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from referee_support import (
    PATIENCE_S,
    RawBot,
    check_hidden_information,
    connect_and_play,
    count_faults,
    first_legal,
    in_thread,
    log_records,
    random_legal,
    referee_running,
    run_sdk_bot,
    token_of,
)

import oddtrick
from oddtrick.rules import GameConfig, GameKind, MatchFormat, Seat
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
REPO = Path(__file__).resolve().parents[1]
RELAXED = TableRules(deadline_s=5.0, grace_s=5.0)
"""For well-behaved bots: a deadline no loaded machine misses."""


def two_deals(game: GameKind) -> GameConfig:
    return GameConfig(game=game, format=MatchFormat.DEALS, deals=2)


def assert_clean_finish(record, hands: int) -> None:
    result = record.state.match_result
    assert result is not None
    assert result.hands_played == hands
    report = check_log(record.log_path)
    assert report.ok, report.describe()
    assert report.hands == hands
    assert count_faults(record.seats) == 0, record.seats
    assert not any(r.forfeited for r in record.seats.values())


# ---------------------------------------------------------------------------
# Arena, health and reflection: plain synchronous gRPC calls, run in a thread
# ---------------------------------------------------------------------------


def query_arena(address: str, match_ids: list[str]) -> dict:
    with grpc.insecure_channel(address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        info = arena.GetServerInfo(arena_pb2.GetServerInfoRequest(), timeout=5)
        listing = arena.ListMatches(arena_pb2.ListMatchesRequest(page_size=10), timeout=5)
        logs = {
            match_id: arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id=match_id), timeout=5)
            for match_id in match_ids
        }
        classic_only = arena.ListMatches(
            arena_pb2.ListMatchesRequest(game_kind=game_pb2.GAME_KIND_CLASSIC), timeout=5
        )
        first_page = arena.GetMatchLog(
            arena_pb2.GetMatchLogRequest(match_id=match_ids[0], page_size=3), timeout=5
        )
        second_page = arena.GetMatchLog(
            arena_pb2.GetMatchLogRequest(
                match_id=match_ids[0], page_size=3, page_token=first_page.next_page_token
            ),
            timeout=5,
        )
        with pytest.raises(grpc.RpcError) as missing:
            arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id="no-such-match"), timeout=5)
        with pytest.raises(grpc.RpcError) as bad_token:
            arena.ListMatches(arena_pb2.ListMatchesRequest(page_token="not-a-token"), timeout=5)
        by_bot = arena.ListMatches(arena_pb2.ListMatchesRequest(bot_name="alice", page_size=1), timeout=5)
        by_nobody = arena.ListMatches(arena_pb2.ListMatchesRequest(bot_name="carol"), timeout=5)
        in_progress = arena.ListMatches(
            arena_pb2.ListMatchesRequest(statuses=[arena_pb2.MATCH_STATUS_IN_PROGRESS]), timeout=5
        )
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=5
        )
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        answers = list(
            reflection.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
            )
        )
    return {
        "info": info,
        "listing": listing,
        "logs": logs,
        "classic_only": classic_only,
        "pages": (first_page, second_page),
        "missing": missing.value.code(),
        "bad_token": bad_token.value.code(),
        "by_bot": by_bot,
        "by_nobody": by_nobody,
        "in_progress": in_progress,
        "health": health.status,
        "services": {s.name for a in answers for s in a.list_services_response.service},
    }


async def test_whole_matches_of_both_games_between_sdk_bots(tmp_path):
    seating = {N: "alice", E: "bob", S: "alice", W: "bob"}
    records = []
    async with referee_running(tmp_path, ["alice", "bob"]) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as bots:
                for name in ("alice", "bob"):
                    bots.start_soon(in_thread, run_sdk_bot, referee.address, name, 2, 2)
                for game in (GameKind.CLASSIC, GameKind.CONTRACT):
                    spec = MatchSpec(two_deals(game), seating, RELAXED, seed=f"whole-{game.value}")
                    records.append(await referee.play_match(spec, wait_s=20))
            answers = await in_thread(query_arena, referee.address, [r.match_id for r in records])

    for record, game in zip(records, (GameKind.CLASSIC, GameKind.CONTRACT), strict=True):
        assert record.state.config.game is game
        assert_clean_finish(record, hands=2)
        assert {s: r.bot_name for s, r in record.seats.items()} == seating
        assert all(r.decisions > 0 for r in record.seats.values())

    info = answers["info"]
    assert info.server_version == oddtrick.__version__
    assert [p.name for p in info.protocols] == ["oddtrick.v1"]
    assert {g.kind for g in info.games} == {game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT}
    listed = {m.match_id: m for m in answers["listing"].matches}
    for record, kind in zip(records, (game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT), strict=True):
        summary = listed[record.match_id]
        assert summary.status == arena_pb2.MATCH_STATUS_FINISHED
        assert summary.config.kind == kind
        assert summary.hands_played == 2
        assert summary.HasField("ended_at_unix_ms")
        assert summary.table_id == record.match_id  # no table id given: the match's own
        assert summary.rules.decision_deadline_ms == 5000
        assert summary.seed_commitment == record.state.commitment
        assert summary.result.outcome in (game_pb2.MATCH_OUTCOME_WIN, game_pb2.MATCH_OUTCOME_DRAW)
        assert list(summary.score.total.ListFields()) == list(summary.result.score.total.ListFields())
        assert {(p.seat, p.bot_name) for p in summary.players} == {
            (cards_pb2.SEAT_NORTH, "alice"),
            (cards_pb2.SEAT_EAST, "bob"),
            (cards_pb2.SEAT_SOUTH, "alice"),
            (cards_pb2.SEAT_WEST, "bob"),
        }
        served = answers["logs"][record.match_id]
        assert served.format_version == 1
        on_disk = record.log_path.read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in served.lines] == [json.loads(line) for line in on_disk]
        assert json.loads(served.lines[0])["type"] == "match_start"
        assert json.loads(served.lines[-1])["type"] == "match_end"
    assert [m.match_id for m in answers["classic_only"].matches] == [records[0].match_id]
    first_page, second_page = answers["pages"]
    served_lines = list(answers["logs"][records[0].match_id].lines)
    assert list(first_page.lines) + list(second_page.lines) == served_lines[:6]
    assert second_page.next_page_token == "6"
    assert answers["missing"] is grpc.StatusCode.NOT_FOUND
    assert answers["bad_token"] is grpc.StatusCode.INVALID_ARGUMENT
    # Filters apply before paging: a page of one holds a match, and says there is another.
    assert len(answers["by_bot"].matches) == 1
    assert answers["by_bot"].next_page_token == "1"
    assert not answers["by_nobody"].matches
    assert not answers["in_progress"].matches
    assert answers["health"] == health_pb2.HealthCheckResponse.SERVING
    assert {
        "oddtrick.v1.Referee",
        "oddtrick.v1.Arena",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    } <= answers["services"]


async def test_a_match_between_four_bot_processes(tmp_path):
    names = {seat: f"proc-{seat.name.lower()}" for seat in Seat}
    bot_file = REPO / "sample_bots" / "random_bot.py"
    outcomes: dict[str, trio.CompletedProcess] = {}

    async def bot_process(name: str, address: str) -> None:
        command = [
            sys.executable, "-m", "oddtrick", "bot", f"{bot_file}:RandomBot",
            "--server", address, "--name", name, "--token", token_of(name),
            "--seats", "1", "--max-matches", "1",
        ]  # fmt: skip
        outcomes[name] = await trio.run_process(
            command, capture_stdout=True, capture_stderr=True, check=False
        )

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as processes:
                for name in names.values():
                    processes.start_soon(bot_process, name, referee.address)
                spec = MatchSpec(two_deals(GameKind.CONTRACT), names, RELAXED, seed="processes")
                record = await referee.play_match(spec, wait_s=40)

    assert_clean_finish(record, hands=2)
    for name, process in outcomes.items():
        assert process.returncode == 0, (name, process.stderr.decode())
    players = log_records(record.log_path, "match_start")[0]["players"]
    assert {seat: player["name"] for seat, player in players.items()} == {str(s): n for s, n in names.items()}


# ---------------------------------------------------------------------------
# What each seat may see
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config",
    [
        GameConfig.contract(format=MatchFormat.DEALS, deals=2),
        GameConfig.classic(format=MatchFormat.DEALS, deals=2),
    ],
    ids=["contract", "classic"],
)
async def test_no_seat_sees_a_hidden_card_or_the_seed_early(tmp_path, config):
    names = {seat: f"watcher-{seat.name.lower()}" for seat in Seat}
    bots: dict[Seat, RawBot] = {}

    async def watcher(seat: Seat, address: str) -> None:
        policy = random_legal(f"{seat}-{config.game.value}", pass_rate=0.6)
        bots[seat] = await in_thread(connect_and_play, address, names[seat], policy)

    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(watcher, seat, referee.address)
                spec = MatchSpec(config, names, RELAXED, seed=f"s33d-{config.game.value}-7f3a")
                record = await referee.play_match(spec, wait_s=20)

    assert_clean_finish(record, hands=2)
    for seat, bot in bots.items():
        checked = check_hidden_information(seat, bot.received, record.log_path)
        # Own hands twice, every card played, the requests' legal cards: a few hundred.
        assert checked > 200, (seat, checked)
    kinds = {e.WhichOneof("kind") for bot in bots.values() for e in bot.events}
    assert {"hand_started", "card_played", "trick_completed", "hand_ended", "match_ended"} <= kinds


async def test_the_hidden_information_check_catches_a_leak(tmp_path):
    """The checker itself must fail on a card of another hand and on an early seed."""
    names = {seat: f"leak-{seat.name.lower()}" for seat in Seat}
    bots: dict[Seat, RawBot] = {}

    async def watcher(seat: Seat, address: str) -> None:
        bots[seat] = await in_thread(connect_and_play, address, names[seat], random_legal(str(seat)))

    config = GameConfig.classic(format=MatchFormat.HAND)
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(watcher, seat, referee.address)
                record = await referee.play_match(
                    MatchSpec(config, names, RELAXED, seed="s33d-of-the-leak-test"), wait_s=20
                )

    messages = bots[N].received
    check_hidden_information(N, messages, record.log_path)
    first_request = next(m for m in messages if m.HasField("update") and m.update.HasField("request"))
    index = messages.index(first_request)
    east_hand = next(
        e.hand_started.cards for e in bots[E].events if e.HasField("hand_started")
    )  # East's cards: never North's to see
    leaked = referee_pb2.RefereeMessage()
    leaked.CopyFrom(first_request)
    leaked.update.request.hand.cards.append(east_hand[0])
    with pytest.raises(AssertionError, match="was shown"):
        check_hidden_information(N, [*messages[:index], leaked, *messages[index + 1 :]], record.log_path)
    seed = log_records(record.log_path, "match_end")[0]["seed"]
    early = referee_pb2.RefereeMessage()
    early.CopyFrom(first_request)
    early.update.request.match_id = seed
    with pytest.raises(AssertionError, match="seed"):
        check_hidden_information(N, [*messages[:index], early, *messages[index + 1 :]], record.log_path)


async def test_event_numbers_run_on_across_the_matches_of_a_session(tmp_path):
    names = {seat: f"counter-{seat.name.lower()}" for seat in Seat}
    bots: dict[Seat, RawBot] = {}

    async def player(seat: Seat, address: str) -> None:
        bots[seat] = await in_thread(connect_and_play, address, names[seat], first_legal, 2)

    config = GameConfig.classic(format=MatchFormat.DEALS, deals=1)
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(player, seat, referee.address)
                for number in (1, 2):
                    await referee.play_match(
                        MatchSpec(config, names, RELAXED, seed=f"twice-{number}"), wait_s=20
                    )

    for bot in bots.values():
        numbers = [event.sequence for event in bot.events]
        assert numbers == list(range(1, len(numbers) + 1))
        assert sum(1 for event in bot.events if event.HasField("match_started")) == 2


async def test_a_bot_with_too_few_streams_is_named_in_the_log(tmp_path, caplog):
    """From its side a bot short of streams only waits: the operator must see why."""
    caplog.set_level(logging.INFO, logger="oddtrick.referee.sessions")
    seating = {N: "pairs", E: "other", S: "pairs", W: "other"}
    async with referee_running(tmp_path, ["pairs", "other"]) as referee:
        bot = RawBot(referee.address, "pairs")
        try:
            await in_thread(bot.hello)
            with pytest.raises(trio.TooSlowError):
                await referee.play_match(MatchSpec(two_deals(GameKind.CLASSIC), seating, RELAXED), wait_s=0.5)
        finally:
            await in_thread(bot.close)
    assert "pairs has 1 of the 2 free streams it needs (oddtrick bot --seats 2)" in caplog.text
    assert "other has" not in caplog.text  # not connected at all: the usual "waiting for" says so
