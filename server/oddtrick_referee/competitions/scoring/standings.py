"""Tournament standings from deal results (docs/standings.md).

Pure computation: the tournament runner hands over what happened (every
play of every deal, the fault counts, the forfeited matches) and gets back
the standings, a crosstable, a JSON-ready dict and a terminal rendering.
Nothing here does I/O, so the same results always give the same standings
and the arithmetic can be tested by hand.

The unit of comparison is the *deal score*: how many points an entry made
on a deal more than its opponent. Under duplicate the two plays of a deal
(same cards, partnerships swapped) are averaged into one score, so the luck
of the cards cancels and the pair, not the play, is the sample. Scores are
kept internally in half-points (integers) so sums, zero-sum checks, ties and
antisymmetry are exact rather than subject to float rounding.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from oddtrick._options import OptionValue, options_text
from oddtrick._timing import FALLBACK_WARNING_SHARE, TIME_NOTE, DecisionTimes, time_cells
from oddtrick_referee.competitions.scoring.dd_skill import METHOD as DD_METHOD
from oddtrick_referee.competitions.scoring.dd_skill import DdSkill
from oddtrick_referee.competitions.scoring.intervals import t_quantile
from oddtrick_referee.storage.results import DealResult, FaultCounts, Forfeit

__all__ = [
    "CrossCell",
    "DealResult",
    "FaultCounts",
    "Forfeit",
    "StandingRow",
    "Standings",
    "compute_standings",
    "deal_score_halves",
    "t_quantile",
]

FAULTS_LEGEND = (
    "faults: T timeouts, C clock (time bank) out, I illegal, D disconnected, F forfeits, R refusals, "
    "E bot errors"
)

METHOD = (
    "points per deal = mean over deals of (own points - opponent's points), a duplicate deal "
    "scored as the mean of its two plays (seats swapped); 95% CI = mean +/- t(0.975, n-1)*s/sqrt(n) "
    "over those deal scores, deals treated as independent; ranked by points per deal, then match "
    "points (win 2, draw 1), then name"
)


@dataclass(frozen=True)
class CrossCell:
    """The row entry's record against the column entry, from the row entry's side."""

    points_per_deal: float | None  # None when the two never completed a deal
    deals: int


@dataclass(frozen=True)
class StandingRow:
    """One entry's line in the standings.

    ``points_per_deal`` is None for an entry without a single counted deal
    (for instance one that forfeited every match): a mean of nothing is not
    zero. ``ci_low``/``ci_high`` are None with fewer than two deals, where a
    sample standard deviation does not exist.
    """

    entry: str
    rank: int
    matches_won: int
    matches_drawn: int
    matches_lost: int
    deals: int
    points_per_deal: float | None
    ci_low: float | None
    ci_high: float | None
    total_points: float
    faults: FaultCounts
    no_variance: bool = False
    """Two deals or more, every one scored exactly the same (two deterministic bots
    that play alike score 0 on every duplicate deal): the interval's width of zero
    is then no measure of anything, and the standings say so instead."""
    times: DecisionTimes = dataclasses.field(default_factory=DecisionTimes)
    """The entry's decision times: its bots' own think time and the lag apart."""

    @property
    def match_points(self) -> int:
        """Win 2, draw 1: the second ranking key."""
        return 2 * self.matches_won + self.matches_drawn


@dataclass(frozen=True)
class Standings:
    """The result of :func:`compute_standings`; rows are in rank order."""

    duplicate: bool
    rows: tuple[StandingRow, ...]
    crosstable: Mapping[str, Mapping[str, CrossCell]]  # crosstable[E][F], E != F
    unpaired: tuple[DealResult, ...]  # duplicate plays whose other table is missing
    notes: tuple[str, ...] = ()
    """What a reader of the faults column needs next: where a bot error's traceback is."""
    deal_set: str | None = None
    """The fixed deal set the deals came from (``--deals-from``: name, size, SHA-256)."""
    time_control: str | None = None
    """The tournament's time control (``5 s a decision; clock 60+0.5 (…)``), shown under the title."""
    in_process: str | None = None
    """The operator's bot files that played in the referee's process (``--in-process``):
    trusted, not walled off as other local entries are; shown under the title."""
    options: Mapping[str, Mapping[str, OptionValue]] | None = None
    """The entries started with bot options (``option.NAME=VALUE``): entry → its options,
    shown under the title (``options: strong think_seconds=2; …``)."""
    dd_skill: Mapping[str, DdSkill] | None = None
    """Each entry's double-dummy loss per deal (``oddtrick tournament --dd-skill``), or None
    when it was not asked for."""

    def row(self, entry: str) -> StandingRow:
        """The row of ``entry`` (KeyError, as a mapping's lookup, if it is not in the tournament:
        the callers ask for entries of the standings only, so it is a bug if it happens)."""
        for row in self.rows:
            if row.entry == entry:
                return row
        raise KeyError(entry)

    def to_json(self) -> dict[str, Any]:
        """A dict of plain JSON types with stable keys, for files and the API.

        Besides the documented keys, ``unpaired`` lists the ignored plays so a
        reader of the file can see that something was left out and what.
        """
        order = [row.entry for row in self.rows]
        return {
            "duplicate": self.duplicate,
            "deal_set": self.deal_set,
            "entries": [
                {
                    "entry": row.entry,
                    "rank": row.rank,
                    "matches": {
                        "won": row.matches_won,
                        "drawn": row.matches_drawn,
                        "lost": row.matches_lost,
                    },
                    "deals": row.deals,
                    "points_per_deal": row.points_per_deal,
                    "ci95": (
                        None if row.ci_low is None or row.ci_high is None else [row.ci_low, row.ci_high]
                    ),
                    "total": row.total_points,
                    "faults": dataclasses.asdict(row.faults),
                    "no_variance": row.no_variance,
                    "time": row.times.summary(row.faults.out_of_time),
                    **_dd_skill_json(self, row),
                }
                for row in self.rows
            ],
            "crosstable": {
                e: {
                    f: {
                        "points_per_deal": self.crosstable[e][f].points_per_deal,
                        "deals": self.crosstable[e][f].deals,
                    }
                    for f in order
                    if f != e
                }
                for e in order
            },
            "unpaired": [dataclasses.asdict(play) for play in self.unpaired],
            "notes": list(self.notes),
            "time_control": self.time_control,
            # Only when some entry played in the referee's process, so other files keep their keys.
            **({"in_process": self.in_process} if self.in_process is not None else {}),
            # Likewise only when some entry was given options: entry → its options.
            **({"options": {e: dict(o) for e, o in self.options.items()}} if self.options else {}),
            "method": METHOD,
            **_dd_skill_method(self),
        }

    def options_line(self) -> str:
        """``strong think_seconds=2 samples=40; quick think_seconds=0.1``: each entry given
        options, with them, as the header shows them."""
        return "; ".join(
            f"{entry} {options_text(options)}" for entry, options in (self.options or {}).items()
        )

    def variance_note(self) -> str | None:
        """A line naming the entries whose deals all scored the same, or None."""
        flat = [row for row in self.rows if row.no_variance]
        if not flat:
            return None
        names = ", ".join(f"{row.entry} ({_signed(row.points_per_deal)})" for row in flat)
        return (
            f"no variance: every deal of {names} scored exactly the same, so there is no interval; "
            "at 0 the bots played identically, and more deals will not separate them"
        )

    def fallback_note(self) -> str | None:
        """A warning naming the entries whose answers were fallbacks for want of time (their
        comments said so, ``oddtrick._timing.FALLBACK_PREFIX``) more often than
        :data:`FALLBACK_WARNING_SHARE`, or None: their results measure the fallback, not the
        bot, and nothing else in the standings would tell."""
        short = [row for row in self.rows if row.times.fallback_share > FALLBACK_WARNING_SHARE]
        if not short:
            return None
        names = ", ".join(
            f"{row.entry} {row.times.fallbacks} of {row.times.answer.total} ({row.times.fallback_share:.0%})"
            for row in short
        )
        return (
            f"short of time: answers its comments call fallbacks, its search having finished "
            f"nothing in time: {names}; these results measure the fallback more than the bot. "
            "Give it more time (--deadline, its think options) or a less busy machine"
        )

    def render_times(self) -> list[str]:
        """The time table: per entry its answered decisions, the median and 99th
        percentile of its think time and of the lag, and its time-outs."""
        header = ["entry", "answered", "think p50", "think p99", "lag p50", "lag p99", "time-outs"]
        body = [
            [row.entry, str(row.times.answer.total), *time_cells(row.times), str(row.faults.out_of_time)]
            for row in self.rows
        ]
        return [*_table(header, body, right=set(range(1, 7))), TIME_NOTE]

    def render(self) -> str:
        """Fixed-width plain-text tables (no colour codes) for a terminal or a log."""
        lines = [f"Standings ({'duplicate' if self.duplicate else 'single play per deal'})"]
        if self.time_control is not None:
            lines.append(f"time control: {self.time_control}")
        if self.deal_set is not None:
            lines.append(f"deals from {self.deal_set}")
        if self.in_process is not None:
            lines.append(f"in-process (trusted, not sandboxed): {self.in_process}")
        if self.options:
            lines.append(f"options: {self.options_line()}")
        lines.append("")
        dd_header = _dd_skill_header(self)
        header = ["#", "entry", "W-D-L", "deals", "pts/deal", "95% CI", *dd_header, "faults"]
        body = [
            [
                str(row.rank),
                row.entry,
                f"{row.matches_won}-{row.matches_drawn}-{row.matches_lost}",
                str(row.deals),
                _signed(row.points_per_deal),
                ci_text(row),
                *_dd_skill_cells(self, row),
                _fault_summary(row.faults),
            ]
            for row in self.rows
        ]
        lines += _table(header, body, right={0, 2, 3, 4, 5, *range(6, 6 + len(dd_header))})
        lines.append(FAULTS_LEGEND)
        if dd_header:
            lines.append(DD_LEGEND)
        if any(row.times.answer.total or row.faults.out_of_time for row in self.rows):
            lines += ["", *self.render_times()]
        lines += self.notes
        if (short := self.fallback_note()) is not None:
            lines.append(short)
        if (variance := self.variance_note()) is not None:
            lines.append(variance)
        if self.unpaired:
            lines.append(f"{len(self.unpaired)} unpaired play(s) ignored (other table missing)")

        order = [row.entry for row in self.rows]
        lines += ["", "Crosstable (row's points per deal against column, deals in brackets)", ""]
        cross = [[e] + ["—" if e == f else _cell(self.crosstable[e][f]) for f in order] for e in order]
        lines += _table(["", *order], cross, right=set(range(1, len(order) + 1)))
        return "\n".join(lines) + "\n"


