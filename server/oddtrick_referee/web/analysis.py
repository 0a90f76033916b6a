"""Double-dummy analysis for the replay page: what every card cost, computed once per match.

The numbers are ``oddtrick analyze``'s (the work queue's analysis job,
:func:`oddtrick_referee.workers.kinds.analyse`, on the log's text), so the page,
the command and a ladder's workers never disagree. Solving a 10-deal match takes
seconds, too long for a page request: the first view puts the match in a short queue
that one background thread serves, one match at a time, and the page asks again
(``analysis.json``) until it is there. The queue is bounded (:data:`MAX_WAITING`): past
it a view is told the analyser is busy, to try later, rather than costing the server a
thread and a log's text per match asked for. The result is
kept in the data folder's ``analysis/`` (one JSON file per match, beside the logs), so
it is computed once per match and survives restarts; a folder the page cannot write
keeps it in memory instead.

Only a match a spectator may replay is analysed: :meth:`WebData.log_text` refuses a
match in progress or a sealed play of a duplicate pair, and the analysis is read from
that same text, so no solver ever sees hidden cards on the page's behalf.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oddtrick._accuracy import merge
from oddtrick_referee._exceptions import BadJob, NoSuchMatch, NotVisible
from oddtrick_referee.web.data import MATCH_ID, WebData
from oddtrick_referee.workers.kinds import analyse

log = logging.getLogger("oddtrick.web")

NEEDS_EXTRA = "Double-dummy analysis needs the strong extra: pip install 'oddtrick[strong]'."
"""What the page says, in one line, when the solver is not installed."""
ABORTED = "No analysis: the match was aborted, so its deals are unknown."
BUSY = "The analyser is busy with other matches: try again in a few minutes."
"""What the page says when the queue of matches waiting for the solver is full."""
PENDING = "Analysing every card double dummy…"
MAX_WAITING = 8
"""Matches waiting for the solver at most (one more is being solved): each is a few
seconds of every core, so a longer queue would only make its last wait longer."""
CACHE_FOLDER = "analysis"
_FORMAT = 2
"""Bumped when what is kept changes: older files are computed again (2: every legal card's
tricks at each step, and each seat's accuracy)."""


def mark(lost: int) -> str:
    """A card's mark by the tricks it lost, as chess viewers mark moves: ?! one trick
    (an inaccuracy), ? two (a mistake), ?? three or more (a blunder); nothing when it
    kept the side's double-dummy result."""
    if lost <= 0:
        return ""
    return {1: "?!", 2: "?"}.get(lost, "??")


def _par_text(hand: dict[str, Any]) -> str:
    par = hand.get("par")
    if not par:
        return ""
    if "contract" in par:
        if par["contract"] is None:
            return "par: thrown in"
        return f"par {par['contract']}, NS {par['points'][0]} EW {par['points'][1]}"
    return f"par NS {par['tricks'][0]} tricks (NS {par['points'][0]} EW {par['points'][1]})"


def _par_ns_tricks(hand: dict[str, Any]) -> int | None:
    """North-South's tricks at par: the classic double-dummy result, or the par contract's."""
    par = hand.get("par")
    if not par:
        return None
    if "tricks" in par:
        return int(par["tricks"][0])
    if par.get("contract") is None:
        return None
    declarer = par["contract"].rsplit(" ", 1)[-1]
    tricks = int(par["declarer_tricks"])
    return tricks if declarer in "NS" else 13 - tricks


def page_analysis(result: dict[str, Any]) -> dict[str, Any]:
    """``oddtrick analyze --json``'s result for one log, as the page's script reads it: per
    hand played out, North-South's double-dummy tricks before the first card and after
    each (53 numbers), each card's loss and mark, and the par."""
    hands: dict[str, Any] = {}
    for hand in result["logs"][0]["hands"] if result.get("logs") else []:
        cards = hand["cards"]
        ns = [hand["double_dummy_tricks"][0]]
        for card in cards:
            ns.append(card["after"] if card["seat"] in "NS" else 13 - card["after"])
        hands[str(hand["hand"])] = {
            "ns": ns,
            "lost": [card["lost"] for card in cards],
            "marks": [mark(card["lost"]) for card in cards],
            "before": [card["before"] for card in cards],
            "after": [card["after"] for card in cards],
            "par": _par_text(hand),
            "par_ns": _par_ns_tricks(hand),
            "tricks": hand["tricks"],
            "seat_lost": hand["lost"],
            "options": [card.get("options") for card in cards],
            "best": [card.get("best") for card in cards],
        }
    return {"status": "ready", "hands": hands, "seats": _seat_accuracy(result)}


def _seat_accuracy(result: dict[str, Any]) -> dict[str, Any]:
    """Each seat's accuracy over the match (seat letter → its bot and tallies): what the
    page's accuracy table shows, and what a bot's page adds up over its matches."""
    seats: dict[str, Any] = {}
    for key, totals in result.get("seats", {}).items():
        letter = key.rsplit(":", 1)[-1]
        seats[letter] = {"bot": totals["bot"], "hands": totals["hands"], **merge([totals])}
    return seats


class Analyses:
    """The analyses of one data folder's finished matches, each computed once, one at a time
    by one thread (the solver uses every core; two at once would only slow both and the
    pages), from a queue of at most ``waiting`` matches.

    The thread is this object's: started with the first match queued, told to stop by
    :meth:`close` (when the page stops serving), after which it solves nothing more. It is a
    daemon all the same, as the one solve it may be in is the solver's C code, which cannot
    be stopped: the page stops at once rather than after it, and nothing is lost (a result
    is written whole or not at all, and solved again when asked)."""

    _STOP = ""
    """Queued by :meth:`close`: the solver's thread ends there (no match has an empty id)."""

    def __init__(self, data: WebData, waiting: int = MAX_WAITING) -> None:
        self.data = data
        self.folder = data.data_dir / CACHE_FOLDER
        self._memory: dict[str, dict[str, Any]] = {}
        self._running: set[str] = set()
        """Matches queued or being solved: asked again, they are not queued twice."""
        self._lock = threading.Lock()
        self._waiting: queue.Queue[str] = queue.Queue(waiting)
        self._solver: threading.Thread | None = None
        self._closed = False
        self.stored: Callable[[str], Any | None] | None = None
        """A match's analysis recorded by a worker (``oddtrick web --database``), used rather
        than computing it here: a worker's cores, not the page's, did the solving."""

    @staticmethod
    def available() -> bool:
        """Whether the solver (endplay, the strong extra) can be imported here."""
        try:
            import oddtrick.double_dummy  # noqa: F401
        except ImportError:
            return False
        return True

    def _path(self, match_id: str) -> Path:
        return self.folder / f"{match_id}.json"

    def cached(self, match_id: str) -> dict[str, Any] | None:
        """The match's analysis if it was computed (``None`` if not yet)."""
        with self._lock:
            kept = self._memory.get(match_id)
        if kept is not None:
            return kept
        try:
            stored = json.loads(self._path(match_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(stored, dict) or stored.get("format") != _FORMAT:
            return None
        analysis: dict[str, Any] = stored["analysis"]
        return analysis

    def status(self, match_id: str) -> dict[str, Any]:
        """The analysis, or why there is none, or that it is being computed (then started).

        Raises :class:`NoSuchMatch` or :class:`NotVisible` as :meth:`WebData.log_text` does.
        """
        if not MATCH_ID.fullmatch(match_id):
            raise NoSuchMatch(match_id)
        row = self.data.match(match_id)
        if row is None:
            raise NoSuchMatch(match_id)
        if row.category != "finished":
            raise NotVisible(f"match {match_id} is not over")
        if row.status != "finished":
            return {
                "status": "none",
                "message": "No analysis: the match was aborted, so its deals are unknown.",
            }
        found = self.cached(match_id)
        if found is not None:
            return found  # plain JSON: shown without the solver too
        if self.stored is not None:
            self.data.log_text(match_id)  # the visibility check, as for computing it here
            result = self.stored(match_id)
            if result is not None:
                found = page_analysis(result)
                self._keep(match_id, found)
                return found
        if not self.available():
            return {"status": "unavailable", "message": NEEDS_EXTRA}
        self.data.log_text(match_id)  # the visibility check, again, before any solving
        return self._enqueue(match_id)

    def _enqueue(self, match_id: str) -> dict[str, Any]:
        """Queue the match for the solver (once), starting the one thread that serves the
        queue on the first; ``busy`` when the queue is full."""
        with self._lock:
            if self._closed:
                return {"status": "busy", "message": BUSY}
            if match_id not in self._running:
                try:
                    self._waiting.put_nowait(match_id)
                except queue.Full:
                    return {"status": "busy", "message": BUSY}
                self._running.add(match_id)
                if self._solver is None:
                    # A daemon: see the class's docstring (tests/test_threads_owned.py lists it).
                    self._solver = threading.Thread(target=self._serve, name="oddtrick-analysis", daemon=True)
                    self._solver.start()
        return {"status": "pending", "message": PENDING}

    def close(self) -> None:
        """Stop solving: the matches still queued are dropped and the thread ends after the
        one it may be solving (it is not waited for: see the class's docstring)."""
        with self._lock:
            self._closed = True
            while True:
                try:
                    self._running.discard(self._waiting.get_nowait())
                except queue.Empty:
                    break
            if self._solver is None:
                return
        self._waiting.put(self._STOP)  # room: the queue was just emptied, and nothing adds to it now

    def _serve(self) -> None:
        """The solver's thread: the queued matches, one at a time, until :meth:`close`."""
        _lowest_priority()
        while True:
            match_id = self._waiting.get()
            if match_id == self._STOP:
                return
            try:
                self._compute(match_id)
            finally:
                with self._lock:
                    self._running.discard(match_id)

    def _compute(self, match_id: str) -> None:
        try:
            # Read when solved, not when queued: a queued match holds no log text.
            text = self.data.log_text(match_id)
        except (NoSuchMatch, NotVisible):
            return  # gone meanwhile: the next view says why
        try:
            found = page_analysis(analyse({"log_name": f"{match_id}.jsonl", "log_text": text}))
        except BadJob as error:
            found = {"status": "none", "message": f"No analysis: {error}"}
        except ImportError:
            found = {"status": "unavailable", "message": NEEDS_EXTRA}
        except Exception as error:  # the solver failed: said until a restart, not on disk
            log.exception("analysis of match %s failed", match_id)
            with self._lock:
                self._memory[match_id] = {"status": "none", "message": f"No analysis: {error}"}
            return
        self._keep(match_id, found)

    def _keep(self, match_id: str, found: dict[str, Any]) -> None:
        """On disk when the folder can be written (atomically: a reader never sees half a
        file), in memory otherwise."""
        try:
            self.folder.mkdir(exist_ok=True)
            partial = self._path(match_id).with_suffix(".json.partial")
            partial.write_text(json.dumps({"format": _FORMAT, "analysis": found}), encoding="utf-8")
            partial.replace(self._path(match_id))
        except OSError:
            with self._lock:
                self._memory[match_id] = found


def _lowest_priority() -> None:
    """This thread, and the solver's threads it starts (Linux threads inherit it), yield the
    CPU to everything else: beside a referee, tables with deadlines are playing, and a
    spectator's analysis must never cost a bot its time."""
    with contextlib.suppress(AttributeError, OSError):  # elsewhere: at the usual priority
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
