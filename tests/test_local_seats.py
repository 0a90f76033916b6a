"""Local seats: bots (and people) played in the referee's own process, through the one seat
interface the table has, held to a remote bot's rules and shown no more than a remote bot.

Real referees on real sockets; the remote seats are raw protocol clients in threads.
"""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
import trio
from referee_support import (
    PATIENCE_S,
    RawBot,
    check_hidden_information,
    connect_and_play,
    in_thread,
    log_records,
    random_legal,
    referee_running,
)

import oddtrick
from oddtrick.bots.random_bot import RandomBot
from oddtrick.rules import Card, GameConfig, GameKind, MatchFormat, Seat
from oddtrick.v1 import referee_pb2
from oddtrick_referee import MatchSpec, TableRules, check_log
from oddtrick_referee.competitions.scoring.standings import Standings
from oddtrick_referee.competitions.tournaments.tournament import Progress, Tournament, run_tournament
from oddtrick_referee.competitions.tournaments.tournament_plan import shipped_entry
from oddtrick_referee.play.local_seat import BotPlayer, LocalEntrant, LocalPlayer, bot_entrant
from oddtrick_referee.play.records import Fault
from tests.test_tournament import settings

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
RELAXED = TableRules(deadline_s=5.0, grace_s=5.0)


class Recording:
    """A local player that keeps every message its seat is sent, for the leak check."""

    def __init__(self, inner: LocalPlayer, kept: list[list[referee_pb2.RefereeMessage]]) -> None:
        self._inner = inner
        self.received: list[referee_pb2.RefereeMessage] = []
        kept.append(self.received)

    def receive(self, message: referee_pb2.RefereeMessage) -> None:
        copy = referee_pb2.RefereeMessage()
        copy.CopyFrom(message)
        self.received.append(copy)
        self._inner.receive(message)

    async def decide(self, request: referee_pb2.DecisionRequest) -> referee_pb2.BotMessage:
        return await self._inner.decide(request)

    def again(self, refusal: referee_pb2.Refusal) -> referee_pb2.BotMessage | None:
        return self._inner.again(refusal)

    def finish(self) -> None:
        self._inner.finish()


def recorded(
    name: str, make: Callable[[], oddtrick.Bot], kept: list[list[referee_pb2.RefereeMessage]]
) -> LocalEntrant:
    return LocalEntrant(name, lambda: Recording(BotPlayer(make), kept))


@pytest.mark.parametrize("game", [GameKind.CONTRACT, GameKind.CLASSIC], ids=["contract", "classic"])
async def test_local_seats_beside_remote_ones_see_no_hidden_card_or_the_seed_early(
    tmp_path: Path, game: GameKind
) -> None:
    """Two local seats and two remote ones at one table: every card a local seat is shown
    passes the same check as the remote seats' (own hand, cards played, public cards)."""
    config = GameConfig(game=game, format=MatchFormat.DEALS, deals=2)
    local_names = {N: "local-north", S: "local-south"}
    remote_names = {E: "remote-east", W: "remote-west"}
    kept: dict[Seat, list[list[referee_pb2.RefereeMessage]]] = {N: [], S: []}
    remote: dict[Seat, RawBot] = {}

    async def remote_bot(seat: Seat, address: str) -> None:
        remote[seat] = await in_thread(connect_and_play, address, remote_names[seat], random_legal(str(seat)))

    async with referee_running(tmp_path, remote_names.values()) as referee:
        for seat, name in local_names.items():
            referee.add_local(recorded(name, RandomBot, kept[seat]))
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in remote_names:
                    nursery.start_soon(remote_bot, seat, referee.address)
                seating = {**local_names, **remote_names}
                record = await referee.play_match(
                    MatchSpec(config, seating, RELAXED, seed=f"mixed-{game.value}")
                )

    report = check_log(record.log_path)
    assert report.ok, report.describe()
    assert report.hands == 2
    assert all(not seat_record.faults for seat_record in record.seats.values()), record.seats
    for seat in local_names:
        (messages,) = kept[seat]
        assert check_hidden_information(seat, messages, record.log_path) > 200
    for seat, bot in remote.items():
        assert check_hidden_information(seat, bot.received, record.log_path) > 200


