"""Support for the referee's end-to-end tests: a real referee, real gRPC bots.

The referee runs in the test's trio loop on a real localhost socket; bots are
real gRPC clients running in threads (or processes), never mocks:

- :class:`RawBot` is a synchronous raw client on grpc's sync API: the test
  decides every message it sends (including wrong ones) and sees every
  message the referee sends, in order, with the call's final status.
- :meth:`RawBot.play` is the raw auto-player: it answers each request with a
  policy and records everything it receives.
- :func:`run_sdk_bot` runs the SDK's own client (asyncio) until its matches
  are played.

Everything that blocks (a raw bot's script, an SDK bot) runs in a worker
thread through :func:`in_thread`, so the referee's trio loop never waits on
it. Waits are on queues and events; timeouts are only guards against a hang.
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import grpc
import trio
from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from oddtrick import Bot, BotView
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._codec import action_to_wire, card_from_wire, seat_from_wire
from oddtrick._codec_text import parse_action
from oddtrick.rules import Card, Deal, GameConfig, GameState, Phase, Seat
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import RefereeSettings, read_log, running_referee
from oddtrick_referee.referee import Referee

GUARD_S = 15.0
"""How long any single wait may take before the test fails instead of hanging."""

PATIENCE_S = 180.0
"""How long a test waits for what must happen (bot processes started and connected, a
match played to its end) before it fails rather than hangs. Generous on purpose: on a
loaded two-core machine starting one Python bot process can take tens of seconds. The
wait itself is always for an event, never a sleep, so a quick machine never waits."""

PROTOCOL = "oddtrick.v1"
ALL_GAMES = (game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT)


def token_of(name: str) -> str:
    return f"token-of-{name}"


@asynccontextmanager
async def referee_running(tmp_path: Path, names: Iterable[str], **settings: Any) -> AsyncIterator[Referee]:
    """A referee on a free localhost port that accepts ``names`` with :func:`token_of`."""
    tokens = {name: token_of(name) for name in names}
    async with running_referee(
        RefereeSettings(port=0, data_dir=tmp_path / "data", tokens=tokens, **settings)
    ) as referee:
        yield referee


async def in_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run blocking ``function(*args)`` in a worker thread; on cancellation, stop waiting for it."""
    return await trio.to_thread.run_sync(function, *args, abandon_on_cancel=True)


# ---------------------------------------------------------------------------
# The raw client
# ---------------------------------------------------------------------------

_CLOSE = object()
_END = object()


