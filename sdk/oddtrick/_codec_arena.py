"""The Arena's messages (``arena.proto``): what people and tools ask the referee, and its answers.

Beside :mod:`oddtrick._codec` (the game's values) and :mod:`oddtrick._codec_protocol`
(the bot protocol): the requests the SDK's watcher and the referee's tools send, the
responses the referee's Arena service gives (server info, match listings, logs, the
ladder). The rows a response is built from are described here as protocols, so the
referee's stores hand their own values over without this module importing them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from oddtrick._codec import (
    config_to_wire,
    game_kind_to_wire,
    per_side,
    scoreboard_to_wire,
    seat_player_to_wire,
    seat_to_wire,
    side_to_wire,
)
from oddtrick._codec_protocol import protocol_version
from oddtrick.rules import GameConfig, GameKind, Seat, Side
from oddtrick.v1 import arena_pb2, game_pb2, referee_pb2

SUGGESTED_TARGETS = {GameKind.CLASSIC: (5, 7, 9, 10), GameKind.CONTRACT: (100, 50)}
"""The targets GetServerInfo names for each game (any target the rules allow is accepted)."""

_TRUMP_SELECTIONS = (
    game_pb2.TRUMP_SELECTION_TURN_LAST_CARD,
    game_pb2.TRUMP_SELECTION_CUT,
    game_pb2.TRUMP_SELECTION_FIXED_ROTATION,
)
_FORMATS = (
    game_pb2.MATCH_FORMAT_HAND,
    game_pb2.MATCH_FORMAT_GAME,
    game_pb2.MATCH_FORMAT_RUBBER,
    game_pb2.MATCH_FORMAT_DEALS,
)

STATUSES = {
    arena_pb2.MATCH_STATUS_IN_PROGRESS: "in_progress",
    arena_pb2.MATCH_STATUS_FINISHED: "finished",
    arena_pb2.MATCH_STATUS_SEALED: "sealed",
}
"""ListMatches' statuses, to the categories the referee's index files matches under."""
_WIRE_STATUS = {category: wire for wire, category in STATUSES.items()}
IN_PROGRESS = arena_pb2.MATCH_STATUS_IN_PROGRESS
SEALED = arena_pb2.MATCH_STATUS_SEALED


# ------------------------------------------------------------------ requests


def list_matches_request(
    page_size: int, statuses: Sequence[arena_pb2.MatchStatus.ValueType] = ()
) -> arena_pb2.ListMatchesRequest:
    return arena_pb2.ListMatchesRequest(page_size=page_size, statuses=list(statuses))


def watch_match_request(match_id: str) -> arena_pb2.WatchMatchRequest:
    return arena_pb2.WatchMatchRequest(match_id=match_id)


def watch_next_match_request() -> arena_pb2.WatchMatchRequest:
    """Follow the next match to start, from its first event."""
    return arena_pb2.WatchMatchRequest(next_to_start=True)


def match_log_request(match_id: str, page_token: str = "") -> arena_pb2.GetMatchLogRequest:
    return arena_pb2.GetMatchLogRequest(match_id=match_id, page_token=page_token)


# ------------------------------------------------------------------ responses


def server_info(
    server_version: str,
    games: Iterable[GameKind],
    default_rules: game_pb2.TableRules,
    limits: referee_pb2.SessionLimits,
    log_format_version: int,
) -> arena_pb2.GetServerInfoResponse:
    """GetServerInfo: what this referee plays, with which rules and limits."""
    supported = []
    for kind in sorted(games, key=lambda g: g.value):
        classic = kind is GameKind.CLASSIC
        supported.append(
            arena_pb2.GameSupport(
                kind=game_kind_to_wire(kind),
                targets=list(SUGGESTED_TARGETS[kind]),
                trump_selections=list(_TRUMP_SELECTIONS) if classic else [],
                no_trump_every_fifth=classic,
                honours=classic,
                doubling=not classic,
                match_formats=list(_FORMATS),
            )
        )
    return arena_pb2.GetServerInfoResponse(
        server_name="oddtrick",
        server_version=server_version,
        protocols=[protocol_version()],
        games=supported,
        default_table_rules=default_rules,
        session_limits=limits,
        log_format_versions=[log_format_version],
    )


def match_summary(
    row: Mapping[str, Any],
    rules: game_pb2.TableRules | None,
    progress: tuple[int, tuple[int, int], tuple[int, int], tuple[int, int]] | None,
) -> arena_pb2.MatchSummary:
    """A match as ListMatches shows it, from its row in the referee's index: a sealed play
    without its progress or result (the other play of its deals is not over), an aborted
    one as finished with no winner. ``progress`` (hands, game scores, games won, totals) is
    the live table's, for a match in progress."""
    details = row["details"]
    summary = arena_pb2.MatchSummary(
        match_id=row["match_id"],
        table_id=details.get("table_id", ""),
        status=_WIRE_STATUS[row["category"]],
        config=config_to_wire(GameConfig.from_dict(row["config"])),
        players=[seat_player_to_wire(Seat.parse(seat), name) for seat, name in row["players"].items()],
        seed_commitment=details.get("seed_commitment", ""),
        started_at_unix_ms=row["started_at"],
    )
    if rules is not None:
        summary.rules.CopyFrom(rules)
    if row["finished_at"] is not None:
        summary.ended_at_unix_ms = row["finished_at"]
    if row["category"] == "in_progress" and progress is not None:
        hands, game, games_won, totals = progress
        summary.hands_played = hands
        summary.score.CopyFrom(scoreboard_to_wire(game, games_won, totals))
    elif row["status"] == "aborted":
        summary.result.outcome = game_pb2.MATCH_OUTCOME_ABORTED
    elif row["category"] == "finished" and row["result"]:
        result = row["result"]
        summary.hands_played = result["hands"]
        summary.score.total.CopyFrom(per_side(tuple(result["totals"])))
        summary.score.games_won.CopyFrom(per_side(tuple(result["games_won"])))
        winner = result["winner"]
        summary.result.outcome = game_pb2.MATCH_OUTCOME_WIN if winner else game_pb2.MATCH_OUTCOME_DRAW
        if winner:
            summary.result.winner = side_to_wire(Side.NORTH_SOUTH if winner == "NS" else Side.EAST_WEST)
        summary.result.hands_played = result["hands"]
        summary.result.score.CopyFrom(summary.score)
        summary.result.seed_commitment = summary.seed_commitment
    return summary