async def test_a_local_seat_is_sent_exactly_what_a_remote_seat_at_that_place_is_sent(tmp_path: Path) -> None:
    """The same deal played twice, North local then North remote, everyone answering the
    same way: North's messages are the same but for request ids and times (the outbox
    decides them once, for both kinds of seat)."""
    config = GameConfig.classic(format=MatchFormat.HAND)
    seed = "same-seat-twice"
    kept: list[list[referee_pb2.RefereeMessage]] = []

    class Lowest(oddtrick.Bot):
        name = "lowest"

        def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
            return view.legal_actions[0]

        def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
            return view.legal_actions[0]

    async with referee_running(tmp_path, ["north"]) as referee:
        for name in ("east", "south", "west"):
            referee.add_local(bot_entrant(name, Lowest))
        referee.add_local(recorded("north-local", Lowest, kept))
        seating = {N: "north-local", E: "east", S: "south", W: "west"}
        with trio.fail_after(PATIENCE_S):
            await referee.play_match(MatchSpec(config, seating, RELAXED, seed=seed))
            async with trio.open_nursery() as nursery:
                remote: list[RawBot] = []

                async def north() -> None:
                    policy = lambda bot, request: request.legal_actions[0]  # noqa: E731
                    remote.append(await in_thread(connect_and_play, referee.address, "north", policy))

                nursery.start_soon(north)
                await referee.play_match(MatchSpec(config, {**seating, N: "north"}, RELAXED, seed=seed))

    def comparable(messages: list[referee_pb2.RefereeMessage]) -> list[str]:
        """Each message's events and request, less what differs between two plays (ids,
        times, names): the cards, calls, tricks and results the seat is shown."""
        shown = []
        for message in messages:
            if message.WhichOneof("kind") != "update":
                continue
            update = message.update
            for event in update.events:
                kind = event.WhichOneof("kind")
                if kind in ("card_played", "call_made"):
                    body = getattr(event, kind)
                    what = body.card if kind == "card_played" else body.call
                    shown.append(f"{event.sequence} {kind} {body.seat} {what}")
                elif kind in ("hand_started", "trick_completed", "hand_ended"):
                    wire = getattr(event, kind).SerializeToString(deterministic=True).hex()
                    shown.append(f"{event.sequence} {kind} {wire}")
            if update.HasField("request"):
                request = update.request
                shown.append(
                    f"request {list(request.legal_actions)} {list(request.hand.cards)} {request.hand.turn}"
                )
        return shown

    (local_messages,) = kept
    remote_messages = [m for m in remote[0].received if m.WhichOneof("kind") == "update"]
    assert len(local_messages) > 10
    assert comparable(local_messages) == comparable(remote_messages)


class Sleepy(oddtrick.Bot):
    """Sleeps through its first card's deadline, then plays at once."""

    name = "sleepy"

    def __init__(self) -> None:
        self.slept = False

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return oddtrick.PASS

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        if not self.slept:
            self.slept = True
            time.sleep(1.0)
        return view.legal_actions[0]


class Raising(oddtrick.Bot):
    name = "raising"

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return oddtrick.PASS

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        raise RuntimeError("deliberate bug in a local bot")


class Illegal(oddtrick.Bot):
    """Answers with a card it does not hold (once a hand), then plays legally."""

    name = "illegal"

    def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
        return oddtrick.PASS

    def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
        if len(view.hand) == 13:
            missing = next(
                card for card in map(Card.parse, ("AS", "AH", "AD", "AC", "KS")) if card not in view.hand
            )
            return missing
        return view.legal_actions[0]


