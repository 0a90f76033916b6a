"""A bot's page: its matches, its record against each opponent, its faults, how long it
thinks, and on a ladder its rating over time.

A bot is known by its name: a tournament entry plays as ``NAME~0`` and ``NAME~1``
(:func:`~oddtrick_referee.storage.match_index.bot_name`), a ladder entrant and any
other bot under its own name. Only matches a spectator may see count: the index never
lists a sealed play by its players (:meth:`MatchStore.list_matches`).

Against each opponent, a tournament's record is its pairing's result as the standings
decide it (:func:`~oddtrick_referee.competitions.scoring.standings.compute_standings` on that
pairing's deals, duplicate deals compared): one play of a duplicate deal is not a
result. Other matches (ladder, ``serve``) count by their own result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from oddtrick._accuracy import accuracy, merge
from oddtrick._timing import DecisionTimes, Histogram
from oddtrick_referee.competitions.scoring.standings import FaultCounts, compute_standings
from oddtrick_referee.competitions.tournaments.page import Leaderboard, RatingPoint
from oddtrick_referee.storage.match_index import bot_name
from oddtrick_referee.storage.tournament_store import TournamentStore
from oddtrick_referee.web.data import MatchRow, WebData, _row
from oddtrick_referee.web.rating_chart import RatingChart, rating_chart

_RECENT = 20
"""Matches listed on the page; the rest are a link to the matches list filtered by the bot."""
_SCANNED = 5000
"""Most recent matches read for the record, the faults and the times."""
_BUCKETS: tuple[tuple[int, int | None, str], ...] = (
    (0, 10, "under 10 ms"),
    (10, 50, "10–50 ms"),
    (50, 100, "50–100 ms"),
    (100, 250, "100–250 ms"),
    (250, 500, "250–500 ms"),
    (500, 1000, "0.5–1 s"),
    (1000, 2000, "1–2 s"),
    (2000, 5000, "2–5 s"),
    (5000, None, "5 s or more"),
)


@dataclasses.dataclass
class Record:
    """Won, drawn, lost against one opponent."""

    opponent: str
    won: int = 0
    drawn: int = 0
    lost: int = 0
    deals: int = 0
    total: float = 0.0

    @property
    def points_per_deal(self) -> float | None:
        return self.total / self.deals if self.deals else None


@dataclasses.dataclass(frozen=True)
class TimeBucket:
    label: str
    count: int
    share: float
    """Of all the decisions counted (0 to 1)."""


@dataclasses.dataclass(frozen=True)
class BotPage:
    name: str
    entries: tuple[str, ...]
    """The tournaments it is an entry of."""
    on_ladder: bool
    matches: tuple[MatchRow, ...]
    more_matches: bool
    tournament_records: tuple[Record, ...]
    other_records: tuple[Record, ...]
    faults: FaultCounts
    matches_counted: int
    times: DecisionTimes
    buckets: tuple[TimeBucket, ...]
    buckets_of: str
    """What the buckets count: the bot's own think time, or the referee's whole time."""
    rating: RatingChart | None
    accuracy: BotAccuracy | None = None
    """Its accuracy double dummy over its matches analysed so far (``None``: none yet)."""


@dataclasses.dataclass(frozen=True)
class BotAccuracy:
    """A bot's tallies (:mod:`oddtrick._accuracy`) summed over every seat it held in its
    analysed matches: a bot's accuracy is read over many hands, never one."""

    matches: int
    hands: int
    tally: dict[str, int]

    @property
    def per_hand(self) -> float:
        return self.tally["lost"] / self.hands if self.hands else 0.0

    @property
    def share(self) -> float | None:
        return accuracy(self.tally)


Analysed = Callable[[str], "dict[str, Any] | None"]
"""A finished match's kept analysis (web/analysis.py's page form), ``None`` when not computed."""


def bot_accuracy(name: str, match_ids: Sequence[str], analysed: Analysed) -> BotAccuracy | None:
    """The bot's seats' tallies over those of these matches already analysed (the page never
    starts an analysis: a bot's page with hundreds of matches would queue them all)."""
    tallies: list[dict[str, Any]] = []
    matches = hands = 0
    for match_id in match_ids:
        found = analysed(match_id)
        if not found or found.get("status") != "ready" or not found.get("seats"):
            continue
        seats = [seat for seat in found["seats"].values() if bot_name(seat.get("bot", "")) == name]
        if seats:
            matches += 1
            hands += sum(int(seat.get("hands", 0)) for seat in seats)
            tallies.extend(seats)
    return BotAccuracy(matches, hands, merge(tallies)) if matches else None


def time_buckets(histogram: Histogram) -> tuple[TimeBucket, ...]:
    """The histogram in a person's ranges: under 10 ms, 10–50 ms, … 5 s or more."""
    total = histogram.total
    out = []
    for low, high, label in _BUCKETS:
        count = sum(n for ms, n in histogram.counts.items() if ms >= low and (high is None or ms < high))
        out.append(TimeBucket(label, count, count / total if total else 0.0))
    return tuple(out)


