"""The oddtrick referee: seats bots, enforces the rules, logs every match.

Run it with ``oddtrick serve``; embed it with :func:`running_referee`.
"""

from oddtrick_referee.play.matchlog import CheckReport, check_log, read_log
from oddtrick_referee.play.table import SeatRecord, TableRules, fallback_action
from oddtrick_referee.referee import (
    MatchRecord,
    MatchSpec,
    Referee,
    RefereeSettings,
    running_referee,
)
from oddtrick_referee.transport.sessions import SessionLimits

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
