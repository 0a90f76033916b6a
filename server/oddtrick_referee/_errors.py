"""One error, not a tree of them: what a person sees when the referee stops.

Every trio nursery wraps what escapes it in an exception group, so one failure
(a busy port, Ctrl-C, a bot that died) reaches the command line inside several
groups and prints as a forty-line traceback. :func:`unwrapped` takes the one
error back out, so the commands can say it in a line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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


def interrupted(error: BaseException) -> bool:
    """Whether ``error`` is, or holds, a KeyboardInterrupt (Ctrl-C)."""
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        return error.subgroup(KeyboardInterrupt) is not None
    return False
