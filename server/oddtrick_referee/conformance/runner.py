"""Runs a bot through the scenarios: a real referee, the probing proxy in front of it, a house bot
(a local seat of the referee: the kit's own code, with no process or connection).

The bot is either started here (``--bot-command``, exactly as a tournament
starts a ``cmd:`` entry) or connects by itself to the proxy's port.
Each scenario is one real match on the real referee; what the bot sent and
received is judged afterwards (:mod:`oddtrick_referee.conformance.checks`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import trio

from oddtrick import Bot, BotView
from oddtrick.rules import Action, Seat
from oddtrick_referee.competitions.entries.entrants import BotProcess, identity_for, popen_bot
from oddtrick_referee.conformance.checks import Outcome, Run, evaluate
from oddtrick_referee.conformance.proxy import Probes, ProbingProxy
from oddtrick_referee.conformance.report import Report
from oddtrick_referee.conformance.scenarios import SCENARIOS, Scenario
from oddtrick_referee.front_door import FrontDoor
from oddtrick_referee.play.local_seat import bot_entrant
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

HOUSE = "conformance-house"
SEATS = 2
"""The bot under test holds North and South: two streams, two seats of one match at once."""
MATCH_LIMIT_S = 120.0
"""A scenario that has not ended by then is stopped and reported (one whose bot stopped
answering is stopped long before: see ``STOP_AFTER_FAULTS``)."""
SEATED_WITHIN_S = 20.0
"""How long a scenario waits for the bot's sessions to be free (a resume, or a slow start)."""
EXIT_WITHIN_S = 10.0
QUIET_S = 3.0
"""After the sessions end with OK: how long a bot must stay away (it should not reconnect)."""


@dataclasses.dataclass(frozen=True)
class Options:
    command: str | None = None
    """The bot's command line; None: the bot connects to ``host:port`` by itself."""
    host: str = "127.0.0.1"
    port: int = 0
    name: str = "candidate"
    token: str = "conformance-token"
    connect_within_s: float = 60.0
    """How long to wait for the bot's streams (a JVM or a first build can be slow)."""
    progress: Callable[[str], None] = lambda text: None
    data_dir: Path | None = None
    """Where the match logs and the bot's output go; None: a temporary folder, removed after."""


class HouseBot(Bot):
    """The other partnership: opens the bidding when nobody has, else passes; first legal card."""

    name = HOUSE

    def choose_call(self, view: BotView) -> Action:
        bids = [action for action in view.legal_actions if getattr(action, "level", None)]
        # All 35 bids are legal only while nobody has bid: open with the cheapest.
        return bids[0] if len(bids) == 35 else view.legal_actions[0]

    def choose_card(self, view: BotView) -> Action:
        return view.legal_actions[0]


class _Candidate:
    """The bot's process, when this command starts it, as a tournament starts a ``cmd:``
    entry: through the launcher, behind the same walls, with the same environment (ODDTRICK_SERVER,
    ODDTRICK_NAME, ODDTRICK_SEATS, the token through ODDTRICK_TOKEN_FD and in
    ODDTRICK_TOKEN), in a process group of its own that is killed as a whole at the end
    (a wrapper script that does not ``exec`` leaves nothing behind). Its output goes
    to a file."""

    def __init__(self, command: str, address: str, options: Options, output: Path, data_dir: Path) -> None:
        self.command = command
        self.data_dir = data_dir
        """The referee's: covered in the bot's view."""
        self.address = address
        self.options = options
        self.output = output
        self.starts = 0
        self.exits: list[tuple[str, int]] = []
        """(scenario, status) of each exit before the end, for the report."""
        self.process: subprocess.Popen[bytes] | None = None
        self._watch_write = -1
        self.start()

    def start(self) -> None:
        if self._watch_write >= 0:  # a launcher that has exited: its pipe is done with
            os.close(self._watch_write)
        spec = BotProcess(
            entry=self.options.name,
            name=self.options.name,
            command=tuple(shlex.split(self.command)),
            env={
                "ODDTRICK_SERVER": self.address,
                "ODDTRICK_NAME": self.options.name,
                "ODDTRICK_SEATS": str(SEATS),
            },
            cwd=Path.cwd(),
            token=self.options.token,
            output=self.output,
            token_in_env=True,
            hide=(self.data_dir,),
        )
        watch_read, self._watch_write = os.pipe()
        with self.output.open("ab") as output:
            output.write(f"--- started: {self.command}\n".encode())
            output.flush()
            try:
                self.process = popen_bot(spec, identity_for(spec.command, spec.cwd), watch_read, output)
            finally:
                os.close(watch_read)
        self.starts += 1

    def exited(self) -> int | None:
        """The exit status if the process has ended, else None."""
        return self.process.poll() if self.process is not None else None

    def wait(self, timeout: float) -> int | None:
        assert self.process is not None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        """End the bot and everything it started: the launcher kills the bot's whole
        process group once its watch pipe closes; the launcher's own group goes too."""
        if self._watch_write >= 0:
            os.close(self._watch_write)
            self._watch_write = -1
        if self.process is not None and self.wait(5) is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def tail(self, lines: int = 15) -> str:
        text = self.output.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


