"""The SDK's public surface: its curated names, the in-process runner and the
fake referee, and that the in-process runner plays exactly what the real
referee plays.
"""

from __future__ import annotations

import asyncio
from concurrent import futures

import grpc
import pytest
import trio
from referee_support import PATIENCE_S, connect_and_play, in_thread, opening_bidder, referee_running

import oddtrick
from oddtrick import Bot, Card, FakeReferee, GameConfig, IllegalAction, MatchFormat, Phase, Seat, play_local
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._codec import action_to_wire, cards_to_wire, config_to_wire, hand_state, seat_to_wire
from oddtrick.rules import GameState
from oddtrick.v1 import game_pb2, referee_pb2, referee_pb2_grpc
from oddtrick_referee import MatchSpec, TableRules, check_log

PUBLIC_NAMES = [
    "DOUBLE",
    "PASS",
    "Action",
    "Bot",
    "BotRefused",
    "BotView",
    "Call",
    "Card",
    "Contract",
    "Decision",
    "Denomination",
    "FakeReferee",
    "FunctionBot",
    "GameConfig",
    "GameKind",
    "GameState",
    "IllegalAction",
    "MatchFormat",
    "OptionError",
    "Phase",
    "Rank",
    "Seat",
    "Side",
    "Suit",
    "TlsOptions",
    "Trick",
    "TrumpSelection",
    "__version__",
    "play_local",
    "run",
    "with_options",
]


def test_the_public_names_are_exactly_the_curated_list():
    assert sorted(oddtrick.__all__) == sorted(PUBLIC_NAMES)
    assert len(set(oddtrick.__all__)) == len(oddtrick.__all__)
    for name in PUBLIC_NAMES:
        assert getattr(oddtrick, name) is not None, name
    star: dict[str, object] = {}
    exec("from oddtrick import *", star)  # what a star import brings
    assert set(star) - {"__builtins__"} == set(PUBLIC_NAMES)


def first(view):
    return view.legal_actions[0]


class Recorder(Bot):
    """Plays the first legal action and counts the hooks it is given."""

    def __init__(self) -> None:
        self.hooks: dict[str, int] = {}
        self.seeds: list[str | None] = []

    def _count(self, name: str) -> None:
        self.hooks[name] = self.hooks.get(name, 0) + 1

    def choose_call(self, view):
        return view.legal_actions[0]

    def choose_card(self, view):
        assert view.to_act is view.seat
        assert set(view.legal_actions) <= set(view.hand)
        return view.legal_actions[0]

    def on_match_start(self, view):
        self._count("match_start")

    def on_hand_start(self, view):
        self._count("hand_start")
        assert len(view.hand) == 13

    def on_card(self, view, seat, card):
        self._count("card")

    def on_trick(self, view, trick):
        self._count("trick")

    def on_hand_end(self, view, result):
        self._count("hand_end")

    def on_match_end(self, view, result):
        self._count("match_end")
        self.seeds.append(view.seed)


def test_play_local_plays_a_whole_match_and_calls_every_hook():
    recorder = Recorder()
    bots = {Seat.NORTH: recorder, Seat.EAST: first, Seat.SOUTH: first, Seat.WEST: first}
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=2)
    state = play_local(bots, config, seed="local")
    assert state.phase is Phase.MATCH_OVER
    assert state.match_result is not None
    assert state.match_result.hands_played == 2
    assert recorder.hooks == {
        "match_start": 1,
        "hand_start": 2,
        "card": 104,
        "trick": 26,
        "hand_end": 2,
        "match_end": 1,
    }
    assert recorder.seeds == ["local"]
    again = play_local(dict.fromkeys(Seat, first), config, seed="local")
    assert again.history == state.history


def test_play_local_raises_on_an_illegal_decision():
    def cheat(view):
        if view.legal_actions and isinstance(view.legal_actions[0], Card):
            return next(c for c in map(Card.from_index, range(52)) if c not in view.hand)
        return view.legal_actions[0]

    with pytest.raises(IllegalAction):
        play_local(dict.fromkeys(Seat, cheat), GameConfig.classic(format=MatchFormat.HAND), seed="x")


