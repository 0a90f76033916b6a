"""What a bot's command line needs from the file system, and whether another user has it.

A tournament run by root starts its local entries as an unprivileged user. Whether
that user can run an entry is decided before anything starts, from every part of the
command line that matters, so that a closed folder is one clear line at start rather
than a ``PermissionError`` or a status 126 in the middle of a tournament:

- the folder the bot runs in (it must be able to enter it);
- the program, found on PATH as the kernel would, and, for a script, its ``#!``
  interpreter (through ``/usr/bin/env``) and the script itself (an interpreter must
  read it);
- each argument that names an existing file or folder (the bot file of an SDK entry,
  ``sh run.sh``, ``java -jar bot.jar``), with the folders above it;
- in a shell script, the programs it names by path or after ``exec`` (a script that
  execs a Python closed to other users would otherwise fail only at run time).

The same list tells the root sandbox (:mod:`.sandbox`) which paths to show the bot.
"""

from __future__ import annotations

import dataclasses
import enum
import grp
import os
import pwd
import shlex
import shutil
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})
_MAX_DEPTH = 4
"""How many scripts deep (a script that execs a script…) the programs are followed."""
_SCRIPT_BYTES = 65536
"""How much of a shell script is read for the programs it names."""


class Access(enum.IntFlag):
    """What a user needs on a path: the r and x permission bits of its owner."""

    READ = stat.S_IRUSR
    RUN = stat.S_IXUSR


@dataclasses.dataclass(frozen=True)
class Need:
    """One path a command needs, as named (absolute), and what it needs of it."""

    path: Path
    access: Access


def needs(command: Sequence[str], cwd: Path, path_env: str | None) -> list[Need]:
    """Every path ``command`` (run in ``cwd``, programs looked up on ``path_env``) needs."""
    found: dict[Path, Access] = {cwd: Access.RUN}
    for need in _command(command, cwd, path_env, 0):
        found[need.path] = found.get(need.path, Access(0)) | need.access
    return [Need(path, access) for path, access in found.items()]


def _command(command: Sequence[str], cwd: Path, path_env: str | None, depth: int) -> Iterator[Need]:
    if not command or depth > _MAX_DEPTH:
        return
    program = _program(command[0], cwd, path_env)
    if program is None:
        return  # unknown: starting it says why
    yield from _program_needs(program, cwd, path_env, depth)
    shell = program.name in _SHELLS or Path(os.path.realpath(program)).name in _SHELLS
    script_seen = False
    if shell and len(command) > 2 and command[1] == "-c":  # `sh -c 'exec python bot.py'`
        yield from _lines(command[2], cwd, path_env, depth + 1)
    for argument in command[1:]:
        path = _existing(argument, cwd)
        if path is None:
            continue
        yield Need(path, Access.RUN if path.is_dir() else Access.READ)
        if shell and not script_seen and path.is_file():
            script_seen = True  # `sh run.sh`: the script's own programs count
            yield from _script(path, cwd, path_env, depth + 1)


def _program_needs(program: Path, cwd: Path, path_env: str | None, depth: int) -> Iterator[Need]:
    yield Need(program, Access.RUN)
    interpreter = _shebang(program)
    if interpreter is None:
        return
    yield Need(program, Access.READ)  # an interpreter reads the script it runs
    if Path(interpreter[0]).name == "env":
        words = [word for word in interpreter[1:] if not word.startswith("-") and "=" not in word]
        interpreter = [interpreter[0], *words[:1]]
    for word in interpreter[:2]:
        found = _program(word, cwd, path_env)
        if found is not None:
            yield from _program_needs(found, cwd, path_env, depth + 1)
    if any(Path(word).name in _SHELLS for word in interpreter[:2]):
        yield from _script(program, cwd, path_env, depth + 1)


