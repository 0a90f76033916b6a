"""Spectators (Arena.WatchMatch) over a real socket: what they see, and what they never see.

Each test holds the match at its first decision (the bot to act waits) until
the spectator has joined, so the spectator provably joins a match in
progress and receives the events so far, then the rest live.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from referee_support import (
    GUARD_S,
    PATIENCE_S,
    RawBot,
    _Replay,
    check_hidden_information,
    connect_and_play,
    first_legal,
    in_thread,
    random_legal,
    referee_running,
)

from oddtrick._codec import card_from_wire, seat_from_wire
from oddtrick._watch import PlayByPlay, watch
from oddtrick.rules import GameConfig, MatchFormat, Seat, TrumpSelection
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, referee_pb2
from oddtrick_referee import RefereeSettings, check_log, running_referee
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, Referee
from oddtrick_referee.replay.model import replay_log
from tests.replay_support import CONFIGS, play_logged

NAMES = {seat: f"watched-{seat.name.lower()}" for seat in Seat}


class Spectator:
    """Arena.WatchMatch on grpc's synchronous API, read in the caller's thread."""

    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.arena = arena_pb2_grpc.ArenaStub(self.channel)
        self.responses: list[arena_pb2.WatchMatchResponse] = []
        self.status: tuple[grpc.StatusCode, str] | None = None

    def match_in_progress(self, status: int = arena_pb2.MATCH_STATUS_IN_PROGRESS) -> str:
        listed = self.arena.ListMatches(arena_pb2.ListMatchesRequest(statuses=[status]), timeout=GUARD_S)
        assert len(listed.matches) == 1, listed
        return listed.matches[0].match_id

    def watch(self, match_id: str, joined: threading.Event, stop_after: str | None = None) -> None:
        """Read the stream to its end (or until an event of kind ``stop_after``, then hang up)."""
        call = self.arena.WatchMatch(arena_pb2.WatchMatchRequest(match_id=match_id), timeout=60)
        try:
            for response in call:
                self.responses.append(response)
                joined.set()
                if stop_after and any(e.WhichOneof("kind") == stop_after for e in response.events):
                    call.cancel()
                    break
            self.status = (call.code(), call.details() or "")
        except grpc.RpcError as error:
            self.status = (error.code(), error.details() or "")
        finally:
            joined.set()
            self.channel.close()

    @property
    def events(self) -> list[referee_pb2.Event]:
        return [event for response in self.responses for event in response.events]


def held_at_first_decision(
    policy: Callable[[RawBot, referee_pb2.DecisionRequest], Any],
    asked: threading.Event,
    release: threading.Event,
) -> Callable[[RawBot, referee_pb2.DecisionRequest], Any]:
    """``policy``, except that the very first decision of the match waits for ``release``."""

    def held(bot: RawBot, request: referee_pb2.DecisionRequest) -> Any:
        if not asked.is_set():
            asked.set()
            assert release.wait(GUARD_S), "the spectator never joined"
        return policy(bot, request)

    return held


async def play_watched(
    tmp_path: Path,
    config: GameConfig,
    rules: TableRules,
    spectate: Callable[[Referee, threading.Event], None],
    sealed: bool = False,
    bots: dict[Seat, RawBot] | None = None,
) -> MatchRecord:
    """Play one match of four raw bots, held at the first decision until ``spectate``
    (run in a thread once the match is in progress) sets the event it is given."""
    asked, release = threading.Event(), threading.Event()
    lock = threading.Lock()

    async def bot(seat: Seat, address: str) -> None:
        policy = random_legal(f"watched-{seat}", pass_rate=0.6)
        with lock:  # each bot wraps its own policy, but only one request is the match's first
            held = held_at_first_decision(policy, asked, release)
        played = await in_thread(connect_and_play, address, NAMES[seat], held)
        if bots is not None:
            bots[seat] = played

    async with referee_running(tmp_path, NAMES.values()) as referee:
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for seat in Seat:
                    nursery.start_soon(bot, seat, referee.address)

                async def spectator() -> None:
                    await in_thread(asked.wait, GUARD_S)
                    await in_thread(spectate, referee, release)

                nursery.start_soon(spectator)
                spec = MatchSpec(config, NAMES, rules, seed=f"watched-{config.game.value}")
                return await referee.play_match(spec, wait_s=20, sealed=sealed)
    raise AssertionError("unreachable")


CUT_CLASSIC = GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.DEALS, deals=2)


@pytest.mark.parametrize(
    "config",
    [GameConfig.contract(format=MatchFormat.DEALS, deals=2), CUT_CLASSIC],
    ids=["contract", "classic-cut"],
)
async def test_a_spectator_sees_the_public_play_and_no_hidden_card(tmp_path, config):
    watchers: list[Spectator] = []

    def spectate(referee: Referee, joined: threading.Event) -> None:
        spectator = Spectator(referee.address)
        watchers.append(spectator)
        spectator.watch(spectator.match_in_progress(), joined)

    record = await play_watched(tmp_path, config, TableRules(deadline_s=5.0), spectate)
    assert check_log(record.log_path).ok
    (spectator,) = watchers
    assert spectator.status is not None
    assert spectator.status[0] is grpc.StatusCode.OK, spectator.status
    events = spectator.events
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    first = spectator.responses[0].events
    assert first[0].WhichOneof("kind") == "match_started"
    assert first[0].match_started.match_id == record.match_id
    assert any(e.WhichOneof("kind") == "hand_started" for e in first)  # it joined mid-match
    as_messages = [
        referee_pb2.RefereeMessage(update=referee_pb2.Update(events=r.events)) for r in spectator.responses
    ]
    checked = check_hidden_information(None, as_messages, record.log_path)
    assert checked >= 104, checked  # every card played, and the hands shown after each hand
    plays = [e for e in events if e.WhichOneof("kind") == "card_played"]
    assert len(plays) == sum(len(hand) for hand in _Replay(record.log_path).plays.values())
    lines = list(PlayByPlay().lines(events))
    assert sum(1 for line in lines if line.lstrip().startswith("trick ")) == len(plays) // 4
    assert lines[-2].startswith("match over:")


async def test_an_open_table_shows_spectators_all_four_hands_at_the_deal(tmp_path):
    watchers: list[Spectator] = []

    def spectate(referee: Referee, joined: threading.Event) -> None:
        spectator = Spectator(referee.address)
        watchers.append(spectator)
        # Hang up after the first hand: the match must carry on regardless.
        spectator.watch(spectator.match_in_progress(), joined, stop_after="hand_ended")

    config = GameConfig.classic(format=MatchFormat.DEALS, deals=2)
    bots: dict[Seat, RawBot] = {}
    record = await play_watched(tmp_path, config, TableRules(deadline_s=5.0, open=True), spectate, bots=bots)
    for seat, bot in bots.items():  # open is for spectators: seats still see only their own hand
        check_hidden_information(seat, bot.received, record.log_path)
    report = check_log(record.log_path)
    assert report.ok, report.describe()
    assert report.hands == 2
    (spectator,) = watchers
    assert spectator.status is not None
    assert spectator.status[0] is grpc.StatusCode.CANCELLED
    started = next(e.hand_started for e in spectator.events if e.WhichOneof("kind") == "hand_started")
    assert not started.cards
    shown = {seat_from_wire(h.seat): [card_from_wire(c) for c in h.cards] for h in started.hands}
    dealt = _Replay(record.log_path).deals[1]
    assert shown == {seat: list(dealt[seat]) for seat in Seat}


async def test_sealed_and_unknown_matches_cannot_be_watched(tmp_path):
    outcomes: dict[str, tuple[grpc.StatusCode, str]] = {}
    summaries: list[arena_pb2.MatchSummary] = []
    cli: list[tuple[int, str]] = []

    def spectate(referee: Referee, joined: threading.Event) -> None:
        try:
            err = io.StringIO()
            cli.append((watch(referee.address, None, io.StringIO(), err), err.getvalue()))
            for label, match_id in (("unknown", "no-such-match"), ("sealed", None)):
                spectator = Spectator(referee.address)
                if match_id is None:  # a sealed play is listed as such from its start, without progress
                    listed = spectator.arena.ListMatches(arena_pb2.ListMatchesRequest(), timeout=GUARD_S)
                    summaries.extend(listed.matches)
                    match_id = spectator.match_in_progress(arena_pb2.MATCH_STATUS_SEALED)
                spectator.watch(match_id, threading.Event())
                assert spectator.status is not None
                outcomes[label] = spectator.status
        finally:
            joined.set()

    config = GameConfig.contract(format=MatchFormat.HAND)
    record = await play_watched(tmp_path, config, TableRules(deadline_s=5.0), spectate, sealed=True)
    assert record.state.match_result is not None
    assert outcomes["unknown"][0] is grpc.StatusCode.NOT_FOUND, outcomes
    assert outcomes["sealed"][0] is grpc.StatusCode.FAILED_PRECONDITION, outcomes
    assert "duplicate" in outcomes["sealed"][1]
    # oddtrick watch, asked for "the newest match in progress", says why there is none to watch.
    ((status, error),) = cli
    assert status == 1
    assert "sealed" in error
    (summary,) = summaries
    assert summary.status == arena_pb2.MATCH_STATUS_SEALED
    assert not summary.HasField("score")
    assert not summary.HasField("result")


def _tricks_as_replay_shows_them(log_path: Path) -> list[list[str]]:
    """Every hand's tricks, in PlayByPlay's words, from the replay model of ``oddtrick replay``."""
    match = replay_log(log_path)
    hands = []
    for hand in match.hands:
        lines = []
        for number, steps in hand.tricks:
            played = "  ".join(f"{step.seat} {step.card.pretty:>3}" for step in steps)
            last = steps[-1]
            ns, ew = last.tricks
            lines.append(f"  trick {number:>2}: {played}  → {last.winner}   (NS {ns}, EW {ew})")
        hands.append(lines)
    return hands


def _tricks_as_watch_shows_them(lines: list[str]) -> list[list[str]]:
    hands: list[list[str]] = []
    for line in lines:
        if line.startswith("hand "):
            hands.append([])
        elif line.startswith("  trick "):
            hands[-1].append(line)
    return hands


@pytest.mark.parametrize("name", ["contract-doubling", "classic-turned"])
async def test_watch_replays_a_finished_match_as_replay_does_every_trick_of_every_hand(tmp_path, name):
    config = CONFIGS[name]
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data")) as referee:
        logged = await play_logged(referee, config, seed=f"watch-{name}", match_id=f"w-{name}")
        out, err = io.StringIO(), io.StringIO()
        status = await in_thread(watch, referee.address, logged.match_id, out, err)
        referee.finish()
    assert status == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert "(finished: replayed from its log)" in lines[0]
    expected = _tricks_as_replay_shows_them(logged.log_path)
    shown = _tricks_as_watch_shows_them(lines)
    assert len(expected) == config.deals
    for number, (seen, wanted) in enumerate(zip(shown, expected, strict=True), start=1):
        assert seen == wanted, f"hand {number}"
        assert len(seen) == 13 or not wanted  # thrown-in hands have no tricks
    assert sum(1 for line in lines if line.startswith("hand ")) == config.deals
    assert sum(1 for line in lines if line.startswith("  result: ")) == config.deals
    assert lines[-1].startswith("match over:")


class WaitingSpectator:
    """A spectator of the next match (Referee.watch_next), as the Arena's stream is one."""

    def __init__(self) -> None:
        self.closed = False
        self.seen: list[Any] = []
        self.ended: tuple[grpc.StatusCode, str] | None = None

    def show(self, seen: Any) -> None:
        self.seen.extend(seen)

    def close(self, code: grpc.StatusCode, details: str) -> None:
        self.closed, self.ended = True, (code, details)


