"""``oddtrick watch``: follow a match as a spectator, as a play-by-play with suit symbols.

A spectator sees what a player holding no cards sees (docs/rules.md): calls,
cards, tricks and results, and the four hands once a hand is over (live
only at an open table). The referee's Arena service streams the events;
this module turns them into lines a person reads.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, TextIO

import grpc

from oddtrick._codec_arena import (
    IN_PROGRESS,
    SEALED,
    list_matches_request,
    match_log_request,
    watch_match_request,
    watch_next_match_request,
)
from oddtrick._codec_protocol import revealed_seed_from_wire, spectator_event_from_wire
from oddtrick._codec_text import parse_action
from oddtrick._drive import replay_actions
from oddtrick._events import MatchOpened, MatchStopped, SpectatorEvent
from oddtrick._log_records import (
    ActionRecord,
    MalformedRecord,
    MatchEnd,
    MatchStart,
    Record,
    records_from_lines,
)
from oddtrick._terminal import console, suits
from oddtrick._tls import TlsOptions
from oddtrick._tls import channel as open_channel
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.rules import (
    Action,
    AuctionEnded,
    CallMade,
    CardPlayed,
    Deal,
    GameConfig,
    GameEnded,
    GameKind,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    Seat,
    TrickWon,
)
from oddtrick.rules._cards import pretty_hand
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, referee_pb2


class PlayByPlay:
    """Turns spectator events into text lines, a trick per line: the values a spectator is
    told (``oddtrick._events``), read from the wire with the codec, or a replay's own."""

    def __init__(self, kind: GameKind = GameKind.CONTRACT) -> None:
        self._trick: list[str] = []
        self._auction: list[str] = []
        self._kind = kind
        """The game, told by the match's opening (a replay knows it from its log)."""
        self._hands_shown = False

    def lines(self, events: Iterable[referee_pb2.Event]) -> Iterator[str]:
        """The lines of a spectator's wire events (``Arena.WatchMatch``)."""
        for event in events:
            value = spectator_event_from_wire(event)
            if value is not None:
                yield from self.shown(value, revealed_seed_from_wire(event))

    def shown(self, event: SpectatorEvent, seed: str = "") -> Iterator[str]:
        """The lines of one event; ``seed``, the one a match's end reveals, if any."""
        if isinstance(event, MatchOpened):
            self._kind = event.config.game
            players = "  ".join(f"{seat} {name}" for seat, name in event.players)
            yield f"match {event.match_id} · {event.config.describe()}"
            yield f"  {players}"
        elif isinstance(event, HandStarted):
            yield from self._hand_started(event)
        elif isinstance(event, CallMade):
            self._auction.append(f"{event.seat} {event.call.pretty}")
        elif isinstance(event, AuctionEnded):
            yield f"  auction: {', '.join(self._auction)}"
            self._auction = []
            yield (
                f"  contract: {event.contract}"
                if event.contract is not None
                else "  thrown in: all four passed"
            )
        elif isinstance(event, CardPlayed):
            self._trick.append(f"{event.seat} {event.card.pretty:>3}")
        elif isinstance(event, TrickWon):
            ns, ew = event.tricks_won
            played = "  ".join(self._trick)
            yield f"  trick {event.trick.number:>2}: {played}  → {event.trick.winner}   (NS {ns}, EW {ew})"
            self._trick = []
        elif isinstance(event, HandEnded):
            result = event.result
            if not self._hands_shown:
                yield from _hands(result.deal)
            yield f"  result: {result.describe()}"
            yield f"  score: NS {result.scores_after[0]}, EW {result.scores_after[1]}"
        elif isinstance(event, GameEnded):
            yield f"game {event.result.game_number} won by {event.result.winner}"
        else:
            yield from _match_over(event, seed)

    def _hand_started(self, started: HandStarted) -> Iterator[str]:
        self._trick = []
        self._auction = []
        line = f"hand {started.hand_number} · dealer {started.dealer}"
        if self._kind is GameKind.CLASSIC:
            trumps = started.trumps
            line += f" · trumps {trumps.symbol if trumps is not None else 'none (no trumps)'}"
        if started.turned_card is not None:
            line += f" (turned {started.turned_card.pretty})"
        if started.cut_card is not None:
            line += f" (cut {started.cut_card.pretty})"
        yield line
        self._hands_shown = started.hands is not None
        yield from _hands(started.hands)


def _hands(deal: Deal | None) -> Iterator[str]:
    """The four hands, when shown (``None``: not shown, or a thrown-in hand's)."""
    if deal is not None:
        for seat in Seat:
            yield f"  {seat}  {pretty_hand(deal[seat])}"


