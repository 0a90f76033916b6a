"""The oddtrick referee: seats bots, enforces the rules, logs every match.

Run it with ``oddtrick serve``; embed it with :func:`running_referee`.
"""

from oddtrick_referee._matchlog import CheckReport, check_log, read_log
from oddtrick_referee._referee import (
    MatchRecord,
    MatchSpec,
    Referee,
    RefereeSettings,
    running_referee,
)
from oddtrick_referee._sessions import SessionLimits
from oddtrick_referee._table import SeatRecord, TableRules, fallback_action

__all__ = [
    "CheckReport",
    "MatchRecord",
    "MatchSpec",
    "Referee",
    "RefereeSettings",
    "SeatRecord",
    "SessionLimits",
    "TableRules",
    "check_log",
    "fallback_action",
    "read_log",
    "running_referee",
]
