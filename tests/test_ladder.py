"""The ladder end to end: a real referee on a socket, entrants as real gRPC clients."""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import defaultdict
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from ladder_support import (
    LADDER_BOTS,
    Serving,
    bot_process,
    free_port,
    ladder_serving,
    ladder_settings,
    ladder_state,
    play_until_closed,
    register,
    segments,
    stop_all,
)
from referee_support import PATIENCE_S, RawBot, check_hidden_information

from oddtrick._codec import card_from_wire, seat_from_wire
from oddtrick._logfile import read_log_text
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, cards_pb2, game_pb2
from oddtrick_referee.competitions.ladder.leaderboard import leaderboard
from oddtrick_referee.competitions.ladder.ratings import Rater, RatingSettings
from oddtrick_referee.competitions.ladder.service import Ladder, default_house_bots, house_bot_tag, open_store
from oddtrick_referee.storage.match_index import MatchStore, log_withheld

HONEST = [f"p{i}" for i in range(1, 8)]
RUNNING = arena_pb2.LADDER_MATCH_STATUS_RUNNING


async def test_an_entrant_pooling_all_its_sessions_never_holds_two_seats_of_any_deal(tmp_path: Path) -> None:
    """Mallory runs three sessions in one process and pools what they see, as a cheat would.

    Every seat's messages, hers and the honest entrants', pass the card-by-card
    hidden-information check against the table's log; and across all her
    sessions, tables and matches she was dealt each deal exactly once, at one seat.
    """
    settings = ladder_settings(tmp_path)
    tokens = register(settings, "mallory", *HONEST)
    stop = threading.Event()
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address
        bots = [RawBot(address, "mallory", tokens["mallory"]) for _ in range(3)]
        bots += [RawBot(address, name, tokens[name]) for name in HONEST for _ in range(2)]
        async with trio.open_nursery() as players:
            for bot in bots:
                players.start_soon(trio.to_thread.run_sync, play_until_closed, bot, stop)
            with trio.fail_after(120):
                outcomes = await ladder.wait_outcomes(8)
            stop.set()
            ladder.referee.finish()
    assert {o.status for o in outcomes[:8]} == {"finished"}

    logs = tmp_path / "logs"
    dealt_to_mallory: dict[str, list[tuple[str, int]]] = defaultdict(list)
    hands_seen: dict[tuple[str, int], set[cards_pb2.Card]] = defaultdict(set)
    checked = 0
    for bot in bots:
        for segment in segments(bot):
            log_path = logs / f"{segment.match_id}.jsonl"
            if not log_path.exists() or not any(
                e.HasField("match_ended") for m in segment.messages for e in m.update.events
            ):
                continue  # the match the shutdown interrupted
            seat = seat_from_wire(segment.seat)
            assert seat is not None
            checked += check_hidden_information(seat, segment.messages, log_path, sealed=True)
            if bot.name != "mallory":
                continue
            dealt_to_mallory[segment.commitment].append((segment.match_id, segment.seat))
            for message in segment.messages:
                for event in message.update.events:
                    if event.HasField("hand_started"):
                        key = (segment.commitment, event.hand_started.hand_number)
                        hands_seen[key] |= {card_from_wire(c) for c in event.hand_started.cards}
    assert checked > 5000
    assert len(dealt_to_mallory) >= 3, "mallory should have played several matches"
    for commitment, seats in dealt_to_mallory.items():
        assert len(seats) == 1, f"mallory held {seats} of the deals committed as {commitment}"
    assert all(len(cards) == 13 for cards in hands_seen.values())


