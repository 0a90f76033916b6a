"""``oddtrick play``: a person takes a seat at the terminal against bots.

A referee on a free localhost port plays one match. The person's seat is an
ordinary client of it (:class:`oddtrick._human.HumanSeat` through the SDK's
client), so the match is refereed, logged and checkable exactly like any
other; only the deadline is lifted for that seat. The other seats are bots:
the sample heuristic bot by default, or bot files (started as separate
processes, as a tournament starts its entries), or remote bots that connect
by themselves (``remote:NAME``).

The referee runs on its own thread (trio); the person's client on the main
thread (asyncio), reading the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import shlex
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO

import trio

from oddtrick import bots
from oddtrick._client import ClientOptions, run_bot_async
from oddtrick._human import HumanSeat, Quit
from oddtrick._run import split_bot_spec
from oddtrick.rules import GameConfig, Seat
from oddtrick_referee._errors import interrupted, sole_error
from oddtrick_referee.competitions.entrants import BotProcess, identity_for, run_bot_process
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, RefereeSettings, running_referee

DEFAULT_BOT = bots.bot_file("heuristic")


@dataclasses.dataclass(frozen=True)
class Opponent:
    """Who plays a side of the table other than the person's own seat."""

    name: str
    command: tuple[str, ...] | None
    """A process to start (None: a remote bot that connects by itself)."""
    cwd: Path
    token: str


def opponent(text: str, role: str) -> Opponent:
    """``FILE.py[:Class]``, ``cmd:COMMAND`` or ``remote:NAME``."""
    token = secrets.token_hex(16)
    if text.startswith("remote:"):
        name = text[len("remote:") :].strip()
        if not name:
            raise ValueError(f"--{role} remote:NAME needs a name")
        return Opponent(name, None, Path.cwd(), token)
    if text.startswith("cmd:"):
        command = tuple(shlex.split(text[4:]))
        if not command:
            raise ValueError(f"--{role} cmd: needs a command")
        return Opponent(role, command, Path.cwd(), token)
    given, attribute = split_bot_spec(text)
    path = given.resolve()
    if not path.is_file():
        raise ValueError(f"--{role}: no bot file {given}")
    target = f"{path}:{attribute}" if attribute else str(path)
    stem = path.stem.removesuffix("_bot")
    return Opponent(
        f"{stem}-{role}", (sys.executable, "-P", "-m", "oddtrick", "bot", target), path.parent, token
    )


def play_at_terminal(
    config: GameConfig,
    seat: Seat,
    partner: Opponent,
    opponents: Opponent,
    *,
    name: str,
    data_dir: Path,
    seed: str | None,
    deadline_s: float,
    out: IO[str] = sys.stdout,
) -> int:
    """Play one match with a person at ``seat``; the exit status of ``oddtrick play``."""
    opponents, human_token, tokens, seating = seat_table(seat, partner, opponents, name)
    settings = RefereeSettings(port=0, data_dir=data_dir, tokens=tokens)
    spec = MatchSpec(config, seating, TableRules(deadline_s=deadline_s), seed=seed, untimed=frozenset({seat}))
    side = _RefereeThread(settings, spec, (partner, opponents), out)
    thread = threading.Thread(target=side.run, name="referee", daemon=True)
    thread.start()
    side.listening.wait()
    if not side.address:
        raise RuntimeError(f"the referee did not start: {side.outcome.get('error')}")
    options = ClientOptions(server=side.address, name=name, token=human_token, seats=1, max_matches=1)
    try:
        asyncio.run(_person_side(HumanSeat(out, on_quit=side.stop), options, side))
    except asyncio.CancelledError:
        pass  # the referee stopped: its error is reported below
    except (KeyboardInterrupt, Quit) as stop:
        side.stop()
        thread.join()
        what = "Ctrl-C" if isinstance(stop, KeyboardInterrupt) else "end of input"
        so_far = side.outcome.get("log", data_dir)
        # After the prompt the input ended on, on a line of its own.
        print(f"\nstopped ({what}): the match was abandoned; its log so far: {so_far}", file=out)
        return 130
    thread.join()
    return _report(side.outcome, out)


