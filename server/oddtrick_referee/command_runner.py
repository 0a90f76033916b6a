"""Running a command under trio: how it starts, how it stops, and the one error it ends with.

:func:`run_command` is the one ``trio.run`` of every command: Ctrl-C lands at a
checkpoint of the main task, and :func:`sigterm_stops_like_ctrl_c` makes SIGTERM stop it
the same way (:class:`StopRequest` says which it was).

One error, not a tree of them, is what a person sees when it stops: every trio nursery
wraps what escapes it in an exception group, so one failure (a busy port, Ctrl-C, a bot
that died) reaches the command line inside several groups and prints as a forty-line
traceback. :func:`unwrapped` and :func:`sole_error` take the one error back out, so the
commands can say it in a line; :func:`interrupted` finds a Ctrl-C inside a group.
"""

from __future__ import annotations

import dataclasses
import signal
import threading
import types
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import trio

T = TypeVar("T")


def sole_error(error: BaseException) -> BaseException:
    """The one error inside nested exception groups: their single leaf, or the first of
    several of one kind (both plays of an entry that died at start, say, report the same
    thing); ``error`` itself when it holds errors of different kinds."""
    leaves = list(_leaves(error))
    if len(leaves) == 1 or all(type(leaf) is type(leaves[0]) for leaf in leaves):
        return leaves[0]
    return error


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


@contextmanager
def unwrapped() -> Iterator[None]:
    """Re-raise a group holding one error as that error (its own traceback kept)."""
    try:
        yield
    except BaseExceptionGroup as group:
        error = sole_error(group)
        if error is group:
            raise
        raise error.with_traceback(error.__traceback__) from None


def run_command(main: Callable[..., Awaitable[T]], *args: object) -> T:
    """``trio.run`` for a command: Ctrl-C (and SIGTERM, through
    :func:`sigterm_stops_like_ctrl_c`) raises KeyboardInterrupt only at a checkpoint of the
    main task, never in the middle of whatever code the signal interrupts.

    Raised anywhere, it is safe in our code but not in a library's: landing inside the web
    server's connection handling, it corrupted that library's cancel scopes and
    ``oddtrick web`` ended in a trio error with status 1 (2 stops in 60 under load; 0 in
    100 with this). At a checkpoint of the main task it unwinds as before: the nurseries it
    passes through are cancelled, and every clean-up after them runs uncancelled.
    """
    with _ctrl_c_for_trio():
        return trio.run(main, *args, restrict_keyboard_interrupt_to_checkpoints=True)


_ctrl_c_ignored = False
"""Whether the command was started with SIGINT ignored (see :func:`_ctrl_c_for_trio`)."""


@contextmanager
def _ctrl_c_for_trio() -> Iterator[None]:
    """A command started with SIGINT ignored (``cmd &`` in a script: the shell's background
    jobs ignore Ctrl-C) gets trio's Ctrl-C handler all the same, and SIGTERM with it: trio
    installs its handler only over Python's default one, and without it ``kill`` ended a
    background tournament on the spot, with no line saying what was kept and its matches
    left "running". :func:`sigterm_stops_like_ctrl_c` ignores SIGINT again at once."""
    global _ctrl_c_ignored
    ignored = threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    )
    if not ignored:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _ctrl_c_ignored = True
    try:
        yield
    finally:
        _ctrl_c_ignored = False
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclasses.dataclass
class StopRequest:
    """What asked the run to stop, for the line that says it stopped."""

    by: str = "Ctrl-C"


@contextmanager
def sigterm_stops_like_ctrl_c(request: StopRequest) -> Iterator[None]:
    """Inside ``trio.run``: SIGTERM stops the run exactly as Ctrl-C does.

    SIGTERM is how ``kill``, systemd, Docker and a CI runner ask a program to stop; by
    default it ends the process on the spot, so a match was left "in progress" in the index,
    its last actions never reached its log and nothing said what was kept. Here it is
    handed to trio's own Ctrl-C handler, so it raises KeyboardInterrupt where Ctrl-C would
    (at a checkpoint, never inside trio's bookkeeping) and takes the same clean-up path.
    ``request`` is told which of the two it was.
    """
    ctrl_c = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or not callable(ctrl_c):
        yield  # signals reach the main thread only; outside run_command: leave SIGTERM be
        return

    def on_sigterm(signum: int, frame: types.FrameType | None) -> None:
        request.by = "SIGTERM"
        ctrl_c(signal.SIGINT, frame)

    before = signal.signal(signal.SIGTERM, on_sigterm)
    if _ctrl_c_ignored:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as the command was started: kill, not Ctrl-C
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
        if _ctrl_c_ignored:
            signal.signal(signal.SIGINT, ctrl_c)  # trio's, for trio to take back as it ends


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is, or holds, a KeyboardInterrupt (Ctrl-C, or SIGTERM taken as one)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(KeyboardInterrupt) is not None
    return False