def _script(script: Path, cwd: Path, path_env: str | None, depth: int) -> Iterator[Need]:
    """The programs a shell script names by path, or by name after ``exec``."""
    if depth > _MAX_DEPTH:
        return
    try:
        with script.open("rb") as file:
            text = file.read(_SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return
    yield from _lines(text, cwd, path_env, depth)


def _lines(text: str, cwd: Path, path_env: str | None, depth: int) -> Iterator[Need]:
    """The programs shell command lines name by path, or by name after ``exec``."""
    if depth > _MAX_DEPTH:
        return
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        for index, word in enumerate(words):
            after_exec = index > 0 and words[index - 1] == "exec"
            if "/" in word and not word.startswith("$"):
                path = _existing(word, cwd)
                if path is not None and path.is_file() and path.stat().st_mode & 0o111:
                    yield from _command([str(path)], cwd, path_env, depth)
            elif after_exec and not word.startswith("-"):
                found = _program(word, cwd, path_env)
                if found is not None:
                    yield from _program_needs(found, cwd, path_env, depth)


def _program(name: str, cwd: Path, path_env: str | None) -> Path | None:
    """Where the kernel finds the program ``name``: a path (relative to ``cwd``), or on PATH."""
    if "/" in name:
        path = _absolute(name, cwd)
        return path if path.is_file() else None
    found = shutil.which(name, path=path_env)
    return _absolute(found, cwd) if found else None


def _existing(argument: str, cwd: Path) -> Path | None:
    """The file or folder an argument names, if it names one (``bot.py:Class`` names bot.py)."""
    if not argument or argument.startswith("-"):
        return None
    candidates = [argument]
    head, colon, tail = argument.rpartition(":")
    if colon and head and tail.isidentifier():
        candidates.append(head)
    for candidate in candidates:
        path = _absolute(candidate, cwd)
        try:
            if path.exists():
                return path
        except OSError:
            continue
    return None


def _absolute(name: str, cwd: Path) -> Path:
    return Path(os.path.normpath(cwd / os.path.expanduser(name)))


def _shebang(path: Path) -> list[str] | None:
    """A script's ``#!`` line as words, or None for anything else."""
    try:
        with path.open("rb") as file:
            first = file.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return words or None


def _may(status: os.stat_result, uid: int, gid: int, access: Access) -> bool:
    """Whether a user with ``uid``/``gid`` (no other groups) has ``access``, as the kernel checks."""
    bits = int(access)
    if status.st_uid == uid:
        return status.st_mode & bits == bits
    if status.st_gid == gid:
        return status.st_mode & (bits >> 3) == bits >> 3
    return status.st_mode & (bits >> 6) == bits >> 6


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A path a user cannot reach that a command needs, and how to open it."""

    user: str
    """A user's name, or words for the users of their own that bots get as root."""
    verb: str
    """``enter`` (a folder), ``run`` or ``read`` (a file)."""
    path: Path
    status: os.stat_result

    def __str__(self) -> str:
        who = self.user if " " in self.user else f"user {self.user}"  # a name, or "an unprivileged user"
        return f"{who} cannot {self.verb} {self.path} ({_describe(self.status)})"

    @property
    def fix(self) -> str:
        """The command that opens the path to other users."""
        return f"chmod o+{'r' if self.verb == 'read' else 'x'} {shlex.quote(str(self.path))}"


def refusal(
    command: Sequence[str], cwd: Path, path_env: str | None, user: str, uid: int, gid: int
) -> Refusal | None:
    """The first path ``command`` (run in ``cwd``) needs that ``user`` cannot reach, or None."""
    for need in needs(command, cwd, path_env):
        target = Path(os.path.realpath(need.path))
        for path in [*_folders_above(need.path), target]:
            try:
                status = path.stat()
            except OSError:
                continue  # missing: starting it says why
            wanted = need.access if path == target else Access.RUN
            if _may(status, uid, gid, wanted):
                continue
            if path == target and need.access & Access.READ and not _may(status, uid, gid, Access.READ):
                verb = "read"
            else:
                verb = "enter" if path.is_dir() else "run"
            return Refusal(user, verb, path, status)
    return None


def _folders_above(path: Path) -> list[Path]:
    """The folders the kernel searches to reach ``path``: those of the path as named and,
    when a symbolic link leads elsewhere, those of its target."""
    seen: list[Path] = []
    for form in (path, Path(os.path.realpath(path))):
        for folder in reversed(form.parents):
            if folder not in seen:
                seen.append(folder)
    return seen


def _describe(status: os.stat_result) -> str:
    try:
        owner = pwd.getpwuid(status.st_uid).pw_name
    except KeyError:
        owner = str(status.st_uid)
    try:
        group = grp.getgrgid(status.st_gid).gr_name
    except KeyError:
        group = str(status.st_gid)
    return f"mode {stat.S_IMODE(status.st_mode):04o}, owner {owner}:{group}"