def list_matches_response(
    matches: Iterable[arena_pb2.MatchSummary] = (), next_page_token: str = ""
) -> arena_pb2.ListMatchesResponse:
    return arena_pb2.ListMatchesResponse(matches=list(matches), next_page_token=next_page_token)


def watch_response(events: Iterable[referee_pb2.Event]) -> arena_pb2.WatchMatchResponse:
    return arena_pb2.WatchMatchResponse(events=list(events))


def match_log_response(
    match_id: str, format_version: int, lines: Sequence[str], next_page_token: str = ""
) -> arena_pb2.GetMatchLogResponse:
    return arena_pb2.GetMatchLogResponse(
        match_id=match_id, format_version=format_version, lines=lines, next_page_token=next_page_token
    )


# ------------------------------------------------------------------ the ladder


class LadderRow(Protocol):
    """An entrant's line of the ladder's leaderboard, as GetLadder reads it."""

    @property
    def rank(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def rating(self) -> float: ...
    @property
    def mu(self) -> float: ...
    @property
    def sigma(self) -> float: ...
    @property
    def matches(self) -> int: ...
    @property
    def wins(self) -> int: ...
    @property
    def draws(self) -> int: ...
    @property
    def losses(self) -> int: ...
    @property
    def forfeits(self) -> int: ...
    @property
    def faults(self) -> int: ...
    @property
    def provisional(self) -> bool: ...
    @property
    def inactive(self) -> bool: ...
    @property
    def house(self) -> bool: ...
    @property
    def connected(self) -> bool: ...
    @property
    def draining(self) -> bool: ...
    @property
    def last_played_ms(self) -> int | None: ...
    @property
    def stronger_than_next(self) -> float | None: ...


class LadderMatchRow(Protocol):
    """A ladder match as the ladder's store keeps it, as ListLadderMatches reads it."""

    @property
    def match_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def lineup(self) -> dict[str, Any]: ...
    @property
    def tables(self) -> list[str]: ...
    @property
    def seed_commitment(self) -> str: ...
    @property
    def seed(self) -> str | None: ...
    @property
    def created_ms(self) -> int: ...
    @property
    def score_a(self) -> int | None: ...
    @property
    def deals(self) -> list[Any]: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def cause(self) -> str | None: ...
    @property
    def ended_ms(self) -> int | None: ...


_LADDER_STATUS = {
    "planned": arena_pb2.LADDER_MATCH_STATUS_RUNNING,
    "running": arena_pb2.LADDER_MATCH_STATUS_RUNNING,
    "finished": arena_pb2.LADDER_MATCH_STATUS_FINISHED,
    "forfeit": arena_pb2.LADDER_MATCH_STATUS_FORFEIT,
    "aborted": arena_pb2.LADDER_MATCH_STATUS_ABORTED,
}
LADDER_OVER = ("finished", "forfeit", "aborted")
"""The statuses of a ladder match that is over."""


def ladder_entry_to_wire(row: LadderRow) -> arena_pb2.LadderEntry:
    entry = arena_pb2.LadderEntry(
        rank=row.rank,
        bot_name=row.name,
        rating=row.rating,
        mu=row.mu,
        sigma=row.sigma,
        matches=row.matches,
        wins=row.wins,
        draws=row.draws,
        losses=row.losses,
        forfeits=row.forfeits,
        faults=row.faults,
        provisional=row.provisional,
        inactive=row.inactive,
        house=row.house,
        connected=row.connected,
        draining=row.draining,
    )
    if row.last_played_ms is not None:
        entry.last_played_unix_ms = row.last_played_ms
    if row.stronger_than_next is not None:
        entry.stronger_than_next = row.stronger_than_next
    return entry


def ladder_match_to_wire(match: LadderMatchRow, rating_after: float | None = None) -> arena_pb2.LadderMatch:
    """A ladder match for ListLadderMatches: a running one without its seats (nor seed),
    since where each entrant sits while the deals are still being played is what colluding
    entrants would want to know."""
    teams = match.lineup.get("teams", [[], []])
    over = match.status in LADDER_OVER
    seats = []
    for number, table in enumerate(match.lineup.get("tables", []) if over else [], start=1):
        for seat_text, name in table.items():
            seats.append(
                arena_pb2.LadderSeat(
                    table=number,
                    seat=seat_to_wire(Seat.parse(seat_text)),
                    bot_name=name,
                    team=0 if name in teams[0] else 1,
                )
            )
    wire = arena_pb2.LadderMatch(
        match_id=match.match_id,
        status=_LADDER_STATUS[match.status],
        seats=seats,
        table_match_ids=match.tables,
        seed_commitment=match.seed_commitment,
        seed=(match.seed or "") if over else "",
        started_at_unix_ms=match.created_ms,
        score_a=match.score_a or 0,
        deals=len(match.deals),
        winner=match.outcome or "",
        cause=match.cause or "",
    )
    if match.ended_ms is not None:
        wire.ended_at_unix_ms = match.ended_ms
    if rating_after is not None:
        wire.rating_after = rating_after
    return wire


def ladder_response(
    entries: Iterable[LadderRow],
    trusted: bool,
    config: GameConfig,
    rules: game_pb2.TableRules,
    z: float,
    provisional_sigma: float,
    inactive_after_s: float,
) -> arena_pb2.GetLadderResponse:
    """GetLadder: the leaderboard and how it is made."""
    return arena_pb2.GetLadderResponse(
        entries=[ladder_entry_to_wire(row) for row in entries],
        format=arena_pb2.LADDER_FORMAT_TRUSTED_PAIRS if trusted else arena_pb2.LADDER_FORMAT_TEAMS,
        config=config_to_wire(config),
        rules=rules,
        z=z,
        provisional_sigma=provisional_sigma,
        inactive_after_s=round(inactive_after_s),
    )


def ladder_matches_response(
    matches: Iterable[arena_pb2.LadderMatch], next_page_token: str = ""
) -> arena_pb2.ListLadderMatchesResponse:
    return arena_pb2.ListLadderMatchesResponse(matches=list(matches), next_page_token=next_page_token)
