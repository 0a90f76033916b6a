"""The SDK's reconnect window: counted from each loss of a referee, not from the first one."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import trio
from referee_support import PATIENCE_S, SeededBot

from oddtrick._client import ClientOptions, run_bot_async
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
