"""Every local entry is walled off from the others and from the referee: attacked by an
entry that looks, next to a victim entry, for every way through the wall.

The attack this answers: under a root tournament every local entry ran as the one user
``nobody``, with no PID namespace; a ``cmd:`` entry listed every process of the machine,
read the victim's ``/proc/PID/environ``, took its ``ODDTRICK_TOKEN`` and was welcomed
under its name, and found the worker's ``PGPASSWORD`` in its own environment.

The two entries meet through named pipes in an open folder, so that the attacker looks
exactly while the victim runs, with no waiting on a clock: the victim writes to
``ready`` once started, the attacker reads it, looks, and writes its report to
``report``, which the test reads while the tournament (and its referee) still runs, so
that a stolen token can be tried in a ``Hello``.
"""

from __future__ import annotations

import io
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick.v1 import game_pb2, referee_pb2
from oddtrick_referee.competitions.entries import entrants, sandbox
from oddtrick_referee.competitions.entries.entrants import LAUNCHER, bot_identity, refusal_for
from oddtrick_referee.competitions.tournaments import tournament
from oddtrick_referee.competitions.tournaments.tournament import (
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules

GUARD_S = 90.0
"""Guards against a hang only."""
SECRETS = {
    "PGPASSWORD": "the-queue-password",
    "PGPORT": "5433",
    "PGUSER": "queue-user",
    "DATABASE_URL": "postgresql://oddtrick:the-queue-password@127.0.0.1/queue",
    "AWS_SECRET_ACCESS_KEY": "an-operator-secret",
}
"""What a worker's or an operator's environment holds, set in the referee's for the test."""

VICTIM = r"""
import signal, sys
with open(sys.argv[1], "w") as ready:  # (blocks until the attacker opens it)
    ready.write("ready\n")
signal.pause()  # alive, token in its environment, until the tournament stops it
"""

ATTACKER = r"""
import ctypes, os, signal, sys
ready, report, data, referee, victim = sys.argv[1:6]
with open(ready) as pipe:
    pipe.read()  # the victim is running now
data = data.split("=", 1)[1]
lines = ["uid %d" % os.getuid()]
lines += ["ENV %s=%s" % item for item in sorted(os.environ.items())]
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
for pid in sorted(int(name) for name in os.listdir("/proc") if name.isdigit()):
    if pid == me:
        continue
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as file:
            command = file.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        continue
    if "attacker.py" in command:
        continue  # its own (bubblewrap's first process, which started it)
    lines.append("SAW %d %s" % (pid, command))
    try:
        with open("/proc/%d/environ" % pid, "rb") as file:
            items = [item.decode("utf-8", "replace") for item in file.read().split(b"\0")]
        variables = dict(item.split("=", 1) for item in items if "=" in item)
    except OSError:
        variables = {}
    if variables.get("ODDTRICK_TOKEN") and variables.get("ODDTRICK_NAME") != os.environ.get("ODDTRICK_NAME"):
        lines.append("STOLEN %s %s" % (variables.get("ODDTRICK_NAME"), variables["ODDTRICK_TOKEN"]))
    try:
        os.kill(pid, 0)
        lines.append("SIGNALLED %d" % pid)
    except OSError:
        pass
    try:
        with open("/proc/%d/mem" % pid, "rb"):
            lines.append("OPENED MEMORY %d" % pid)
    except OSError:
        pass
    if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
        lines.append("TRACED %d" % pid)
        libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
try:
    lines.append("LISTED %s: %s" % (data, os.listdir(data)))
except OSError as error:
    lines.append("held %s: %s" % (data, error.strerror))
try:
    os.kill(int(referee), 0)
    lines.append("SIGNALLED THE REFEREE")
except OSError:
    pass
for path in (os.environ.get("HOME"), os.environ.get("TMPDIR")):
    try:
        with open(os.path.join(path, "mine"), "w") as file:
            file.write("mine")
        lines.append("WROTE %s" % path)
    except (OSError, TypeError) as error:
        lines.append("cannot write %s: %s" % (path, error))
lines.append("report done")
with open(report, "w") as pipe:
    pipe.write("\n".join(lines) + "\n")
signal.pause()  # stays, so the tournament (and its referee) runs while the report is read
"""


def _runnable_by_others(python: str, folder: Path) -> bool:
    identity = bot_identity(None)
    assert identity is not None
    return refusal_for([python, "-c", "pass"], folder, identity) is None


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are closed)."""
    folder = Path(tempfile.mkdtemp(prefix="oddtrick-walls-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def _python(kind: str, folder: Path) -> str:
    """The Python the two entries run with: the referee's own (on a machine where it lives
    under /root, the entries then run as root in bubblewrap), or one that other users can
    run (the entries then run as users of their own)."""
    if kind == "referee's":
        if not _runnable_by_others(sys.executable, folder) and sandbox.problem() is not None:
            pytest.skip(sandbox.problem() or "")
        return sys.executable
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        if Path(candidate).exists() and _runnable_by_others(candidate, folder):
            return candidate
    pytest.skip("no Python on this machine that other users may run")


def _hello(address: str, name: str, token: str) -> str:
    """What the referee answers a ``Hello`` as ``name`` with ``token``: ``welcome`` or a refusal."""
    hello = referee_pb2.Hello(
        bot_name=name,
        bot_version="thief",
        token=token,
        games=[game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT],
        protocol=referee_pb2.ProtocolVersion(name="oddtrick.v1"),
    )
    with grpc.insecure_channel(address) as channel:
        play = channel.stream_stream(
            "/oddtrick.v1.Referee/Play",
            request_serializer=referee_pb2.BotMessage.SerializeToString,
            response_deserializer=referee_pb2.RefereeMessage.FromString,
        )
        call = play(iter([referee_pb2.BotMessage(hello=hello)]))
        try:
            outcome = str(next(call).WhichOneof("kind"))
        except grpc.RpcError as error:
            outcome = error.code().name
        call.cancel()
    return outcome


def _read(path: Path) -> str:
    with path.open() as pipe:
        return pipe.read()


@pytest.mark.skipif(os.geteuid() != 0, reason="this attack is on a tournament run by root")
@pytest.mark.parametrize("kind", ["referee's", "open"])
async def test_an_entry_sees_no_other_entry_steals_no_token_and_gets_no_credentials(
    kind: str, open_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = _python(kind, open_folder)
    for key, value in SECRETS.items():
        monkeypatch.setenv(key, value)
    (open_folder / "victim.py").write_text(VICTIM)
    (open_folder / "attacker.py").write_text(ATTACKER)
    for pipe in ("ready", "report"):
        os.mkfifo(open_folder / pipe)
        (open_folder / pipe).chmod(0o666)
    data = open_folder / "data"
    monkeypatch.chdir(open_folder)  # a cmd: entry runs where the tournament was started
    settings = TournamentSettings(
        entries=(
            parse_entry(f"victim=cmd:{python} victim.py ready"),
            parse_entry(f"attacker=cmd:{python} attacker.py ready report data={data} {os.getpid()} x"),
        ),
        config=GameConfig.classic(),
        deals=1,
        set_size=1,
        tables=1,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed="walls",
        duplicate=False,
    )
    addresses: list[str] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: run_tournament(
                settings, data, progress_stream=io.StringIO(), on_listening=addresses.append
            )
        )
        with trio.fail_after(GUARD_S):
            report = await trio.to_thread.run_sync(_read, open_folder / "report", abandon_on_cancel=True)
        stolen = [line.split()[1:] for line in report.splitlines() if line.startswith("STOLEN ")]
        welcomed = []
        for name, token in stolen:
            outcome = await trio.to_thread.run_sync(_hello, addresses[0], name, token)
            if outcome == "welcome":
                welcomed.append(name)
        nursery.cancel_scope.cancel()
    assert "report done" in report, report
    seen = [line for line in report.splitlines() if line.startswith("SAW ")]
    assert seen == [], report
    assert stolen == [], report
    assert welcomed == []
    for word in ("SIGNALLED", "OPENED MEMORY", "TRACED", "LISTED"):
        assert word not in report, report
    variables = [line.split()[1].split("=", 1)[0] for line in report.splitlines() if line.startswith("ENV ")]
    assert not [name for name in variables if name.startswith("PG") or name in SECRETS], report
    for value in SECRETS.values():
        assert value not in report
    assert "ODDTRICK_TOKEN" in variables  # a cmd: entry's documented interface
    home = next(line for line in report.splitlines() if line.startswith("ENV HOME="))
    assert home != f"ENV HOME={os.environ.get('HOME')}"
    assert len([line for line in report.splitlines() if line.startswith("WROTE ")]) == 2, report


def _launch(
    python: str, user: int | None, script: str, arguments: list[str], hide: Path
) -> tuple[subprocess.Popen[bytes], int]:
    """A launcher, run as ``user`` (None: this process's), starting ``python SCRIPT…`` as a
    ``cmd:`` entry would be started; returns it and the referee's end of its watch pipe."""
    watch_read, watch_write = os.pipe()
    launcher = subprocess.Popen(
        [
            python,
            "-I",
            str(LAUNCHER),
            str(watch_read),
            "-",
            "--hide",
            str(hide),
            "--",
            python,
            script,
            *arguments,
        ],
        stdin=subprocess.PIPE,
        pass_fds=(watch_read,),
        env={**os.environ, **SECRETS, "ODDTRICK_NAME": Path(script).stem, "ODDTRICK_TOKEN_IN_ENV": "1"},
        cwd=Path(script).parent,
        user=user,
        group=user,
        extra_groups=[] if user is not None else None,
    )
    os.close(watch_read)
    assert launcher.stdin is not None
    launcher.stdin.write(f"token-of-{Path(script).stem}\n".encode())
    launcher.stdin.close()
    return launcher, watch_write


@pytest.mark.skipif(os.geteuid() != 0, reason="the test runs the referee's side as nobody, which takes root")
def test_run_as_an_ordinary_user_an_entry_sees_nothing_of_another(open_folder: Path) -> None:
    """A referee that is not root cannot give each bot a user of its own: the bots and the
    referee share one user, and only the user and PID namespaces wall them off."""
    python = _python("open", open_folder)
    nobody = pwd.getpwnam("nobody").pw_uid
    (open_folder / "victim.py").write_text(VICTIM)
    (open_folder / "attacker.py").write_text(ATTACKER)
    for pipe in ("ready", "report"):
        os.mkfifo(open_folder / pipe)
        (open_folder / pipe).chmod(0o666)
    data = open_folder / "data"  # open to every user: only the cover hides it
    data.mkdir(mode=0o755)
    (data / "oddtrick.sqlite3").write_text("the master seed\n")
    victim = _launch(python, nobody, str(open_folder / "victim.py"), ["ready"], data)
    # The referee's side, the victim's launcher, runs as the same user as the attacker.
    referee = str(victim[0].pid)
    arguments = ["ready", "report", f"data={data}", referee, "x"]
    started = [victim, _launch(python, nobody, str(open_folder / "attacker.py"), arguments, data)]
    try:
        report = _read(open_folder / "report")
    finally:
        for launcher, watch_write in started:
            os.close(watch_write)  # as when the referee ends: the launcher kills its bot
            assert launcher.wait(GUARD_S) == 137
    assert "report done" in report, report
    assert f"uid {nobody}" in report  # the referee's user: no other can be had
    for word in ("SAW ", "STOLEN", "SIGNALLED", "OPENED MEMORY", "TRACED", "LISTED"):
        assert word not in report, report
    for value in SECRETS.values():
        assert value not in report


def test_a_kernel_that_refuses_the_walls_is_found_and_no_bot_starts_without_them(tmp_path: Path) -> None:
    """Inside a sandbox that allows no user namespace, as a user that is not root: the
    launcher's check says why, and the launcher starts nothing unless told the referee
    warned of it (``--unwalled``)."""
    if sandbox.problem() is not None:
        pytest.skip(sandbox.problem() or "")
    closed = ["bwrap", "--unshare-user", "--disable-userns", "--uid", "1234", "--gid", "1234"]
    closed += [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(tmp_path),
        str(tmp_path),
    ]
    closed += ["--setenv", "TMPDIR", str(tmp_path), "--"]  # (where the launcher makes the bot's home)
    launcher = [*closed, sys.executable, "-I", str(LAUNCHER)]
    check = subprocess.run(
        [*launcher, "--check"], capture_output=True, text=True, timeout=GUARD_S, check=False
    )
    assert check.returncode == 1
    assert check.stderr.startswith("unshare: "), check.stderr  # the kernel's refusal, in its words
    for extra, status in (([], 127), (["--unwalled"], 0)):
        watch_read, watch_write = os.pipe()
        run = subprocess.run(
            [*launcher, str(watch_read), "-", *extra, "--", "sh", "-c", "echo started"],
            input=b"token\n", capture_output=True, pass_fds=(watch_read,), timeout=GUARD_S, check=False,
        )  # fmt: skip
        os.close(watch_read)
        os.close(watch_write)
        assert run.returncode == status, run.stderr
        assert (b"started" in run.stdout) == (status == 0)


def test_where_the_walls_cannot_stand_the_tournament_says_so_in_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(entrants, "walls_problem", lambda: "unshare: Operation not permitted")
    spec = entrants.BotProcess("a", "a", ("true",), {}, tmp_path, "t", tmp_path / "out.log")
    argv, _ = entrants.launch(spec, None, 5)
    assert "--unwalled" in argv[: argv.index("--")]
    settings = TournamentSettings(
        entries=(parse_entry("a=cmd:true"), parse_entry("b=cmd:true")),
        config=GameConfig.classic(),
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
    )
    _, warnings = tournament._identities(settings, None)
    unwalled = [line for line in warnings if "not walled off" in line]
    assert unwalled == [
        "warning: local entries are not walled off from each other (unshare: Operation not permitted): each "
        "can see, signal and trace the processes of the others running as its user, and read their "
        "environments and tokens; they still get only the allowlisted environment"
    ]