def _match_over(event: MatchEnded | MatchStopped, seed: str) -> Iterator[str]:
    """The match's end; a stopped match with why, and the points so far (as the live page)."""
    if isinstance(event, MatchStopped):
        why = event.reason or "before its end"
        yield f"match stopped: {why}; NS {event.totals[0]} – EW {event.totals[1]}"
        return
    final = event.result
    outcome = f"{final.winner} won" if final.winner is not None else "drawn"
    yield f"match over: {outcome}, NS {final.totals[0]} – EW {final.totals[1]}"
    if seed:
        yield f"  seed {seed} (oddtrick check on the log replays every deal)"


def newest_match_in_progress(channel: grpc.Channel, skip: Collection[str] = ()) -> str | None:
    """The newest match open to spectators, other than those in ``skip``."""
    arena = arena_pb2_grpc.ArenaStub(channel)
    response = arena.ListMatches(list_matches_request(20, [IN_PROGRESS]))
    return next((m.match_id for m in response.matches if m.match_id not in skip), None)


def _nothing_to_watch(channel: grpc.Channel, server: str) -> str:
    sealed = arena_pb2_grpc.ArenaStub(channel).ListMatches(list_matches_request(1, [SEALED]))
    if sealed.matches:
        return (
            f"no match open to spectators on {server}: plays of duplicate deals are sealed until "
            "both plays of their deals are over (their logs are served then)"
        )
    return f"no match in progress on {server}; wait for one to start, or name a match id"


POLL_S = 0.5
"""How often a waiting spectator asks the referee whether a match has started."""

SEALED_LOOK_S = 2.0
"""How often a spectator waiting for a match to start looks for sealed ones being played."""


def sealed_in_play(arena: arena_pb2_grpc.ArenaStub) -> int:
    """How many matches are being played sealed (listed as sealed, not yet ended): the
    tables of a ladder's match, or of a tournament's duplicate set, while their deals are
    still to be dealt at another table."""
    listed = arena.ListMatches(list_matches_request(500, [SEALED])).matches  # newest first
    return sum(1 for match in listed if not match.HasField("ended_at_unix_ms"))


def sealed_line(count: int, server: str) -> str:
    """What a spectator waiting for a match is told of the sealed ones being played."""
    are, its, them = ("1 match is", "its", "it") if count == 1 else (f"{count} matches are", "their", "them")
    return (
        f"{are} being played on {server}, sealed: {its} deals are (or may be) still to be dealt at "
        "another table (the twin table of a ladder match or of a duplicate pair, or a later table "
        f"dealing from the same --deals-from file), so no spectator sees {them} until none will. "
        "Waiting for a match open to spectators to start; a sealed match's log is served once it "
        "is released (oddtrick watch MATCH_ID replays it then)"
    )


class _SealedNotice:
    """Says once, while a spectator waits for a match open to it, that matches are being
    played sealed: a ladder seals every table it plays, and its spectators were left
    waiting in silence for ever."""

    def __init__(self, arena: arena_pb2_grpc.ArenaStub, server: str, err: TextIO) -> None:
        self._arena = arena
        self._server = server
        self._err = err
        self.said = False

    def look(self) -> None:
        if self.said:
            return
        count = sealed_in_play(self._arena)
        if count:
            print(sealed_line(count, self._server), file=self._err, flush=True)
            self.said = True


class _Pacer:
    """Prints lines for a person: red hearts and diamonds on a terminal, and a pause
    after each line so the play can be followed (none when ``delay`` is 0)."""

    def __init__(self, out: TextIO, delay: float) -> None:
        self.out = out
        self.console = console(out)
        self.delay = delay

    def show(self, line: str) -> None:
        self.console.print(suits(line))
        self.out.flush()
        if self.delay:
            time.sleep(self.delay)


