"""The bot processes of the local entries, and the one way they start: the launcher.

Every bot process the referee starts (a tournament's, the ladder's house bots,
``oddtrick play``'s opponents, the conformance kit's candidate) starts through
:func:`run_bot_process` or :func:`popen_bot`, which run ``launcher.py``; the launcher
walls each bot off from every other process and from the referee (see its
docstring, and docs/security.md for what each way of running the referee gives):

- its own PID namespace and ``/proc``, ``no_new_privs``, the data folder covered;
- as root, a user id of its own (``--bot-user`` names one instead) that the
  referee's files are closed to; when that user cannot run the bot (checked before
  anything starts, see ``access.py``), root in a sandbox that root cannot leave
  (``sandbox.py``);
- an environment from an allowlist, a home and temporary folder of its own, its token
  through a pipe (``ODDTRICK_TOKEN_FD``; ``cmd:`` programs also get ``ODDTRICK_TOKEN``),
  and its entry's bot options, when it has some, in ``ODDTRICK_OPTIONS``;
- no path into the referee's data folder: it runs in its bot file's folder (a
  ``cmd:`` program in the folder the tournament was started from), its output reaches
  the data folder through a pipe the referee copies, and it inherits no other file
  descriptor;
- a life no longer than the referee's: the launcher kills the bot when the referee
  closes its end of a pipe or dies, even by SIGKILL;
- Python's safe-path mode (``python -P``) for SDK bots: a folder named ``oddtrick`` in
  its working folder cannot shadow the installed package.

A process that exits while the tournament still needs it raises
:class:`EntrantExited` at once, with its last lines of output.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import os
import pwd
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

import trio

from oddtrick_referee._exceptions import EntrantExited, OptionError
from oddtrick_referee.competitions.entries import access, sandbox
from oddtrick_referee.competitions.entries.access import Refusal, refusal

LAUNCHER = Path(__file__).with_name("launcher.py")
_KEPT_LINES = 40
_NO_ONE = 0x7FFFFFFF
"""The user and group id whose access is checked for bots that get ids of their own: no
file is theirs, so what counts is what any other user may do (the launcher draws them
below this)."""


@dataclasses.dataclass(frozen=True)
class Identity:
    """Who a bot process runs as when the referee is root: a user named with
    ``--bot-user``, or (``uid`` None) a user id of each process's own."""

    user: str
    """The user's name, or how messages name the users of their own."""
    uid: int | None = None
    gid: int | None = None


OWN = Identity("an unprivileged user")
"""Each bot process a user id of its own (the default when the referee is root)."""


def bot_identity(requested: str | None) -> Identity | None:
    """Who bot processes run as: ``requested``, or a user of each one's own when the
    referee is root; None (the referee's own user) otherwise. Raises OptionError for an
    unknown user."""
    if os.geteuid() != 0:
        return None
    if requested is None:
        return OWN
    try:
        entry = pwd.getpwnam(requested)
    except KeyError:
        raise OptionError(f"no user {requested!r} on this machine to run the bots as (--bot-user)") from None
    if entry.pw_uid == 0:
        return None
    return Identity(requested, entry.pw_uid, entry.pw_gid)


def refusal_for(command: Sequence[str], cwd: Path, identity: Identity) -> Refusal | None:
    """What stops ``identity`` from running ``command`` in ``cwd`` (see :mod:`.access`):
    its program, interpreter, files and the folders above them; None when nothing does."""
    uid = _NO_ONE if identity.uid is None else identity.uid
    gid = _NO_ONE if identity.gid is None else identity.gid
    return refusal(command, cwd, os.environ.get("PATH"), identity.user, uid, gid)


def identity_for(command: Sequence[str], cwd: Path) -> Identity | None:
    """Who runs an operator's own bot (a house bot, a kit's candidate, ``play``'s
    opponents): a user of its own as root, or root in the sandbox when that user cannot
    run it; the referee's user otherwise."""
    identity = bot_identity(None)
    if identity is not None and refusal_for(command, cwd, identity) is not None:
        return None
    return identity


