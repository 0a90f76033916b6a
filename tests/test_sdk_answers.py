"""What the SDK sends for a bot's decisions, on a real referee: a second answer right
after a refusal (never a wait for the deadline), and the bot's comments."""

from __future__ import annotations

import asyncio
import functools
import io
from collections.abc import Callable
from typing import Any

import trio
from referee_support import in_thread, log_records, referee_running, token_of

import oddtrick
from oddtrick import Bot, BotView, Card, Decision, GameConfig, MatchFormat, Seat
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick_referee import MatchSpec, TableRules
from oddtrick_referee.play.table import Fault
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.replay.terminal import print_match

ALL_CARDS = [Card.parse(f"{rank}{suit}") for suit in "CDHS" for rank in "23456789TJQKA"]
DEADLINE_S = 5.0
"""Long enough that waiting it out even once is seen in the faults, not the clock."""


class Revoker(Bot):
    """Plays a card it may not play whenever there is one (a bot with a revoke bug)."""

    def choose_call(self, view: BotView) -> Any:
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        illegal = [card for card in view.hand if card not in view.legal_actions]
        return illegal[0] if illegal else next(c for c in ALL_CARDS if c not in view.hand)


class Commenter(Bot):
    """Says something about every decision, in each of the ways a bot may."""

    def choose_call(self, view: BotView) -> Any:
        bids = [a for a in view.legal_actions if getattr(a, "level", None)]
        # Open when nobody has (all 35 bids legal), so that cards are played.
        call = bids[0] if len(bids) == 35 else view.legal_actions[0]
        return Decision(call, f"call at hand {view.hand_number}")

    def choose_card(self, view: BotView) -> Any:
        if len(view.hand) % 2:
            return view.legal_actions[0], f"finesse with {len(view.hand)} left"
        return view.legal_actions[0]


def first(view: BotView) -> oddtrick.Action:
    return view.legal_actions[0]


def run_client(make: Callable[[], Bot], name: str) -> None:
    options = ClientOptions(
        server=ADDRESS[0], name=name, token=token_of(name), seats=2, max_matches=1, reconnect_for_s=5.0
    )
    asyncio.run(asyncio.wait_for(run_bot_async(make, options), timeout=120))


ADDRESS: list[str] = []


async def play(tmp_path: Any, make: Callable[[], Bot], config: GameConfig) -> Any:
    names = {Seat.NORTH: "tested", Seat.EAST: "house", Seat.SOUTH: "tested", Seat.WEST: "house"}
    async with referee_running(tmp_path, set(names.values())) as referee:
        ADDRESS[:] = [referee.address]
        with trio.fail_after(90):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(in_thread, run_client, make, "tested")
                nursery.start_soon(
                    in_thread, run_client, functools.partial(oddtrick.FunctionBot, first), "house"
                )
                spec = MatchSpec(
                    config, names, TableRules(deadline_s=DEADLINE_S, grace_s=5.0), seed="answers"
                )
                return await referee.play_match(spec, wait_s=20)


async def test_after_a_refusal_the_sdk_answers_again_at_once(tmp_path):
    record = await play(tmp_path, Revoker, GameConfig.classic(format=MatchFormat.HAND))
    for seat in (Seat.NORTH, Seat.SOUTH):
        seat_record = record.seats[seat]
        assert seat_record.refusals == 13, seat_record  # every card refused once...
        # ...and answered again before the deadline: no fallback made for the seat.
        assert not seat_record.faults.get(Fault.ILLEGAL), seat_record
        assert not seat_record.faults.get(Fault.TIMEOUT), seat_record
    assert record.state.match_result is not None


async def test_a_bots_comments_reach_the_log_and_the_replay(tmp_path):
    record = await play(tmp_path, Commenter, GameConfig.contract(format=MatchFormat.HAND))
    actions = [r for r in log_records(record.log_path) if r["type"] in ("call", "card", "action")]
    said = [(r.get("seat"), r.get("comment")) for r in actions if r.get("comment")]
    assert ("N", "call at hand 1") in said or ("S", "call at hand 1") in said, actions[:8]
    assert any(comment.startswith("finesse with ") for _, comment in said), said
    house = [r for r in actions if r.get("seat") in ("E", "W")]
    assert house, actions[:8]
    assert not any(r.get("comment") for r in house)
    out = io.StringIO()
    print_match(replay_log(record.log_path), out)
    text = out.getvalue()
    assert "finesse with 13 left" in text, text
    assert any(line.startswith("comment  auction") for line in text.splitlines()), text
