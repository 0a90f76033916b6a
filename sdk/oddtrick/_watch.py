"""``oddtrick watch``: follow a match as a spectator, as a play-by-play with suit symbols.

A spectator sees what a player holding no cards sees (docs/rules.md): calls,
cards, tricks and results, and the four hands once a hand is over (live
only at an open table). The referee's Arena service streams the events;
this module turns them into lines a person reads.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Collection, Iterable, Iterator
from typing import Any, TextIO

import grpc

from oddtrick._codec import (
    call_from_wire,
    card_from_wire,
    config_from_wire,
    contract_from_wire,
    hand_result_from_wire,
    seat_from_wire,
    side_from_wire,
    trumps_from_wire,
)
from oddtrick._codec_arena import (
    IN_PROGRESS,
    SEALED,
    list_matches_request,
    match_log_request,
    watch_match_request,
)
from oddtrick._codec_text import parse_action
from oddtrick._drive import replay_actions
from oddtrick._terminal import console, suits
from oddtrick._tls import TlsOptions
from oddtrick._tls import channel as open_channel
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.rules import (
    Action,
    AuctionEnded,
    CallMade,
    CardPlayed,
    GameConfig,
    GameEnded,
    GameKind,
    GameState,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    Seat,
    TrickWon,
)
from oddtrick.rules._cards import pretty_hand
from oddtrick.v1 import arena_pb2, arena_pb2_grpc, game_pb2, referee_pb2


class PlayByPlay:
    """Turns spectator events into text lines, a trick per line."""

    def __init__(self) -> None:
        self._trick: list[str] = []
        self._auction: list[str] = []
        self._kind = GameKind.CONTRACT
        self._hands_shown = False

    def lines(self, events: Iterable[referee_pb2.Event]) -> Iterator[str]:
        for event in events:
            yield from self._event(event)

    def _event(self, event: referee_pb2.Event) -> Iterator[str]:
        kind = event.WhichOneof("kind")
        if kind == "match_started":
            started = event.match_started
            config = config_from_wire(started.config)
            self._kind = config.game
            players = "  ".join(f"{seat_from_wire(p.seat)} {p.bot_name}" for p in started.players)
            yield f"match {started.match_id} · {config.describe()}"
            yield f"  {players}"
        elif kind == "hand_started":
            yield from self._hand_started(event.hand_started)
        elif kind == "call_made":
            made = event.call_made
            self._auction.append(f"{seat_from_wire(made.seat)} {call_from_wire(made.call).pretty}")
        elif kind == "auction_ended":
            yield f"  auction: {', '.join(self._auction)}"
            self._auction = []
            ended = event.auction_ended
            if ended.HasField("contract"):
                contract = contract_from_wire(ended.contract)
                yield f"  contract: {contract}"
            else:
                yield "  thrown in: all four passed"
        elif kind == "card_played":
            played = event.card_played
            self._trick.append(f"{seat_from_wire(played.seat)} {card_from_wire(played.card).pretty:>3}")
        elif kind == "trick_completed":
            trick = event.trick_completed
            ns, ew = trick.tricks.north_south, trick.tricks.east_west
            yield (
                f"  trick {trick.trick.number:>2}: {'  '.join(self._trick)}"
                f"  → {seat_from_wire(trick.trick.winner)}   (NS {ns}, EW {ew})"
            )
            self._trick = []
        elif kind == "hand_ended":
            result = hand_result_from_wire(event.hand_ended)
            score = event.hand_ended.score
            if not self._hands_shown:
                yield from _hands(event.hand_ended.hands)
            yield f"  result: {result.describe()}"
            yield f"  score: NS {score.game.north_south}, EW {score.game.east_west}"
        elif kind == "game_ended":
            game = event.game_ended
            yield f"game {game.game_number} won by {side_from_wire(game.winner)}"
        elif kind == "match_ended":
            final = event.match_ended
            total = final.score.total
            outcome = (
                f"{side_from_wire(final.winner)} won"
                if final.outcome == game_pb2.MATCH_OUTCOME_WIN
                else "drawn"
            )
            yield f"match over: {outcome}, NS {total.north_south} – EW {total.east_west}"
            if final.seed:
                yield f"  seed {final.seed} (oddtrick check on the log replays every deal)"

    def _hand_started(self, started: referee_pb2.HandStarted) -> Iterator[str]:
        self._trick = []
        self._auction = []
        dealer = seat_from_wire(started.dealer)
        line = f"hand {started.hand_number} · dealer {dealer}"
        if self._kind is GameKind.CLASSIC:
            trumps = trumps_from_wire(started.trumps)
            line += f" · trumps {trumps.symbol if trumps is not None else 'none (no trumps)'}"
        if started.HasField("turned_card"):
            line += f" (turned {card_from_wire(started.turned_card).pretty})"
        if started.HasField("cut_card"):
            line += f" (cut {card_from_wire(started.cut_card).pretty})"
        yield line
        self._hands_shown = bool(started.hands)
        yield from _hands(started.hands)


def _hands(hands: Iterable[game_pb2.SeatHand]) -> Iterator[str]:
    for hand in hands:
        yield f"  {seat_from_wire(hand.seat)}  {pretty_hand(card_from_wire(c) for c in hand.cards)}"


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
        try:
            while True:
                if match_id is not None:
                    target: str | None = match_id
                elif since_ms is None:
                    target = newest_match_in_progress(channel)
                    if target is None and wait:
                        # Whatever starts from now on, even a match over before the next look.
                        watched.extend(m.match_id for m in _listed(arena))
                        target, since_ms = _match_after(arena, server, watched, 0, err, first=True)
                else:
                    target, since_ms = _match_after(arena, server, watched, since_ms, err)
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
            if error.code() is grpc.StatusCode.UNAVAILABLE:
                print(
                    f"oddtrick watch: no referee answers at {server} (is oddtrick serve running?)", file=err
                )
            else:
                print(f"oddtrick watch: {error.code().name}: {error.details()}", file=err)
            return 1


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
    first: bool = False,
) -> tuple[str, int]:
    """The first match open to spectators that started after ``since_ms`` and is not in
    ``watched``, in progress or already over (a short match can start and end between two
    looks), waiting for one if there is none yet. Returns it and when it started."""
    said = False
    while True:
        later = [m for m in _listed(arena) if m.match_id not in watched and m.started_at_unix_ms >= since_ms]
        if later:
            chosen = min(later, key=lambda m: (m.started_at_unix_ms, m.match_id))
            return chosen.match_id, chosen.started_at_unix_ms
        if not said:
            what = "a match to start" if first else "the next match"
            print(f"waiting for {what} on {server} (Ctrl-C to stop)", file=err, flush=True)
            said = True
        time.sleep(POLL_S)


def _watch_live(arena: arena_pb2_grpc.ArenaStub, match_id: str, pacer: _Pacer) -> bool:
    """Follow a match in progress to its end; False if it is not in progress (finished).

    The stream is read on its own thread, so that a paced printer never keeps the referee
    waiting (it cuts off a spectator that falls far behind).
    """
    stream = arena.WatchMatch(watch_match_request(match_id))
    received: queue.Queue[arena_pb2.WatchMatchResponse | BaseException | None] = queue.Queue()

    def read() -> None:
        try:
            for response in stream:
                received.put(response)
            received.put(None)
        except BaseException as error:  # handed to the printing thread
            received.put(error)

    reader = threading.Thread(target=read, name="watch-reader", daemon=True)
    reader.start()
    play = PlayByPlay()
    try:
        while (item := received.get()) is not None:
            if isinstance(item, grpc.RpcError) and item.code() is grpc.StatusCode.NOT_FOUND:
                return False
            if isinstance(item, BaseException):
                raise item
            for line in play.lines(item.events):
                pacer.show(line)
    finally:
        stream.cancel()
    return True


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
    for line in replay_lines([json.loads(line) for line in lines]):
        pacer.show(line)


def replay_lines(records: list[dict[str, Any]]) -> Iterator[str]:
    """A match log's play, re-created with the rules engine, in ``PlayByPlay``'s words."""
    start, end = records[0], records[-1]
    config = GameConfig.from_dict(start["config"])
    players = "  ".join(
        f"{seat} {player['name'] if isinstance(player, dict) else player}"
        for seat, player in start.get("players", {}).items()
    )
    yield f"match {start.get('match_id', '')} · {config.describe()} (finished: replayed from its log)"
    if players:
        yield f"  {players}"
    try:
        fixed = deals_from_log(start, end)
    except DealSetError:
        fixed = None  # shown from the seed, as a log of an older referee would be
    state = GameState(config, end.get("seed"), deals=fixed)
    trick: list[str] = []
    auction: list[str] = []
    actions = [r for r in records if r.get("type") == "action"]
    yield from _replayed(state.hand_started(), state, trick, auction)
    for events in replay_actions(state, actions, _logged):
        for event in events:
            yield from _replayed(event, state, trick, auction)


def _logged(state: GameState, record: dict[str, Any]) -> tuple[Seat, Action]:
    """A log's action line: the seat it names and its action."""
    action = parse_action(record["action"], state)
    return Seat.parse(record["seat"]), action


