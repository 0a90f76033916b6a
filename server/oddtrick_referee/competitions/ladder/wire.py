"""The ladder as the Arena RPCs show it (GetLadder, ListLadderMatches)."""

from __future__ import annotations

from oddtrick._codec import seat_to_wire
from oddtrick.rules import Seat
from oddtrick.v1 import arena_pb2
from oddtrick_referee.competitions.ladder.leaderboard import LeaderRow
from oddtrick_referee.storage.ladder_store import MatchRow

_STATUS = {
    "planned": arena_pb2.LADDER_MATCH_STATUS_RUNNING,
    "running": arena_pb2.LADDER_MATCH_STATUS_RUNNING,
    "finished": arena_pb2.LADDER_MATCH_STATUS_FINISHED,
    "forfeit": arena_pb2.LADDER_MATCH_STATUS_FORFEIT,
    "aborted": arena_pb2.LADDER_MATCH_STATUS_ABORTED,
}


def entry_to_wire(row: LeaderRow) -> arena_pb2.LadderEntry:
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
    )
    if row.last_played_ms is not None:
        entry.last_played_unix_ms = row.last_played_ms
    if row.stronger_than_next is not None:
        entry.stronger_than_next = row.stronger_than_next
    return entry


OVER = ("finished", "forfeit", "aborted")


def match_to_wire(match: MatchRow, rating_after: float | None = None) -> arena_pb2.LadderMatch:
    """A ladder match for ListLadderMatches: a running one without its seats (nor seed),
    since where each entrant sits while the deals are still being played is what colluding
    entrants would want to know."""
    teams = match.lineup.get("teams", [[], []])
    over = match.status in OVER
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
        status=_STATUS[match.status],
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