async def test_wrong_retired_and_rotated_tokens_are_refused_and_the_arena_shows_the_ladder(
    tmp_path: Path,
) -> None:
    settings = ladder_settings(tmp_path)
    tokens = register(settings, "alice", "bob")
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address

        def refused(name: str, token: str) -> tuple[grpc.StatusCode, str]:
            bot = RawBot(address, name, token)
            bot.send_hello()
            return bot.wait_status()

        code, details = await trio.to_thread.run_sync(refused, "alice", "not-the-token")
        assert code is grpc.StatusCode.UNAUTHENTICATED
        assert "alice" in details
        code, _ = await trio.to_thread.run_sync(refused, "mallory", tokens["alice"])
        assert code is grpc.StatusCode.UNAUTHENTICATED

        # Sessions already connected with a token that is then replaced, or of an entrant then
        # retired, are closed (idle ones at once; the ladder notices within its refresh period).
        def connected(name: str) -> RawBot:
            bot = RawBot(address, name, tokens[name])
            bot.hello()
            return bot

        alice_old = await trio.to_thread.run_sync(connected, "alice")
        bob_old = await trio.to_thread.run_sync(connected, "bob")

        # Managed while the ladder runs, straight on its database.
        store = ladder.store
        new = await trio.to_thread.run_sync(store.rotate_token, "alice")
        code, _ = await trio.to_thread.run_sync(refused, "alice", tokens["alice"])
        assert code is grpc.StatusCode.UNAUTHENTICATED
        await trio.to_thread.run_sync(store.retire, "bob", 5)
        code, _ = await trio.to_thread.run_sync(refused, "bob", tokens["bob"])
        assert code is grpc.StatusCode.UNAUTHENTICATED
        await ladder.refresh()
        code, details = await trio.to_thread.run_sync(alice_old.wait_status)
        assert code is grpc.StatusCode.UNAUTHENTICATED
        assert "replaced" in details
        code, details = await trio.to_thread.run_sync(bob_old.wait_status)
        assert code is grpc.StatusCode.UNAUTHENTICATED
        assert "retired" in details

        def accepted() -> str:
            bot = RawBot(address, "alice", new)
            welcome = bot.hello()
            bot.drop()
            return welcome.session_id

        assert await trio.to_thread.run_sync(accepted)

        def read_arena() -> tuple[arena_pb2.GetLadderResponse, arena_pb2.ListLadderMatchesResponse]:
            with grpc.insecure_channel(address) as channel:
                arena = arena_pb2_grpc.ArenaStub(channel)
                board = arena.GetLadder(arena_pb2.GetLadderRequest())
                matches = arena.ListLadderMatches(arena_pb2.ListLadderMatchesRequest(bot_name="alice"))
                with pytest.raises(grpc.RpcError) as bad:
                    arena.ListLadderMatches(arena_pb2.ListLadderMatchesRequest(page_token="x"))
                assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT
                return board, matches

        board, matches = await trio.to_thread.run_sync(read_arena)
    assert [e.bot_name for e in board.entries] == ["alice"]
    assert board.format == arena_pb2.LADDER_FORMAT_TEAMS
    assert board.config.deals == 2
    assert board.entries[0].provisional
    assert not matches.matches


async def test_an_entrant_registered_while_the_ladder_reads_its_entrants_keeps_its_session(
    tmp_path: Path,
) -> None:
    """An entrant registered and connected while the ladder's periodic read of the entrants
    is under way was verified against records that read may predate: it is not taken for a
    retired entrant, and its session stays open."""
    settings = ladder_settings(tmp_path)
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address
        store = ladder.store
        read_begun, go_on = threading.Event(), threading.Event()
        reading = store.entrants

        def held_read() -> list[Any]:
            rows = reading()  # before the registration below
            read_begun.set()
            go_on.wait(PATIENCE_S)
            return rows

        store.entrants = held_read  # type: ignore[method-assign]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(ladder.refresh)
            await trio.to_thread.run_sync(read_begun.wait, PATIENCE_S)
            store.entrants = reading  # type: ignore[method-assign]
            token = register(settings, "alice")["alice"]

            def connected() -> RawBot:
                bot = RawBot(address, "alice", token)
                bot.hello()
                return bot

            alice = await trio.to_thread.run_sync(connected)
            go_on.set()
        assert [s.name for s in ladder.referee.lobby.sessions.values()] == ["alice"]
        await ladder.refresh()  # the next read sees alice: still nothing to revoke
        assert [s.name for s in ladder.referee.lobby.sessions.values()] == ["alice"]
        alice.drop()


async def test_trusted_pairs_seat_one_entrant_per_partnership_at_both_tables(tmp_path: Path) -> None:
    settings = ladder_settings(tmp_path, trusted=True)
    tokens = register(settings, "alice", "bob")
    stop = threading.Event()
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address
        bots = [RawBot(address, name, tokens[name]) for name in ("alice", "bob") for _ in range(4)]
        async with trio.open_nursery() as players:
            for bot in bots:
                players.start_soon(trio.to_thread.run_sync, play_until_closed, bot, stop)
            with trio.fail_after(PATIENCE_S):
                [outcome, *_] = await ladder.wait_outcomes(1)
            stop.set()
            ladder.referee.finish()

            def logs_served() -> list[int]:
                with grpc.insecure_channel(address) as channel:
                    arena = arena_pb2_grpc.ArenaStub(channel)
                    return [
                        len(arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id=table_id)).lines)
                        for table_id in (f"{outcome.match_id}-t1", f"{outcome.match_id}-t2")
                    ]

            # Both tables were sealed while the match lasted; its end releases both logs.
            assert all(lines > 10 for lines in await trio.to_thread.run_sync(logs_served))
        [match] = [m for m in ladder.store.matches() if m.match_id == outcome.match_id]
    one, two = match.lineup["tables"]
    assert one["N"] == one["S"] == two["E"] == two["W"]
    assert one["E"] == one["W"] == two["N"] == two["S"]
    assert {one["N"], one["E"]} == {"alice", "bob"}
    assert match.status == "finished"
    assert len(match.deals) == 2