class _RefereeThread:
    """The referee's side of ``oddtrick play``: trio on its own thread, the bots' processes,
    the one match; it tells the person's client to stop when it ends."""

    def __init__(
        self, settings: RefereeSettings, spec: MatchSpec, bots: tuple[Opponent, Opponent], out: IO[str]
    ) -> None:
        self.settings, self.spec, self.bots, self.out = settings, spec, bots, out
        self.address = ""
        self.listening = threading.Event()
        self.outcome: dict[str, object] = {}
        """``record`` (the match's), ``log`` (its path, once it starts) or ``error``."""
        self.stop_client: Callable[[], object] | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._match_scope = trio.CancelScope()
        self._match_over: trio.Event | None = None

    def run(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as error:
            self.outcome["error"] = sole_error(error)
        finally:
            self.listening.set()
            # The person's client would otherwise wait for a referee that is gone (it may not
            # have read the referee's last word when the server stopped).
            if self.stop_client is not None:
                with contextlib.suppress(RuntimeError):  # its loop has closed: it is done already
                    self.stop_client()

    async def _serve(self) -> None:
        data_dir = self.settings.data_dir
        async with running_referee(self.settings) as referee:
            self._token = trio.lowlevel.current_trio_token()
            self.address = referee.address
            self.listening.set()
            async with trio.open_nursery() as nursery:
                start_opponents(
                    nursery, referee.address, *self.bots, data_dir, lambda: "record" in self.outcome, self.out
                )
                # Abandoned, the match stops first and the bots after it, so that none is
                # seen to drop out of a match in progress.
                self._match_over = trio.Event()
                try:
                    with self._match_scope:
                        self.outcome["record"] = await referee.play_match(
                            self.spec, on_start=lambda m, p: self.outcome.update(log=p)
                        )
                finally:
                    self._match_over.set()
                referee.finish()
                nursery.cancel_scope.cancel()

    def stop(self) -> None:
        """Abandon the match (from the person's thread), and wait until it has stopped."""
        if self._token is not None and self._match_over is not None:
            with contextlib.suppress(trio.RunFinishedError):
                trio.from_thread.run(self._stop_match, trio_token=self._token)

    async def _stop_match(self) -> None:
        self._match_scope.cancel()
        assert self._match_over is not None
        await self._match_over.wait()


async def _person_side(human: HumanSeat, options: ClientOptions, side: _RefereeThread) -> None:
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    side.stop_client = lambda: loop.call_soon_threadsafe(task.cancel)
    if "error" in side.outcome:
        return
    await run_bot_async(lambda: human, options)


def _report(outcome: dict[str, object], out: IO[str]) -> int:
    """The match's last line (where its log is) or the referee's error; the exit status."""
    error = outcome.get("error")
    if error is not None:
        if isinstance(error, BaseException) and interrupted(error):
            return 130
        print(f"oddtrick play: {error}", file=sys.stderr)
        return 1
    record = outcome.get("record")
    assert isinstance(record, MatchRecord)
    print(f"log: {record.log_path}  (replay and verify it: oddtrick check {record.log_path})", file=out)
    return 0


def seat_table(
    seat: Seat, partner: Opponent, opponents: Opponent, name: str
) -> tuple[Opponent, str, dict[str, str], dict[Seat, str]]:
    """The opponents (renamed if they share the partner's name), the person's token, every
    name's token and the seating, for a person called ``name`` at ``seat``."""
    if partner.name == opponents.name:
        opponents = dataclasses.replace(opponents, name=f"{opponents.name}-2")
    if name in (partner.name, opponents.name):
        raise ValueError(f"the bots are called {partner.name} and {opponents.name}: choose another --name")
    token = secrets.token_hex(16)
    tokens = {name: token, partner.name: partner.token, opponents.name: opponents.token}
    seating = {seat: name, seat.partner: partner.name, seat.left: opponents.name, seat.right: opponents.name}
    return opponents, token, tokens, seating


def start_opponents(
    nursery: trio.Nursery,
    address: str,
    partner: Opponent,
    opponents: Opponent,
    data_dir: Path,
    done: Callable[[], bool],
    out: IO[str],
) -> None:
    """Start the bot processes of the partner's seat and the opponents' two (a remote bot
    is told how to connect instead); ``done`` says when their ending is expected."""
    for bot, seats in ((partner, 1), (opponents, 2)):
        if bot.command is None:
            print(
                f"waiting for {bot.name}: ODDTRICK_TOKEN={bot.token} oddtrick bot FILE.py "
                f"--server {address} --name {bot.name} --seats {seats}",
                file=out,
                flush=True,
            )
            continue
        process = _process(bot, address, seats, data_dir)
        # As in tournaments: a user of its own if the referee is root (else root, sandboxed).
        nursery.start_soon(run_bot_process, process, identity_for(process.command, process.cwd), done)


def _process(bot: Opponent, address: str, seats: int, data_dir: Path) -> BotProcess:
    assert bot.command is not None
    env = {"ODDTRICK_SERVER": address, "ODDTRICK_NAME": bot.name, "ODDTRICK_SEATS": str(seats)}
    sdk = bot.command[1:4] == ("-P", "-m", "oddtrick")
    connect = ("--server", address, f"--name={bot.name}", "--seats", str(seats))  # a name may begin "-"
    command = bot.command + (connect if sdk else ())
    return BotProcess(
        entry=bot.name,
        name=bot.name,
        command=command,
        env=env,
        cwd=bot.cwd,
        token=bot.token,
        output=data_dir / "bot-output" / f"{bot.name}.log",
        token_in_env=not sdk,
        hide=(data_dir,),
    )
