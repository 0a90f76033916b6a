"""Play on from here, for the replay page: a hand played on by chosen bots, off the event loop.

The page asks ``play-on.json?hand=&card=&seats=&bot=&others=`` (the command's ``--from``,
``--with`` and ``--others``: :mod:`oddtrick_referee.replay.play_on` does the playing, so
the page and ``oddtrick replay --from`` never disagree). A play-on takes from a fraction
of a second (the random bot) to several (pimc thinks :data:`THINK_SECONDS` a card), too
long for a page request: it is queued, within the double-dummy analysis's bounds (one
at a time on one thread of the lowest priority, at most
:data:`~oddtrick_referee.web.analysis.MAX_WAITING` waiting, past which the page is told
the player is busy), and the page asks again until it is there. Results are kept in
memory (the :data:`KEPT` latest): the same question is answered at once.

Only a finished match whose log a spectator may see is played on, read through
:meth:`WebData.log_text`, which refuses a match in progress and a sealed play of a
duplicate pair (whose deals the competition has not published): no bot ever plays a
hidden deal on the page's behalf.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import queue
import threading
from collections.abc import Mapping
from typing import Any

from oddtrick._log_records import records_from_text
from oddtrick.rules import Seat
from oddtrick_referee._exceptions import NoSuchMatch, NotVisible, PlayOnStopped, ReplayError
from oddtrick_referee.replay.play_on import (
    DEFAULT_OTHERS,
    Step,
    parse_seats,
    play_on,
    play_on_json,
    playable_hand,
)
from oddtrick_referee.replay.play_on_players import BOTS, bot_names
from oddtrick_referee.web.analysis import MAX_WAITING, _lowest_priority
from oddtrick_referee.web.data import MATCH_ID, WebData

log = logging.getLogger("oddtrick.web")

THINK_SECONDS = 0.25
"""The pimc bot's time per card on the page (the command's default is pimc's own, 1 s)."""
KEPT = 128
"""Play-ons kept in memory, the latest asked first."""
BUSY = "The player is busy with other play-ons: try again in a minute."
PENDING = "Playing the hand on…"


@dataclasses.dataclass(frozen=True)
class Question:
    """What the page asks: a match, a step, the picked seats' bot and the others'."""

    match_id: str
    step: Step
    picked: tuple[tuple[Seat, str], ...]
    others: str


def _number(params: Mapping[str, str], name: str) -> int:
    text = params.get(name, "")
    if not text.isdigit() or len(text) > 6:
        raise ReplayError(f"{name}={text!r}: give the {name}'s number, as the replay's URL has it")
    return int(text)


def read_question(match_id: str, params: Mapping[str, str]) -> Question:
    """The page's question from its query (``hand``, ``card``, ``seats`` such as ``NS``,
    ``bot``, ``others``); a :class:`ReplayError` saying what to give for anything else."""
    step = Step(_number(params, "hand"), _number(params, "card"))
    seats = params.get("seats", "")[:20]
    if not seats:
        raise ReplayError("pick at least one seat for the bot to play")
    picked = parse_seats([f"{seats}={params.get('bot', '')[:20]}"], "seats")
    others = params.get("others", DEFAULT_OTHERS)[:20]
    if others not in BOTS:
        raise ReplayError(f"others={others!r}: no such player; give one of {bot_names()}")
    return Question(match_id, step, tuple(sorted(picked.items())), others)


class PlayOns:
    """The page's play-ons: computed one at a time by one thread, from a bounded queue,
    kept in memory. The thread is this object's, started with the first question and
    ended by :meth:`close`, which stops the play-on in progress before its next card and
    joins the thread (a card takes at most the pimc bot's think time or one solve)."""

    _STOP = None

    def __init__(self, data: WebData, waiting: int = MAX_WAITING) -> None:
        self.data = data
        self._kept: collections.OrderedDict[Question, dict[str, Any]] = collections.OrderedDict()
        self._running: set[Question] = set()
        self._lock = threading.Lock()
        self._waiting: queue.Queue[Question | None] = queue.Queue(waiting)
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    def status(self, question: Question) -> dict[str, Any]:
        """The play-on (``ready``), or ``pending`` (then queued), or ``busy``, or ``error``
        with what to give instead. Raises :class:`NoSuchMatch` or :class:`NotVisible` for a
        match that is not a finished, published one."""
        if not MATCH_ID.fullmatch(question.match_id):
            raise NoSuchMatch(question.match_id)
        row = self.data.match(question.match_id)
        if row is None:
            raise NoSuchMatch(question.match_id)
        if row.category == "sealed":
            raise NotVisible(
                f"match {question.match_id} is one play of a duplicate pair whose deals are still to be "
                "played: its hands are played on once the pair is over and its deals are published"
            )
        if row.category != "finished":
            raise NotVisible(f"match {question.match_id} is not over: its hands are played on once it is")
        with self._lock:
            kept = self._kept.get(question)
            if kept is not None:
                self._kept.move_to_end(question)
                return kept
        match = self.data.replay(question.match_id)  # the visibility check, and the step's
        playable_hand(match, question.step)
        return self._enqueue(question)

    def _enqueue(self, question: Question) -> dict[str, Any]:
        with self._lock:
            if self._closing.is_set():
                return {"status": "busy", "message": BUSY}
            if question not in self._running:
                try:
                    self._waiting.put_nowait(question)
                except queue.Full:
                    return {"status": "busy", "message": BUSY}
                self._running.add(question)
                if self._thread is None:
                    self._thread = threading.Thread(target=self._serve, name="oddtrick-play-on")
                    self._thread.start()
        return {"status": "pending", "message": PENDING}

    def close(self) -> None:
        """Stop: the questions still queued are dropped, the play-on in progress stops before
        its next card, and the thread is joined."""
        with self._lock:
            self._closing.set()
            while True:
                try:
                    self._waiting.get_nowait()
                except queue.Empty:
                    break
            self._running.clear()
            thread = self._thread
        if thread is None:
            return
        self._waiting.put(self._STOP)  # room: the queue was just emptied, and nothing adds to it now
        thread.join()

    def _serve(self) -> None:
        _lowest_priority()
        while True:
            question = self._waiting.get()
            if question is None:
                return
            try:
                found = self._compute(question)
            except PlayOnStopped:
                return
            with self._lock:
                self._running.discard(question)
                if found is not None:
                    self._kept[question] = found
                    while len(self._kept) > KEPT:
                        self._kept.popitem(last=False)

    def _compute(self, question: Question) -> dict[str, Any] | None:
        try:
            text = self.data.log_text(question.match_id)  # read when played, not when queued
        except (NoSuchMatch, NotVisible):
            return None  # gone meanwhile: the next question says why
        try:
            found = play_on(
                list(records_from_text(text)),
                question.step,
                dict(question.picked),
                question.others,
                THINK_SECONDS,
                self._closing.is_set,
            )
        except ReplayError as error:
            return {"status": "error", "message": str(error)}
        except PlayOnStopped:
            raise
        except Exception as error:  # a bot or the solver failed: said, and logged
            log.exception("play-on of match %s failed", question.match_id)
            return {"status": "error", "message": f"The play-on failed: {error}"}
        return {"status": "ready", **play_on_json(found)}