async def test_local_seats_are_held_to_a_remote_bots_deadline_and_fault_rules(tmp_path: Path) -> None:
    """A local bot that sleeps past its deadline is timed out (T) and the match goes on; one
    that raises plays its fallback as a bot error (E, its message logged); one that answers
    illegally is refused (R) and answers again; the well-behaved seat has no fault."""
    config = GameConfig.classic(format=MatchFormat.HAND)
    rules = TableRules(deadline_s=0.3, grace_s=1.0)
    async with referee_running(tmp_path, []) as referee:
        for name, bot in (
            ("sleepy", Sleepy),
            ("raising", Raising),
            ("illegal", Illegal),
            ("random", RandomBot),
        ):
            referee.add_local(bot_entrant(name, bot))
        seating = {N: "sleepy", E: "raising", S: "illegal", W: "random"}
        with trio.fail_after(PATIENCE_S):
            record = await referee.play_match(MatchSpec(config, seating, rules, seed="faults-at-local-seats"))

    assert check_log(record.log_path).ok
    seats = record.seats
    # Timed out once at least (its thread still asleep, its next decision waits for it too).
    assert set(seats[N].faults) == {Fault.TIMEOUT}
    assert seats[E].faults == {Fault.BOT_ERROR: 13}
    assert seats[S].refusals == 1
    assert not seats[S].faults
    assert not seats[W].faults
    assert not seats[W].refusals
    errors = [r for r in log_records(record.log_path, "action") if r.get("bot_error")]
    assert {r["seat"] for r in errors} == {"E"}
    assert "deliberate bug in a local bot" in errors[0]["bot_error"]
    refusals = log_records(record.log_path, "refusal")
    assert [r["seat"] for r in refusals] == ["S"]


async def test_a_slow_local_decision_runs_off_the_referees_loop(tmp_path: Path) -> None:
    """While a local bot thinks, the referee's loop goes on: a remote bot's Hello is answered
    in the middle of the local bot's decision (which waits for that Hello to be welcomed)."""
    welcomed = threading.Event()

    class WaitsForAWelcome(oddtrick.Bot):
        name = "waits"

        def choose_call(self, view: oddtrick.BotView) -> oddtrick.Action:
            return oddtrick.PASS

        def choose_card(self, view: oddtrick.BotView) -> oddtrick.Action:
            welcomed.wait(PATIENCE_S)
            return view.legal_actions[0]

    config = GameConfig.classic(format=MatchFormat.HAND)
    async with referee_running(tmp_path, ["visitor"]) as referee:
        referee.add_local(bot_entrant("waits", WaitsForAWelcome))
        referee.add_local(bot_entrant("quick", RandomBot))

        async def visitor() -> None:
            bot = await in_thread(RawBot, referee.address, "visitor")
            await in_thread(bot.hello)
            welcomed.set()
            bot.close()

        seating = {N: "waits", E: "quick", S: "quick", W: "quick"}
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(visitor)
                record = await referee.play_match(MatchSpec(config, seating, RELAXED, seed="off-the-loop"))
    assert welcomed.is_set()
    assert not record.seats[N].faults


async def test_a_tournament_of_in_process_entries_admits_no_bot(tmp_path: Path) -> None:
    """With every entry in the referee's process, nobody has a token to connect with: the
    referee refuses every Hello, whatever its name or token (it was an open arena)."""
    entries = tuple(shipped_entry(name, "random") for name in ("ann", "bob"))
    plan = settings(entries, config=GameConfig.classic(), deals=2, set_size=1, tables=1)
    refused: list[tuple[grpc.StatusCode, str]] = []

    async def play(tournament: Tournament, progress: Progress, master_seed: str) -> Standings:
        def knock() -> None:
            for name, token in (("ann~0", "any"), ("intruder", "")):
                bot = RawBot(tournament.referee.address, name, token)
                bot.send_hello()
                refused.append(bot.wait_status())
                bot.close()

        await trio.to_thread.run_sync(knock)
        return await Tournament.run(tournament, progress, master_seed)

    standings = await run_tournament(plan, tmp_path / "data", progress_stream=io.StringIO(), play=play)
    assert [code for code, _ in refused] == [grpc.StatusCode.UNAUTHENTICATED] * 2
    assert {row.entry for row in standings.rows} == {"ann", "bob"}
