"""Event.sequence is gapless within a session, even across a match the referee stopped.

Bots that follow the protocol's advice (close the stream and resume on a gap)
would otherwise reconnect for nothing after every stopped match.
"""

from __future__ import annotations

import threading

import trio
from referee_support import RawBot, first_legal, in_thread, referee_running

from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import game_pb2
from oddtrick_referee import MatchSpec, TableRules

MUTE = "seq-east"


def drive(bot: RawBot, muted: threading.Event) -> None:
    """Answer every request (but stay silent while ``muted`` if this is the mute bot)
    until a match ends that was not stopped; then leave."""
    while True:
        message = bot.next_message(timeout=60)
        kind = message.WhichOneof("kind")
        if kind != "update":
            continue
        if any(
            event.HasField("match_ended") and event.match_ended.outcome != game_pb2.MATCH_OUTCOME_ABORTED
            for event in message.update.events
        ):
            break
        if message.update.HasField("request") and not (bot.name == MUTE and muted.is_set()):
            bot.answer(message.update.request.request_id, first_legal(bot, message.update.request))
    bot.leave()
    bot.wait_status(timeout=30)


async def test_event_numbers_stay_gapless_after_a_stopped_match(tmp_path):
    names = {seat: f"seq-{seat.name.lower()}" for seat in Seat}
    config = GameConfig.classic(format=MatchFormat.HAND)
    rules = TableRules(deadline_s=60.0, grace_s=5.0)
    muted = threading.Event()
    muted.set()
    async with referee_running(tmp_path, names.values()) as referee:
        bots = [RawBot(referee.address, name) for name in names.values()]
        for bot in bots:
            await in_thread(bot.hello)
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                for bot in bots:
                    nursery.start_soon(in_thread, drive, bot, muted)
                # East never answers: the first match is stopped while it waits.
                with trio.move_on_after(3) as stopping:
                    await referee.play_match(MatchSpec(config, names, rules, seed="stopped"), wait_s=20)
                assert stopping.cancelled_caught
                muted.clear()
                await referee.play_match(MatchSpec(config, names, rules, seed="played"), wait_s=20)
    started = []
    for bot in bots:
        numbers = [event.sequence for event in bot.events]
        assert numbers == list(range(1, len(numbers) + 1)), (bot.name, numbers)
        started.append(sum(event.HasField("match_started") for event in bot.events))
    # Every seat was told of the stopped match, its start and its stop, then of the next.
    assert started == [2, 2, 2, 2], started
    for bot in bots:
        stops = [e.match_ended for e in bot.events if e.HasField("match_ended")]
        assert [stop.outcome for stop in stops] == [
            game_pb2.MATCH_OUTCOME_ABORTED,
            game_pb2.MATCH_OUTCOME_WIN,
        ]
