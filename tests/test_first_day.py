"""A bot author's first day: each small trap of the command line answered in a line.

Commands run as processes, as a user runs them; referees on real sockets.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from process_support import Lines, child, stop
from referee_support import GUARD_S, SeededBot, in_thread, run_sdk_bot

from oddtrick._address import with_default_port
from oddtrick._cli import refusal_line
from oddtrick._client import BotRefused, ClientOptions, _match_line, run_bot_async
from oddtrick._codec import config_to_wire
from oddtrick._run import run
from oddtrick._seat_state import SeatState
from oddtrick.rules import GameConfig, MatchFormat, Seat
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee import MatchSpec, RefereeSettings, running_referee

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"


STARTUP_GUARD_S = 120.0
"""How long a command may take to start and answer before the test fails instead of hanging:
loading the referee's modules takes seconds on a busy machine."""


def oddtrick(*args: str, timeout: float = STARTUP_GUARD_S) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *args], capture_output=True, text=True, timeout=timeout
    )


def free_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --server without a port


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("localhost", "localhost:50051"),
        ("10.0.0.7", "10.0.0.7:50051"),
        ("::1", "[::1]:50051"),
        ("[::1]", "[::1]:50051"),
        ("[::1]:7000", "[::1]:7000"),
        ("example.org:443", "example.org:443"),
        ("dns:///example.org:50051", "dns:///example.org:50051"),
        ("unix:/tmp/referee.sock", "unix:/tmp/referee.sock"),
    ],
)
def test_an_address_without_a_port_means_the_referees_default_port(given: str, meant: str) -> None:
    assert with_default_port(given) == meant


@pytest.mark.parametrize("given", ["localhost:", "localhost:http", ":50051", "", "[::1"])
def test_an_address_with_a_broken_port_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="HOST:PORT"):
        with_default_port(given)


def test_watch_and_bot_given_a_host_alone_use_the_default_port() -> None:
    watched = oddtrick("watch", "--server", "localhost", "--no-wait")
    assert watched.returncode == 1
    assert "localhost:50051" in watched.stderr  # nothing there, or a referee with no match: either says where
    broken = oddtrick("bot", str(RANDOM_BOT), "--server", "localhost:", "--name", "a")
    assert broken.returncode == 2
    assert broken.stderr.splitlines()[-1] == (
        "oddtrick bot: error: argument --server: not an address: 'localhost:' "
        "(expected HOST:PORT, e.g. localhost:50051)"
    )


# Nothing listening


def test_a_bot_that_finds_nothing_listening_says_so_and_where() -> None:
    address = f"127.0.0.1:{free_port()}"
    options = ClientOptions(server=address, name="x", token="t", reconnect_for_s=0.3)

    with pytest.raises(BotRefused) as refused:
        asyncio.run(asyncio.wait_for(run_bot_async(SeededBot, options), timeout=GUARD_S))
    line = refusal_line(refused.value, address, "x", "t")
    assert line.startswith(f"oddtrick bot: nothing listens at {address} ")
    assert "oddtrick serve" in line
    assert "refused" not in line


# --seats 0


@pytest.mark.parametrize("seats", ["0", "-2", "two", "1.5"])
def test_a_bot_refuses_a_number_of_seats_below_one(seats: str) -> None:
    given = oddtrick("bot", str(RANDOM_BOT), "--server", "127.0.0.1:1", "--name", "a", "--seats", seats)
    assert given.returncode == 2
    assert given.stderr.splitlines()[-1] == (
        f"oddtrick bot: error: argument --seats: {seats!r} is not a number of seats: give 1 or more"
    )


@pytest.mark.parametrize(
    "command",
    [
        ("serve", "--deadline", "-1"),
        ("serve", "--grace", "0"),
        ("tournament", "--game", "classic", "--deals", "1", "--deadline", "0"),
        ("sprt", "--bot", "a=a.py", "--bot", "b=b.py", "--deadline", "nan"),
        ("ladder", "serve", "--deadline", "-2"),
        ("play", "--deadline", "inf"),
    ],
    ids=["serve", "serve-grace", "tournament", "sprt", "ladder", "play"],
)
def test_a_deadline_or_grace_of_no_time_is_refused_when_the_command_is_read(command: tuple[str, ...]) -> None:
    """Not when the first request is sent (a negative one stopped the referee mid-match)."""
    result = oddtrick(*command)
    assert result.returncode == 2
    option = command[command.index("--deadline") if "--deadline" in command else command.index("--grace")]
    assert f"argument {option}: {command[-1]!r} is not a number of seconds: give one above 0" in result.stderr


