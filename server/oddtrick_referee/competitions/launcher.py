"""Starts one local tournament entry's bot and ties its life to the referee's.

Run by the referee as ``python -I launcher.py WATCH_FD UID GID -- COMMAND…``
(standard library only, so it starts fast and imports nothing from the folder
it runs in). It runs as the referee's user; the bot runs as ``UID``/``GID``
with no supplementary groups (``-`` for both: the referee's user too). It
reads the bot's token from its standard input and hands it on through a pipe
(``ODDTRICK_TOKEN_FD``), never on a command line, where every user of the
machine could read it; with ``ODDTRICK_TOKEN_IN_ENV=1`` (programs started
with ``cmd:``, whose documented interface it is) also as ``ODDTRICK_TOKEN``.

``WATCH_FD`` is the read end of a pipe whose write end only the referee holds:
when the referee dies, even by SIGKILL, the kernel closes it, the launcher
reads end-of-file and kills the bot's whole process group. The bot also gets
the parent-death signal, should the launcher itself be killed. The launcher
exits with the bot's status.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the bot, between fork and exec (the launcher has one thread then)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: launcher.py WATCH_FD UID GID -- COMMAND...", file=sys.stderr)
        return 2
    watch_fd = int(argv[0])
    user = group = None
    extra_groups: list[int] | None = None
    if argv[1] != "-":
        user, group, extra_groups = int(argv[1]), int(argv[2]), []
    command = argv[4:]
    token = sys.stdin.readline().rstrip("\n")
    env = dict(os.environ)
    read_end, write_end = os.pipe()
    os.write(write_end, token.encode("utf-8"))
    os.close(write_end)
    env["ODDTRICK_TOKEN_FD"] = str(read_end)
    if env.pop("ODDTRICK_TOKEN_IN_ENV", "") == "1":
        env["ODDTRICK_TOKEN"] = token
    try:
        bot = subprocess.Popen(
            command,
            env=env,
            stdin=subprocess.DEVNULL,
            pass_fds=(read_end,),
            start_new_session=True,
            # Run after the change of user, which would clear the parent-death signal.
            preexec_fn=_die_with_parent,
            user=user,
            group=group,
            extra_groups=extra_groups,
        )
    except OSError as error:
        who = f" as user id {user}" if user is not None else ""
        print(f"cannot start {command[0]!r}{who}: {error.strerror or error}", file=sys.stderr)
        return 127
    os.close(read_end)

    def stop(signum: int, frame: object) -> None:
        _kill_group(bot.pid)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def watch() -> None:
        # Blocks until the referee closes its end or dies: either way, the bot goes.
        while os.read(watch_fd, 64):
            pass
        _kill_group(bot.pid)
        os._exit(137)

    threading.Thread(target=watch, daemon=True).start()
    status: int = bot.wait()
    _kill_group(bot.pid)  # anything the bot left behind in its group
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
