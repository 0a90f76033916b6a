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
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick.v1 import game_pb2, referee_pb2
from oddtrick_referee.competitions import sandbox
from oddtrick_referee.competitions.entrants import bot_identity, refusal_for
from oddtrick_referee.competitions.tournament import TournamentSettings, parse_entry, run_tournament
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
