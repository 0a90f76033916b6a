"""Starts one local entry's bot behind its walls and ties its life to the referee's.

Run by the referee as
``python -I launcher.py WATCH_FD USER [--hide PATH]... [--unwalled] -- COMMAND…``
(standard library only, so it starts fast and imports nothing from the folder it runs
in), and nowhere else: every bot process of the referee starts here, so that what walls
a bot off is decided in one place. ``USER`` is ``own`` (root only: a user id of the bot's
own, from a range no account uses, with no supplementary groups), ``UID:GID`` (a named
user, ``--bot-user``) or ``-`` (the launcher's own user).

The walls, whatever user the referee runs as:

- a PID namespace of its own, with its own ``/proc``: the bot cannot see, signal, trace
  or read the environment of any process but its own, the referee's and the other
  entries' included, since it cannot even name them; a bot that asks the kernel for a
  new ``/proc`` gets one showing its own processes again;
- a mount namespace in which each ``--hide`` path (the referee's data folder) is covered
  by an empty file system no one may enter; without the capabilities to unmount it
  (a bot is never root in it: as root the launcher changes the user, as another user
  the mounts are made in a user namespace whose root the bot is not, so the kernel
  clears its capabilities when it runs the bot, and locks the mounts for any namespace
  it makes below);
- ``no_new_privs``: no set-user-id program gives a bot root back;
- when the launcher is root, a user id of its own (``own``): files other users cannot
  read, it cannot read, and two entries cannot reach each other's files;
- an environment built from an allowlist (:data:`PASSED`, the locale variables) rather
  than the referee's less some names: nothing of a database's password, a cloud's keys
  or anything else the referee or a worker runs with; besides it only the bot's options
  (:data:`OPTIONS`), which the referee sets for the bot from its entry's command line.
  ``HOME`` and ``TMPDIR`` are a folder of the bot's own (mode 0700, removed when it ends);
- the token through a pipe (``ODDTRICK_TOKEN_FD``), never on a command line; with
  ``ODDTRICK_TOKEN_IN_ENV=1`` (``cmd:`` programs, whose documented interface it is) also
  as ``ODDTRICK_TOKEN``, which only its own processes can read.

Where the kernel refuses the namespaces, the launcher refuses to start the bot unless
``--unwalled`` says that the referee has warned of it. ``--check`` makes the walls around
``true`` and says what stops them, for the referee to find at start.

``WATCH_FD`` is the read end of a pipe whose write end only the referee holds: when the
referee dies, even by SIGKILL, the kernel closes it, the launcher reads end-of-file and
kills the bot's whole process group (its namespace goes with its first process). The bot
also gets the parent-death signal, should the launcher itself be killed. The launcher
exits with the bot's status.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable

PASSED = ("PATH", "LANG", "LANGUAGE", "TERM", "TZ", "ODDTRICK_SERVER", "ODDTRICK_NAME", "ODDTRICK_SEATS")
"""The variables a bot gets from the referee's environment, with the locale's ``LC_*``."""
OPTIONS = "ODDTRICK_OPTIONS"
"""The bot's options (``option.NAME=VALUE`` after its entry), a JSON object: the one variable
besides :data:`PASSED`, set by the referee for this bot alone (the referee's own environment's
``ODDTRICK_*`` never reach the launcher), passed as it is."""
OWN_UIDS = (0x40000000, 0x7FFF0000)
"""Where a bot's own user id is drawn from (no account on a usual machine is there)."""
USAGE = "usage: launcher.py WATCH_FD own|UID:GID|- [--hide PATH]... [--unwalled] -- COMMAND..."

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWPID = 0x20000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38


@dataclasses.dataclass(frozen=True)
class Plan:
    """What the command line asks for."""

    watch_fd: int
    user: str
    hide: tuple[str, ...]
    unwalled: bool
    command: tuple[str, ...]