STRENGTH_ORDER = ["saboteur", "random", "sloppy", "careless", "heuristic"]
"""Weakest first: tests/ladder_bots.py says what each does."""


def ranked(ladder: Ladder, names: list[str]) -> list[str]:
    board = ladder.leaderboard()
    rating = {row.name: row.rating for row in board}
    return sorted(names, key=lambda name: rating[name])


@pytest.mark.slow
async def test_bots_are_ranked_by_strength_a_latecomer_climbs_and_the_absent_go_inactive(
    tmp_path: Path,
) -> None:
    """Five bots as separate processes, three house bots filling seats, contract whist."""
    settings = ladder_settings(
        tmp_path,
        deals=4,
        house_bots=default_house_bots(3),
        house_seats=2,
        rating=RatingSettings(inactive_after_s=3600.0),
    )
    tokens = register(settings, *STRENGTH_ORDER)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with ladder_serving(settings) as ladder:
            address = ladder.referee.address
            bots = {"saboteur": "Saboteur", "random": "Random", "sloppy": "Sloppy"}
            bots |= {"careless": "Careless", "heuristic": "Heuristic"}
            for name in STRENGTH_ORDER:
                processes.append(bot_process(address, bots[name], name, tokens[name], seats=2))

            # Play until the order is right and has stayed right for 20 matches.
            settled, played = 0, 0
            with trio.fail_after(600):
                while settled < 20:
                    played += 1
                    assert played <= 500, f"not in order after 500 matches: {ranked(ladder, STRENGTH_ORDER)}"
                    await ladder.wait_outcomes(played)
                    in_order = await trio.to_thread.run_sync(ranked, ladder, STRENGTH_ORDER) == STRENGTH_ORDER
                    settled = settled + 1 if in_order else 0
            board = {row.name: row for row in await trio.to_thread.run_sync(ladder.leaderboard)}
            assert all(board[name].house for name in board if name.startswith("house-"))
            assert not any(board[name].house for name in STRENGTH_ORDER)

            # Registered while the ladder runs (its own command, on the same database), and seated at once.
            registered = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "oddtrick",
                    "ladder",
                    "register",
                    "latecomer",
                    "--data-dir",
                    str(tmp_path),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            token = registered.stdout.split("token (shown once, keep it secret): ")[1].split()[0]
            before = len(ladder.outcomes)
            processes.append(bot_process(address, "Heuristic", "latecomer", token, seats=2))
            with trio.fail_after(120):
                while not any("latecomer" in o.lineup.names for o in ladder.outcomes[before:]):
                    await ladder.wait_outcomes(len(ladder.outcomes) + 1)
            # Its first match comes as soon as the matches already under way are over.
            first = next(i for i, o in enumerate(ladder.outcomes[before:]) if "latecomer" in o.lineup.names)
            assert first <= 4
            start = board["saboteur"].rating

            # The saboteur disconnects for good (killed: SIGTERM would finish its matches
            # first); the others play on without it.
            saboteur = processes[STRENGTH_ORDER.index("saboteur")]
            saboteur.kill()
            saboteur.wait(timeout=30)
            lobby = ladder.referee.lobby
            with trio.fail_after(PATIENCE_S):
                while any(s.name == "saboteur" for s in list(lobby.sessions.values())):
                    await lobby.change_event.wait()
            gone_ms = int(time.time() * 1000)
            gone = len(ladder.outcomes)
            with trio.fail_after(300):
                await ladder.wait_outcomes(gone + 30)
            started = {m.match_id: m.created_ms for m in ladder.store.matches(limit=1000)}
            later = [o for o in ladder.outcomes[gone:] if started[o.match_id] > gone_ms]
            assert len(later) >= 20
            assert all("saboteur" not in o.lineup.names for o in later)
            assert all(o.status == "finished" for o in later)
            # A match it left in the middle is finished by fallbacks: a forfeit once its grace
            # period ran out before the end (counted against it alone), else played out.
            left = [o for o in ladder.outcomes[gone:] if "saboteur" in o.lineup.names]
            assert {o.status for o in left} <= {"forfeit", "finished"}
            forfeited = [o for o in left if o.status == "forfeit"]
            assert all("saboteur did not come back" in o.cause for o in forfeited)
            now = await trio.to_thread.run_sync(ladder.leaderboard)
            latecomer = next(row for row in now if row.name == "latecomer")
            assert latecomer.matches >= 20
            assert latecomer.rating > start, "a strong latecomer climbs above the weakest"
            saboteur_row = next(row for row in now if row.name == "saboteur")
            assert saboteur_row.forfeits == len(forfeited)
            assert saboteur_row.last_played_ms is not None
            assert not saboteur_row.inactive
            ladder.referee.finish()
        # An hour and a minute later, with nothing played, it is listed inactive, its uncertainty grown.
        store = open_store(settings)
        later_board = leaderboard(
            store.entrants(), Rater(settings.rating), saboteur_row.last_played_ms + 3_660_000 + 86_400_000
        )
        store.db.close()
        row = next(r for r in later_board if r.name == "saboteur")
        assert row.inactive
        assert row.sigma > saboteur_row.sigma
    finally:
        stop_all(processes)


