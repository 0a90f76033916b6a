"""The scripted matches a bot plays under `oddtrick conformance`, and what each one probes.

The bot under test holds North and South (two streams, so two seats at once);
a house bot in this process holds East and West and opens the bidding whenever
nobody has, so that Contract Whist hands get contracts to score. Between them
the scenarios use every option of GameConfig; the probes that drop a stream
or send what only a later version knows come last, one match each, so that a
bot that chokes on one has shown everything else first and fails that check
alone.
"""

from __future__ import annotations

import dataclasses

from oddtrick.rules import GameConfig, MatchFormat, TrumpSelection
from oddtrick.v1 import game_pb2, referee_pb2
from oddtrick_referee.conformance.proxy import UNKNOWN_ENUM, Probes
from oddtrick_referee.play.table import TableRules

DEADLINE_S = 3.0
"""The decision deadline of every scenario but the one that tests a short deadline."""
SHORT_DEADLINE_S = 1.0
_DROPPED = frozenset({game_pb2.FAULT_KIND_DISCONNECTED})
"""The fault a scenario that drops (or asks the bot to drop) a stream may cause."""
GRACE_S = 5.0
"""The reconnection grace of the resume scenario: a bot that resumes at all does so in far less."""


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    config: GameConfig
    probes: Probes = dataclasses.field(default_factory=Probes)
    rules: TableRules = dataclasses.field(
        default_factory=lambda: TableRules(deadline_s=DEADLINE_S, grace_s=30.0)
    )
    seed: str = ""


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "classic-turned-card",
        "Classic Whist, trumps by the turned last card, honours, 2 deals",
        GameConfig.classic(
            trump_selection=TrumpSelection.TURN_LAST_CARD, honours=True, format=MatchFormat.DEALS, deals=2
        ),
        seed="conformance-1",
    ),
    Scenario(
        "classic-cut",
        "Classic Whist, trumps by a cut, one game to 2 points; a refusal and a stale refusal",
        GameConfig.classic(trump_selection=TrumpSelection.CUT, format=MatchFormat.GAME, target=2),
        Probes(refuse_request_number=3, stale_refusal_after=6),
        seed="conformance-2",
    ),
    Scenario(
        "classic-rotation",
        "Classic Whist, fixed trump rotation with no trumps every fifth deal, 5 deals, 1 s to decide",
        GameConfig.classic(
            trump_selection=TrumpSelection.FIXED_ROTATION,
            no_trump_every_fifth=True,
            format=MatchFormat.DEALS,
            deals=5,
        ),
        Probes(empty_update_before=4),
        TableRules(deadline_s=SHORT_DEADLINE_S, grace_s=30.0),
        seed="conformance-3",
    ),
    Scenario(
        "contract-doubling",
        "Contract Whist with doubling, 2 deals",
        GameConfig.contract(doubling=True, format=MatchFormat.DEALS, deals=2),
        seed="conformance-4",
    ),
    Scenario(
        "contract-rubber",
        "Contract Whist, a rubber of games to 1 point",
        GameConfig.contract(format=MatchFormat.RUBBER, target=1),
        seed="conformance-5",
    ),
    Scenario(
        "resume",
        "Contract Whist, one hand; the connection is dropped before the 3rd request",
        GameConfig.contract(format=MatchFormat.HAND),
        Probes(drop_request_number=3, allowed_faults=_DROPPED),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-6",
    ),
    Scenario(
        "event-gap",
        "Contract Whist, one hand; an event is missing before the 4th request",
        GameConfig.contract(format=MatchFormat.HAND),
        Probes(gap_request_number=4, allowed_faults=_DROPPED),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-8",
    ),
    # The forward-compatibility probes, one match each: a bot that chokes on one of them
    # fails that check only (it is started again for the next scenario if it died).
    Scenario(
        "unknown-fields",
        "Classic Whist, one hand; every message carries fields from a later version",
        GameConfig.classic(format=MatchFormat.HAND),
        Probes(unknown_fields=True),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-7",
    ),
    Scenario(
        "unknown-enums",
        "Classic Whist with honours, one game to 1 point; enum values from a later version in every "
        "field whose values may grow",
        GameConfig.classic(
            trump_selection=TrumpSelection.TURN_LAST_CARD, honours=True, format=MatchFormat.GAME, target=1
        ),
        Probes(unknown_enums=True),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-9",
    ),
    Scenario(
        "unknown-message",
        "Classic Whist, one hand; a message of a kind from a later version before the 2nd request",
        GameConfig.classic(format=MatchFormat.HAND),
        Probes(unknown_message_before=2),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-10",
    ),
    Scenario(
        "unknown-decision-kind",
        "Classic Whist, one hand; the 4th request is of a DecisionKind from a later version",
        GameConfig.classic(format=MatchFormat.HAND),
        Probes(unknown_kind_request=4),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-11",
    ),
    Scenario(
        "unknown-refusal-reason",
        "Classic Whist, one hand; the answer to the 6th request is refused with a reason from a later "
        "version",
        GameConfig.classic(format=MatchFormat.HAND),
        Probes(refuse_request_number=6, refusal_reason=UNKNOWN_ENUM),
        TableRules(deadline_s=DEADLINE_S, grace_s=GRACE_S),
        seed="conformance-12",
    ),
)

PROBED_LATE = tuple(s.name for s in SCENARIOS[[s.name for s in SCENARIOS].index("resume") :])
"""Scenarios judged by their own checks: what a bot does there does not count against the others."""

assert referee_pb2.REFUSAL_REASON_NOT_LEGAL != UNKNOWN_ENUM
