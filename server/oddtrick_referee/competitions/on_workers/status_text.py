"""``oddtrick tournament status`` in the terminal: the run's workers, who played which set,
and when it should end, as aligned columns (``--json`` prints the same report whole)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO


def columns(rows: Sequence[Sequence[str]], stream: TextIO, indent: str = "  ") -> None:
    """Rows of cells, each column as wide as its widest cell (the last one left ragged)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        print(indent + "  ".join([*cells, row[-1]]).rstrip(), file=stream)


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def print_workers(workers: Sequence[dict[str, Any]], every: bool, stream: TextIO) -> None:
    """The run's workers (with ``every``, the database's others below them)."""
    states = [row["state"] for row in workers if row["in_run"]]
    counts = ", ".join(
        f"{states.count(state)} {state}" for state in ("alive", "stopped", "dead") if state in states
    )
    print(
        f"workers of this run ({counts or 'none yet'}; alive: beat within its lease, or 90 s idle):",
        file=stream,
    )
    if not workers:
        others = "" if every else "; --all-workers shows the database's others"
        print(f"  none has leased a set of this run yet{others}", file=stream)
        return
    rows = [["worker", "state", "oddtrick", "last beat", "sets", "deals/min", "errors", "now"]]
    for row in workers:
        rate = row["deals_per_minute"]
        now = f"set {row['set']} (job {row['job']})" if row["set"] else (
            f"job {row['job']} of another run" if row["job"] else "-"
        )  # fmt: skip
        rows.append([
            row["name"] + ("" if row["in_run"] else " *"), row["state"], row["version"],
            f"{row['seconds_ago']:.1f} s ago", str(row["sets_played"]),
            "-" if rate is None else f"{rate:.1f}", str(row["errors"]), now,
        ])  # fmt: skip
    columns(rows, stream)
    for row in workers:
        if row["last_error"]:
            print(f"  {row['name']}'s last error: {row['last_error']}", file=stream)
        if "refused" in row:
            print(f"  {row['name']} refused: {row['refused']}", file=stream)
    if any(not row["in_run"] for row in workers):
        print("  * not a worker of this run", file=stream)
    versions = sorted({row["version"] for row in workers if row["in_run"] and row["state"] == "alive"})
    if len(versions) > 1:
        print(f"  the alive workers run different versions of oddtrick: {', '.join(versions)}", file=stream)


def print_played(played: Sequence[dict[str, Any]], stream: TextIO) -> None:
    """Who played (or plays) each set, and the leases of it that came to nothing before."""
    print("sets (who played which):", file=stream)
    rows = [["set", "status", "worker", "seconds", "attempts", "before"]]
    for row in played:
        before = "; ".join(f"{lease['worker']} {lease['outcome']}" for lease in row["before"])
        rows.append([
            str(row["set"]), row["status"], row["worker"] or "-",
            "-" if row["seconds"] is None else f"{row['seconds']:.1f}", str(row["attempts"]), before or "-",
        ])  # fmt: skip
    columns(rows, stream)


def eta_line(eta: dict[str, Any]) -> str:
    """``ETA: …``: what is left, and how long it should take at the pace so far."""
    left, done = eta["sets_left"], eta["sets_done"]
    if left == 0:
        return f"ETA: none: no set is left ({done} done)"
    if eta["seconds_left"] is None:
        return f"ETA: {left} sets left; unknown until a set is done"
    pace = f"at the pace so far ({done} done in {_duration(eta['elapsed_seconds'])})"
    bound = "at most " if eta["at_most"] else ""
    return f"ETA: {left} sets left, {bound}{_duration(eta['seconds_left'])} {pace}"