def watch(
    server: str,
    match_id: str | None,
    out: TextIO,
    err: TextIO,
    *,
    wait: bool = False,
    follow: bool = False,
    delay: float = 0.0,
    tls: TlsOptions | None = None,
) -> int:
    """Print matches' play to ``out`` as it happens; the exit status of ``oddtrick watch``.

    ``match_id`` names one match, in progress (followed live) or finished (replayed from
    its log). Without it, the newest match in progress is followed; with ``wait``, one
    that has not started yet is waited for, and with ``follow`` every match after it too.
    ``delay`` pauses after each line, for a person to read.
    """
    pacer = _Pacer(out, delay)
    watched: list[str] = []
    since_ms: int | None = None
    with open_channel(server, tls) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        sealed = _SealedNotice(arena, server, err)
        try:
            while True:
                if match_id is not None:
                    target: str | None = match_id
                elif since_ms is None:
                    target = newest_match_in_progress(channel)
                    if target is None and wait:
                        target, since_ms, shown = _first_match(arena, server, watched, err, pacer, sealed)
                        if shown:
                            watched.append(target)
                            if not follow:
                                return 0
                            continue
                else:
                    target, since_ms = _match_after(arena, server, watched, since_ms, err, sealed)
                if target is None:
                    print(f"oddtrick watch: {_nothing_to_watch(channel, server)}", file=err)
                    return 1
                watched.append(target)
                if since_ms is None:
                    since_ms = _started_at(arena, target)
                if not _watch_live(arena, target, pacer):
                    _replay_finished(arena, target, pacer)
                if match_id is not None or not follow:
                    return 0
        except grpc.RpcError as error:
            said, status = rpc_failure(error.code(), error.details(), server, follow and bool(watched))
            print(f"oddtrick watch: {said}", file=err)
            return status


def rpc_failure(code: grpc.StatusCode, details: str | None, server: str, followed: bool) -> tuple[str, int]:
    """What to say when a call to the referee fails, and the exit status.

    A referee that is gone refuses the connection (UNAVAILABLE); one stopping as a call
    arrives cancels it (CANCELLED: gRPC cancels the calls no handler has taken yet when a
    server stops, grpc/grpc#41785; a referee ends a spectator's stream for any other reason
    with a status of its own). ``followed``: a match has been shown in full in follow mode,
    where the referee's end is the end of its matches (``serve`` stops after its own).
    """
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
        if followed:
            return f"the referee at {server} has stopped", 0
        if code is grpc.StatusCode.CANCELLED:
            return f"the referee at {server} stopped while it was being watched", 1
        return f"no referee answers at {server} (is oddtrick serve running?)", 1
    return f"{code.name}: {details}", 1


def _first_match(
    arena: arena_pb2_grpc.ArenaStub,
    server: str,
    watched: list[str],
    err: TextIO,
    pacer: _Pacer,
    sealed: _SealedNotice,
) -> tuple[str, int, bool]:
    """Wait for a match to start: it, when it started, and whether it was shown already.

    The next match is subscribed to before it starts, however short it is: a look every
    :data:`POLL_S` could miss one over before the next look, and a referee that stops
    after it (``serve`` of one match) would leave nothing to look at. A referee older
    than ``WatchMatchRequest.next_to_start`` is looked at instead.
    """
    print(f"waiting for a match to start on {server} (Ctrl-C to stop)", file=err, flush=True)
    started = _watch_next(arena, pacer, sealed.look)
    if started is not None:
        return started[0], started[1], True
    watched.extend(m.match_id for m in _listed(arena))  # whatever starts from now on
    target, since_ms = _match_after(arena, server, watched, 0, err, sealed, said=True)
    return target, since_ms, False


def _started_at(arena: arena_pb2_grpc.ArenaStub, match_id: str) -> int:
    listed = arena.ListMatches(list_matches_request(50))
    return next((m.started_at_unix_ms for m in listed.matches if m.match_id == match_id), 0)


def _listed(arena: arena_pb2_grpc.ArenaStub) -> list[arena_pb2.MatchSummary]:
    """The newest matches open to spectators, in progress or over."""
    statuses = [arena_pb2.MATCH_STATUS_IN_PROGRESS, arena_pb2.MATCH_STATUS_FINISHED]
    return list(arena.ListMatches(list_matches_request(100, statuses)).matches)


def _match_after(
    arena: arena_pb2_grpc.ArenaStub,
    server: str,
    watched: list[str],
    since_ms: int,
    err: TextIO,
    sealed: _SealedNotice,
    said: bool = False,
) -> tuple[str, int]:
    """The first match open to spectators that started after ``since_ms`` and is not in
    ``watched``, in progress or already over (a short match can start and end between two
    looks), waiting for one if there is none yet. Returns it and when it started.
    ``said``: the wait was announced already."""
    while True:
        later = [m for m in _listed(arena) if m.match_id not in watched and m.started_at_unix_ms >= since_ms]
        if later:
            chosen = min(later, key=lambda m: (m.started_at_unix_ms, m.match_id))
            return chosen.match_id, chosen.started_at_unix_ms
        if not said:
            print(f"waiting for the next match on {server} (Ctrl-C to stop)", file=err, flush=True)
            said = True
        sealed.look()
        time.sleep(POLL_S)


def _watch_live(arena: arena_pb2_grpc.ArenaStub, match_id: str, pacer: _Pacer) -> bool:
    """Follow a match in progress to its end; False if it is not in progress (finished)."""
    return _show_stream(arena.WatchMatch(watch_match_request(match_id)), pacer) is not None