@functools.cache
def walls_problem() -> str | None:
    """Why the launcher cannot wall bots off on this machine (the kernel's refusal), or
    None. It tries, once, so that a kernel or container that forbids the namespaces is
    found at start and said in one warning."""
    try:
        trial = subprocess.run(
            [sys.executable, "-I", str(LAUNCHER), "--check"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the launcher did not start ({error})"
    if trial.returncode == 0:
        return None
    return (trial.stderr.strip().splitlines() or [f"status {trial.returncode}"])[-1]


def walls_warning() -> str | None:
    """The one line that says what is not walled off here, or None when all is."""
    problem = walls_problem()
    if problem is None:
        return None
    return (
        f"warning: local entries are not walled off from each other ({problem}): each can "
        "see, signal and trace the processes of the others running as its user, and read "
        "their environments and tokens; they still get only the allowlisted environment"
    )


@dataclasses.dataclass(frozen=True)
class BotProcess:
    """One process to run for a local entry (one per play of a duplicate deal)."""

    entry: str
    name: str
    """The bot name it connects as."""
    command: tuple[str, ...]
    env: Mapping[str, str]
    """Its ``ODDTRICK_*`` variables; the launcher adds the allowlisted rest, nothing else."""
    cwd: Path
    token: str
    output: Path
    """Where its standard output and error are copied."""
    token_in_env: bool = False
    hide: tuple[Path, ...] = ()
    """What the bot must not see: the referee's data folder (covered in its mount
    namespace, and in the sandbox when it runs as root there)."""


def launch(spec: BotProcess, identity: Identity | None, watch_fd: int) -> tuple[list[str], dict[str, str]]:
    """The launcher's command line and environment for ``spec`` run as ``identity``."""
    command = spec.command
    if identity is None and os.geteuid() == 0 and sandbox.problem() is None:
        needs = [need.path for need in access.needs(command, spec.cwd, os.environ.get("PATH"))]
        command = sandbox.sandboxed(command, spec.cwd, needs, spec.hide)
    user = "-"
    if identity is not None:
        user = "own" if identity.uid is None else f"{identity.uid}:{identity.gid}"
    argv = [sys.executable, "-I", str(LAUNCHER), str(watch_fd), user]
    for path in spec.hide:
        argv += ["--hide", str(path)]
    if walls_problem() is not None:
        argv.append("--unwalled")  # (warned of at start: walls_warning)
    env = {key: value for key, value in os.environ.items() if not key.startswith("ODDTRICK_")}
    env.update(spec.env)
    if spec.token_in_env:
        env["ODDTRICK_TOKEN_IN_ENV"] = "1"
    return [*argv, "--", *command], env


def popen_bot(
    spec: BotProcess, identity: Identity | None, watch_fd: int, output: IO[bytes]
) -> subprocess.Popen[bytes]:
    """Start ``spec`` through the launcher, for a caller without trio (the conformance
    kit): its output goes to ``output``, its token is sent; the caller closes its end of
    the watch pipe to stop it."""
    argv, env = launch(spec, identity, watch_fd)
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=spec.cwd,
        stdin=subprocess.PIPE,
        stdout=output,
        stderr=subprocess.STDOUT,
        pass_fds=(watch_fd,),
        start_new_session=True,
    )
    assert process.stdin is not None
    with contextlib.suppress(OSError):
        process.stdin.write(spec.token.encode("utf-8") + b"\n")
        process.stdin.close()
    return process


async def run_bot_process(
    spec: BotProcess, identity: Identity | None, exit_expected: Callable[[], bool]
) -> None:
    """Run ``spec`` until cancelled; raise :class:`EntrantExited` if it ends by itself
    before ``exit_expected()`` says the tournament no longer needs it."""
    watch_read, watch_write = os.pipe()
    try:
        argv, env = launch(spec, identity, watch_read)
        process = await trio.lowlevel.open_process(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(watch_read,),
            env=env,
            cwd=spec.cwd,
            start_new_session=True,  # Ctrl-C reaches the referee, which stops the bots itself
        )
    except BaseException:
        os.close(watch_write)
        raise
    finally:
        os.close(watch_read)
    tail: collections.deque[str] = collections.deque(maxlen=_KEPT_LINES)
    try:
        assert process.stdin is not None
        assert process.stdout is not None
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await process.stdin.send_all(spec.token.encode("utf-8") + b"\n")
        await process.stdin.aclose()
        await _copy_output(process.stdout, spec.output, tail)
        status = await process.wait()
        if not exit_expected():
            raise EntrantExited(spec.entry, spec.name, status, list(tail), spec.output)
    finally:
        os.close(watch_write)  # the launcher kills the bot and exits
        with trio.CancelScope(shield=True):
            with trio.move_on_after(5):
                await process.wait()
            if process.returncode is None:
                process.kill()
                await process.wait()


CHECK_S = 60.0
"""How long a bot process may take to answer ``--check-options`` (it only loads its file)."""


async def check_bot_process(spec: BotProcess, identity: Identity | None) -> tuple[int, list[str]]:
    """Run ``spec`` to its end behind the same walls as a bot (a bot file's
    ``--check-options``, before anything is played): its exit status and its last lines of
    output; 124 and a line saying so when it did not end within :data:`CHECK_S`."""
    watch_read, watch_write = os.pipe()
    try:
        argv, env = launch(spec, identity, watch_read)
        with trio.move_on_after(CHECK_S):
            done = await trio.run_process(
                argv,
                stdin=spec.token.encode("utf-8") + b"\n",
                capture_stdout=True,
                stderr=subprocess.STDOUT,
                check=False,
                pass_fds=(watch_read,),
                env=env,
                cwd=spec.cwd,
                start_new_session=True,
            )
            lines = done.stdout.decode("utf-8", "replace").splitlines()
            return done.returncode, [line.strip() for line in lines if line.strip()][-_KEPT_LINES:]
        return 124, [f"it did not answer within {CHECK_S:g} s"]
    finally:
        os.close(watch_read)
        os.close(watch_write)


async def _copy_output(stream: trio.abc.ReceiveStream, path: Path, tail: collections.deque[str]) -> None:
    """Copy the bot's output to its log as it comes, keeping its last non-empty lines."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    pending = b""
    with path.open("ab") as log:
        while chunk := await stream.receive_some(65536):
            log.write(chunk)
            log.flush()
            pending += chunk
            *lines, pending = pending.split(b"\n")
            tail.extend(text for line in lines if (text := line.decode("utf-8", "replace").strip()))
            pending = pending[-4096:]
        if pending.strip():
            tail.append(pending.decode("utf-8", "replace").strip())
