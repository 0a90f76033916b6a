"""Reading a record back from JSON, one field at a time, with an error that names the field.

A record comes back from a store's row, a job's payload or a worker's result: each
value's ``from_dict`` reads its fields through :func:`checked` and :func:`optional`, so
one written by other code (an older referee, a hand-made job) is either read whole or
refused with :class:`RecordInvalid` saying which field is missing or of which type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oddtrick_referee._exceptions import RecordInvalid

__all__ = ["RecordInvalid", "checked", "optional"]


def checked(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], what: str) -> Any:
    """``data[name]`` if it is of ``kind`` (a bool is no int here); :class:`RecordInvalid`
    saying which field of ``what`` is missing or wrong otherwise."""
    if not isinstance(data, Mapping):
        raise RecordInvalid(f"{what} is {type(data).__name__}, not a JSON object")
    if name not in data:
        raise RecordInvalid(f"{what} has no {name!r}")
    value = data[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise RecordInvalid(f"{what}'s {name!r} is {value!r}, not {_kind_text(kind)}")
    return value


def optional(
    data: Mapping[str, Any], name: str, kind: type | tuple[type, ...], what: str, default: Any
) -> Any:
    """``data[name]`` checked as :func:`checked` does, or ``default`` when it is absent or null."""
    if isinstance(data, Mapping) and data.get(name) is None:
        return default
    return checked(data, name, kind, what)


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_text(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))
