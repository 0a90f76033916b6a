"""Replaying a logged action list: the replay model and ``oddtrick watch``, pinned.

Logs are made here, without a referee: a seeded player drives a match (a Contract
hand thrown in on purpose) and its actions are written as the log writes them,
with think times, faults, comments and clocks; some logs stop mid-hand or at a
hand's end (mid-match). For each, the replay model (``oddtrick replay``), the
play-by-play ``oddtrick watch`` prints from the log, and the play-by-play of the
spectators' wire events of the same match (made by the table's own outbox) are
pinned in tests/golden/log_replays.json, so a change to either loop shows as a
difference. After an intended change:

    python -m pytest tests/test_log_replays.py --update-golden
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from oddtrick._codec_protocol import Seen
from oddtrick._drive import drive
from oddtrick._log_records import ActionRecord, Record, record_from_dict
from oddtrick._watch import PlayByPlay, replay_lines
from oddtrick.rules import (
    Action,
    GameConfig,
    GameState,
    HandStarted,
    MatchFormat,
    Phase,
    Seat,
    TrumpSelection,
    commitment,
)
from oddtrick.v1 import referee_pb2
from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.play.matchlog import LOG_FORMAT
from oddtrick_referee.play.outbox import MatchHeader, Outbox
from oddtrick_referee.play.records import SeatRecord, TableRules
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.model import replay_records

GOLDEN = Path(__file__).parent / "golden" / "log_replays.json"

CONTRACT = GameConfig.contract(format=MatchFormat.DEALS, deals=3)
CLASSIC = GameConfig.classic(format=MatchFormat.DEALS, deals=2, honours=True)
CLASSIC_CUT = GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.DEALS, deals=2)


class Seeded:
    """Random legal actions from a seed; every call a pass in the hands of ``thrown_in``."""

    def __init__(self, seed: str, thrown_in: frozenset[int] = frozenset()) -> None:
        self._random = random.Random(seed)
        self._thrown_in = thrown_in

    def act(self, state: GameState, seat: Seat) -> Action:
        legal = state.legal_actions
        if state.phase is Phase.AUCTION and state.hand_number in self._thrown_in:
            return next(a for a in legal if str(a) == "pass")
        return self._random.choice(legal)


def _played(config: GameConfig, seed: str, thrown_in: frozenset[int]) -> list[tuple[int, Seat, Action]]:
    """Every action of a whole match (hand, seat, action), in order."""
    state = GameState(config, seed)
    actions: list[tuple[int, Seat, Action]] = []
    player = Seeded(seed, thrown_in)

    class Recording:
        def act(self, state: GameState, seat: Seat) -> Action:
            action = player.act(state, seat)
            actions.append((state.hand_number, seat, action))
            return action

    for _ in drive(state, Recording()):
        pass
    return actions


def _action_line(number: int, hand: int, seat: Seat, action: Action) -> dict[str, Any]:
    """The log's line for one action, with the extras a log may hold now and then."""
    return ActionRecord(
        hand,
        str(seat),
        str(action),
        number % 13,
        bot_think_ms=number % 5 if number % 3 == 0 else None,
        fault="timeout" if number % 11 == 0 else None,
        comment=f"thought {number}" if number % 7 == 0 else None,
        clock_ms=10_000 - number if number % 5 == 0 else None,
    ).to_dict()


def make_log(
    config: GameConfig, seed: str, thrown_in: Sequence[int] = (), keep: int | None = None
) -> list[dict[str, Any]]:
    """A match log's records (``keep``: only that many actions, then the match_end)."""
    actions = _played(config, seed, frozenset(thrown_in))
    start = {
        "type": "match_start",
        "format": LOG_FORMAT,
        "match_id": f"m-{seed}",
        "table_id": "t",
        "started_at_ms": 1_796_000_000_000,
        "config": config.to_dict(),
        "rules": {"deadline_ms": 5000, "grace_ms": 5000},
        "players": {str(seat): {"name": f"bot-{seat.name.lower()}", "version": "1"} for seat in Seat},
        "seed_commitment": commitment(seed),
    }
    records: list[dict[str, Any]] = [start]
    hand = 0
    for number, (in_hand, seat, action) in enumerate(actions[:keep], 1):
        if in_hand != hand:
            hand = in_hand
            records.append({"type": "hand_start", "hand": hand, "dealer": "?"})
        records.append(_action_line(number, in_hand, seat, action))
    records.append({"type": "match_end", "result": {}, "seats": {}, "seed": seed})
    return records


