"""Running a ladder inside a test: a real referee on a socket, the scheduler, the store."""

from __future__ import annotations

import dataclasses
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
from referee_support import PATIENCE_S, RawBot, StreamEnded, random_legal

from oddtrick.rules import GameConfig
from oddtrick.v1 import referee_pb2
from oddtrick_referee.competitions.ladder.ratings import RatingSettings
from oddtrick_referee.competitions.ladder.service import Ladder, LadderSettings, open_store, run_ladder
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.storage.ladder_store import LadderStore
from oddtrick_referee.web.server import page_beside

ROOT = Path(__file__).resolve().parents[1]
LADDER_BOTS = ROOT / "tests" / "ladder_bots.py"
GUARD_S = 120.0


def ladder_settings(tmp_path: Path, **overrides: Any) -> LadderSettings:
    values: dict[str, Any] = {
        "config": GameConfig.contract(),
        "deals": 2,
        "rules": TableRules(deadline_s=5.0, grace_s=5.0),
        "data_dir": tmp_path,
        "house_bots": (),
        "seed": 1,
        "rating": RatingSettings(),
    }
    values.update(overrides)
    return LadderSettings(**values)


def register(settings: LadderSettings, *names: str) -> dict[str, str]:
    store = open_store(settings)
    try:
        return {name: store.register(name, now_ms=1) for name in names}
    finally:
        store.db.close()


@asynccontextmanager
async def ladder_serving(settings: LadderSettings, web: socket.socket | None = None) -> AsyncIterator[Ladder]:
    """The ladder runs until the block ends (then it is stopped, as Ctrl-C would)."""
    async with trio.open_nursery() as nursery:
        ready: list[Ladder] = []
        started = trio.Event()

        def on_ready(ladder: Ladder) -> None:
            ready.append(ladder)
            started.set()

        nursery.start_soon(lambda: run_ladder(settings, on_ready=on_ready, page=page_beside(web)))
        with trio.fail_after(PATIENCE_S):
            await started.wait()
        try:
            yield ready[0]
        finally:
            nursery.cancel_scope.cancel()


def bot_process(
    address: str, bot: str, name: str, token: str, seats: int, output: Path | None = None
) -> subprocess.Popen[bytes]:
    """An SDK bot from tests/ladder_bots.py (or any FILE:Class) as its own process; what it
    says goes to ``output`` (a file, for a failure to show), else nowhere."""
    target = bot if ":" in bot else f"{LADDER_BOTS}:{bot}"
    command = [sys.executable, "-m", "oddtrick", "bot", target, "--server", address]
    command += ["--name", name, f"--token={token}", "--seats", str(seats)]
    if output is None:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with output.open("ab") as sink:
        return subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)


def ladder_state(ladder: Ladder, *outputs: Path) -> str:
    """What a ladder that did not get on is doing, for a failing test to print: its entrants,
    the sessions on its referee, the matches it planned and recorded, and the last lines of
    the bots' output (``outputs``, and its house bots' files)."""
    referee, game = ladder.referee, ladder.settings.game
    sessions = sorted(connection.name for connection in referee.connected())
    idle = {name: referee.idle_seats(name, game) for name in sorted(ladder._entrants)}
    matches = ladder.store.matches(limit=20)
    lines = [
        f"entrants known: {sorted(ladder._entrants)}",
        f"sessions: {sessions}",
        f"idle streams: {idle}; reserved: {dict(ladder._reserved)}; busy: {dict(ladder._busy)}",
        f"outcomes: {[(o.match_id, o.status, o.cause) for o in ladder.outcomes]}",
        f"matches stored: {[(m.match_id, m.status, m.cause) for m in matches]}",
    ]
    house = sorted((ladder.settings.data_dir / "bot-output").glob("*.log"))
    for path in [*outputs, *house]:
        text = path.read_text(errors="replace").splitlines() if path.exists() else ["(no file)"]
        lines += [f"--- {path.name}", *text[-8:]]
    return "\n".join(lines)