def compute_standings(
    entries: Sequence[str],
    deals: Iterable[DealResult],
    faults: Mapping[str, FaultCounts],
    forfeits: Iterable[Forfeit],
    duplicate: bool,
    times: Mapping[str, DecisionTimes] | None = None,
) -> Standings:
    """Standings of a tournament from every play of every deal.

    ``faults`` holds what the referee counted during the matches (including
    seats forfeited when the grace period ran out); each :class:`Forfeit`
    (a match never played) adds one to the absent entry's ``forfeits``, so
    ``faults`` must not count those matches already. ``times`` (per entry) are
    shown beside the faults, never folded into the score.

    Inconsistent input is a bug in the runner, not a result, so it raises
    ValueError instead of being guessed around: an unknown entry, a play whose
    seats are not the match's two entries, the same play recorded twice, a
    table other than 0 (single play) or 0/1 (duplicate), two plays of a
    duplicate deal without swapped seats, a match key used for two pairings,
    or a forfeit that does not name its match's entries. Plays of a duplicate
    deal whose other table is missing are not an error (a tournament stopped
    mid-deal): they are left out and listed in ``Standings.unpaired``.

    A match can be forfeited after some of its tables were played (an entry
    that stops connecting mid-tournament): the forfeit decides the match,
    and the deals completed before it still count, since they were played.

    """
    names = _checked_names(entries, faults)
    known = set(names)
    pairing, plays = _checked_plays(deals, known, duplicate)
    forfeited = _checked_forfeits(forfeits, known, pairing)
    # Deal scores in half-points, from the match's first entry's side.
    scored, unpaired = _deal_scores(plays, duplicate)
    tally = _Tally.of(names, scored)
    results = _MatchResults.of(names, tally.match_sum, pairing, forfeited)
    rows = _rows(names, tally.halves, results, faults, times or {})
    return Standings(duplicate=duplicate, rows=rows, crosstable=tally.crosstable(names), unpaired=unpaired)