def typed(records: Sequence[dict[str, Any]]) -> Iterator[Record]:
    """The records as the one reader makes them of a log's lines, numbered as its lines."""
    return (record_from_dict(record, number) for number, record in enumerate(records, 1))


def _hand_end(config: GameConfig, seed: str, thrown_in: Sequence[int], hand: int) -> int:
    """How many actions a match makes up to the end of hand ``hand``."""
    return sum(1 for h, _, _ in _played(config, seed, frozenset(thrown_in)) if h <= hand)


CASES: dict[str, tuple[GameConfig, str, tuple[int, ...], int | None]] = {
    "contract-thrown-in": (CONTRACT, "log-contract", (2,), None),
    "contract-mid-auction": (CONTRACT, "log-contract", (2,), 3),
    "contract-after-auction": (CONTRACT, "log-contract", (), -1),
    "contract-mid-hand-3": (CONTRACT, "log-contract", (2,), -30),
    "contract-after-thrown-in": (CONTRACT, "log-contract", (2,), -2),
    "classic-whole": (CLASSIC, "log-classic", (), None),
    "classic-mid-hand": (CLASSIC, "log-classic", (), 52 + 17),
    "classic-after-hand-1": (CLASSIC, "log-classic", (), 52),
    "classic-cut-whole": (CLASSIC_CUT, "log-classic-cut", (), None),
    "classic-no-action": (CLASSIC_CUT, "log-classic-cut", (), 0),
}
"""Name: (config, seed, Contract hands thrown in, actions kept). A negative count of
kept actions is a place named by the case: -1 right after hand 1's auction, -2 at
the end of hand 2, -30 thirty actions before the match's end."""


def _kept(config: GameConfig, seed: str, thrown_in: tuple[int, ...], keep: int | None) -> int | None:
    if keep == -1:
        actions = _played(config, seed, frozenset(thrown_in))
        state = GameState(config, seed)
        for count, (_, seat, action) in enumerate(actions, 1):
            state.apply(action, seat)
            if state.phase is Phase.PLAY:
                return count
        raise AssertionError("no auction ended")
    if keep == -2:
        return _hand_end(config, seed, thrown_in, 2)
    if keep == -30:
        return len(_played(config, seed, frozenset(thrown_in))) - 30
    return keep


def case_log(name: str) -> list[dict[str, Any]]:
    config, seed, thrown_in, keep = CASES[name]
    return make_log(config, seed, thrown_in, _kept(config, seed, thrown_in, keep))