def free_port() -> int:
    """A loopback port free now (a referee started on it a moment later gets it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Serving:
    """``oddtrick ladder serve`` as its own process group (its house bots with it); ``options``
    are added to (and win over) the defaults here."""

    def __init__(
        self,
        data_dir: Path,
        port: int,
        program: tuple[str, ...] = ("-m", "oddtrick"),
        options: tuple[str, ...] = (),
    ) -> None:
        command = [sys.executable, *program, "ladder", "serve", "--data-dir", str(data_dir)]
        command += ["--port", str(port), "--match-deals", "4", "--house-bots", "7", "--grace", "20"]
        command += options
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.said: list[str] = []
        self.data_dir = data_dir
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put("")

    def wait_for(self, text: str, count: int = 1) -> list[str]:
        seen: list[str] = []
        while len(seen) < count:
            try:
                line = self.lines.get(timeout=120)
            except queue.Empty:
                outputs = {log.name: log.read_text()[-600:] for log in self.data_dir.glob("bot-output/*.log")}
                raise AssertionError(
                    f"no {text!r} within 120 s; the ladder said:\n{''.join(self.said)}\nits bots: {outputs}"
                ) from None
            self.said.append(line)
            assert line, f"the ladder exited (status {self.process.poll()}) before {count} x {text!r}"
            if text in line:
                seen.append(line)
        return seen

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.reap()

    def reap(self) -> None:
        """After the process ended: collect it and close its output."""
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()


def stop_all(processes: list[subprocess.Popen[bytes]]) -> None:
    """Stop the bots at once (SIGKILL: SIGTERM would have them finish their matches first)."""
    for process in processes:
        process.kill()
    for process in processes:
        process.wait(timeout=30)


@dataclasses.dataclass
class Segment:
    """What one session received during one match."""

    match_id: str
    seat: int
    commitment: str
    messages: list[referee_pb2.RefereeMessage]


def play_until_closed(bot: RawBot, stop: threading.Event) -> None:
    """Say Hello, then answer every request (random cards, an opening bid now and then)
    until the referee ends the call."""
    policy = random_legal(f"{bot.name}/{id(bot)}", pass_rate=0.3)
    bot.hello()
    while True:
        try:
            message = bot.next_message(timeout=GUARD_S)
        except StreamEnded:
            return
        except AssertionError:
            if stop.is_set():
                return
            raise
        kind = message.WhichOneof("kind")
        request = None
        if kind == "update" and message.update.HasField("request"):
            request = message.update.request
        elif kind == "resync" and message.resync.HasField("request"):
            request = message.resync.request
        if request is not None:
            bot.answer(request.request_id, policy(bot, request))


def segments(bot: RawBot) -> list[Segment]:
    """The session's messages split match by match (each starts with match_started)."""
    found: list[Segment] = []
    for message in bot.received:
        if message.WhichOneof("kind") == "update":
            for event in message.update.events:
                if event.HasField("match_started"):
                    started = event.match_started
                    found.append(Segment(started.match_id, started.seat, started.seed_commitment, []))
        if found:
            found[-1].messages.append(message)
    return found


def rating_history_breaks(store: LadderStore) -> list[str]:
    """What in the ratings' history shows an update lost or applied twice (empty: none).

    Each entrant's history must number its rated matches 1, 2, … with none missing or
    repeated, each starting from where the one before left it (the first from the start
    rating), and end at the rating and match count the entrant has; and every match
    finished or forfeit must have moved its entrants exactly once."""
    breaks: list[str] = []
    with store.db.transaction() as cursor:
        history = cursor.rows(
            "SELECT name, match_id, number, mu, sigma, before_mu, before_sigma FROM ladder_ratings"
            " ORDER BY name, number"
        )
        rated = cursor.rows(
            "SELECT match_id, status,"
            " (SELECT COUNT(*) FROM ladder_ratings r WHERE r.match_id = m.match_id) AS moved,"
            " (SELECT COUNT(*) FROM ladder_match_entrants e WHERE e.match_id = m.match_id) AS seated"
            " FROM ladder_matches m"
        )
    for entrant in store.entrants(include_retired=True):
        rows = [row for row in history if row["name"] == entrant.name]
        where = (store.initial_mu, store.initial_sigma)
        for expected, row in enumerate(rows, start=1):
            if row["number"] != expected:
                breaks.append(f"{entrant.name}: update {row['number']} where {expected} was due")
            if (row["before_mu"], row["before_sigma"]) != where:
                breaks.append(
                    f"{entrant.name}: update {expected} ({row['match_id']}) started from a stale rating"
                )
            where = (row["mu"], row["sigma"])
        if where != (entrant.mu, entrant.sigma) or len(rows) != entrant.matches:
            breaks.append(f"{entrant.name}: {entrant.matches} matches, {len(rows)} updates, rating {where}")
    for match in rated:
        moved, seated, status = match["moved"], match["seated"], match["status"]
        if (status == "finished" and moved != seated) or (status not in ("finished", "forfeit") and moved):
            breaks.append(
                f"{match['match_id']} is {status} and moved {moved} ratings of its {seated} entrants"
            )
    return breaks
