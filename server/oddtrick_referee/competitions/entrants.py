"""The bot processes a tournament starts for its local entries.

What a local entry's process gets, and what it does not:

- no path into the referee's data folder: it runs in its bot file's folder
  (a ``cmd:`` program in the folder the tournament was started from), its
  output reaches the data folder through a pipe the referee copies, and it
  inherits no other file descriptor;
- its token through a pipe (``ODDTRICK_TOKEN_FD``; ``cmd:`` programs also get
  ``ODDTRICK_TOKEN``), never on a command line that every user can read;
- when the referee runs as root, the identity of an unprivileged user
  (``nobody`` unless ``--bot-user`` says otherwise), which cannot read the
  referee's files (the database and logs are the referee's user's only); when
  that user cannot run the bot (checked before anything starts, see
  ``access.py``), root in a sandbox that root cannot leave (``sandbox.py``);
- a life no longer than the referee's: a launcher (``launcher.py``) kills the
  bot when the referee closes its end of a pipe or dies, even by SIGKILL;
- Python's safe-path mode (``python -P``): a folder named ``oddtrick`` in its
  working folder cannot shadow the installed package.

A process that exits while the tournament still needs it raises
:class:`EntrantExited` at once, with its last lines of output.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import pwd
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import trio

from oddtrick_referee._exceptions import EntrantExited
from oddtrick_referee.competitions import access, sandbox
from oddtrick_referee.competitions.access import Refusal, refusal

LAUNCHER = Path(__file__).with_name("launcher.py")
_KEPT_LINES = 40


@dataclasses.dataclass(frozen=True)
class Identity:
    """The unprivileged user and group a bot process runs as."""

    user: str
    uid: int
    gid: int


def bot_identity(requested: str | None) -> Identity | None:
    """Who bot processes run as: ``requested``, or ``nobody`` when the referee is root;
    None (the referee's own user) otherwise. Raises ValueError for an unknown user."""
    if os.geteuid() != 0:
        return None
    name = requested or "nobody"
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise ValueError(f"no user {name!r} on this machine to run the bots as (--bot-user)") from None
    if entry.pw_uid == 0:
        return None
    return Identity(name, entry.pw_uid, entry.pw_gid)


def refusal_for(command: Sequence[str], cwd: Path, identity: Identity) -> Refusal | None:
    """What stops ``identity`` from running ``command`` in ``cwd`` (see :mod:`.access`):
    its program, interpreter, files and the folders above them; None when nothing does."""
    return refusal(command, cwd, os.environ.get("PATH"), identity.user, identity.uid, identity.gid)


@dataclasses.dataclass(frozen=True)
class BotProcess:
    """One process to run for a local entry (one per play of a duplicate deal)."""

    entry: str
    name: str
    """The bot name it connects as."""
    command: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    token: str
    output: Path
    """Where its standard output and error are copied."""
    token_in_env: bool = False
    hide: tuple[Path, ...] = ()
    """What the bot must not see when it runs as root in the sandbox (see :mod:`.sandbox`),
    should it fall inside a path the bot is shown: the referee's data folder. What is not
    on the bot's command line is not in its sandbox at all."""


async def run_bot_process(
    spec: BotProcess, identity: Identity | None, exit_expected: Callable[[], bool]
) -> None:
    """Run ``spec`` until cancelled; raise :class:`EntrantExited` if it ends by itself
    before ``exit_expected()`` says the tournament no longer needs it."""
    command = spec.command
    env = dict(spec.env)
    if identity is None and os.geteuid() == 0 and sandbox.problem() is None:
        needs = [need.path for need in access.needs(command, spec.cwd, env.get("PATH"))]
        command = sandbox.sandboxed(command, spec.cwd, needs, spec.hide)
    watch_read, watch_write = os.pipe()
    if spec.token_in_env:
        env["ODDTRICK_TOKEN_IN_ENV"] = "1"
    ids = ["-", "-"]
    if identity is not None:
        ids = [str(identity.uid), str(identity.gid)]
        env["HOME"] = str(spec.cwd)
    try:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-I", str(LAUNCHER), str(watch_read), *ids, "--", *command],
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
