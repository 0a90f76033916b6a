"""``oddtrick watch``: follow a match as a spectator, as a play-by-play with suit symbols.

A spectator sees what a player holding no cards sees (RULES.md): calls,
cards, tricks and results, and the four hands once a hand is over (live
only at an open table). The referee's Arena service streams the events;
this module turns them into lines a person reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TextIO

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
from oddtrick._tls import TlsOptions
from oddtrick._tls import channel as open_channel
from oddtrick.rules import GameKind
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


def newest_match_in_progress(channel: grpc.Channel) -> str | None:
    arena = arena_pb2_grpc.ArenaStub(channel)
    response = arena.ListMatches(
        arena_pb2.ListMatchesRequest(page_size=1, statuses=[arena_pb2.MATCH_STATUS_IN_PROGRESS])
    )
    return response.matches[0].match_id if response.matches else None


def _nothing_to_watch(channel: grpc.Channel, server: str) -> str:
    sealed = arena_pb2_grpc.ArenaStub(channel).ListMatches(
        arena_pb2.ListMatchesRequest(page_size=1, statuses=[arena_pb2.MATCH_STATUS_SEALED])
    )
    if sealed.matches:
        return (
            f"no match open to spectators on {server}: plays of duplicate deals are sealed until "
            "both plays of their deals are over (their logs are served then)"
        )
    return f"no match in progress on {server}; wait for one to start, or name a match id"


def watch(server: str, match_id: str | None, out: TextIO, err: TextIO, tls: TlsOptions | None = None) -> int:
    """Print the match's play to ``out`` as it happens; the exit status of ``oddtrick watch``."""
    with open_channel(server, tls) as channel:
        try:
            match_id = match_id or newest_match_in_progress(channel)
            if match_id is None:
                print(f"oddtrick watch: {_nothing_to_watch(channel, server)}", file=err)
                return 1
            stream = arena_pb2_grpc.ArenaStub(channel).WatchMatch(
                arena_pb2.WatchMatchRequest(match_id=match_id)
            )
            play = PlayByPlay()
            for response in stream:
                for line in play.lines(response.events):
                    print(line, file=out, flush=True)
        except grpc.RpcError as error:
            if error.code() is grpc.StatusCode.UNAVAILABLE:
                print(
                    f"oddtrick watch: no referee answers at {server} (is oddtrick serve running?)", file=err
                )
            else:
                print(f"oddtrick watch: {error.code().name}: {error.details()}", file=err)
            return 1
    return 0