def _tournament_records(data: WebData, name: str) -> tuple[tuple[str, ...], list[Record]]:

    entered = [t for t in data.tournaments() if name in t["entries"]]
    if not entered:
        return (), []
    store = TournamentStore(data.index_path)
    records: dict[str, Record] = {}
    for tournament in entered:
        tournament_id = tournament["id"]
        deals = store.deal_results(tournament_id)
        forfeits = store.forfeited_matches(tournament_id)
        keys = {d.match for d in deals if name in (d.first, d.second)}
        keys |= {f.match for f in forfeits if name in (f.absent, f.present)}
        for key in sorted(keys):
            first, second = key.split("|", 1)
            standings = compute_standings(
                [first, second],
                [d for d in deals if d.match == key],
                {},
                [f for f in forfeits if f.match == key],
                tournament["duplicate"],
            )
            row = standings.row(name)
            opponent = second if name == first else first
            record = records.setdefault(opponent, Record(opponent))
            record.won += row.matches_won
            record.drawn += row.matches_drawn
            record.lost += row.matches_lost
            record.deals += row.deals
            record.total += row.total_points
    return tuple(t["id"] for t in entered), sorted(records.values(), key=lambda r: r.opponent.lower())


def _add_faults(counts: dict[str, int], seat: dict[str, Any]) -> None:
    faults = seat.get("faults", {})
    for key, logged in (
        ("timeouts", "timeout"),
        ("illegal", "illegal"),
        ("disconnected", "disconnected"),
        ("bot_errors", "bot_error"),
        ("clock", "clock"),
    ):
        counts[key] = counts.get(key, 0) + int(faults.get(logged, 0))
    counts["refusals"] = counts.get("refusals", 0) + int(seat.get("refusals", 0))
    counts["forfeits"] = counts.get("forfeits", 0) + int(bool(seat.get("forfeited")))


def bot_page(
    data: WebData,
    name: str,
    board: Leaderboard | None,
    history: Sequence[RatingPoint] | None,
    analysed: Analysed | None = None,
) -> BotPage | None:
    """The page of the bot called ``name`` (exactly), or ``None`` if this folder knows no such
    bot. ``analysed`` reads a match's kept analysis, for the bot's accuracy."""
    if not name or len(name) > 100 or bot_name(name) != name:
        return None
    entries, tournament_records = _tournament_records(data, name)
    on_ladder = board is not None and any(row.bot == name for row in board.rows)
    raw = (
        data.store.list_matches((), _SCANNED + 1, 0, name, as_typed=True) if data.index_path.exists() else []
    )
    mine = [r for r in raw[:_SCANNED] if any(bot_name(p) == name for p in r["players"].values())]
    if not entries and not on_ladder and not mine:
        return None
    counts: dict[str, int] = {}
    times = DecisionTimes()
    others: dict[str, Record] = {}
    counted = 0
    finished: list[str] = []
    for match in mine:
        if match["category"] != "finished" or match["status"] == "aborted" or not match["result"]:
            continue
        counted += 1
        finished.append(match["match_id"])
        for seat in match["result"].get("seats", {}).values():
            if bot_name(seat.get("bot", "")) == name:
                _add_faults(counts, seat)
                if "times" in seat:
                    times.merge(DecisionTimes.from_dict(seat["times"]))
        if match["details"].get("run_id"):
            continue  # a tournament play: its pairing's result is the standings'
        players = match["players"]
        sides = {side: {bot_name(players.get(s, "")) for s in side} for side in ("NS", "EW")}
        mine_side = next((side for side, names in sides.items() if name in names), None)
        if mine_side is None:
            continue
        other_side = "EW" if mine_side == "NS" else "NS"
        winner = match["result"].get("winner")
        for opponent in sorted(sides[other_side] - {name}):
            record = others.setdefault(opponent, Record(opponent))
            if winner == mine_side:
                record.won += 1
            elif winner == other_side:
                record.lost += 1
            else:
                record.drawn += 1
    reported = times.think.total > 0
    return BotPage(
        name=name,
        entries=entries,
        on_ladder=on_ladder,
        matches=tuple(_row(r) for r in mine[:_RECENT]),
        more_matches=len(mine) > _RECENT,
        tournament_records=tuple(tournament_records),
        other_records=tuple(sorted(others.values(), key=lambda r: r.opponent.lower())),
        faults=FaultCounts(**counts),
        matches_counted=counted,
        times=times,
        buckets=time_buckets(times.think if reported else times.answer),
        buckets_of="the bot's own think time" if reported else "the referee's request-to-answer time",
        rating=rating_chart(history) if history else None,
        accuracy=bot_accuracy(name, finished, analysed) if analysed is not None else None,
    )


__all__ = [
    "BotAccuracy",
    "BotPage",
    "RatingChart",
    "Record",
    "TimeBucket",
    "bot_accuracy",
    "bot_page",
    "rating_chart",
    "time_buckets",
]