@pytest.mark.slow
def test_a_ladder_killed_mid_match_keeps_what_finished_aborts_the_rest_and_plays_on(tmp_path: Path) -> None:
    port = free_port()
    settings = ladder_settings(tmp_path)
    token = register(settings, "alice")["alice"]
    serving = Serving(tmp_path, port)
    serving.wait_for("ladder listening")
    # Started once the ladder listens: a client dialling a free loopback port before anyone
    # listens on it can end up connected to itself, and then waits for ever.
    alice = bot_process(f"127.0.0.1:{port}", "Heuristic", "alice", token, seats=2)
    try:
        serving.wait_for("ladder match", count=3)
        store = open_store(settings)
        running = {m.match_id for m in store.matches(statuses=("running",))}
        serving.kill()
        empty = [log.name for log in (tmp_path / "logs").glob("*.jsonl") if not read_log_text(log).strip()]
        assert not empty, f"logs left without their first line: {empty}"
        before = {m.match_id: m for m in store.matches(limit=1000)}
        rated_before = {e.name: (e.mu, e.sigma, e.matches) for e in store.entrants()}
        assert running, "a match was in progress when the ladder was killed"

        serving = Serving(tmp_path, port)
        serving.wait_for("ladder listening")
        after_restart = {m.match_id: m for m in store.matches(limit=1000)}
        for match_id, match in before.items():
            if match.status == "finished":
                assert after_restart[match_id] == match, "a finished match changed across the restart"
        interrupted = [after_restart[m] for m in running if before[m].status == "running"]
        assert interrupted
        index = MatchStore(tmp_path / "oddtrick.sqlite3")
        for match in interrupted:
            assert match.status == "aborted"
            assert match.cause == "the ladder stopped before the match ended"
            # Its deals are never dealt again, so its tables' logs may now be read.
            for table_id in match.tables:
                row = index.get(table_id)
                if row is None:
                    # Killed before this table began (its bots seated, its log's first line
                    # written, not yet in the index): nothing was dealt there, so there is
                    # nothing to release, and its log, if any, says no more than who sat where.
                    for log in (tmp_path / "logs").glob(f"{table_id}.jsonl*"):
                        kinds = {json.loads(line)["type"] for line in read_log_text(log).splitlines()}
                        assert kinds == {"match_start"}, (table_id, kinds)
                    continue
                assert not log_withheld(row)
        # Nothing of the interrupted match was rated.
        assert {e.name: (e.mu, e.sigma, e.matches) for e in store.entrants()} == rated_before

        # Alice reconnects by herself and plays on.
        serving.wait_for("alice", count=2)
        alice_row = store.entrant("alice")
        assert alice_row is not None
        assert alice_row.matches > rated_before["alice"][2]
        played = [m for m in store.matches("alice", limit=1000) if m.status == "finished"]
        assert len(played) == alice_row.matches
        store.db.close()
    finally:
        alice.terminate()
        alice.wait(timeout=30)
        if serving.process.poll() is None:
            serving.kill()


