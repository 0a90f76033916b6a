"""``oddtrick play``: a person takes a seat at the terminal against bots.

A referee on a free localhost port plays one match, in this process. The person's seat
is a local seat of that referee (``play/local_seat.py``): shown exactly what a bot at
that seat would be shown, refereed, logged and checkable like any other, with only the
deadline lifted. No connection, thread of a client or second event loop stands between
the person and the table: :class:`oddtrick._human.HumanSeat` reads the terminal on the
seat's worker thread. The other seats are bots: the sample heuristic bot by default (a
local seat too), bot files (started as separate processes, walled off as a tournament's
entries are), or remote bots that connect by themselves (``remote:NAME``).
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO

import trio

from oddtrick import bots
from oddtrick._human import HumanSeat, Quit
from oddtrick._options import OptionValue
from oddtrick._run import bot_factory, split_bot_spec
from oddtrick.rules import GameConfig, Seat
from oddtrick_referee._exceptions import OptionError
from oddtrick_referee.command_runner import interrupted, run_command, sole_error
from oddtrick_referee.competitions.entries.entrants import BotProcess, identity_for, run_bot_process
from oddtrick_referee.competitions.entries.entry_options import (
    declare_options,
    in_process_problem,
    options_env,
    process_problem,
)
from oddtrick_referee.front_door import FrontDoor
from oddtrick_referee.play.local_seat import bot_entrant
from oddtrick_referee.play.table import TableRules
from oddtrick_referee.referee import MatchRecord, MatchSpec, RefereeSettings, running_referee
from oddtrick_referee.token_scheme import new_token

DEFAULT_BOT = bots.bot_file("heuristic")


@dataclasses.dataclass(frozen=True)
class Opponent:
    """Who plays a side of the table other than the person's own seat."""

    name: str
    command: tuple[str, ...] | None
    """A process to start (None: a remote bot that connects by itself, or a shipped bot)."""
    cwd: Path
    token: str
    in_process: str = ""
    """A shipped bot (``FILE.py[:Class]`` inside the package), played in the referee's process."""
    options: Mapping[str, OptionValue] = dataclasses.field(default_factory=dict)
    """Its bot options (``--opponents FILE.py option.think_seconds=2``)."""

    @property
    def remote(self) -> bool:
        return self.command is None and not self.in_process


def opponent(text: str, role: str, options: Mapping[str, OptionValue] | None = None) -> Opponent:
    """``FILE.py[:Class]``, ``cmd:COMMAND`` or ``remote:NAME``, with its bot ``options``."""
    found = _opponent(text, role)
    if options and found.remote:
        raise OptionError(f"--{role} {text}: a remote bot's options are its author's to give, not these")
    return dataclasses.replace(found, options=dict(options or {}))


async def check_opponents(partner: Opponent, opponents: Opponent, data_dir: Path) -> None:
    """OptionError naming the bot whose options it does not take, before anything starts (a
    bot file's process checks them itself: ``entry_options``)."""
    for role, bot in (("partner", partner), ("opponents", opponents)):
        if bot.in_process:
            problem = in_process_problem(bot.in_process, bot.options)
        elif bot.command is not None and bot.command[1:4] == ("-P", "-m", "oddtrick"):
            who = identity_for(bot.command, bot.cwd)
            problem = await process_problem(bot.command, bot.cwd, bot.options, who, data_dir)
        else:
            problem = None
        if problem is not None:
            raise OptionError(f"--{role}: {problem}")


def _opponent(text: str, role: str) -> Opponent:
    token = new_token()
    if text.startswith("remote:"):
        name = text[len("remote:") :].strip()
        if not name:
            raise OptionError(f"--{role} remote:NAME needs a name")
        return Opponent(name, None, Path.cwd(), token)
    if text.startswith("cmd:"):
        command = tuple(shlex.split(text[4:]))
        if not command:
            raise OptionError(f"--{role} cmd: needs a command")
        return Opponent(role, command, Path.cwd(), token)
    given, attribute = split_bot_spec(text)
    path = given.resolve()
    if not path.is_file():
        raise OptionError(f"--{role}: no bot file {given}")
    target = f"{path}:{attribute}" if attribute else str(path)
    stem = path.stem.removesuffix("_bot")
    if path.is_relative_to(bots.FOLDER):  # the package's own code: trusted, played in-process
        return Opponent(f"{stem}-{role}", None, path.parent, token, in_process=target)
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
    opponents, _, tokens, seating = seat_table(seat, partner, opponents, name)
    del tokens[name]  # the person plays in this process: nobody connects under that name
    settings = RefereeSettings(port=0, data_dir=data_dir, tokens=tokens)
    spec = MatchSpec(config, seating, TableRules(deadline_s=deadline_s), seed=seed, untimed=frozenset({seat}))
    person = HumanSeat(out)
    outcome: dict[str, object] = {}
    try:
        run_command(_play_one, settings, spec, person, (partner, opponents), outcome, out)
    except BaseException as error:
        stop = sole_error(error)
        if interrupted(error) or isinstance(stop, Quit):
            what = "end of input" if isinstance(stop, Quit) else "Ctrl-C"
            so_far = outcome.get("log", data_dir)
            # After the prompt the input ended on, on a line of its own.
            print(f"\nstopped ({what}): the match was abandoned; its log so far: {so_far}", file=out)
            return 130
        outcome["error"] = stop
    return _report(outcome, out)


async def _play_one(
    settings: RefereeSettings,
    spec: MatchSpec,
    person: HumanSeat,
    others: tuple[Opponent, Opponent],
    outcome: dict[str, object],
    out: IO[str],
) -> None:
    """The referee, the bots and the one match; the person's seat local, as shipped bots'."""
    async with running_referee(settings) as referee:
        person_name = spec.seating[next(iter(spec.untimed))]
        referee.add_local(bot_entrant(person_name, lambda: person))
        async with trio.open_nursery() as nursery:
            start_opponents(nursery, referee, *others, settings.data_dir, lambda: "record" in outcome, out)
            outcome["record"] = await referee.play_match(spec, on_start=lambda m, p: outcome.update(log=p))
            referee.finish()
            nursery.cancel_scope.cancel()


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
        raise OptionError(f"the bots are called {partner.name} and {opponents.name}: choose another --name")
    token = new_token()
    tokens = {name: token, partner.name: partner.token, opponents.name: opponents.token}
    seating = {seat: name, seat.partner: partner.name, seat.left: opponents.name, seat.right: opponents.name}
    return opponents, token, tokens, seating


def start_opponents(
    nursery: trio.Nursery,
    referee: FrontDoor,
    partner: Opponent,
    opponents: Opponent,
    data_dir: Path,
    done: Callable[[], bool],
    out: IO[str],
) -> None:
    """Seat the partner's and the opponents' bots: a shipped bot in the referee's process,
    a bot file as a process of its own (a remote bot is told how to connect instead);
    ``done`` says when the processes' ending is expected."""
    address = referee.address
    for bot, seats in ((partner, 1), (opponents, 2)):
        declare_options(referee, [bot.name], bot.options)
        if bot.in_process:
            referee.add_local(bot_entrant(bot.name, bot_factory(bot.in_process, bot.options)))
            continue
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
    env.update(options_env(bot.options))
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