def test_run_refuses_zero_seats_before_connecting() -> None:
    with pytest.raises(ValueError, match="seats must be a whole number, at least 1"):
        run(lambda view: view.legal_actions[0], server="127.0.0.1:1", name="a", token="", seats=0)


# Aborted and sealed matches


def _ended(outcome: int, winner: int = 0) -> SeatState:
    state = SeatState()
    state.apply(
        [
            referee_pb2.Event(
                sequence=1,
                match_started=referee_pb2.MatchStarted(
                    match_id="m-1",
                    seat=cards_pb2.SEAT_NORTH,
                    config=config_to_wire(GameConfig.contract(format=MatchFormat.DEALS, deals=2)),
                ),
            ),
            referee_pb2.Event(
                sequence=2,
                match_ended=game_pb2.MatchResult(
                    outcome=outcome,  # type: ignore[arg-type]
                    winner=winner,  # type: ignore[arg-type]
                    score=game_pb2.Scoreboard(total=game_pb2.PerSide(north_south=42, east_west=62)),
                    seed="the-seed",
                ),
            ),
        ]
    )
    return state


def test_an_aborted_match_is_reported_aborted_not_lost() -> None:
    state = _ended(game_pb2.MATCH_OUTCOME_ABORTED, winner=cards_pb2.SIDE_EAST_WEST)
    assert state.match_aborted
    assert state.match_result is not None
    assert state.match_result.winner is None
    line = _match_line(state)
    assert line == "match m-1 stopped by the referee: no reason given"  # an older referee gave none
    lost = _match_line(_ended(game_pb2.MATCH_OUTCOME_WIN, winner=cards_pb2.SIDE_EAST_WEST))
    assert lost.startswith("match m-1 over: lost 42-62")


async def test_a_sealed_play_is_not_reported_won_or_lost_by_the_sdk(tmp_path, caplog):
    """A ladder or tournament play of a duplicate set is decided with its other table:
    the SDK says so instead of a win or a loss the set may not bear out."""
    caplog.set_level(logging.INFO, logger="oddtrick.bot")
    seating = {Seat.NORTH: "alice", Seat.SOUTH: "alice", Seat.EAST: "bob", Seat.WEST: "bob"}
    config = GameConfig.classic(format=MatchFormat.DEALS, deals=1)
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path)) as referee:
        with trio.fail_after(STARTUP_GUARD_S):
            async with trio.open_nursery() as bots:
                for name in ("alice", "bob"):
                    bots.start_soon(in_thread, run_sdk_bot, referee.address, name, 2, 1)
                await referee.play_match(MatchSpec(config, seating, seed="sealed-line"), sealed=True)
        referee.finish()
    over = [r.getMessage() for r in caplog.records if " over" in r.getMessage()]
    assert len(over) == 4, over
    assert all("one play of a duplicate set, whose result comes from both tables" in line for line in over)
    assert not any(word in line for line in over for word in ("won", "lost", "drawn"))


# Mistyped options


def test_a_mistyped_option_is_named_with_the_closest_one_in_its_commands_usage() -> None:
    typo = oddtrick("bot", str(RANDOM_BOT), "--sever", "localhost:1", "--name", "a")
    assert typo.returncode == 2
    assert typo.stderr.startswith("usage: oddtrick bot ")
    assert (
        typo.stderr.splitlines()[-1]
        == "oddtrick bot: error: unrecognized option --sever; did you mean --server?"
    )
    bots = oddtrick("tournament", "--bots", f"a={RANDOM_BOT}", "--deals", "2")
    assert bots.returncode == 2
    assert bots.stderr.startswith("usage: oddtrick tournament ")
    assert bots.stderr.splitlines()[-1] == (
        "oddtrick tournament: error: unrecognized option --bots; did you mean --bot?"
    )
    nested = oddtrick("ladder", "standings", "--data-dri", "x")
    assert nested.stderr.splitlines()[-1] == (
        "oddtrick ladder standings: error: unrecognized option --data-dri; did you mean --data-dir?"
    )
    command = oddtrick("tournamnet")
    assert command.stderr.splitlines()[-1].endswith("; did you mean tournament?")
    nothing_close = oddtrick("watch", "--xyz")
    assert "unrecognized option --xyz (`oddtrick watch --help` lists the options)" in nothing_close.stderr


def test_abbreviations_and_option_values_are_not_taken_for_typos() -> None:
    watched = oddtrick("watch", "--serv", "127.0.0.1:1", "--no-wait")  # argparse accepts a prefix
    assert "unrecognized" not in watched.stderr
    assert "no referee answers at 127.0.0.1:1" in watched.stderr