async def _play(
    referee: FrontDoor, scenario: Scenario, name: str, proxy: ProbingProxy, candidate: _Candidate | None
) -> Outcome:
    """Play ``scenario``'s match; stopped early once its verdict is known (the bot stopped
    answering, or its process exited), so that a dead bot costs seconds, not minutes."""

    seating = {Seat.NORTH: name, Seat.EAST: HOUSE, Seat.SOUTH: name, Seat.WEST: HOUSE}
    spec = MatchSpec(scenario.config, seating, scenario.rules, seed=scenario.seed or None)
    started = time.monotonic()
    record = None
    problem = ""
    async with trio.open_nursery() as nursery:

        async def stop_when_known() -> None:
            nonlocal problem
            while True:
                await trio.sleep(0.2)
                status = candidate.exited() if candidate is not None else None
                if status is not None:
                    problem = f"the bot's process exited with status {status} during the scenario"
                elif proxy.stopped_answering:
                    problem = proxy.stopped_answering
                if problem:
                    referee.explain_stop(f"the conformance kit stopped the scenario: {problem}")
                    nursery.cancel_scope.cancel()
                    return

        nursery.start_soon(stop_when_known)
        try:
            with trio.fail_after(MATCH_LIMIT_S):
                record = await referee.play_match(spec, wait_s=SEATED_WITHIN_S)
        except trio.TooSlowError:
            waited = time.monotonic() - started
            problem = (
                f"the bot's two sessions were not free within {SEATED_WITHIN_S:g} s"
                if waited < SEATED_WITHIN_S + 1
                else f"the match did not end within {MATCH_LIMIT_S:g} s"
            )
        nursery.cancel_scope.cancel()
    if record is not None:
        problem = ""
    return Outcome(scenario, record, problem, time.monotonic() - started)


