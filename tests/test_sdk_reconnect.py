"""The SDK's reconnect window: counted from each loss of a referee, not from the first one."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import trio
from referee_support import GUARD_S, PATIENCE_S, SeededBot

from oddtrick import Bot, BotView, GameConfig, GameState, MatchFormat
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._codec import action_to_wire, cards_to_wire, config_to_wire, hand_state, seat_to_wire
from oddtrick.v1 import referee_pb2, referee_pb2_grpc
from oddtrick_referee import RefereeSettings, running_referee

WINDOW_S = 5.0
DOWN_S = 3.0
"""Each outage is shorter than the window (by 2 s, for a referee that starts slowly on a
busy machine); the two together are longer."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def connected(settings: RefereeSettings, name: str, bot_ended: trio.Event) -> None:
    """Run a referee until ``name`` has a session on it, then stop it; at once if the bot
    has ended (it gave up), since then it never will."""
    async with running_referee(settings) as referee:
        with trio.fail_after(PATIENCE_S):
            while not any(s.name == name for s in list(referee.lobby.sessions.values())):
                if bot_ended.is_set():
                    return
                async with trio.open_nursery() as either:
                    for event in (referee.lobby.change_event, bot_ended):
                        either.start_soon(_set_then_cancel, event, either.cancel_scope)


async def _set_then_cancel(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def test_a_bot_survives_outages_that_together_outlast_its_reconnect_window(tmp_path: Path) -> None:
    port = free_port()
    settings = RefereeSettings(port=port, data_dir=tmp_path)
    options = ClientOptions(server=f"127.0.0.1:{port}", name="steady", token="", reconnect_for_s=WINDOW_S)
    outcome: list[BaseException | None] = []
    bot_ended = trio.Event()
    trio_token = trio.lowlevel.current_trio_token()

    def client() -> None:
        try:
            asyncio.run(run_bot_async(SeededBot, options))
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)
        finally:
            trio_token.run_sync_soon(bot_ended.set)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: trio.to_thread.run_sync(client, abandon_on_cancel=True))
        await connected(settings, "steady", bot_ended)
        await trio.sleep(DOWN_S)  # the first outage
        await connected(settings, "steady", bot_ended)
        await trio.sleep(DOWN_S)  # the second: more than the window since the first began
        await connected(settings, "steady", bot_ended)
        assert outcome == [], f"the bot gave up: {outcome}"
        nursery.cancel_scope.cancel()


async def test_a_bot_given_two_referees_plays_at_the_first_that_answers_and_moves_when_it_goes_away(
    tmp_path: Path,
) -> None:
    """Only the second referee is up at the start: the bot's two seats connect there. It
    stops and the first starts: both seats move to the first, within the reconnect window."""
    first, second = free_port(), free_port()
    at_first = RefereeSettings(port=first, data_dir=tmp_path / "first")
    at_second = RefereeSettings(port=second, data_dir=tmp_path / "second")
    options = ClientOptions(
        server=f"127.0.0.1:{first}",
        fallbacks=(f"127.0.0.1:{second}",),
        name="mover",
        token="",
        seats=2,
        reconnect_for_s=30.0,
    )
    outcome: list[BaseException | None] = []
    loop = asyncio.new_event_loop()
    bot = loop.create_task(run_bot_async(SeededBot, options))

    def client() -> None:
        try:
            loop.run_until_complete(bot)
            outcome.append(None)
        except BaseException as error:
            outcome.append(error)
        finally:
            loop.close()

    async def both_seats(settings: RefereeSettings) -> float:
        """Run a referee until both of the bot's seats are on it; how long that took."""
        async with running_referee(settings) as referee:
            began = trio.current_time()
            with trio.fail_after(PATIENCE_S):
                while sum(s.name == "mover" for s in list(referee.lobby.sessions.values())) < 2:
                    await referee.lobby.change_event.wait()
            return trio.current_time() - began

    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.to_thread.run_sync, client)
        try:
            await both_seats(at_second)
            moved_s = await both_seats(at_first)
            assert outcome == [], f"the bot gave up: {outcome}"
        finally:
            loop.call_soon_threadsafe(bot.cancel)  # the bot stops with the test
    print(f"both seats at the other referee {moved_s:.2f} s after it started")


class EndsWithOk(referee_pb2_grpc.RefereeServicer):
    """A referee that asks for one card and then ends the session with OK without waiting
    for the answer (as a referee does at a tournament's end, after the request timed out).
    A second Hello is a reconnection after OK, which the protocol forbids; it is counted
    and ended at once."""

    def __init__(self) -> None:
        self.hellos = 0
        self.deciding = threading.Event()
        """Set by the bot as it starts deciding: the referee then ends the session."""
        self.ended = threading.Event()
        """Set when the first call is over at the referee (its OK sent)."""

    def Play(self, request_iterator, context):  # noqa: N802 - gRPC's name
        assert next(request_iterator).HasField("hello")
        self.hellos += 1
        if self.hellos > 1:
            return
        context.add_callback(self.ended.set)
        yield referee_pb2.RefereeMessage(welcome=referee_pb2.Welcome(session_id="s", resume_token="r"))
        state = GameState(GameConfig.classic(format=MatchFormat.HAND), "ok")
        seat = state.to_act
        view = state.view(seat)
        started = referee_pb2.MatchStarted(
            match_id="m", config=config_to_wire(state.config), seat=seat_to_wire(seat), seed_commitment="c"
        )
        hand = referee_pb2.HandStarted(
            hand_number=1, game_number=1, dealer=seat_to_wire(state.dealer), cards=cards_to_wire(view.hand)
        )
        request = referee_pb2.DecisionRequest(
            request_id=1,
            kind=referee_pb2.DECISION_KIND_CARD,
            legal_actions=[action_to_wire(a) for a in state.legal_actions],
            time_left_ms=5000,
            match_id="m",
            seat=seat_to_wire(seat),
            hand=hand_state(view),
            last_sequence=2,
        )
        events = [
            referee_pb2.Event(sequence=1, match_started=started),
            referee_pb2.Event(sequence=2, hand_started=hand),
        ]
        yield referee_pb2.RefereeMessage(update=referee_pb2.Update(events=events, request=request))
        self.deciding.wait(GUARD_S)


def test_an_answer_written_after_the_referee_ended_with_ok_does_not_make_the_bot_reconnect() -> None:
    """The answer is written once the session is over at the referee, before the bot's loop
    has heard so (its decision held the loop): grpc fails the write and reports the call as
    INTERNAL until the referee's own OK comes in. The bot must stop on that OK, not reconnect."""
    servicer = EndsWithOk()

    class HoldsTheLoop(Bot):
        async def choose_card(self, view: BotView) -> Any:
            # Blocks the loop on purpose (no await): the referee's OK reaches this process
            # meanwhile, but the loop cannot take it in before the answer is written.
            servicer.deciding.set()
            servicer.ended.wait(GUARD_S)
            time.sleep(0.3)  # the OK's way from the referee's side to this process's
            return view.legal_actions[0]

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    referee_pb2_grpc.add_RefereeServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        options = ClientOptions(server=f"127.0.0.1:{port}", name="ok", token="t", reconnect_for_s=2.0)
        asyncio.run(asyncio.wait_for(run_bot_async(HoldsTheLoop, options), GUARD_S))
    finally:
        server.stop(None).wait(GUARD_S)
    assert servicer.ended.is_set()
    assert servicer.hellos == 1, "the bot reconnected after the referee ended its session with OK"