def _serialize(message: Message | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


class StreamEnded(AssertionError):
    """The referee ended the call while the test still expected a message."""


class RawBot:
    """One ``Referee.Play`` call on grpc's synchronous API.

    Outgoing messages go through a queue that feeds the request iterator; a
    reader thread puts every incoming message into :attr:`inbox` (and keeps
    all of them in :attr:`received`), then records the final status.
    """

    def __init__(self, address: str, name: str, token: str | None = None) -> None:
        self.address = address
        self.name = name
        self.token = token_of(name) if token is None else token
        self.received: list[referee_pb2.RefereeMessage] = []
        """Every message the referee sent on this call, in order."""
        self.events: list[referee_pb2.Event] = []
        """Every event read so far through :meth:`next_message` and :meth:`play`."""
        self.welcome: referee_pb2.Welcome | None = None
        self.status: tuple[grpc.StatusCode, str] | None = None
        self._outbox: queue.Queue[Any] = queue.Queue()
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._ended = threading.Event()
        self._channel = grpc.insecure_channel(address)
        play = self._channel.stream_stream(
            "/oddtrick.v1.Referee/Play",
            request_serializer=_serialize,
            response_deserializer=referee_pb2.RefereeMessage.FromString,
        )
        self._call = play(iter(self._outbox.get, _CLOSE))
        self._reader = threading.Thread(target=self._read, name=f"raw-bot {name}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        try:
            for message in self._call:
                self.received.append(message)
                self._inbox.put(message)
            self.status = (self._call.code(), self._call.details() or "")
        except grpc.RpcError as error:
            self.status = (error.code(), error.details() or "")
        except Exception as error:  # never let a reader thread die noisily
            self.status = (grpc.StatusCode.UNKNOWN, f"reader failed: {error!r}")
        finally:
            self._ended.set()
            self._inbox.put(_END)

    # ------------------------------------------------------------- sending

    def send_raw(self, message: referee_pb2.BotMessage) -> None:
        self._outbox.put(message)

    def send_bytes(self, data: bytes) -> None:
        """Send ``data`` as a message as it is (which need not be a valid BotMessage)."""
        self._outbox.put(data)

    def send_hello(
        self,
        *,
        resume_token: str | None = None,
        protocol: str = PROTOCOL,
        games: Iterable[int] = ALL_GAMES,
        token: str | None = None,
    ) -> None:
        hello = referee_pb2.Hello(
            bot_name=self.name,
            bot_version="raw-1",
            token=self.token if token is None else token,
            protocol=referee_pb2.ProtocolVersion(name=protocol, minor=0),
            games=list(games),
        )
        if resume_token is not None:
            hello.resume_token = resume_token
        self.send_raw(referee_pb2.BotMessage(hello=hello))

    def hello(self, **options: Any) -> referee_pb2.Welcome:
        """Send a Hello and return the Welcome."""
        self.send_hello(**options)
        self.welcome = self.next_message("welcome").welcome
        return self.welcome

    def answer(self, request_id: int, action: cards_pb2.Action, comment: str | None = None) -> None:
        decision = referee_pb2.Decision(request_id=request_id, action=action)
        if comment is not None:
            decision.comment = comment
        self.send_raw(referee_pb2.BotMessage(decision=decision))

    def leave(self) -> None:
        self.send_raw(referee_pb2.BotMessage(leave=referee_pb2.Leave()))

    # ----------------------------------------------------------- receiving

    def next_message(self, kind: str | None = None, timeout: float = GUARD_S) -> referee_pb2.RefereeMessage:
        """The next message from the referee (of ``kind``, or fail). A Waiting notice is
        skipped, as a bot may, unless it is the ``kind`` asked for; :attr:`received` has it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self._inbox.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"{self.name}: no message from the referee within {timeout} s") from None
            if message is _END:
                self._inbox.put(_END)
                raise StreamEnded(
                    f"{self.name}: the call ended with {self.status} while a message was expected"
                )
            got = message.WhichOneof("kind")
            if got != "waiting" or kind == "waiting":
                break
        if got == "update":
            self.events.extend(message.update.events)
        if kind is not None and got != kind:
            raise AssertionError(
                f"{self.name}: expected a {kind}, got {text_format.MessageToString(message)}"
            )
        return message

    def next_request(self, timeout: float = GUARD_S) -> referee_pb2.DecisionRequest:
        """Read Updates until one carries a request (no other kind may come)."""
        while True:
            update = self.next_message("update", timeout).update
            if update.HasField("request"):
                return update.request

    def wait_status(self, timeout: float = GUARD_S) -> tuple[grpc.StatusCode, str]:
        """The call's final status (waits for the referee to end it)."""
        if not self._ended.wait(timeout):
            raise AssertionError(f"{self.name}: the call did not end within {timeout} s")
        assert self.status is not None
        return self.status

    # -------------------------------------------------------------- ending

    def half_close(self) -> None:
        """End the sending side only: the channel stays open for the referee's answer."""
        self._outbox.put(_CLOSE)

    def close(self) -> None:
        """Half-close the sending side and release the channel."""
        self._outbox.put(_CLOSE)
        self._channel.close()

    def drop(self) -> None:
        """Hang up abruptly, as a crashed bot or a lost connection would."""
        self._call.cancel()
        self._outbox.put(_CLOSE)
        self._channel.close()
        self._ended.wait(GUARD_S)

    # ------------------------------------------------------------- playing

    def play(
        self,
        policy: Callable[[RawBot, referee_pb2.DecisionRequest], cards_pb2.Action | None],
        matches: int = 1,
        leave: bool = True,
    ) -> None:
        """Answer every request with ``policy(self, request)`` until ``matches`` matches
        have ended (``None`` from the policy: do not answer). Then leave, and expect OK.

        Refusals are not expected here: a policy that provokes one reads it itself.
        """
        ended = 0
        while ended < matches:
            message = self.next_message()
            kind = message.WhichOneof("kind")
            request = None
            if kind == "update":
                ended += sum(1 for e in message.update.events if e.HasField("match_ended"))
                if message.update.HasField("request"):
                    request = message.update.request
            elif kind == "resync":
                if message.resync.HasField("request"):
                    request = message.resync.request
            else:
                raise AssertionError(f"{self.name}: unexpected {text_format.MessageToString(message)}")
            if request is not None:
                action = policy(self, request)
                if action is not None:
                    self.answer(request.request_id, action)
        if leave:
            self.leave()
            code, details = self.wait_status()
            assert code is grpc.StatusCode.OK, (self.name, code, details)
            self.close()


def connect_and_play(
    address: str,
    name: str,
    policy: Callable[[RawBot, referee_pb2.DecisionRequest], cards_pb2.Action | None],
    matches: int = 1,
) -> RawBot:
    """A raw auto-player: connect, say Hello, play ``matches`` matches, leave."""
    bot = RawBot(address, name)
    bot.hello()
    bot.play(policy, matches)
    return bot


# ---------------------------------------------------------------------------
# Policies and wire helpers
# ---------------------------------------------------------------------------


def first_legal(bot: RawBot, request: referee_pb2.DecisionRequest) -> cards_pb2.Action:
    return request.legal_actions[0]


def random_legal(seed: str, pass_rate: float = 0.7) -> Callable[[RawBot, referee_pb2.DecisionRequest], Any]:
    """A reproducible policy: random cards; in the auction mostly passes, else the lowest bid."""
    rng = random.Random(seed)

    def policy(bot: RawBot, request: referee_pb2.DecisionRequest) -> cards_pb2.Action:
        legal = list(request.legal_actions)
        if request.kind == referee_pb2.DECISION_KIND_CALL:
            bids = [a for a in legal if a.call.HasField("bid")]
            if bids and rng.random() > pass_rate:
                return bids[0]
            return legal[0]
        return rng.choice(legal)

    return policy


def opening_bidder(bot: RawBot, request: referee_pb2.DecisionRequest) -> cards_pb2.Action:
    """Bid the lowest bid when nobody has bid yet in this hand, else pass; first legal card."""
    if request.kind == referee_pb2.DECISION_KIND_CALL:
        if not any(c.call.HasField("bid") for c in request.hand.auction):
            return next(a for a in request.legal_actions if a.call.HasField("bid"))
        return pass_action()
    return request.legal_actions[0]


def pass_action() -> cards_pb2.Action:
    return cards_pb2.Action(call=cards_pb2.Call(pass_call=cards_pb2.Pass()))


def double_action() -> cards_pb2.Action:
    return cards_pb2.Action(call=cards_pb2.Call(double_call=cards_pb2.Double()))


def bid_action(level: int, denomination: int) -> cards_pb2.Action:
    return cards_pb2.Action(call=cards_pb2.Call(bid=cards_pb2.Bid(level=level, denomination=denomination)))


def card_action(card: Card) -> cards_pb2.Action:
    return action_to_wire(card)


def cards_of(repeated: Iterable[cards_pb2.Card]) -> list[Card]:
    return [card_from_wire(card) for card in repeated]


def lowest_legal_card(request: referee_pb2.DecisionRequest) -> Card:
    """The referee's fallback in play (docs/rules.md): lowest rank, clubs first on a tie."""
    return min(cards_of(a.card for a in request.legal_actions), key=lambda c: (c.rank, c.suit))


def own_event(bot: RawBot, kind: str, seat: int, after: int = 0) -> Message:
    """The first ``kind`` event (call_made / card_played) of ``seat`` at index ``after`` or later."""
    for event in bot.events[after:]:
        if event.HasField(kind) and getattr(event, kind).seat == seat:
            return getattr(event, kind)  # type: ignore[no-any-return]
    raise AssertionError(f"{bot.name}: no {kind} of seat {seat} among {len(bot.events) - after} events")


# ---------------------------------------------------------------------------
# SDK bots
# ---------------------------------------------------------------------------


class SeededBot(Bot):
    """A well-behaved SDK bot: random legal actions, mostly passing, reproducible:
    its choices follow from its seat and the hand, whatever the threads' timing."""

    name = "seeded"

    def __init__(self) -> None:
        self.rng = random.Random(0)

    def on_hand_start(self, view: BotView) -> None:
        self.rng = random.Random(f"{view.seat}/{view.hand_number}")

    def choose_call(self, view: BotView) -> Any:
        bids = [a for a in view.legal_actions if getattr(a, "level", None)]
        if bids and self.rng.random() > 0.75:
            return bids[0]
        return view.legal_actions[0]

    def choose_card(self, view: BotView) -> Any:
        return self.rng.choice(view.legal_actions)


def run_sdk_bot(address: str, name: str, seats: int, max_matches: int) -> None:
    """Run the SDK client (asyncio, in this thread) until each seat played ``max_matches``."""
    options = ClientOptions(
        server=address,
        name=name,
        token=token_of(name),
        seats=seats,
        max_matches=max_matches,
        reconnect_for_s=5.0,
    )
    asyncio.run(asyncio.wait_for(run_bot_async(SeededBot, options), timeout=60))


# ---------------------------------------------------------------------------
# Logs
# ---------------------------------------------------------------------------


def log_records(path: Path, kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in read_log(path) if kind is None or r["type"] == kind]


def count_faults(records: Mapping[Seat, Any]) -> int:
    return sum(sum(record.faults.values()) + record.refusals for record in records.values())


# ---------------------------------------------------------------------------
# Hidden information
# ---------------------------------------------------------------------------


class _Replay:
    """Each hand of a logged match re-created from its revealed seed and its actions."""

    def __init__(self, log_path: Path) -> None:
        records = list(read_log(log_path))
        start, end = records[0], records[-1]
        assert start["type"] == "match_start"
        assert end["type"] == "match_end"
        self.seed: str = end["seed"]
        self.commitment: str = start["seed_commitment"]
        self.config = GameConfig.from_dict(start["config"])
        state = GameState(self.config, self.seed)
        self.deals: dict[int, Deal] = {}
        self.dealers: dict[int, Seat] = {}
        self.public: dict[int, set[Card]] = {}
        self.plays: dict[int, list[tuple[Seat, Card]]] = {}

        def remember() -> None:
            number = state.hand_number
            self.deals[number] = state.deal
            self.dealers[number] = state.dealer
            self.public[number] = {c for c in (state.turned_card, state.cut_card) if c is not None}
            self.plays[number] = []

        remember()
        for record in records[1:-1]:
            if record["type"] == "hand_start" and state.phase is Phase.HAND_OVER:
                state.start_next_hand()
                remember()
            if record["type"] == "action":
                seat = Seat.parse(record["seat"])
                action = parse_action(record["action"], state)
                if isinstance(action, Card):
                    self.plays[state.hand_number].append((seat, action))
                state.apply(action, seat)
        assert state.phase is Phase.MATCH_OVER


def _cards_in(message: Message, skip: Callable[[Message, FieldDescriptor], bool]) -> Iterator[cards_pb2.Card]:
    """Every Card anywhere inside ``message``, recursively, except fields ``skip`` names."""
    if message.DESCRIPTOR.full_name == "oddtrick.v1.Card":
        yield message  # type: ignore[misc]
        return
    for field, value in message.ListFields():
        if field.message_type is None or skip(message, field):
            continue
        if field.is_repeated:
            for item in value:
                yield from _cards_in(item, skip)
        else:
            yield from _cards_in(value, skip)


def _skip_hand_result_hands(message: Message, field: FieldDescriptor) -> bool:
    return message.DESCRIPTOR.full_name == "oddtrick.v1.HandResult" and field.name == "hands"


def check_hidden_information(
    seat: Seat | None, messages: list[referee_pb2.RefereeMessage], log_path: Path, sealed: bool = False
) -> int:
    """Assert that no message to ``seat`` (``None``: a spectator) showed a card it could not know yet.

    A card may appear only if it is in the seat's own hand as dealt for the
    hand in progress, already played in that hand (checked card by card
    against the log's order of play), or public at the deal (the turned or cut
    card). A hand result may show all four hands only once all 52 cards were
    played. The seed may appear only in match_ended, and must hash to the
    commitment of match_started; at a ``sealed`` table (one play of a
    duplicate pair) it must not appear at all. Returns how many cards were checked.
    """
    replay = _Replay(log_path)
    seed = replay.seed.encode()
    hand = 0
    played = 0
    checked = 0
    commitment = ""
    ended = False

    def allowed(card: Card) -> bool:
        if card in replay.public[hand] or (seat is not None and card in replay.deals[hand][seat]):
            return True
        return card in {c for _, c in replay.plays[hand][:played]}

    def check(message: Message, where: str) -> None:
        nonlocal checked
        for wire in _cards_in(message, _skip_hand_result_hands):
            card = card_from_wire(wire)
            assert hand, f"{seat}: card {card} in {where} before any hand started"
            assert allowed(card), (
                f"{seat} was shown {card} in {where} of hand {hand} after {played} cards were played: "
                f"{text_format.MessageToString(message, as_one_line=True)}"
            )
            checked += 1

    for message in messages:
        kind = message.WhichOneof("kind")
        events = list(message.update.events) if kind == "update" else []
        if not any(e.HasField("match_ended") for e in events):
            assert seed not in message.SerializeToString(), f"the seed was sent to {seat} early: {message}"
            assert replay.seed not in str(message)
        if kind == "resync":
            check(message.resync, "a resync")
            continue
        if kind != "update":
            check(message, kind or "an empty message")
            continue
        for event in events:
            which = event.WhichOneof("kind")
            if which == "match_started":
                commitment = event.match_started.seed_commitment
                if seat is None:
                    assert event.match_started.seat == cards_pb2.SEAT_UNSPECIFIED
                else:
                    assert seat_from_wire(event.match_started.seat) is seat
            elif which == "hand_started":
                started = event.hand_started
                hand, played = started.hand_number, 0
                assert seat_from_wire(started.dealer) is replay.dealers[hand]
                assert not started.hands, f"{seat} was shown all four hands at the deal"
                if seat is None:
                    assert not started.cards, "a spectator was shown cards at the deal"
                else:
                    assert cards_of(started.cards) == list(replay.deals[hand][seat]), "not the dealt hand"
            elif which == "card_played":
                event_card = (seat_from_wire(event.card_played.seat), card_from_wire(event.card_played.card))
                assert replay.plays[hand][played] == event_card, "a card event differs from the log"
                played += 1
            elif which == "hand_ended":
                result = event.hand_ended
                if result.hands:
                    assert played == 52, f"{seat} saw all hands of hand {hand} after only {played} cards"
                    shown = {seat_from_wire(h.seat): cards_of(h.cards) for h in result.hands}
                    assert shown == {s: list(c) for s, c in replay.deals[hand].items()}
                    checked += 52
            elif which == "match_ended":
                ended = True
                revealed = event.match_ended.seed
                if sealed:
                    assert revealed == "", f"{seat} was sent the seed of a sealed table"
                    revealed = replay.seed
                assert revealed == replay.seed
                assert hashlib.sha256(revealed.encode()).hexdigest() == commitment == replay.commitment
                event = _without_seed(event)
            check(event, f"event {which}")
        if message.update.HasField("request"):
            check(message.update.request, "a decision request")
    assert ended, f"{seat} never received match_ended"
    total_played = sum(len(p) for p in replay.plays.values())
    assert played == len(replay.plays[hand])
    assert total_played > 0
    return checked


def _without_seed(event: referee_pb2.Event) -> referee_pb2.Event:
    copy = referee_pb2.Event()
    copy.CopyFrom(event)
    copy.match_ended.ClearField("seed")
    return copy
