"""Play a finished hand on from one of its steps, with chosen players, beside what happened.

A step is the replay's position (:mod:`.model`): ``HAND:CARD`` is hand ``HAND`` after
``CARD`` cards were played, as the replay page's ``?hand=HAND&card=CARD`` shows it (0:
the auction is over and nobody has played). From there the picked seats are played by
the chosen bot and the others by another player, double dummy unless told otherwise:
the convention of bridge hand viewers, so the outcome measures the chosen bot against
perfect play (the same yardstick as the replay's double-dummy analysis).

The position is re-created by the rules engine from the log (the seed revealed at its
end, every logged action re-applied), and every card of the continuation is applied by
the rules engine too, which refuses an illegal one and scores the finished hand: nothing
here decides a trick or a score. Only a hand that was played out is played on.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from oddtrick._log_records import MatchEnd, MatchStart, Record
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.rules import (
    Action,
    Card,
    CardPlayed,
    GameState,
    HandResult,
    ParseError,
    Phase,
    RulesError,
    Seat,
    TrickWon,
    replay,
)
from oddtrick.rules._words import seat_name
from oddtrick_referee._exceptions import PlayOnStopped, ReplayError
from oddtrick_referee.replay.model import HandReplay, MatchReplay, replay_records
from oddtrick_referee.replay.play_on_players import BOTS, SeatPlayer, bot_names, seat_player

DEFAULT_OTHERS = "dd"
"""Who plays the seats not picked: the double-dummy solver, as bridge hand viewers do."""

STEP_HELP = (
    "HAND:CARD is hand HAND after CARD cards were played, as the replay page shows it "
    "(hand 3 · card 17 is 3:17, its URL ?hand=3&card=17); 3:0 is the opening lead"
)


_STEP = re.compile(r"\s*(\d{1,6})\s*:\s*(\d{1,3})\s*")


@dataclasses.dataclass(frozen=True, slots=True)
class Step:
    """A position of a replayed hand: its number, and how many cards were played."""

    hand: int
    card: int

    def __str__(self) -> str:
        return f"{self.hand}:{self.card}"


@dataclasses.dataclass(frozen=True, slots=True)
class Played:
    """One card of a line of play: who, which, in which trick, and the trick's winner on
    the card that completed it."""

    seat: Seat
    card: Card
    trick: int
    winner: Seat | None = None


@dataclasses.dataclass(frozen=True)
class PlayOn:
    """A hand played on from a step, and what really happened from there."""

    match_id: str
    step: Step
    cards: int
    """The hand's cards in all (52 for a hand played out)."""
    players: Mapping[Seat, str]
    """Who played each seat from the step (:data:`~.play_on_players.BOTS`)."""
    picked: frozenset[Seat]
    plays: tuple[Played, ...]
    """The continuation: every card from the step to the end of the hand."""
    result: HandResult
    """The rules' result of the hand played on."""
    real_plays: tuple[Played, ...]
    real: HandResult


def parse_step(text: str) -> Step:
    """``3:17`` as a :class:`Step`; a clear :class:`ReplayError` for anything else."""
    found = _STEP.fullmatch(text)
    if found is None:
        raise ReplayError(f"--from {text!r} is not HAND:CARD, such as 3:17: {STEP_HELP}")
    return Step(int(found[1]), int(found[2]))


def parse_seats(items: Iterable[str], option: str = "--with") -> dict[Seat, str]:
    """``N=pimc``, ``NS=heuristic``, ``north=dd`` (repeatable) as the seats picked and their bot;
    ``option`` is how an error names what was given."""
    picked: dict[Seat, str] = {}
    for item in items:
        seats, sep, bot = item.partition("=")
        bot = bot.strip().lower()
        if not sep or not seats.strip() or not bot:
            raise ReplayError(f"{option} {item!r} is not SEAT=BOT, such as N=pimc or NS=heuristic")
        if bot not in BOTS:
            raise ReplayError(f"{option} {item!r}: no bot {bot!r}; give one of {bot_names()}")
        for seat in _seats(seats, option):
            if seat in picked and picked[seat] != bot:
                raise ReplayError(
                    f"{option} gives {seat_name(seat)} two bots ({picked[seat]} and {bot}): give one"
                )
            picked[seat] = bot
    return picked


