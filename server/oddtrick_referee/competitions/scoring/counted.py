"""What finished tables add up to: one function from table values to the standings.

A tournament on one machine (its tables loaded from its store), a run on workers
(its tables read off the logs of the jobs' results) and the web page (a data
folder's store, read-only) all hand their :class:`~.results.TableResult` values
here, so they cannot disagree on how deals, faults or times add up; no store
computes a figure of the standings in SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from oddtrick._timing import DecisionTimes
from oddtrick_referee.competitions.scoring.scored import PlayedTable
from oddtrick_referee.competitions.scoring.standings import Standings, compute_standings
from oddtrick_referee.competitions.tournaments.tournament_plan import SLOT_MARK, TableRun
from oddtrick_referee.storage.results import DealResult, FaultCounts, Forfeit, TableResult


def table_result(run: TableRun, played: PlayedTable) -> TableResult:
    """A planned table run as played: its place in the plan, and what its log gives."""
    return TableResult(
        match_key=run.match_key,
        set_number=run.set_number,
        table_no=run.table_no,
        ns_entry=run.ns_entry,
        ew_entry=run.ew_entry,
        match_id=played.match_id,
        seats=played.seat_results(),
        deals=tuple(played.deals),
    )


def bot_entries(names: Iterable[str]) -> dict[str, str]:
    """Bot names at the referee → entry names: each entry's own, and ``NAME~0``/``NAME~1``
    (its two plays of a duplicate deal)."""
    entry_of = {}
    for name in names:
        entry_of[name] = name
        for slot in (0, 1):
            entry_of[f"{name}{SLOT_MARK}{slot}"] = name
    return entry_of


def deal_results(tables: Iterable[TableResult]) -> list[DealResult]:
    """Every play of every deal, in the order a store lists them (match, set, deal, table)."""
    plays = [play for table in tables for play in table.deal_results()]
    return sorted(plays, key=lambda d: (d.match, d.set_number, d.deal_number, d.table))


def fault_counts(tables: Iterable[TableResult], entry_of: Mapping[str, str]) -> dict[str, FaultCounts]:
    """Fault counts per entry from every seat of every table (bot names map to entries)."""
    counts: dict[str, dict[str, int]] = {}
    for table in tables:
        for seat in table.seats.values():
            bucket = counts.setdefault(entry_of.get(seat.bot, seat.bot), {})
            for field, value in (
                ("timeouts", seat.fault("timeout")),
                ("illegal", seat.fault("illegal")),
                ("disconnected", seat.fault("disconnected")),
                ("forfeits", int(seat.forfeited)),
                ("refusals", seat.refusals),
                ("bot_errors", seat.fault("bot_error")),
                ("clock", seat.fault("clock")),
            ):
                bucket[field] = bucket.get(field, 0) + value
    return {entry: FaultCounts(**values) for entry, values in counts.items()}


def decision_times(tables: Iterable[TableResult], entry_of: Mapping[str, str]) -> dict[str, DecisionTimes]:
    """Decision times per entry; tables stored before the referee kept them count for nothing."""
    merged: dict[str, DecisionTimes] = {}
    for table in tables:
        for seat in table.seats.values():
            if seat.times is not None:
                merged.setdefault(entry_of.get(seat.bot, seat.bot), DecisionTimes()).merge(seat.times)
    return merged


def bot_errors(tables: Iterable[TableResult]) -> dict[str, int]:
    """Bot errors per bot name at the referee (``NAME~0``, ``NAME~1`` under duplicate)."""
    counts: dict[str, int] = {}
    for table in tables:
        for seat in table.seats.values():
            if errors := seat.fault("bot_error"):
                counts[seat.bot] = counts.get(seat.bot, 0) + errors
    return counts


def table_standings(
    entries: Sequence[str], tables: Sequence[TableResult], forfeits: Iterable[Forfeit], duplicate: bool
) -> Standings:
    """The standings of these finished tables and forfeited matches
    (:func:`~.standings.compute_standings`, fed from the values)."""
    entry_of = bot_entries(entries)
    return compute_standings(
        entries,
        deal_results(tables),
        fault_counts(tables, entry_of),
        forfeits,
        duplicate,
        decision_times(tables, entry_of),
    )