def _watch_next(
    arena: arena_pb2_grpc.ArenaStub, pacer: _Pacer, waiting: Callable[[], None]
) -> tuple[str, int] | None:
    """Follow the next match to start, from its first event, to its end: its id and when
    it started; ``None`` if the referee cannot (it predates ``next_to_start``).
    ``waiting`` is called now and every :data:`SEALED_LOOK_S` until the match starts."""
    return _show_stream(arena.WatchMatch(watch_next_match_request()), pacer, waiting)


def _show_stream(
    stream: Any, pacer: _Pacer, waiting: Callable[[], None] | None = None
) -> tuple[str, int] | None:
    """Print a WatchMatch stream to its end: the match's id and when it started (from its
    MatchStarted), or ``None`` if the referee found no such match (NOT_FOUND).

    The stream is read on its own thread, so that a paced printer never keeps the referee
    waiting (it cuts off a spectator that falls far behind); the stream is cancelled and
    the thread joined before this returns, however it ends. Until its first message,
    ``waiting`` is called now and every :data:`SEALED_LOOK_S`.
    """
    received: queue.Queue[arena_pb2.WatchMatchResponse | BaseException | None] = queue.Queue()

    def read() -> None:
        try:
            for response in stream:
                received.put(response)
            received.put(None)
        except BaseException as error:  # handed to the printing thread
            received.put(error)

    reader = threading.Thread(target=read, name="watch-reader")
    reader.start()
    play = PlayByPlay()
    started = ("", 0)
    try:
        while (item := _first_or_next(received, waiting)) is not None:
            waiting = None
            if isinstance(item, grpc.RpcError) and item.code() is grpc.StatusCode.NOT_FOUND:
                return None
            if isinstance(item, BaseException):
                raise item
            for event in item.events:
                if event.HasField("match_started"):
                    opened = event.match_started
                    started = (opened.match_id, opened.started_at_unix_ms)
            for line in play.lines(item.events):
                pacer.show(line)
    finally:
        stream.cancel()  # the reader's stream ends at once
        reader.join()
    return started


def _first_or_next(received: queue.Queue[Any], waiting: Callable[[], None] | None) -> Any:
    """The stream's next item; while ``waiting`` is given, it is called now and every
    :data:`SEALED_LOOK_S` until one comes."""
    while waiting is not None:
        waiting()
        try:
            return received.get(timeout=SEALED_LOOK_S)
        except queue.Empty:
            continue
    return received.get()


def _replay_finished(arena: arena_pb2_grpc.ArenaStub, match_id: str, pacer: _Pacer) -> None:
    """Print a finished match from its log, as the spectators saw it."""
    lines: list[str] = []
    token = ""
    while True:
        page = arena.GetMatchLog(match_log_request(match_id, token))
        lines.extend(page.lines)
        token = page.next_page_token
        if not token:
            break
    for line in replay_lines(list(records_from_lines(lines))):
        pacer.show(line)


def replay_lines(records: Sequence[Record]) -> Iterator[str]:
    """A match log's play (its records, read by the one reader), re-created with the rules
    engine, in ``PlayByPlay``'s words: as a closed table's spectators saw it, the four
    hands shown once each hand is over."""
    start, end = records[0], records[-1]
    if not isinstance(start, MatchStart) or not isinstance(end, MatchEnd):
        raise MalformedRecord("not the log of a finished match (no match_start and match_end records)")
    config = GameConfig.from_dict(start.config)
    players = "  ".join(
        f"{seat} {player['name'] if isinstance(player, dict) else player}"
        for seat, player in start.players.items()
    )
    yield f"match {start.match_id} · {config.describe()} (finished: replayed from its log)"
    if players:
        yield f"  {players}"
    try:
        fixed = deals_from_log(start, end)
    except DealSetError:
        fixed = None  # shown from the seed, as a log of an older referee would be
    state = GameState(config, end.seed, deals=fixed)
    play = PlayByPlay(config.game)
    actions = [r for r in records if isinstance(r, ActionRecord)]
    yield from play.shown(dataclasses.replace(state.hand_started(), hands=None))
    for events in replay_actions(state, actions, _logged):
        for event in events:
            if isinstance(event, HandStarted):
                event = dataclasses.replace(event, hands=None)
            yield from play.shown(event)


def _logged(state: GameState, record: ActionRecord) -> tuple[Seat, Action]:
    """A log's action line: the seat it names and its action."""
    action = parse_action(record.action, state)
    return Seat.parse(record.seat), action