def _seats(text: str, option: str) -> list[Seat]:
    """``N``, ``north`` or several letters at once (``NS``, ``N,S``)."""
    text = text.strip()
    try:
        return [Seat.parse(text)]
    except ParseError:
        pass
    letters = [letter for letter in text.replace(",", "") if not letter.isspace()]
    try:
        return [Seat.parse(letter) for letter in letters]
    except ParseError:
        raise ReplayError(f"{option} {text!r}: not a seat; seats are N, E, S and W (or NS, EW)") from None


def seating(picked: Mapping[Seat, str], others: str) -> dict[Seat, str]:
    """Every seat's player: the picked seats' bot, ``others`` for the rest."""
    if not picked:
        raise ReplayError("play on needs at least one seat picked: --with SEAT=BOT, such as --with S=pimc")
    if others not in BOTS:
        raise ReplayError(f"--others {others!r}: no such player; give one of {bot_names()}")
    return {seat: picked.get(seat, others) for seat in Seat}


def playable_hand(match: MatchReplay, step: Step) -> HandReplay:
    """The hand ``step`` names, if it can be played on from there; else why not."""
    if step.hand < 1 or step.hand > len(match.hands):
        raise ReplayError(f"no hand {step.hand}: this match has hands 1 to {len(match.hands)}")
    hand = match.hands[step.hand - 1]
    if hand.result is None:
        raise ReplayError(
            f"hand {step.hand} was not played out (the log ends in it): only a finished deal is played on"
        )
    if not hand.plays:
        raise ReplayError(
            f"hand {step.hand} was thrown in (four passes): no card was played, nothing to play on"
        )
    last = len(hand.plays) - 1
    if step.card > last:
        raise ReplayError(
            f"hand {step.hand} is over after card {len(hand.plays)}: "
            f"give a step from {step.hand}:0 to {step.hand}:{last}"
        )
    return hand


def position(records: Sequence[Record], match: MatchReplay, step: Step) -> GameState:
    """The rules' state at ``step``: the log's actions re-applied up to it."""
    start, end = records[0], records[-1]
    assert isinstance(start, MatchStart)  # replay_records checked both ends
    assert isinstance(end, MatchEnd)
    try:
        deals = deals_from_log(start, end)
    except DealSetError as error:
        raise ReplayError(str(error)) from None
    actions: list[tuple[Seat, Action]] = []
    for hand in match.hands[: step.hand - 1]:
        actions.extend((call.seat, call.call) for call in hand.calls)
        actions.extend((play.seat, play.card) for play in hand.plays)
    this = match.hands[step.hand - 1]
    actions.extend((call.seat, call.call) for call in this.calls)
    actions.extend((play.seat, play.card) for play in this.plays[: step.card])
    state = replay(match.config, match.seed, actions, deals)
    if state.phase is Phase.HAND_OVER:
        state.start_next_hand()  # the step is a classic hand's opening lead: dealt, no call made
    assert state.hand_number == step.hand
    assert state.phase is Phase.PLAY
    return state


def play_on(
    records: Sequence[Record],
    step: Step,
    picked: Mapping[Seat, str],
    others: str = DEFAULT_OTHERS,
    think_seconds: float = 1.0,
    stop: Callable[[], bool] | None = None,
) -> PlayOn:
    """Play the hand on from ``step``: the ``picked`` seats by their bot, the rest by
    ``others``; ``think_seconds`` is the pimc bot's time per card. Raises :class:`ReplayError`
    (naming what to give instead) for a step, seat or bot that cannot be played on."""
    players = seating(picked, others)
    match = replay_records(records)
    hand = playable_hand(match, step)
    state = position(records, match, step)
    seed = f"{match.seed}/{step}"
    made: dict[Seat, SeatPlayer] = {}
    for seat, kind in players.items():
        made[seat] = seat_player(
            kind, seat, state, match.players, match.match_id, f"{seed}/{seat}", think_seconds
        )
    plays = _continue(state, made, players, stop)
    assert state.phase in (Phase.HAND_OVER, Phase.MATCH_OVER)
    return PlayOn(
        match_id=match.match_id,
        step=step,
        cards=len(hand.plays),
        players=dict(players),
        picked=frozenset(picked),
        plays=tuple(plays),
        result=state.hand_results[step.hand - 1],
        real_plays=tuple(Played(p.seat, p.card, p.trick, p.winner) for p in hand.plays[step.card :]),
        real=hand.result,  # type: ignore[arg-type]  # playable_hand checked it
    )