def _replayed(event: MatchEvent, state: GameState, trick: list[str], auction: list[str]) -> Iterator[str]:
    if isinstance(event, HandStarted):
        line = f"hand {event.hand_number} · dealer {event.dealer}"
        if state.config.game is GameKind.CLASSIC:
            line += f" · trumps {event.trumps.symbol if event.trumps is not None else 'none (no trumps)'}"
        if event.turned_card is not None:
            line += f" (turned {event.turned_card.pretty})"
        if event.cut_card is not None:
            line += f" (cut {event.cut_card.pretty})"
        yield line
    elif isinstance(event, CallMade):
        auction.append(f"{event.seat} {event.call.pretty}")
    elif isinstance(event, AuctionEnded):
        yield f"  auction: {', '.join(auction)}"
        auction.clear()
        yield f"  contract: {event.contract}" if event.contract else "  thrown in: all four passed"
    elif isinstance(event, CardPlayed):
        trick.append(f"{event.seat} {event.card.pretty:>3}")
    elif isinstance(event, TrickWon):
        ns, ew = event.tricks_won
        played = "  ".join(trick)
        yield f"  trick {event.trick.number:>2}: {played}  → {event.trick.winner}   (NS {ns}, EW {ew})"
        trick.clear()
    elif isinstance(event, HandEnded):
        result = event.result
        if result.deal is not None:
            for seat in Seat:
                yield f"  {seat}  {pretty_hand(result.deal[seat])}"
        yield f"  result: {result.describe()}"
        yield f"  score: NS {result.scores_after[0]}, EW {result.scores_after[1]}"
    elif isinstance(event, GameEnded):
        yield f"game {event.result.game_number} won by {event.result.winner}"
    elif isinstance(event, MatchEnded):
        final = event.result
        outcome = f"{final.winner} won" if final.winner is not None else "drawn"
        yield f"match over: {outcome}, NS {final.totals[0]} – EW {final.totals[1]}"