def test_a_match_recorded_just_before_a_sigkill_has_its_logs_published_at_the_next_start(
    tmp_path: Path,
) -> None:
    """SIGKILL after the match's result is committed and before its tables are released: the
    next start publishes both tables' logs, and the ladder plays on without a fault."""
    port = free_port()
    settings = ladder_settings(tmp_path)
    token = register(settings, "alice")["alice"]
    killed = Serving(tmp_path, port, program=(str(Path(__file__).with_name("ladder_killed_at_release.py")),))
    killed.wait_for("ladder listening")
    alice = bot_process(f"127.0.0.1:{port}", "Heuristic", "alice", token, seats=2)
    serving = killed
    try:
        [line] = killed.wait_for("killed before releasing")
        match_id = line.split()[-1]
        killed.reap()
        assert killed.process.returncode == -signal.SIGKILL
        store = open_store(settings)
        [match] = [m for m in store.matches(limit=1000) if m.match_id == match_id]
        assert match.status == "finished"
        index = MatchStore(tmp_path / "oddtrick.sqlite3")
        for table_id in match.tables:
            row = index.get(table_id)
            assert row is not None
            assert log_withheld(row), "the kill came after the tables were released"

        serving = Serving(tmp_path, port)
        serving.wait_for("ladder listening")
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)
            for table_id in match.tables:
                served = arena.GetMatchLog(arena_pb2.GetMatchLogRequest(match_id=table_id), timeout=30)
                assert len(served.lines) > 10
                assert '"match_end"' in served.lines[-1]
        # The ladder plays on: another match finished, and nobody has a fault.
        serving.wait_for("ladder match", count=1)
        finished = [m for m in store.matches(limit=1000) if m.status == "finished"]
        assert len(finished) >= 2
        assert all(e.faults == 0 for e in store.entrants())
        store.db.close()
    finally:
        alice.terminate()
        alice.wait(timeout=30)
        if serving.process.poll() is None:
            serving.kill()


async def test_the_web_page_beside_the_ladder_shows_its_leaderboard(tmp_path: Path) -> None:
    from oddtrick_referee.web.server import bind_web

    settings = ladder_settings(tmp_path)
    register(settings, "alice", "bob")
    web = bind_web("127.0.0.1:0")
    port = web.getsockname()[1]
    async with ladder_serving(settings, web=web):

        def fetch(path: str) -> str:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
                return str(response.read().decode())

        page = await trio.to_thread.run_sync(fetch, "/leaderboard")
        bot_page = await trio.to_thread.run_sync(fetch, "/bots/alice")
    assert "alice" in page
    assert "bob" in page
    assert "μ − 3σ" in page
    assert '<a href="/bots/alice">alice</a>' in page
    assert 'on the <a href="/leaderboard">ladder</a>' in bot_page  # the entrant's own page


async def test_a_ladder_over_tls_seats_an_entrant_on_tls_beside_its_house_bots_on_loopback(
    tmp_path: Path,
) -> None:
    from tls_support import make_certificates

    from oddtrick_referee.transport.tls import ServerTls

    certs = make_certificates(tmp_path / "certs")
    settings = ladder_settings(
        tmp_path / "data",
        house_bots=default_house_bots(7),
        house_seats=1,
        tls=ServerTls(certs.server_cert, certs.server_key).credentials(),
    )
    token = register(settings, "alice")["alice"]
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with ladder_serving(settings) as ladder:
            port = ladder.referee.port
            command = [sys.executable, "-m", "oddtrick", "bot", f"{LADDER_BOTS}:Heuristic"]
            command += ["--server", f"localhost:{port}", "--name", "alice", f"--token={token}"]
            command += ["--tls", "--ca", str(certs.ca)]
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with trio.fail_after(120):
                [outcome, *_] = await ladder.wait_outcomes(1)
            assert "alice" in outcome.lineup.names
            assert outcome.status == "finished"

            def plaintext_refused() -> grpc.StatusCode:
                with grpc.insecure_channel(f"127.0.0.1:{port}") as plain:
                    try:
                        arena_pb2_grpc.ArenaStub(plain).GetLadder(arena_pb2.GetLadderRequest(), timeout=10)
                    except grpc.RpcError as error:
                        return error.code()
                return grpc.StatusCode.OK

            assert await trio.to_thread.run_sync(plaintext_refused) is grpc.StatusCode.UNAVAILABLE
            ladder.referee.finish()
    finally:
        stop_all(processes)


def child_pids(pid: int) -> set[int]:
    """The processes ``pid`` started that still run."""
    found = set()
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError):
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                found.add(int(entry.name))
    return found