def model_digest(records: list[dict[str, Any]]) -> str:
    """The replay model, as ``oddtrick export --json`` writes it, in a line."""
    text = json.dumps(match_to_json(replay_records(typed(records))), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class _Link:
    """What the outbox needs of a seat's link: its bot and a numbering."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat
        self.bot_name = f"bot-{seat.name.lower()}"
        self.bot_version = "1"
        self.sequence = 0

    def number(self, events: Sequence[Any]) -> None:
        for event in events:
            self.sequence += 1
            event.sequence = self.sequence

    def send(self, message: object) -> None:
        pass


class _Watcher:
    """A spectator keeping every event it is shown."""

    closed = False

    def __init__(self) -> None:
        self.seen: list[Seen] = []

    def show(self, seen: Sequence[Seen]) -> None:
        self.seen.extend(seen)

    def close(self, code: grpc.StatusCode, details: str) -> None:
        self.closed = True


def spectator_events(
    config: GameConfig,
    seed: str,
    thrown_in: Sequence[int],
    *,
    open_table: bool,
    stop_after: int | None = None,
) -> list[referee_pb2.Event]:
    """The spectators' wire events of a match, as the table's outbox makes them
    (``stop_after``: that many actions, then the match is stopped)."""
    state = GameState(config, seed)
    links = {seat: _Link(seat) for seat in Seat}
    header = MatchHeader(f"m-{seed}", "t", TableRules(5.0, open=open_table).to_wire(), 0)
    players = tuple((seat, link.bot_name, link.bot_version) for seat, link in links.items())
    outbox = Outbox(header, players, open_table=open_table, sealed=False)
    spectators = outbox.spectators
    watcher = _Watcher()
    spectators.join(watcher)
    records = {seat: SeatRecord(link.bot_name) for seat, link in links.items()}
    outbox.open_match(state)
    outbox.tell(state, records, (state.hand_started(),), {})
    actions = 0
    for events in drive(state, Seeded(seed, frozenset(thrown_in))):
        outbox.tell(state, records, events, {})
        actions += not isinstance(events[0], HandStarted)
        if stop_after is not None and actions == stop_after:
            outbox.stopped(state, records, links, "the referee stopped the match before its end")
            break
    spectators.publish()
    return [seen.wire() for seen in watcher.seen]


WIRE_CASES: dict[str, tuple[GameConfig, str, tuple[int, ...], bool, int | None]] = {
    "contract-open-thrown-in": (CONTRACT, "wire-contract", (2,), True, None),
    "contract-closed": (CONTRACT, "wire-contract", (1,), False, None),
    "classic-open": (CLASSIC, "wire-classic", (), True, None),
    "classic-cut-closed": (CLASSIC_CUT, "wire-classic-cut", (), False, None),
    "classic-stopped-mid-hand": (CLASSIC, "wire-classic", (), False, 52 + 9),
    "contract-stopped-after-hand-1": (CONTRACT, "wire-contract", (), True, -1),
}
"""Name: (config, seed, thrown in, open table, actions before a stop; -1: hand 1's)."""


def wire_case(name: str) -> list[referee_pb2.Event]:
    config, seed, thrown_in, open_table, stop = WIRE_CASES[name]
    if stop == -1:
        stop = _hand_end(config, seed, thrown_in, 1)
    return spectator_events(config, seed, thrown_in, open_table=open_table, stop_after=stop)


ERRORS = {
    "a wrong seat": lambda records: records[3].update(seat="N" if records[3]["seat"] != "N" else "E"),
    "an illegal card": lambda records: records[-3].update(
        action="2C" if records[-3]["action"] != "2C" else "3C"
    ),
    "not a card": lambda records: records[-3].update(action="XX"),
    "an action line without its seat": lambda records: records[4].pop("seat"),
}


def _error(name: str) -> str:
    records = case_log("classic-whole")
    ERRORS[name](records)
    with pytest.raises(ReplayError) as raised:
        replay_records(typed(records))
    return str(raised.value)


def _everything() -> dict[str, Any]:
    return {
        "models": {name: model_digest(case_log(name)) for name in CASES},
        "watch": {name: list(replay_lines(list(typed(case_log(name))))) for name in CASES},
        "play_by_play": {name: list(PlayByPlay().lines(wire_case(name))) for name in WIRE_CASES},
        "errors": {name: _error(name) for name in ERRORS},
    }


@pytest.fixture(scope="module")
def golden(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.config.getoption("--update-golden"):
        GOLDEN.write_text(json.dumps(_everything(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if not GOLDEN.exists():
        pytest.fail(f"{GOLDEN} is missing; create it with --update-golden")
    loaded: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.parametrize("name", list(CASES))
def test_the_replay_model_of_a_log_is_as_pinned(golden, name):
    assert model_digest(case_log(name)) == golden["models"][name]


@pytest.mark.parametrize("name", list(CASES))
def test_watch_replays_a_log_as_pinned(golden, name):
    assert list(replay_lines(list(typed(case_log(name))))) == golden["watch"][name]


@pytest.mark.parametrize("name", list(WIRE_CASES))
def test_the_play_by_play_of_the_spectators_events_is_as_pinned(golden, name):
    assert list(PlayByPlay().lines(wire_case(name))) == golden["play_by_play"][name]


@pytest.mark.parametrize("name", list(ERRORS))
def test_a_damaged_log_is_refused_as_pinned(golden, name):
    assert _error(name) == golden["errors"][name]


def test_the_cases_stop_where_they_say():
    """The logs cut short stop mid-hand and at hands' ends, and one hand is thrown in."""
    thrown = replay_records(typed(case_log("contract-thrown-in")))
    assert thrown.finished
    assert thrown.hands[1].contract is None
    assert not thrown.hands[1].plays
    assert thrown.hands[1].result is not None
    after = replay_records(typed(case_log("contract-after-thrown-in")))
    assert not after.finished
    assert len(after.hands) == 2
    assert after.hands[-1].result is not None
    mid = replay_records(typed(case_log("classic-mid-hand")))
    assert len(mid.hands) == 2
    assert mid.hands[-1].result is None
    assert len(mid.hands[-1].plays) == 17
    ended = replay_records(typed(case_log("classic-after-hand-1")))
    assert len(ended.hands) == 1
    assert ended.hands[0].result is not None
    auction = replay_records(typed(case_log("contract-after-auction")))
    assert auction.hands[0].contract is not None
    assert not auction.hands[0].plays
    assert [e.WhichOneof("kind") for e in wire_case("classic-stopped-mid-hand")][-1] == "match_ended"