def parse(argv: list[str]) -> Plan | None:
    """The plan of ``argv``, or None when it is not one."""
    if "--" not in argv or len(argv) < 4:
        return None
    head, command = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    if len(head) < 2 or not head[0].isdigit() or not command:
        return None
    if head[1] == "own" and os.geteuid() != 0:
        return None  # only root can give a bot a user id of its own
    hide: list[str] = []
    unwalled = False
    rest = head[2:]
    while rest:
        word = rest.pop(0)
        if word == "--hide" and rest:
            hide.append(rest.pop(0))
        elif word == "--unwalled":
            unwalled = True
        else:
            return None
    return Plan(int(head[0]), head[1], tuple(hide), unwalled, tuple(command))


def _libc_call(name: str, *arguments: object) -> None:
    """Call a C library function as the ``os`` module would: its failure is an OSError
    (the kernel's refusal, named after the call), which ends the launch with that line."""
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(*arguments) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{name}: {os.strerror(error)}")


def _unshare(flags: int) -> None:
    _libc_call("unshare", ctypes.c_int(flags))


def _mount(source: str, target: str, kind: str | None, flags: int, data: str | None = None) -> None:
    def text(value: str | None) -> bytes | None:
        return None if value is None else value.encode()

    _libc_call("mount", text(source), text(target), text(kind), ctypes.c_ulong(flags), text(data))


def _prctl(option: int, value: int) -> None:
    unused = ctypes.c_ulong(0)
    _libc_call("prctl", ctypes.c_int(option), ctypes.c_ulong(value), unused, unused, unused)


def own_uid() -> int:
    """A user id no account and no running process has, for one bot."""
    taken = set()
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    taken.add(os.stat(f"/proc/{name}").st_uid)
    import pwd  # (after the scan: only root runs this)

    while True:
        uid = random.randrange(*OWN_UIDS)
        if uid in taken:
            continue
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid


def _ids(user: str) -> tuple[int, int] | None:
    """The user and group ids the bot runs as, or None for the launcher's own."""
    if user == "-":
        return None
    if user == "own":
        uid = own_uid()
        return uid, uid
    named, _, group = user.partition(":")
    return int(named), int(group)


def enter_namespaces() -> None:
    """In the launcher, before it starts the bot: its next child is the first process of
    a PID namespace of its own (in a user namespace of its own, for a user not root)."""
    if os.geteuid() == 0:
        _unshare(_CLONE_NEWPID)
        return
    uid, gid = os.geteuid(), os.getegid()
    _unshare(_CLONE_NEWUSER | _CLONE_NEWPID)
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w", encoding="ascii") as file:
            file.write(text)