async def test_the_default_house_bots_play_in_the_referees_process(tmp_path: Path) -> None:
    """A ladder's default house bots are the package's own code: local seats of its referee,
    no process of their own, and seated beside an entrant like any other bot."""
    settings = ladder_settings(tmp_path / "data", house_bots=default_house_bots(7), house_seats=1)
    token = register(settings, "alice")["alice"]
    before = child_pids(os.getpid())
    processes: list[subprocess.Popen[bytes]] = []
    try:
        async with ladder_serving(settings) as ladder:
            command = [sys.executable, "-m", "oddtrick", "bot", f"{LADDER_BOTS}:Heuristic"]
            command += ["--server", ladder.referee.address, "--name", "alice", f"--token={token}"]
            processes.append(subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            with trio.fail_after(120):
                [outcome, *_] = await ladder.wait_outcomes(1)
            started = child_pids(os.getpid()) - before
            online = ladder.connected_names()
            ladder.referee.finish()
    finally:
        stop_all(processes)
    assert outcome.status == "finished"
    assert "alice" in outcome.lineup.names
    assert len(outcome.lineup.names & {bot.name for bot in default_house_bots(7)}) >= 3
    assert started == {processes[0].pid}  # the entrant's, which the test started; none of the ladder's
    assert {bot.name for bot in default_house_bots(7)} <= online


async def test_two_ladders_on_one_database_each_run_their_own_house_bots(tmp_path: Path) -> None:
    """Starting a second ladder on the first one's database never replaces the tokens of the
    first one's house bots: both play on, each with its own entrant and house bots."""
    database = f"sqlite:///{tmp_path / 'shared.sqlite3'}"
    settings = [
        ladder_settings(tmp_path / name, database=database, house_bots=default_house_bots(7), house_seats=1)
        for name in ("one", "two")
    ]
    tokens = register(settings[0], "alice", "bob")
    processes: list[subprocess.Popen[bytes]] = []

    def house_tokens(ladder: Ladder) -> dict[str, str]:
        return {e.name: e.token_id for e in ladder.store.entrants() if e.house}

    outputs = [tmp_path / "alice.log", tmp_path / "bob.log"]
    try:
        async with ladder_serving(settings[0]) as one:
            processes.append(
                bot_process(one.referee.address, "Heuristic", "alice", tokens["alice"], 1, outputs[0])
            )
            with trio.move_on_after(120):
                await one.wait_outcomes(1)
            assert one.outcomes, f"the first ladder played nothing:\n{ladder_state(one, outputs[0])}"
            before = await trio.to_thread.run_sync(house_tokens, one)
            assert sorted(before) == sorted(bot.name for bot in default_house_bots(7))
            async with ladder_serving(settings[1]) as two:
                processes.append(
                    bot_process(two.referee.address, "Heuristic", "bob", tokens["bob"], 1, outputs[1])
                )
                after = await trio.to_thread.run_sync(house_tokens, one)
                assert {name: after[name] for name in before} == before, "the second start replaced tokens"
                tag = house_bot_tag(two.referee_id)
                theirs = sorted(set(after) - set(before))
                assert theirs == sorted(f"{bot.name}-{tag}" for bot in default_house_bots(7))
                played = len(one.outcomes)
                with trio.move_on_after(240):
                    await two.wait_outcomes(2)
                    await one.wait_outcomes(played + 2)
                assert len(two.outcomes) >= 2, f"the second ladder:\n{ladder_state(two, outputs[1])}"
                assert len(one.outcomes) >= played + 2, f"the first ladder:\n{ladder_state(one, outputs[0])}"
                one.referee.finish()
                two.referee.finish()
            first, second = one.outcomes[: played + 2], two.outcomes[:2]
        assert all(o.status == "finished" for o in first + second)
        assert all(o.lineup.names == {"alice", *before} for o in first)
        assert all(o.lineup.names == {"bob", *theirs} for o in second)
        store = open_store(settings[0])
        assert all(e.faults == 0 for e in store.entrants())
        store.db.close()
    finally:
        stop_all(processes)


async def test_bad_hellos_and_a_stalled_database_never_stall_a_table_in_play(
    tmp_path: Path, postgres_url: str
) -> None:
    """A flood of Hellos with a wrong token while PostgreSQL is stalled (the entrants' table
    locked by another connection): alice's table plays on to its end meanwhile, the flood is
    cut to a budget of failures, a known token still gets in, and nobody has a fault."""
    import psycopg
    from postgres_support import fresh_database

    database = fresh_database(postgres_url, "ladder_bad_hellos")
    settings = ladder_settings(
        tmp_path, database=database, house_bots=default_house_bots(7), house_seats=1, deals=4
    )
    tokens = register(settings, "alice", "carol")
    processes: list[subprocess.Popen[bytes]] = []
    locked, progressed, stop = threading.Event(), threading.Event(), threading.Event()
    held: dict[str, bool] = {}

    def hold_lock() -> None:
        """Stall every read of the entrants until alice's table has ended (or 60 s passed)."""
        with psycopg.connect(database) as db:
            db.execute("LOCK TABLE ladder_entrants IN ACCESS EXCLUSIVE MODE")
            locked.set()
            held["until_progress"] = progressed.wait(60)
            db.rollback()

    codes: list[grpc.StatusCode] = []

    def flood(count: int | None = None) -> list[grpc.StatusCode]:
        """Hellos with a wrong token, one after another, until ``stop`` (or ``count`` of them)."""
        got: list[grpc.StatusCode] = []
        while not stop.is_set() and (count is None or len(got) < count):
            bot = RawBot(address, "alice", "not-the-token")
            bot.send_hello()
            got.append(bot.wait_status()[0])
            bot.close()
        codes.extend(got)
        return got

    def flood_of(hellos: int) -> collections.Counter[grpc.StatusCode]:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            parts = list(pool.map(flood, [hellos // 8] * 8))
        return collections.Counter(code for part in parts for code in part)

    def known_token_status() -> grpc.StatusCode:
        """carol's token, known from before: admitted (then refused for asking for a game
        this ladder does not play, so that no session of hers stays to be seated)."""
        bot = RawBot(address, "carol", tokens["carol"])
        bot.send_hello(games=[game_pb2.GAME_KIND_CLASSIC])
        code = bot.wait_status()[0]
        bot.close()
        return code

    try:
        async with ladder_serving(settings) as ladder:
            address = ladder.referee.address
            lobby = ladder.referee.lobby
            processes.append(bot_process(address, "Heuristic", "alice", tokens["alice"], seats=1))
            assert await trio.to_thread.run_sync(known_token_status) is grpc.StatusCode.FAILED_PRECONDITION
            with trio.fail_after(120):
                await ladder.wait_outcomes(1)
                while True:  # alice seated in her next match
                    changed = lobby.change_event
                    alice = [s for s in list(lobby.sessions.values()) if s.name == "alice"]
                    if alice and alice[0].link is not None:
                        break
                    await changed.wait()
            played = len(ladder.outcomes)
            holder = threading.Thread(target=hold_lock)
            holder.start()
            await trio.to_thread.run_sync(locked.wait)
            flooders = [threading.Thread(target=flood) for _ in range(8)]
            for thread in flooders:
                thread.start()
            try:
                with trio.fail_after(120):
                    while True:  # her table ends and frees her seat, the database still stalled
                        changed = lobby.change_event
                        if lobby.idle_count("alice", settings.game):
                            break
                        await changed.wait()
                progressed.set()
                await trio.to_thread.run_sync(holder.join)
                assert held["until_progress"], "the table stalled with the database"
                with trio.fail_after(120):
                    await ladder.wait_outcomes(played + 1)
                stop.set()
                for thread in flooders:
                    await trio.to_thread.run_sync(thread.join)
                stop.clear()
                # The address's budget is spent: a further flood is refused without a look at
                # the database, while a token verified before still gets in.
                started = time.monotonic()
                later = await trio.to_thread.run_sync(flood_of, 80)
                elapsed = time.monotonic() - started
                # The budget: at most a full burst (20) plus 2 a second reach the database;
                # every other bad Hello is held and refused. A slow machine takes longer to
                # send 80, so more get through, but never more than the budget.
                reached = later[grpc.StatusCode.UNAUTHENTICATED]
                assert reached <= 20 + 2 * elapsed + 1, (later, elapsed)
                assert later[grpc.StatusCode.RESOURCE_EXHAUSTED] == 80 - reached, later
                assert (
                    await trio.to_thread.run_sync(known_token_status) is grpc.StatusCode.FAILED_PRECONDITION
                )
            finally:
                progressed.set()
                stop.set()
                for thread in flooders:
                    await trio.to_thread.run_sync(thread.join)
            ladder.referee.finish()
            outcomes = ladder.outcomes[: played + 1]
        assert all(o.status == "finished" for o in outcomes)
        assert set(codes) <= {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}
        store = open_store(settings)
        assert all(e.faults == 0 for e in store.entrants())
        store.db.close()
    finally:
        progressed.set()
        stop.set()
        stop_all(processes)


async def test_a_running_match_lists_nobody_s_seat_until_it_is_over(tmp_path: Path) -> None:
    """As a colluder would look for a partner: while alice plays, no listing says who sits
    where in her match (ListLadderMatches, ListMatches, with or without a name); once it is
    over, both list all eight seats."""
    settings = ladder_settings(tmp_path, house_bots=default_house_bots(7), house_seats=1, deals=4)
    token = register(settings, "alice")["alice"]
    names = sorted({"alice", *(bot.name for bot in default_house_bots(7))})
    processes: list[subprocess.Popen[bytes]] = []
    ladder_lists = list[arena_pb2.ListLadderMatchesResponse]
    index_lists = list[arena_pb2.ListMatchesResponse]

    def look(address: str) -> tuple[ladder_lists, index_lists]:
        """Every listing a cheat can ask for: all, then one per name."""
        with grpc.insecure_channel(address) as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)
            ladder_side = [arena.ListLadderMatches(arena_pb2.ListLadderMatchesRequest())]
            index_side = [arena.ListMatches(arena_pb2.ListMatchesRequest())]
            for name in names:
                ladder_side.append(arena.ListLadderMatches(arena_pb2.ListLadderMatchesRequest(bot_name=name)))
                index_side.append(arena.ListMatches(arena_pb2.ListMatchesRequest(bot_name=name)))
        return ladder_side, index_side

    try:
        async with ladder_serving(settings) as ladder:
            address = ladder.referee.address
            lobby = ladder.referee.lobby
            processes.append(bot_process(address, "Heuristic", "alice", token, seats=1))
            with trio.fail_after(120):
                while True:  # alice seated in a match
                    changed = lobby.change_event
                    alice = [s for s in list(lobby.sessions.values()) if s.name == "alice"]
                    if alice and alice[0].link is not None:
                        break
                    await changed.wait()
            ladder_during, index_during = await trio.to_thread.run_sync(look, address)
            running = [m.match_id for m in ladder_during[0].matches if m.status == RUNNING]
            assert running, "a running match is listed"
            with trio.fail_after(120):
                while not any(o.match_id == running[0] for o in ladder.outcomes):
                    await ladder.wait_outcomes(len(ladder.outcomes) + 1)
            ladder_after, index_after = await trio.to_thread.run_sync(look, address)
            ladder.referee.finish()
        [outcome] = [o for o in ladder.outcomes if o.match_id == running[0]]
        assert outcome.status == "finished"
        # While it ran: listed without seats, its tables without players, and by no name.
        for match in ladder_during[0].matches:
            if match.status == RUNNING:
                assert not match.seats
        for summary in index_during[0].matches:
            if summary.status == arena_pb2.MATCH_STATUS_SEALED:
                assert not summary.players
        assert any(s.status == arena_pb2.MATCH_STATUS_SEALED for s in index_during[0].matches)
        for answer in ladder_during[1:]:
            assert all(m.status != RUNNING for m in answer.matches)
        for found in index_during[1:]:
            assert all(s.status != arena_pb2.MATCH_STATUS_SEALED for s in found.matches)
        # Once over: every seat, in both listings, and found by every name.
        [match] = [m for m in ladder_after[0].matches if m.match_id == running[0]]
        assert sorted({seat.bot_name for seat in match.seats}) == names
        tables = {s.match_id: s for s in index_after[0].matches if s.match_id in match.table_match_ids}
        assert {p.bot_name for t in tables.values() for p in t.players} == set(names)
        for answer in ladder_after[1:]:
            assert running[0] in {m.match_id for m in answer.matches}
        store = open_store(settings)
        assert all(e.faults == 0 for e in store.entrants())
        store.db.close()
    finally:
        stop_all(processes)


async def test_a_second_ladder_on_a_data_folder_in_use_stops_without_touching_it(tmp_path: Path) -> None:
    settings = ladder_settings(tmp_path)
    async with ladder_serving(settings) as ladder:
        store = ladder.store
        house_token = await trio.to_thread.run_sync(store.ensure_house, "house-x", 1, "someone")
        lineup = {"tables": [], "teams": [[], []]}
        await trio.to_thread.run_sync(
            lambda: store.open_match("in-play", "c", lineup, {}, [], settings.referee_id, 2)
        )
        second = await trio.run_process(
            [sys.executable, "-m", "oddtrick", "ladder", "serve", "--data-dir", str(tmp_path), "--port", "0"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert second.returncode != 0
        assert b"another referee is using" in second.stderr
        assert [m.status for m in store.matches()] == ["running"]
        assert await trio.to_thread.run_sync(store.verify, "house-x", house_token)