def _checked_names(entries: Sequence[str], faults: Mapping[str, FaultCounts]) -> list[str]:
    names = list(entries)
    known = set(names)
    if len(known) != len(names):
        raise ValueError(f"duplicate entry names in {names!r}")
    for name in faults:
        if name not in known:
            raise ValueError(f"fault counts for unknown entry {name!r}")
    return names


def _checked_plays(
    deals: Iterable[DealResult], known: set[str], duplicate: bool
) -> tuple[dict[str, tuple[str, str]], dict[tuple[str, int, int, int], DealResult]]:
    """Each match's pairing, and every play by (match, set, deal, table), each play checked."""
    pairing: dict[str, tuple[str, str]] = {}
    plays: dict[tuple[str, int, int, int], DealResult] = {}
    for play in deals:
        _check_play(play, known, duplicate, pairing)
        key = (play.match, play.set_number, play.deal_number, play.table)
        if key in plays:
            raise ValueError(f"play recorded twice: {key!r}")
        plays[key] = play
    return pairing, plays


def _checked_forfeits(
    forfeits: Iterable[Forfeit], known: set[str], pairing: Mapping[str, tuple[str, str]]
) -> dict[str, Forfeit]:
    """The forfeits by match, each naming its match's two entries, one forfeit a match."""
    forfeited: dict[str, Forfeit] = {}
    for forfeit in forfeits:
        if forfeit.absent not in known or forfeit.present not in known or forfeit.absent == forfeit.present:
            raise ValueError(f"forfeit between unknown or identical entries: {forfeit!r}")
        if forfeit.match in forfeited:
            raise ValueError(f"match {forfeit.match!r} forfeited twice")
        if forfeit.match in pairing and set(pairing[forfeit.match]) != {forfeit.absent, forfeit.present}:
            raise ValueError(f"forfeit {forfeit!r} does not name the entries of match {forfeit.match!r}")
        forfeited[forfeit.match] = forfeit
    return forfeited