async def test_a_spectator_of_the_next_match_passes_a_sealed_play_over_and_sees_all_of_the_next(tmp_path):
    config = GameConfig.classic(format=MatchFormat.HAND)
    async with referee_running(tmp_path, NAMES.values()) as referee:
        waiting, gone = WaitingSpectator(), WaitingSpectator()
        referee.watch_next(waiting)
        referee.watch_next(gone)
        gone.closed = True  # hung up while waiting: shown nothing
        records: list[MatchRecord] = []
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for name in NAMES.values():
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal, 2)
                for sealed in (True, False):
                    spec = MatchSpec(config, NAMES, TableRules(deadline_s=5.0), seed=f"next-{sealed}")
                    records.append(await referee.play_match(spec, wait_s=20, sealed=sealed))
    sealed_play, open_play = records
    assert waiting.ended == (grpc.StatusCode.OK, "the match is over")
    first, last = waiting.seen[0].wire(), waiting.seen[-1].wire()
    assert first.match_started.match_id == open_play.match_id != sealed_play.match_id
    assert last.HasField("match_ended")
    assert [seen.number for seen in waiting.seen] == list(range(1, len(waiting.seen) + 1))
    assert gone.seen == []
    assert gone.ended is None


async def test_a_spectator_who_comes_as_a_match_ends_is_shown_all_of_it(tmp_path):
    """From the table's end until the index says how it ended, the match is still live,
    and a spectator who joins then is shown the whole match from memory and closed OK:
    never told it is neither in progress nor logged yet."""
    config = GameConfig.classic(format=MatchFormat.HAND)
    async with referee_running(tmp_path, NAMES.values()) as referee:
        late = WaitingSpectator()
        ended = referee.store.match_ended

        def match_ended(match_id: str, *args: Any) -> Any:
            table = referee.live[match_id]  # still live while its end is written
            trio.from_thread.run_sync(table.watch, late, trio_token=referee.trio_token)
            return ended(match_id, *args)

        referee.store.match_ended = match_ended  # type: ignore[method-assign]
        with trio.fail_after(PATIENCE_S):
            async with trio.open_nursery() as nursery:
                for name in NAMES.values():
                    nursery.start_soon(in_thread, connect_and_play, referee.address, name, first_legal)
                record = await referee.play_match(
                    MatchSpec(config, NAMES, TableRules(deadline_s=5.0)), wait_s=20
                )
        assert record.match_id not in referee.live
    assert late.ended == (grpc.StatusCode.OK, "the match is over")
    events = [seen.wire() for seen in late.seen]
    assert events[0].match_started.match_id == record.match_id
    assert events[-1].HasField("match_ended")
    assert sum(event.HasField("card_played") for event in events) == 52


@pytest.mark.parametrize(
    ("code", "followed", "said", "status"),
    [
        # A referee stopping as a call arrives cancels it: following, that is its end too.
        (grpc.StatusCode.CANCELLED, True, "the referee at R has stopped", 0),
        (grpc.StatusCode.UNAVAILABLE, True, "the referee at R has stopped", 0),
        (grpc.StatusCode.CANCELLED, False, "the referee at R stopped while it was being watched", 1),
        (grpc.StatusCode.UNAVAILABLE, False, "no referee answers at R (is oddtrick serve running?)", 1),
        (grpc.StatusCode.PERMISSION_DENIED, True, "PERMISSION_DENIED: sealed", 1),
    ],
)
def test_watch_says_a_stopping_referee_has_stopped_rather_than_print_its_status(code, followed, said, status):
    from oddtrick._watch import rpc_failure

    assert rpc_failure(code, "sealed", "R", followed) == (said, status)