# serve's start: one line per fact


async def test_a_busy_port_is_one_clear_line_without_grpcs_own_log(tmp_path):
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path / "one")) as first:
        busy = await in_thread(
            oddtrick,
            "serve",
            "--port",
            str(first.port),
            "--ns",
            "a",
            "--ew",
            "b",
            "--data-dir",
            str(tmp_path),
        )
        first.finish()
    assert busy.returncode == 1
    assert busy.stderr.splitlines() == [
        f"oddtrick serve: cannot listen on 127.0.0.1:{first.port}: the port is in use (another referee?); "
        "stop that program or choose another --port (--port 0 picks a free one)"
    ]


def test_serve_says_where_it_listens_once_even_when_verbose(tmp_path):
    command = [sys.executable, "-m", "oddtrick", "serve", "-v", "--port", "0", "--ns", "a", "--ew", "b",
               "--data-dir", str(tmp_path)]  # fmt: skip
    with child(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as process:
        assert process.stdout is not None
        output = Lines(process.stdout)
        said = output.until("waiting for a, b to connect", timeout=STARTUP_GUARD_S)
        assert stop(process, signal.SIGINT, timeout=STARTUP_GUARD_S) == 130
        said += output.rest(timeout=STARTUP_GUARD_S)
    assert sum("referee listening" in line for line in said) == 1, said


# Plurals


def test_one_deal_is_one_deal() -> None:
    assert GameConfig.contract(format=MatchFormat.DEALS, deals=1).describe().endswith(", one deal")
    assert GameConfig.contract(format=MatchFormat.DEALS, deals=2).describe().endswith(", 2 deals")


# Ctrl-C while the command starts


INTERRUPTED_WHILE_LOADING = textwrap.dedent(
    """
    import importlib.abc, signal, sys

    class CtrlC(importlib.abc.MetaPathFinder):
        # Ctrl-C arrives while the referee's modules load (a second or two on a busy machine).
        def find_spec(self, name, path, target=None):
            if name == "oddtrick_referee.cli":
                signal.raise_signal(signal.SIGINT)
            return None

    sys.meta_path.insert(0, CtrlC())
    from oddtrick._cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_ctrl_c_while_a_command_starts_is_one_line_not_a_traceback(tmp_path):
    started = subprocess.run(
        [sys.executable, "-c", INTERRUPTED_WHILE_LOADING, "tournament", "--deals", "2",
         "--data-dir", str(tmp_path), "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        capture_output=True, text=True, timeout=STARTUP_GUARD_S,
    )  # fmt: skip
    assert started.returncode == 130
    assert started.stderr.splitlines() == ["oddtrick: stopped (Ctrl-C) while starting; nothing was done"]
    assert not (tmp_path / "oddtrick.sqlite3").exists()


def documented_commands(program: str) -> list[tuple[Path, str]]:
    """Every ``program …`` command line in the README and the starters' READMEs
    (continuation lines joined)."""
    found = []
    for readme in [ROOT / "README.md", *sorted((ROOT / "examples").glob("*/README.md"))]:
        text = readme.read_text().replace("\\\n", " ")
        for line in text.splitlines():
            if line.strip().startswith(program + " "):
                found.append((readme.relative_to(ROOT), " ".join(line.split())))
    return found


def test_every_documented_tournament_says_how_many_deals() -> None:
    """Without --deals a tournament stops at once ("give --deals N"): a command copied
    from the docs must run as it is."""
    commands = documented_commands("oddtrick tournament")
    assert len(commands) >= 6
    missing = [f"{where}: {command}" for where, command in commands if "--deals" not in command.split()]
    assert not missing, "\n".join(missing)


def test_a_file_with_one_function_of_the_view_is_a_bot_and_two_are_named(tmp_path: Path) -> None:
    from oddtrick._run import load_bot

    one = tmp_path / "fn_bot.py"
    one.write_text("from random import choice\n\ndef play(view):\n    return choice(view.legal_actions)\n")
    assert load_bot(str(one)).__name__ == "play"  # `choice` is imported, not defined there
    two = tmp_path / "two_bot.py"
    two.write_text("def play(view):\n    return view.legal_actions[0]\n\ndef other(view):\n    return None\n")
    with pytest.raises(
        AttributeError, match=r"no Bot subclass and 2 functions \(play, other\): name the bot"
    ):
        load_bot(str(two))
    assert load_bot(f"{two}:other").__name__ == "other"


def test_a_bot_that_times_out_is_told_in_its_own_output(tmp_path: Path) -> None:
    """Not only in the standings: the bot's own log says the referee played for it, and why.

    The deadline is long enough (0.5 s) that the random bot beside it answers in time on a
    loaded machine (at 0.2 s it once did not, at a load of 20), and the slow bot sleeps past it."""
    sleepy = ROOT / "tests" / "sleepy_bot.py"
    result = oddtrick(
        "tournament", "--game", "classic", "--deals", "1", "--deadline", "0.5", "--seed", "late",
        "--data-dir", str(tmp_path), "--bot", f"slow=cmd:{sys.executable} {sleepy} random 900",
        "--bot", f"random={RANDOM_BOT}", timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = "".join(path.read_text() for path in (tmp_path / "bot-output").glob("slow~*.log"))
    assert re.search(
        r"the referee played \S+ for this seat: no answer within the deadline; answer within", said
    ), said[-2000:]
    assert "the referee played" not in "".join(
        path.read_text() for path in (tmp_path / "bot-output").glob("random~*.log")
    )


def _hint_of_a_bot_never_seated(address: str) -> str:
    """Run an SDK bot named ``zed`` (no match plans a seat for it) until it says what to check."""
    said: list[str] = []

    async def main() -> None:
        heard = asyncio.Event()

        class Hint(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.getMessage().startswith("no match yet"):
                    said.append(record.getMessage())
                    heard.set()

        hint = Hint()
        logging.getLogger("oddtrick.bot").addHandler(hint)
        options = ClientOptions(server=address, name="zed", token="", seats=1, unseated_hint_s=0.5)
        bot = asyncio.ensure_future(run_bot_async(SeededBot, options))
        try:
            await asyncio.wait_for(heard.wait(), GUARD_S)
        finally:
            bot.cancel()
            logging.getLogger("oddtrick.bot").removeHandler(hint)

    asyncio.run(main())
    return said[0]


async def test_a_bot_the_referee_never_seats_says_what_to_check(tmp_path: Path) -> None:
    """A wrong --name (or too few --seats) would wait forever with nothing said on the bot's side."""
    async with running_referee(RefereeSettings(port=0, data_dir=tmp_path)) as referee:
        hint = await in_thread(_hint_of_a_bot_never_seated, referee.address)
        referee.finish()
    assert "seats a bot by the name it expects (this one is 'zed')" in hint
    assert "this bot opened 1, --seats" in hint


class _EndsBadlyAfterOneMatch:
    """A referee stand-in on a real socket: one match started and ended, then the stream
    broken with INTERNAL, as a referee shutting down may end it."""

    def __init__(self) -> None:
        self.calls = 0
        self.server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
        handler = grpc.stream_stream_rpc_method_handler(
            self.play,
            request_deserializer=referee_pb2.BotMessage.FromString,
            response_serializer=referee_pb2.RefereeMessage.SerializeToString,
        )
        self.server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("oddtrick.v1.Referee", {"Play": handler}),)
        )
        self.port = self.server.add_insecure_port("127.0.0.1:0")

    def play(self, requests: Any, context: grpc.ServicerContext) -> Any:
        self.calls += 1
        next(requests)  # the Hello
        yield referee_pb2.RefereeMessage(welcome=referee_pb2.Welcome(session_id="s", resume_token="r"))
        config = config_to_wire(GameConfig.classic(format=MatchFormat.DEALS, deals=1))
        started = referee_pb2.MatchStarted(match_id="m-1", seat=cards_pb2.SEAT_NORTH, config=config)
        result = game_pb2.MatchResult(outcome=game_pb2.MATCH_OUTCOME_DRAW, seed="x")
        yield referee_pb2.RefereeMessage(
            update=referee_pb2.Update(
                events=[
                    referee_pb2.Event(sequence=1, match_started=started),
                    referee_pb2.Event(sequence=2, match_ended=result),
                ]
            )
        )
        next(requests, None)  # the Leave
        context.abort(grpc.StatusCode.INTERNAL, "shutting down")


def test_a_seat_whose_matches_are_played_does_not_reconnect_when_the_stream_then_breaks() -> None:
    """With --matches N played and Leave said, a stream that ends badly is the end: the bot
    used to connect again and wait, seatless, for a match that would never come."""
    referee = _EndsBadlyAfterOneMatch()
    referee.server.start()
    try:
        options = ClientOptions(
            server=f"127.0.0.1:{referee.port}", name="a", token="", seats=1, max_matches=1, reconnect_for_s=30
        )
        asyncio.run(asyncio.wait_for(run_bot_async(SeededBot, options), timeout=GUARD_S))
    finally:
        referee.server.stop(grace=None)
    assert referee.calls == 1