@dataclass
class _Tally:
    """The deal scores (half-points) summed by entry, by pair of entries and by match."""

    halves: dict[str, list[int]]
    pair_sum: dict[tuple[str, str], int]
    pair_deals: dict[tuple[str, str], int]
    match_sum: dict[str, int]

    @classmethod
    def of(cls, names: Sequence[str], scored: Iterable[tuple[str, tuple[str, str], int]]) -> _Tally:
        tally = cls({name: [] for name in names}, {}, {}, {})
        for match, (first, second), score in scored:
            tally.halves[first].append(score)
            tally.halves[second].append(-score)
            for e, f, s in ((first, second, score), (second, first, -score)):
                tally.pair_sum[e, f] = tally.pair_sum.get((e, f), 0) + s
                tally.pair_deals[e, f] = tally.pair_deals.get((e, f), 0) + 1
            tally.match_sum[match] = tally.match_sum.get(match, 0) + score
        return tally

    def crosstable(self, names: Sequence[str]) -> dict[str, dict[str, CrossCell]]:
        pair_sum, pair_deals = self.pair_sum, self.pair_deals
        return {
            e: {
                f: CrossCell(
                    points_per_deal=(
                        pair_sum[e, f] / (2 * pair_deals[e, f]) if pair_deals.get((e, f)) else None
                    ),
                    deals=pair_deals.get((e, f), 0),
                )
                for f in names
                if f != e
            }
            for e in names
        }


@dataclass
class _MatchResults:
    """Matches won, drawn and lost by entry, and the forfeits each entry's absence cost."""

    won: dict[str, int]
    drawn: dict[str, int]
    lost: dict[str, int]
    absences: dict[str, int]

    @classmethod
    def of(
        cls,
        names: Sequence[str],
        match_sum: Mapping[str, int],
        pairing: Mapping[str, tuple[str, str]],
        forfeited: Mapping[str, Forfeit],
    ) -> _MatchResults:
        results = cls(
            dict.fromkeys(names, 0), dict.fromkeys(names, 0), dict.fromkeys(names, 0), dict.fromkeys(names, 0)
        )
        won, drawn, lost = results.won, results.drawn, results.lost
        # A match whose plays were all unpaired has no deal score and so no result;
        # a forfeited match's result is the forfeit, whatever was played before it.
        for match, total in match_sum.items():
            if match in forfeited:
                continue
            first, second = pairing[match]
            if total > 0:
                won[first] += 1
                lost[second] += 1
            elif total < 0:
                won[second] += 1
                lost[first] += 1
            else:
                drawn[first] += 1
                drawn[second] += 1
        for forfeit in forfeited.values():
            won[forfeit.present] += 1
            lost[forfeit.absent] += 1
            results.absences[forfeit.absent] += 1
        return results