def test_fake_referee_asks_steps_and_records():
    fake = FakeReferee(first, seat=Seat.EAST, config=GameConfig.classic(), seed="doc")
    choice = fake.ask()
    assert choice in fake.state.legal_actions
    assert fake.state.to_act is Seat.EAST
    assert [action for _, action in fake.decisions] == [choice]
    assert fake.step() == choice
    assert fake.state.history[-1] == (Seat.EAST, choice)
    view, _ = fake.decisions[-1]
    assert view.seat is Seat.EAST
    assert view.players[Seat.EAST] == "bot"

    contract = FakeReferee(first, seat=Seat.SOUTH, config=GameConfig.contract(), seed="doc")
    contract.play("7C")  # East, first to call, bids
    assert contract.ask() is oddtrick.PASS
    assert contract.view().auction == ((Seat.EAST, oddtrick.Call.bid(7, oddtrick.Denomination.CLUBS)),)

    def illegal(view):
        return oddtrick.DOUBLE

    with pytest.raises(IllegalAction):
        FakeReferee(illegal, seat=Seat.SOUTH, config=GameConfig.contract(), seed="doc").step()


def opener(view):
    """``referee_support.opening_bidder`` on the SDK's side: open with the lowest bid, then pass."""
    legal = view.legal_actions
    if isinstance(legal[0], oddtrick.Call):
        if not any(call.level for _, call in view.auction):
            return next(call for call in legal if call.level)
        return oddtrick.PASS
    return legal[0]


@pytest.mark.parametrize(
    "game", [oddtrick.GameKind.CLASSIC, oddtrick.GameKind.CONTRACT], ids=lambda g: g.value
)
async def test_the_real_referee_plays_what_play_local_plays(tmp_path, game):
    """Same seed, same policy: the same match on the referee as in-process, action for action."""
    config = GameConfig(game=game, format=MatchFormat.DEALS, deals=2)
    local = play_local(dict.fromkeys(Seat, opener), config, seed="twin")
    assert local.match_result is not None
    assert all(result.deal is not None for result in local.hand_results)  # no hand thrown in
    names = {seat: f"twin-{seat.name.lower()}" for seat in Seat}
    async with referee_running(tmp_path, names.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for name in names.values():
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, opening_bidder)
                spec = MatchSpec(config, names, TableRules(deadline_s=5.0, grace_s=5.0), seed="twin")
                record = await referee.play_match(spec, wait_s=20)
    assert check_log(record.log_path).ok
    assert record.state.history == local.history
    assert record.state.match_result == local.match_result


class ScriptedReferee(referee_pb2_grpc.RefereeServicer):
    """A scripted server for the SDK client: a Resync between matches (no match in it,
    which the protocol allows at any time), then a one-request match."""

    def __init__(self) -> None:
        self.decisions: list[referee_pb2.Decision] = []
        self.left = False

    def Play(self, request_iterator, context):  # noqa: N802 - gRPC's name
        hello = next(request_iterator)
        assert hello.HasField("hello")
        yield referee_pb2.RefereeMessage(welcome=referee_pb2.Welcome(session_id="s", resume_token="r"))
        yield referee_pb2.RefereeMessage(resync=referee_pb2.Resync(last_sequence=0))
        state = GameState(GameConfig.classic(format=MatchFormat.HAND), "scripted")
        seat = state.to_act
        started = referee_pb2.MatchStarted(
            match_id="m", config=config_to_wire(state.config), seat=seat_to_wire(seat), seed_commitment="c"
        )
        view = state.view(seat)
        hand = referee_pb2.HandStarted(
            hand_number=1, game_number=1, dealer=seat_to_wire(state.dealer), cards=cards_to_wire(view.hand)
        )
        request = referee_pb2.DecisionRequest(
            request_id=7,
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
        answer = next(request_iterator)
        self.decisions.append(answer.decision)
        ended = game_pb2.MatchResult(outcome=game_pb2.MATCH_OUTCOME_DRAW, hands_played=1, seed="scripted")
        yield referee_pb2.RefereeMessage(
            update=referee_pb2.Update(events=[referee_pb2.Event(sequence=3, match_ended=ended)])
        )
        self.left = next(request_iterator).HasField("leave")


def test_the_sdk_client_accepts_a_resync_between_matches():
    servicer = ScriptedReferee()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    referee_pb2_grpc.add_RefereeServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        options = ClientOptions(
            server=f"127.0.0.1:{port}", name="resynced", token="t", max_matches=1, reconnect_for_s=2.0
        )
        asyncio.run(asyncio.wait_for(run_bot_async(lambda: oddtrick.FunctionBot(first), options), timeout=20))
    finally:
        server.stop(None).wait(PATIENCE_S)
    assert [d.request_id for d in servicer.decisions] == [7]
    assert servicer.left