async def _wait_for_bot(proxy: ProbingProxy, candidate: _Candidate | None, within_s: float) -> bool:
    """Wait for the bot's sessions; give up early if its process has already exited."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if await trio.to_thread.run_sync(proxy.wait_sessions, SEATS, 0.25):
            return True
        if candidate is not None and candidate.exited() is not None:
            return False
    return False


def _not_connected(proxy: ProbingProxy, candidate: _Candidate | None, address: str, within_s: float) -> str:
    """Why the bot has not got its sessions, in words that say what to fix."""
    streams = list(proxy.connections)
    ended = [c.status for c in streams if c.status is not None and c.status[0] is not grpc.StatusCode.OK]
    said = f"; the referee ended a stream with {ended[-1][0].name}: {ended[-1][1]}" if ended else ""
    status = candidate.exited() if candidate is not None else None
    if not streams:
        reached = (
            f"no stream reached {address} (ODDTRICK_SERVER)"
            if candidate is not None
            else f"no stream reached {address}"
        )
        if status is not None:
            return f"{reached}: the bot exited with status {status} first (see its output below)"
        return f"{reached} within {within_s:g} s: does the bot connect to the address in ODDTRICK_SERVER?"
    welcomed = sum(1 for c in streams if c.welcome is not None)
    what = f"the bot opened {len(streams)} stream(s), {welcomed} welcomed, but not {SEATS} sessions at once"
    if status is not None:
        return f"{what}, and exited with status {status}{said}"
    return f"{what} within {within_s:g} s (ODDTRICK_SEATS={SEATS}){said}"


async def _ready(
    proxy: ProbingProxy, candidate: _Candidate | None, upcoming: str, options: Options, notes: list[str]
) -> bool:
    """Before a scenario: if the bot's process has exited, start it again (said in the
    notes), so that each check is judged on what the bot does in its own scenario."""
    if candidate is None:
        return True
    status = candidate.exited()
    if status is None:
        return True
    candidate.exits.append((proxy.scenario, status))
    notes.append(
        f"the bot's process exited with status {status} in {proxy.scenario}; started again for {upcoming}"
    )
    options.progress(f"the bot exited (status {status}); starting it again")
    proxy.begin(f"restart:{upcoming}", Probes())
    candidate.start()
    if await _wait_for_bot(proxy, candidate, options.connect_within_s):
        return True
    notes.append(
        f"after the restart: {_not_connected(proxy, candidate, candidate.address, options.connect_within_s)}"
    )
    return False


async def run_conformance(options: Options) -> Report:
    """Play every scenario with the bot and judge it."""
    report, _ = await conformance_run(options)
    return report


async def conformance_run(options: Options) -> tuple[Report, Run]:
    """Play every scenario with the bot; the report, and the run it judged (every message, every match)."""
    label = f"`{options.command}`" if options.command else f"the bot on {options.host}:{options.port}"
    kept = contextlib.nullcontext(str(options.data_dir)) if options.data_dir else None
    with kept or tempfile.TemporaryDirectory(prefix="oddtrick-conformance-") as tmp:
        settings = RefereeSettings(port=0, data_dir=Path(tmp) / "data", tokens={options.name: options.token})
        candidate: _Candidate | None = None
        proxy: ProbingProxy | None = None
        outcomes: list[Outcome] = []
        exit_code: int | None = None
        notes: list[str] = []
        address = ""
        try:
            async with running_referee(settings) as referee:
                proxy = ProbingProxy(referee.address, options.name)
                port = proxy.start(options.host, options.port)
                address = f"{options.host}:{port}"
                referee.add_local(bot_entrant(HOUSE, HouseBot))
                if options.command:
                    candidate = _Candidate(
                        options.command, address, options, Path(tmp) / "bot-output.log", Path(tmp) / "data"
                    )
                    options.progress(f"started {options.command}")
                else:
                    options.progress(
                        f"waiting for the bot: connect it to {address} with bot name {options.name!r}, "
                        f"token {options.token!r} and {SEATS} seats"
                    )
                connected = await _wait_for_bot(proxy, candidate, options.connect_within_s)
                if not connected:
                    notes.append(_not_connected(proxy, candidate, address, options.connect_within_s))
                else:
                    for scenario in SCENARIOS:
                        if not await _ready(proxy, candidate, scenario.name, options, notes):
                            break
                        proxy.begin(scenario.name, scenario.probes)
                        options.progress(f"{scenario.name}: {scenario.title}")
                        outcome = await _play(referee, scenario, options.name, proxy, candidate)
                        outcomes.append(outcome)
                        if outcome.record is None:
                            proxy.match_stopped()
                        if outcome.problem:
                            options.progress(f"{scenario.name}: {outcome.problem}")
                    # The end is judged on its own too: a bot that died in the last scenario starts again.
                    await _ready(proxy, candidate, "end", options, notes)
                proxy.begin("end", Probes())
                referee.finish()
                if candidate is not None:
                    exit_code = await trio.to_thread.run_sync(candidate.wait, EXIT_WITHIN_S)
                else:
                    await trio.sleep(QUIET_S)
        finally:
            if proxy is not None:
                proxy.stop()
            if candidate is not None:
                candidate.stop()
        assert proxy is not None
        run = Run(
            name=options.name,
            token=options.token,
            seats=SEATS,
            outcomes=outcomes,
            proxy=proxy,
            started_here=candidate is not None,
            exit_code=exit_code,
            address=address,
            died_in=tuple(scenario for scenario, _ in candidate.exits) if candidate is not None else (),
        )
        report = Report(bot=label, checks=evaluate(run), notes=notes, never_played=not outcomes)
        if candidate is not None and not report.passed:
            report.notes.append(f"the bot's last output:\n{candidate.tail()}")
        return report, run
