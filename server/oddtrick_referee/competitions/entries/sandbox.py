"""The sandbox for local bots that must run as root, made with bubblewrap.

When the referee runs as root and the unprivileged user cannot run a bot's program
(a Python installed under /root, say), the bot runs as root too, and file modes do not
stop root. A mount and PID namespace alone do not hold it either: root keeps
CAP_SYS_ADMIN there, unmounts whatever covers the data folder and mounts the host's
/proc again. So the bot runs under bubblewrap (``bwrap``, Debian's ``bubblewrap``), the
sandbox Flatpak is built on, maintained and reviewed for exactly this, instead of a
hand-made sequence of namespace calls:

- a user namespace of its own, created after the mounts are made, so that the kernel
  locks them (``--unshare-user``), and no further user namespaces (``--disable-userns``);
- every capability dropped, bounding set included, and ``no_new_privs``: no umount, no
  remount, no ptrace beyond its own processes, no privilege back through a set-uid
  program;
- a PID namespace with its own /proc (the referee and the other bots do not exist:
  no command lines, environments or open files to borrow), a fresh /dev and IPC;
- a file system that holds only what an unprivileged user would see of the system
  (``/usr``, ``/etc`` and the like, read-only, with /etc/shadow and private keys
  covered) and the paths its command line needs (its folder, its program and
  interpreter, Python's installation and the SDK; a path named through a symbolic link
  both where the link leads and at its name), all read-only, with the referee's
  data folder covered by an empty, inaccessible file system wherever it falls; and a
  private, writable ``/tmp``;
- the network shared, since the bot talks to the referee over loopback; and no life
  beyond its launcher's (``--die-with-parent``), and a session of its own
  (``--new-session``: no terminal to push keystrokes into);
- a home and temporary folder in that private ``/tmp``; the environment is the
  launcher's allowlist (``launcher.py``), which the sandbox passes on.

nsjail would do as well but needs a configuration language for the same result;
bubblewrap is one small program with the options above on its command line.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import oddtrick

INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
"""What to do when the sandbox is missing, in the words of one line."""
_SYSTEM = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt")
"""The top-level folders an unprivileged user reads on any machine."""
_COVERED = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-", "/etc/sudoers")
_COVERED_FOLDERS = ("/etc/ssl/private", "/etc/ssh", "/etc/sudoers.d")
"""What root's owner bits would show a root bot in those folders, and nobody else."""
_NAMESPACES = (
    "--unshare-user",
    "--disable-userns",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)


@functools.cache
def problem() -> str | None:
    """Why no sandbox can be made on this machine (one clause saying what to do), or None.
    It tries one, so a kernel or container that forbids namespaces is found at start."""
    program = shutil.which("bwrap")
    if program is None:
        return f"bubblewrap is not installed: {INSTALL}"
    try:
        trial = subprocess.run(
            [program, *_NAMESPACES, *_system_view(), "--proc", "/proc", "--dev", "/dev", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap did not start ({error})"
    if trial.returncode != 0:
        said = (trial.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"bubblewrap cannot make a sandbox here ({said})"
    return None


def sandboxed(
    command: Sequence[str], cwd: Path, needs: Iterable[Path], hide: Iterable[Path]
) -> tuple[str, ...]:
    """``command`` run in ``cwd`` inside the sandbox, seeing the system, ``needs`` and the
    Python that runs bots (read-only), with each path of ``hide`` covered."""
    program = shutil.which("bwrap") or "bwrap"
    needs = list(needs)  # read twice: for what is shown, and for the names of links
    shown = sorted(
        {_real(path) for path in [cwd, *needs, *python_paths()] if path.exists()} - {Path("/")},
        key=lambda path: len(path.parts),  # a folder before what is inside it
    )
    arguments: list[str] = [program, *_NAMESPACES, *_system_view()]
    arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/tmp/home"]
    # Its home and temporary folder are its own: the sandbox's /tmp, which nothing else sees.
    arguments += ["--setenv", "HOME", "/tmp/home", "--setenv", "TMPDIR", "/tmp"]
    visible = [Path("/", name) for name in _SYSTEM]
    for path in shown:
        if not _inside(path, visible):  # (/tmp is not: it is the sandbox's own)
            arguments += ["--ro-bind", str(path), str(path)]
            visible.append(path)
    for named in _linked_elsewhere(needs, visible):
        arguments += ["--ro-bind", str(_real(named)), str(named)]
        visible.append(named)
    for secret in sorted({_real(path) for path in hide if path.exists()}):
        if _inside(secret, visible):  # elsewhere it does not exist in the sandbox at all
            arguments += _cover(secret)
    arguments += ["--remount-ro", "/", "--chdir", str(_real(cwd)), "--", *command]
    return tuple(arguments)


def python_paths() -> list[Path]:
    """What the Python that runs bots needs: its installation, its environment, every
    folder on its path and the SDK package (an editable install points outside them)."""
    paths = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable)]
    # Not the referee's working folder (``python -m`` puts it first): bots run in safe-path
    # mode, and it may be a home folder with much else in it.
    paths += [Path(entry) for entry in sys.path if entry and Path(entry) != Path.cwd()]
    paths.append(Path(oddtrick.__file__).parent)
    return paths


def _system_view() -> list[str]:
    arguments: list[str] = []
    for name in _SYSTEM:
        path = Path("/", name)
        if path.is_symlink():
            arguments += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            arguments += ["--ro-bind", str(path), str(path)]
    for secret in _COVERED_FOLDERS + _COVERED:
        if Path(secret).exists():
            arguments += _cover(Path(secret))
    return arguments


def _cover(path: Path) -> list[str]:
    if path.is_dir():
        return ["--perms", "0000", "--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def _linked_elsewhere(needs: Iterable[Path], visible: list[Path]) -> list[Path]:
    """The paths a command line names through a symbolic link (``bot.py`` a link to
    ``../real/bot.py``) whose name the sandbox would not hold: what they lead to is shown
    where it is, and must be shown at the name too, or the bot finds no file there."""
    named = {Path(os.path.abspath(path)) for path in needs if path.exists()}
    linked = [path for path in named if path != _real(path) and not _inside(path, visible)]
    return sorted(linked, key=lambda path: len(path.parts))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == folder or path.is_relative_to(folder) for folder in folders)