def inside(hide: tuple[str, ...], ids: tuple[int, int] | None) -> None:
    """In the bot's process, between fork and exec (its PID namespace's first process):
    its own mounts, its own /proc, the hidden paths covered, then its user and no way
    back to more privileges."""
    _unshare(_CLONE_NEWNS)
    _mount("none", "/", None, _MS_REC | _MS_PRIVATE)
    _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
    for path in hide:
        _mount("tmpfs", path, "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, "mode=000,size=4k")
    if ids is not None:
        become(ids)
    else:
        _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def become(ids: tuple[int, int]) -> None:
    """Change to the bot's user and group, no other groups, and no way back up."""
    os.setgroups([])
    os.setgid(ids[1])
    os.setuid(ids[0])
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def _die_with_parent() -> None:
    """After the change of user, which clears the parent-death signal."""
    with contextlib.suppress(OSError):
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def environment(given: dict[str, str], home: str, token: str, token_fd: int) -> dict[str, str]:
    """The bot's environment: the allowlisted variables of ``given``, its own folder, its token."""
    env = {key: value for key, value in given.items() if key in PASSED or key.startswith("LC_")}
    if OPTIONS in given:
        env[OPTIONS] = given[OPTIONS]
    env.update(HOME=home, TMPDIR=home, ODDTRICK_TOKEN_FD=str(token_fd))
    if given.get("ODDTRICK_TOKEN_IN_ENV") == "1":
        env["ODDTRICK_TOKEN"] = token
    return env


def _private_folder(ids: tuple[int, int] | None) -> str:
    folder = tempfile.mkdtemp(prefix="oddtrick-bot-")
    if ids is not None:
        os.chown(folder, *ids)
    return folder


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def start(plan: Plan, token: str) -> tuple[subprocess.Popen[bytes], Callable[[], None]]:
    """Start the bot behind its walls; returns it and what cleans up after it."""
    ids = _ids(plan.user)
    walled = True
    try:
        enter_namespaces()
    except OSError:
        if not plan.unwalled:
            raise  # the referee did not warn of it: no bot without its walls
        walled = False
    home = _private_folder(ids)
    read_end, write_end = os.pipe()
    os.write(write_end, token.encode("utf-8"))
    os.close(write_end)
    # (A folder not there yet cannot be covered; the referee makes its data folder first.)
    hide = tuple(os.path.realpath(path) for path in plan.hide if os.path.isdir(path))

    def prepare() -> None:
        try:
            if walled:
                inside(hide, ids)
            elif ids is not None:
                become(ids)
        except OSError as error:  # said here: Popen reports only that preexec_fn failed
            os.write(2, f"cannot wall the bot off: {error}\n".encode())
            raise
        _die_with_parent()

    def clean() -> None:
        shutil.rmtree(home, ignore_errors=True)

    try:
        bot = subprocess.Popen(
            plan.command,
            env=environment(dict(os.environ), home, token, read_end),
            stdin=subprocess.DEVNULL,
            pass_fds=(read_end,),
            start_new_session=True,
            preexec_fn=prepare,
        )
    except BaseException:
        clean()
        raise
    finally:
        os.close(read_end)
    return bot, clean


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        return check()
    plan = parse(argv)
    if plan is None:
        print(USAGE, file=sys.stderr)
        return 2
    token = sys.stdin.readline().rstrip("\n")
    try:
        bot, clean = start(plan, token)
    except (OSError, subprocess.SubprocessError) as error:
        said = getattr(error, "strerror", None) or error
        print(f"cannot start {plan.command[0]!r}: {said}", file=sys.stderr)
        return 127

    def stop(signum: int, frame: object) -> None:
        _kill_group(bot.pid)
        clean()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not wait_for(bot, plan.watch_fd):
        _kill_group(bot.pid)  # the referee closed its end or died: the bot goes
        clean()
        return 137
    status: int = bot.wait()
    _kill_group(bot.pid)  # anything the bot left behind in its group
    clean()
    return status if status >= 0 else 128 - status


def wait_for(bot: subprocess.Popen[bytes], watch_fd: int) -> bool:
    """Wait until the bot exits (True) or the referee's end of the watch pipe closes (False).

    Without a thread: a process that made a PID namespace for its children can start no
    thread of its own, so the launcher waits on both at once with ``select``, on the
    bot's pidfd, or checking on the bot twice a second where the kernel has none."""
    try:
        handle: int | None = os.pidfd_open(bot.pid)
    except (OSError, AttributeError):
        handle = None
    try:
        while True:
            watched = [watch_fd] if handle is None else [watch_fd, handle]
            ready, _, _ = select.select(watched, [], [], 0.5 if handle is None else None)
            if watch_fd in ready and not os.read(watch_fd, 64):
                return False
            if (handle is not None and handle in ready) or (handle is None and bot.poll() is not None):
                return True
    finally:
        if handle is not None:
            os.close(handle)


def check() -> int:
    """Make the walls around ``true``: 0 when they stand, else 1 and the reason on stderr."""
    read_end, write_end = os.pipe()
    os.close(write_end)
    plan = Plan(read_end, "own" if os.geteuid() == 0 else "-", (), False, ("true",))
    try:
        bot, clean = start(plan, "")
    except (OSError, subprocess.SubprocessError) as error:
        print(getattr(error, "strerror", None) or error, file=sys.stderr)
        return 1
    status = bot.wait()
    clean()
    if status != 0:
        print(f"a walled-off process exited with status {status}", file=sys.stderr)
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