def _rows(
    names: Sequence[str],
    halves: Mapping[str, list[int]],
    results: _MatchResults,
    faults: Mapping[str, FaultCounts],
    times: Mapping[str, DecisionTimes],
) -> tuple[StandingRow, ...]:
    """The rows, ranked by points per deal, then match points, then name."""

    def rank_key(name: str) -> tuple[bool, Fraction, int, str]:
        n = len(halves[name])
        mean = Fraction(sum(halves[name]), n) if n else Fraction(0)
        return (n == 0, -mean, -(2 * results.won[name] + results.drawn[name]), name)

    rows = []
    for rank, name in enumerate(sorted(names, key=rank_key), start=1):
        xs = halves[name]
        mean, low, high = _mean_and_interval(xs)
        no_variance = len(xs) >= 2 and len(set(xs)) == 1
        counted = faults.get(name, FaultCounts())
        rows.append(
            StandingRow(
                entry=name,
                rank=rank,
                matches_won=results.won[name],
                matches_drawn=results.drawn[name],
                matches_lost=results.lost[name],
                deals=len(xs),
                points_per_deal=mean,
                ci_low=low,
                ci_high=high,
                total_points=sum(xs) / 2,
                faults=dataclasses.replace(counted, forfeits=counted.forfeits + results.absences[name]),
                no_variance=no_variance,
                times=times.get(name, DecisionTimes()),
            )
        )
    return tuple(rows)


# Above this many degrees of freedom t_quantile switches from the exact series
# (whose length grows with df) to the Cornish-Fisher expansion (whose error
# shrinks as df^-5): at 200 both are far inside the 1e-3 the interval needs.
def _check_play(
    play: DealResult, known: set[str], duplicate: bool, pairing: dict[str, tuple[str, str]]
) -> None:
    """Reject a play the runner could not have produced correctly (see compute_standings)."""
    if play.first not in known or play.second not in known or play.first == play.second:
        raise ValueError(f"play between unknown or identical entries: {play!r}")
    if {play.ns_entry, play.ew_entry} != {play.first, play.second}:
        raise ValueError(f"seats are not the match's two entries: {play!r}")
    if play.table not in ((0, 1) if duplicate else (0,)):
        raise ValueError(f"table {play.table} with duplicate={duplicate}: {play!r}")
    pair = (play.first, play.second)
    if pairing.setdefault(play.match, pair) != pair:
        raise ValueError(f"match {play.match!r} names two pairings: {pairing[play.match]!r} and {pair!r}")


def _margin(play: DealResult) -> int:
    """The match's first entry's points minus the second's at this table."""
    diff = play.ns_points - play.ew_points
    return diff if play.ns_entry == play.first else -diff


def deal_score_halves(play: DealResult, other: DealResult | None = None) -> int:
    """The deal score the standings count, in half-points, from the match's first entry's side:
    the two plays' margins added (their mean, doubled) for a duplicate deal, a single play's
    margin doubled otherwise. Public so that a page showing a deal's two tables shows the very
    number the standings add up."""
    if other is None:
        return 2 * _margin(play)
    return _margin(play) + _margin(other)


def _deal_scores(
    plays: Mapping[tuple[str, int, int, int], DealResult], duplicate: bool
) -> tuple[list[tuple[str, tuple[str, str], int]], tuple[DealResult, ...]]:
    """Each counted deal as (match, pairing, first entry's score in half-points), and the unpaired plays.

    Half-points: a duplicate score is the sum of the two margins (their mean
    times two); a single play's score is its margin times two.
    """
    scored: list[tuple[str, tuple[str, str], int]] = []
    unpaired: list[DealResult] = []
    for key in sorted(plays):
        match, set_number, deal_number, table = key
        play = plays[key]
        pair = (play.first, play.second)
        if not duplicate:
            scored.append((match, pair, deal_score_halves(play)))
            continue
        if table == 1:
            # Scored with its table 0 (which sorts first) unless that is missing.
            if (match, set_number, deal_number, 0) not in plays:
                unpaired.append(play)
            continue
        other = plays.get((match, set_number, deal_number, 1))
        if other is None:
            unpaired.append(play)
            continue
        if other.ns_entry == play.ns_entry:
            raise ValueError(f"duplicate plays without swapped seats: {play!r} and {other!r}")
        scored.append((match, pair, deal_score_halves(play, other)))
    return scored, tuple(unpaired)


