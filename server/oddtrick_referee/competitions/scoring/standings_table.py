"""Standings for people: rich tables on a terminal, :meth:`Standings.render`'s plain
fixed-width text in a pipe or a file (stable for scripts and diffs)."""

from __future__ import annotations

from typing import TextIO

from rich.table import Table
from rich.text import Text

from oddtrick._terminal import console
from oddtrick._timing import TIME_NOTE, time_cells
from oddtrick_referee.competitions.scoring.standings import (
    DD_LEGEND,
    FAULTS_LEGEND,
    Standings,
    _cell,
    _dd_skill_cells,
    _dd_skill_header,
    _fault_summary,
    _signed,
    ci_text,
)


def print_standings(standings: Standings, stream: TextIO) -> None:
    out = console(stream)
    if not out.is_terminal:
        stream.write(standings.render())
        stream.flush()
        return
    kind = "duplicate" if standings.duplicate else "single play per deal"
    title = f"Standings ({kind})"
    if standings.time_control is not None:
        title += f"\ntime control: {standings.time_control}"
    if standings.in_process is not None:
        title += f"\nin-process (trusted, not sandboxed): {standings.in_process}"
    if standings.options:
        title += f"\noptions: {standings.options_line()}"
    table = Table(title=title, title_justify="left")
    for header, right in (
        ("#", True),
        ("entry", False),
        ("W-D-L", True),
        ("deals", True),
        ("pts/deal", True),
        ("95% CI", True),
        *((header, True) for header in _dd_skill_header(standings)),
        ("faults", False),
    ):
        table.add_column(header, justify="right" if right else "left")
    for row in standings.rows:
        ci = ci_text(row)
        faults = _fault_summary(row.faults)
        table.add_row(
            str(row.rank),
            Text(row.entry, style="bold" if row.rank == 1 else ""),
            f"{row.matches_won}-{row.matches_drawn}-{row.matches_lost}",
            str(row.deals),
            _signed(row.points_per_deal),
            ci,
            *_dd_skill_cells(standings, row),
            Text(faults, style="" if faults == "-" else "yellow"),
        )
    out.print(table)
    out.print(Text(FAULTS_LEGEND, style="dim"))
    if _dd_skill_header(standings):
        out.print(Text(DD_LEGEND, style="dim"), soft_wrap=True)
    if any(row.times.answer.total or row.faults.out_of_time for row in standings.rows):
        times = Table(title="Time per decision (ms)", title_justify="left")
        for header in ("entry", "answered", "think p50", "think p99", "lag p50", "lag p99", "time-outs"):
            times.add_column(header, justify="left" if header == "entry" else "right")
        for row in standings.rows:
            timeouts = str(row.faults.out_of_time)
            times.add_row(
                row.entry,
                str(row.times.answer.total),
                *time_cells(row.times),
                Text(timeouts, style="" if timeouts == "0" else "yellow"),
            )
        out.print(times)
        out.print(Text(TIME_NOTE, style="dim"), soft_wrap=True)
    for note in standings.notes:
        out.print(Text(note), soft_wrap=True)
    if (short := standings.fallback_note()) is not None:
        out.print(Text(short, style="yellow"), soft_wrap=True)
    if (variance := standings.variance_note()) is not None:
        out.print(Text(variance, style="yellow"))
    if standings.unpaired:
        out.print(f"{len(standings.unpaired)} unpaired play(s) ignored (other table missing)")
    order = [row.entry for row in standings.rows]
    cross = Table(
        title="Crosstable (row's points per deal against column, deals in brackets)", title_justify="left"
    )
    cross.add_column("")
    for entry in order:
        cross.add_column(entry, justify="right")
    for entry in order:
        cells = ["—" if entry == other else _cell(standings.crosstable[entry][other]) for other in order]
        cross.add_row(entry, *cells)
    out.print(cross)
