"""``oddtrick export --json``: a replayed match as plain JSON, for scripts.

The log says what was sent; this says what it came to, as the rules engine
re-created it (:class:`~oddtrick_referee.replay.model.MatchReplay`): every
hand's deal, calls and cards with the trick each card won and the running
trick count, think times, faults and comments, each hand's result and the
match's. Cards and calls are written as the log writes them (``QH``, ``7NT``,
``pass``), seats as ``N``/``E``/``S``/``W``, sides as ``NS``/``EW``.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from oddtrick.rules import Call, Card, Deal, GameConfig, Seat, Side
from oddtrick_referee.replay.model import MatchReplay

JSON_FORMAT = 1
"""The version of this document's shape; raised when a field changes meaning."""


def match_to_json(match: MatchReplay) -> dict[str, Any]:
    """The match as JSON types, with ``format`` first."""
    plain = _plain(match)
    assert isinstance(plain, dict)
    return {"format": JSON_FORMAT, **plain}


def _plain(value: Any) -> Any:
    if isinstance(value, Card | Call | Seat | Side):  # before int: seats and sides are IntEnums
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, GameConfig):
        return value.to_dict()
    if isinstance(value, Deal):
        return {str(seat): [str(card) for card in value[seat]] for seat in Seat}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(_plain(key)): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")