def _mean_and_interval(halves: Sequence[int]) -> tuple[float | None, float | None, float | None]:
    """Mean and 95% t interval of deal scores given in half-points.

    The variance is computed exactly in integers (n * sum x^2 - (sum x)^2)
    so that identical scores give exactly zero width and rounding cannot put
    the mean outside its own interval.
    """
    n = len(halves)
    if n == 0:
        return None, None, None
    total = sum(halves)
    mean = total / (2 * n)
    if n < 2:
        return mean, None, None
    spread = n * sum(x * x for x in halves) - total * total  # = n (n-1) var, in half-points squared
    s = math.sqrt(spread / (n * (n - 1))) / 2
    half_width = t_quantile(0.975, n - 1) * s / math.sqrt(n)
    return mean, mean - half_width, mean + half_width


DD_HEADER = ["DD lost/deal", "DD 95% CI"]
DD_LEGEND = (
    "DD lost/deal: tricks the entry's cards lost per deal against the best card with all hands "
    "known (double-dummy; lower is better)"
)


def _dd_skill_header(standings: Standings) -> list[str]:
    """The double-dummy columns' headings, none when the measure was not asked for."""
    return DD_HEADER if standings.dd_skill is not None else []


def _dd_skill_cells(standings: Standings, row: StandingRow) -> list[str]:
    """One entry's double-dummy loss per deal and its 95% interval (``--dd-skill``)."""
    if standings.dd_skill is None:
        return []
    skill = standings.dd_skill.get(row.entry)
    if skill is None or skill.lost_per_deal is None:
        return ["n/a", "n/a"]
    if skill.ci_low is None or skill.ci_high is None:
        return [f"{skill.lost_per_deal:.2f}", "n/a"]
    return [f"{skill.lost_per_deal:.2f}", f"[{skill.ci_low:.2f}, {skill.ci_high:.2f}]"]


def _dd_skill_json(standings: Standings, row: StandingRow) -> dict[str, Any]:
    """``dd_skill`` for one entry's JSON, only when the measure was asked for."""
    if standings.dd_skill is None:
        return {}
    skill = standings.dd_skill.get(row.entry)
    return {"dd_skill": None if skill is None else skill.to_json()}


def _dd_skill_method(standings: Standings) -> dict[str, Any]:
    return {} if standings.dd_skill is None else {"dd_skill_method": DD_METHOD}


def ci_text(row: StandingRow) -> str:
    """The 95% interval column: ``[low, high]``, ``n/a`` under two deals, or
    ``none`` when every deal scored the same (see :attr:`StandingRow.no_variance`)."""
    if row.ci_low is None or row.ci_high is None:
        return "n/a"
    if row.no_variance:
        return "none"
    return f"[{_signed(row.ci_low)}, {_signed(row.ci_high)}]"


def _signed(value: float | None) -> str:
    """Two decimals with an explicit sign, never "-0.00" for an exact zero."""
    if value is None:
        return "n/a"
    return f"{value + 0.0:+.2f}"


def _cell(cell: CrossCell) -> str:
    return "n/a" if cell.points_per_deal is None else f"{_signed(cell.points_per_deal)} ({cell.deals})"


def _fault_summary(faults: FaultCounts) -> str:
    """Only the non-zero counts, abbreviated: the usual case is a clean '-'."""
    parts = [
        f"{letter}{count}"
        for letter, count in (
            ("T", faults.timeouts),
            ("C", faults.clock),
            ("I", faults.illegal),
            ("D", faults.disconnected),
            ("F", faults.forfeits),
            ("R", faults.refusals),
            ("E", faults.bot_errors),
        )
        if count
    ]
    return " ".join(parts) or "-"


def _table(header: list[str], body: list[list[str]], right: set[int]) -> list[str]:
    """Columns padded to their widest cell, two spaces apart; numbers right-aligned."""
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

    def fmt(line: list[str]) -> str:
        cells = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        return "  ".join(cells).rstrip()

    return [fmt(header), fmt(["-" * w for w in widths]), *(fmt(line) for line in body)]
