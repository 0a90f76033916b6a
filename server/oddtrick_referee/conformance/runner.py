"""Runs a bot through the scenarios: a real referee, the probing proxy in front of it, a house bot.

The bot is either started here (``--bot-command``, with the ODDTRICK_*
environment of a tournament entry) or connects by itself to the proxy's port.
Each scenario is one real match on the real referee; what the bot sent and
received is judged afterwards (:mod:`oddtrick_referee.conformance.checks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shlex
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import trio

from oddtrick import Bot, BotView
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick.rules import Action, Seat
from oddtrick_referee.conformance.checks import Outcome, Run, evaluate
from oddtrick_referee.conformance.proxy import Probes, ProbingProxy
from oddtrick_referee.conformance.report import Report
from oddtrick_referee.conformance.scenarios import SCENARIOS, Scenario
from oddtrick_referee.referee import MatchSpec, RefereeSettings, running_referee

HOUSE = "conformance-house"
HOUSE_TOKEN = "house-token"
SEATS = 2
"""The bot under test holds North and South: two streams, two seats of one match at once."""
MATCH_LIMIT_S = 120.0
"""A scenario that has not ended by then is stopped and reported."""
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


def _run_house(address: str) -> None:
    options = ClientOptions(server=address, name=HOUSE, token=HOUSE_TOKEN, seats=SEATS, reconnect_for_s=2.0)
    with contextlib.suppress(Exception):  # the referee went away at the end: nothing left to play
        asyncio.run(run_bot_async(HouseBot, options))


class _Candidate:
    """The bot's process, when this command starts it; its output goes to a file."""

    def __init__(self, command: str, address: str, options: Options, output: Path) -> None:
        env = dict(os.environ)
        env.update(
            ODDTRICK_SERVER=address,
            ODDTRICK_NAME=options.name,
            ODDTRICK_TOKEN=options.token,
            ODDTRICK_SEATS=str(SEATS),
        )
        self.output = output
        self._file = output.open("w")
        self.process = subprocess.Popen(
            shlex.split(command),
            env=env,
            stdout=self._file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def wait(self, timeout: float) -> int | None:
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._file.close()

    def tail(self, lines: int = 15) -> str:
        text = self.output.read_text(errors="replace").splitlines()
        return "\n".join(text[-lines:])


async def _play(referee: object, scenario: Scenario, name: str) -> Outcome:
    from oddtrick_referee.referee import Referee

    assert isinstance(referee, Referee)
    seating = {Seat.NORTH: name, Seat.EAST: HOUSE, Seat.SOUTH: name, Seat.WEST: HOUSE}
    spec = MatchSpec(scenario.config, seating, scenario.rules, seed=scenario.seed or None)
    started = time.monotonic()
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
        return Outcome(scenario, None, problem, time.monotonic() - started)
    return Outcome(scenario, record, "", time.monotonic() - started)


async def _wait_for_bot(proxy: ProbingProxy, candidate: _Candidate | None, within_s: float) -> bool:
    """Wait for the bot's sessions; give up early if its process has already exited."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if await trio.to_thread.run_sync(proxy.wait_sessions, SEATS, 0.25):
            return True
        if candidate is not None and candidate.process.poll() is not None:
            return False
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
        settings = RefereeSettings(
            port=0, data_dir=Path(tmp) / "data", tokens={options.name: options.token, HOUSE: HOUSE_TOKEN}
        )
        candidate: _Candidate | None = None
        proxy: ProbingProxy | None = None
        outcomes: list[Outcome] = []
        exit_code: int | None = None
        notes: list[str] = []
        try:
            async with running_referee(settings) as referee:
                proxy = ProbingProxy(referee.address, options.name)
                port = proxy.start(options.host, options.port)
                address = f"{options.host}:{port}"
                threading.Thread(target=_run_house, args=(referee.address,), daemon=True).start()
                if options.command:
                    candidate = _Candidate(options.command, address, options, Path(tmp) / "bot-output.log")
                    options.progress(f"started {options.command}")
                else:
                    options.progress(
                        f"waiting for the bot: connect it to {address} with bot name {options.name!r}, "
                        f"token {options.token!r} and {SEATS} seats"
                    )
                connected = await _wait_for_bot(proxy, candidate, options.connect_within_s)
                if not connected:
                    exited = candidate is not None and candidate.process.poll() is not None
                    notes.append(
                        "the bot exited before it connected"
                        if exited
                        else f"the bot did not open {SEATS} sessions within {options.connect_within_s:g} s"
                    )
                else:
                    for scenario in SCENARIOS:
                        proxy.begin(scenario.name, scenario.probes)
                        options.progress(f"{scenario.name}: {scenario.title}")
                        outcome = await _play(referee, scenario, options.name)
                        outcomes.append(outcome)
                        if outcome.problem:
                            options.progress(f"{scenario.name}: {outcome.problem}")
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
        )
        report = Report(bot=label, checks=evaluate(run), notes=notes)
        if candidate is not None and not report.passed:
            report.notes.append(f"the bot's last output:\n{candidate.tail()}")
        return report, run