def _continue(
    state: GameState,
    made: Mapping[Seat, SeatPlayer],
    players: Mapping[Seat, str],
    stop: Callable[[], bool] | None,
) -> list[Played]:
    """Every card to the hand's end, each chosen by its seat's player and applied by the rules."""
    plays: list[Played] = []
    while state.phase is Phase.PLAY:
        if stop is not None and stop():
            raise PlayOnStopped
        seat = state.to_act
        assert seat is not None
        action = made[seat].act(state, seat)
        try:
            events = state.step(action, seat)
        except RulesError as error:
            raise ReplayError(
                f"the {players[seat]} player at {seat_name(seat)} chose {action}, "
                f"which the rules refuse: {error}"
            ) from None
        for event in events:
            if isinstance(event, CardPlayed):
                plays.append(Played(event.seat, event.card, event.trick_number))
            elif isinstance(event, TrickWon):
                plays[-1] = dataclasses.replace(plays[-1], winner=event.trick.winner)
    return plays


def _plays_json(plays: Iterable[Played]) -> list[dict[str, Any]]:
    return [
        {
            "seat": str(p.seat),
            "card": str(p.card),
            "trick": p.trick,
            "winner": str(p.winner) if p.winner else None,
        }
        for p in plays
    ]


def _result_json(result: HandResult) -> dict[str, Any]:
    return {
        "tricks": list(result.tricks),
        "points": [result.points[0] + result.honours[0], result.points[1] + result.honours[1]],
        "outcome": result.outcome.value,
        "text": result.describe(),
    }


def play_on_json(found: PlayOn) -> dict[str, Any]:
    """The play-on for scripts and the replay page: the continuation and the real play from
    the step, each with the hand's tricks, points (honours included) and result in words."""
    return {
        "match_id": found.match_id,
        "hand": found.step.hand,
        "card": found.step.card,
        "cards": found.cards,
        "players": {str(seat): kind for seat, kind in found.players.items()},
        "picked": [str(seat) for seat in Seat if seat in found.picked],
        "played_on": {"plays": _plays_json(found.plays), **_result_json(found.result)},
        "as_played": {"plays": _plays_json(found.real_plays), **_result_json(found.real)},
    }


def _trick_lines(plays: Sequence[Played]) -> list[str]:
    """One line per trick: ``trick 5: E 4♠ S K♠ W 2♠ N A♠ → North`` (``…`` first for the
    cards of a trick played before the step)."""
    lines: list[str] = []
    for number in sorted({p.trick for p in plays}):
        cards = [p for p in plays if p.trick == number]
        words = [f"{p.seat} {p.card.pretty}" for p in cards]
        lead = "… " if len(cards) < 4 else ""
        winner = cards[-1].winner
        lines.append(
            f"  trick {number}: {lead}{'  '.join(words)}" + (f" → {seat_name(winner)}" if winner else "")
        )
    return lines


def _outcome(result: HandResult) -> str:
    return f"  NS {result.tricks[0]} tricks, EW {result.tricks[1]} · {result.describe()}"


def play_on_text(found: PlayOn) -> str:
    """The play-on for people: who played which seat, the continuation trick by trick and
    its result, then the real play from the same step, then the difference in tricks."""
    step = found.step
    to_play = found.real_plays[0].seat
    seats = ", ".join(
        f"{seat_name(seat)} {kind}" + (" (picked)" if seat in found.picked else "")
        for seat, kind in found.players.items()
    )
    lines = [
        f"Match {found.match_id}, hand {step.hand} played on from card {step.card} of {found.cards} "
        f"({seat_name(to_play)} to play, trick {step.card // 4 + 1})",
        f"Seats: {seats} (dd: the double-dummy solver)",
        "",
        "Played on:",
        *_trick_lines(found.plays),
        _outcome(found.result),
        "As played:",
        *_trick_lines(found.real_plays),
        _outcome(found.real),
    ]
    more = found.result.tricks[0] - found.real.tricks[0]
    if more == 0:
        lines.append("The same tricks as played: NS " + str(found.real.tricks[0]))
    else:
        side, count = ("NS", more) if more > 0 else ("EW", -more)
        lines.append(f"Played on, {side} took {count} more trick{'s' if count != 1 else ''} than as played")
    return "\n".join(lines) + "\n"
