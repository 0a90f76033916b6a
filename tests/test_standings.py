"""Standings from deal results: hand-computed examples, invariants and the t quantile.

The examples are small enough to check on paper; the comments give the
arithmetic. ``plays`` builds the two plays of a duplicate deal the way the
runner records them: the match's first entry holds North-South at table 0,
the second at table 1.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oddtrick_referee.competitions.scoring.standings import (
    DealResult,
    FaultCounts,
    Forfeit,
    Standings,
    compute_standings,
    t_quantile,
)


def play(
    first: str, second: str, set_number: int, deal: int, table: int, ns: int, ew: int, *, swap: bool = False
) -> DealResult:
    """One play; the first entry holds North-South unless ``swap``."""
    ns_entry, ew_entry = (second, first) if swap else (first, second)
    return DealResult(
        match=f"{first}|{second}",
        first=first,
        second=second,
        set_number=set_number,
        deal_number=deal,
        table=table,
        ns_entry=ns_entry,
        ew_entry=ew_entry,
        ns_points=ns,
        ew_points=ew,
    )


def plays(
    first: str, second: str, set_number: int, deal: int, t0: tuple[int, int], t1: tuple[int, int]
) -> list[DealResult]:
    """Both plays of a duplicate deal: (ns, ew) points at table 0 (first is NS) and table 1 (second is NS)."""
    return [
        play(first, second, set_number, deal, 0, *t0),
        play(first, second, set_number, deal, 1, *t1, swap=True),
    ]


# alice|bob, three duplicate deals. alice's margin at table 0 (alice NS) is
# ns - ew; at table 1 (bob NS) it is ew - ns. Deal score = mean of the two.
HAND_DEALS = [
    plays("alice", "bob", 1, 1, (10, 0), (6, 0)),  # (+10 + -6) / 2 = +2
    plays("alice", "bob", 1, 2, (7, 0), (0, 3)),  # (+7 + +3) / 2 = +5
    plays("alice", "bob", 1, 3, (0, 2), (0, 0)),  # (-2 + 0) / 2 = -1
]
HAND_SCORES = [2.0, 5.0, -1.0]


def standings(deals: list[DealResult], *, duplicate: bool = True) -> Standings:
    """Standings of just the entries that appear in ``deals``, with no faults or forfeits."""
    names = sorted({d.first for d in deals} | {d.second for d in deals})
    return compute_standings(names, deals, {}, [], duplicate)


# --- hand-computed examples -------------------------------------------------


@pytest.mark.parametrize(("deal", "score"), list(zip(HAND_DEALS, HAND_SCORES, strict=True)))
def test_each_duplicate_deal_scores_the_mean_of_its_two_margins(deal: list[DealResult], score: float) -> None:
    result = standings(deal)
    assert result.row("alice").total_points == score
    assert result.row("bob").total_points == -score
    assert result.row("alice").deals == 1


def test_hand_computed_duplicate_match() -> None:
    result = standings([p for deal in HAND_DEALS for p in deal])
    alice, bob = result.row("alice"), result.row("bob")
    # Scores +2, +5, -1: mean 2, deviations 0, +3, -3, s^2 = 18 / 2 = 9, s = 3;
    # half width t(0.975, 2) * 3 / sqrt(3) = 4.303 * sqrt(3) = 7.453.
    assert alice.deals == bob.deals == 3
    assert alice.total_points == 6.0
    assert alice.points_per_deal == 2.0
    assert alice.ci_low == pytest.approx(2.0 - 7.453, abs=1e-3)
    assert alice.ci_high == pytest.approx(2.0 + 7.453, abs=1e-3)
    assert bob.points_per_deal == -2.0
    assert bob.ci_low == pytest.approx(-2.0 - 7.453, abs=1e-3)
    assert bob.ci_high == pytest.approx(-2.0 + 7.453, abs=1e-3)
    # Match total +6 for alice: a win.
    assert (alice.matches_won, alice.matches_drawn, alice.matches_lost) == (1, 0, 0)
    assert (bob.matches_won, bob.matches_drawn, bob.matches_lost) == (0, 0, 1)
    assert (alice.rank, bob.rank) == (1, 2)
    assert result.crosstable["alice"]["bob"].points_per_deal == 2.0
    assert result.crosstable["bob"]["alice"].points_per_deal == -2.0
    assert result.crosstable["alice"]["bob"].deals == 3
    assert result.unpaired == ()


def test_a_duplicate_deal_can_score_half_points() -> None:
    # alice +3 at table 0, -2 at table 1 (bob NS made 2 more): (3 - 2) / 2.
    result = standings(plays("alice", "bob", 1, 1, (3, 0), (2, 0)))
    assert result.row("alice").total_points == 0.5
    assert result.row("bob").total_points == -0.5


def test_a_drawn_match() -> None:
    # +2 and -2: the match sums to zero.
    result = standings(plays("a", "b", 1, 1, (4, 0), (0, 0)) + plays("a", "b", 1, 2, (0, 4), (0, 0)))
    for name in ("a", "b"):
        row = result.row(name)
        assert (row.matches_won, row.matches_drawn, row.matches_lost) == (0, 1, 0)
        assert row.match_points == 1
        assert row.points_per_deal == 0.0


# --- a round robin adds up ---------------------------------------------------


def round_robin(names: list[str]) -> list[DealResult]:
    """Every pair, two sets of two deals, points from a fixed arithmetic pattern."""
    deals = []
    for k, (first, second) in enumerate(itertools.combinations(names, 2)):
        for set_number, deal in itertools.product((1, 2), (1, 2)):
            base = 7 * k + 3 * set_number + deal
            deals += plays(
                first, second, set_number, deal, (base % 11, base % 5), ((base * 3) % 13, base % 7)
            )
    return deals


def test_round_robin_standings_add_up() -> None:
    names = ["alice", "bob", "carol"]
    result = standings(round_robin(names))
    # Every deal is counted once for each side, with opposite signs.
    assert sum(row.total_points for row in result.rows) == 0
    assert sum(row.deals for row in result.rows) == 2 * 3 * 4
    for row in result.rows:
        assert row.deals == 8  # two matches of four deals
        assert row.deals == sum(cell.deals for cell in result.crosstable[row.entry].values())
        assert row.points_per_deal == pytest.approx(row.total_points / row.deals)
        assert row.matches_won + row.matches_drawn + row.matches_lost == 2
    for e, f in itertools.permutations(names, 2):
        mirror = result.crosstable[f][e].points_per_deal
        assert mirror is not None
        assert result.crosstable[e][f].points_per_deal == -mirror
        assert result.crosstable[e][f].deals == result.crosstable[f][e].deals == 4
    assert set(result.crosstable) == set(names)
    assert all(e not in result.crosstable[e] for e in names)
    assert sorted(row.rank for row in result.rows) == [1, 2, 3]
    wins = sum(row.matches_won for row in result.rows)
    losses = sum(row.matches_lost for row in result.rows)
    assert wins == losses


# --- unpaired plays, forfeits, faults ---------------------------------------


def test_unpaired_plays_are_excluded_and_reported() -> None:
    lone0 = play("alice", "bob", 2, 1, 0, 50, 0)  # table 1 of this deal never played
    lone1 = play("alice", "bob", 2, 2, 1, 0, 40, swap=True)  # table 0 missing
    full = [p for deal in HAND_DEALS for p in deal]
    result = standings([lone1, *full, lone0])
    baseline = standings(full)
    assert result.unpaired == (lone0, lone1)
    assert result.rows == baseline.rows
    assert result.row("alice").deals == 3
    assert result.to_json()["unpaired"][0]["set_number"] == 2
    assert "2 unpaired play(s) ignored" in result.render()


def test_a_match_with_only_unpaired_plays_has_no_result() -> None:
    result = standings([play("a", "b", 1, 1, 0, 9, 0)])
    row = result.row("a")
    assert (row.matches_won, row.matches_drawn, row.matches_lost, row.deals) == (0, 0, 0, 0)
    assert len(result.unpaired) == 1


def test_forfeit_is_a_win_and_a_loss_without_deals_and_a_fault() -> None:
    result = compute_standings(
        ["alice", "bob", "carol"],
        [p for deal in HAND_DEALS for p in deal],
        {"carol": FaultCounts(timeouts=2, forfeits=1), "alice": FaultCounts(refusals=3)},
        [Forfeit(match="alice|carol", absent="carol", present="alice")],
        duplicate=True,
    )
    alice, carol = result.row("alice"), result.row("carol")
    assert (alice.matches_won, alice.matches_lost) == (2, 0)
    assert alice.deals == 3  # the forfeit adds no deals
    assert (carol.matches_won, carol.matches_drawn, carol.matches_lost) == (0, 0, 1)
    assert carol.deals == 0
    assert carol.points_per_deal is None
    assert carol.ci_low is None
    assert carol.ci_high is None
    assert carol.total_points == 0
    assert carol.faults == FaultCounts(timeouts=2, forfeits=2)  # 1 seat forfeit + 1 absence
    assert alice.faults == FaultCounts(refusals=3)
    assert result.row("bob").faults == FaultCounts()
    assert result.crosstable["alice"]["carol"].deals == 0
    assert result.crosstable["alice"]["carol"].points_per_deal is None
    # No deals at all ranks below every entry with deals, even bob at -2 per deal.
    assert [row.entry for row in result.rows] == ["alice", "bob", "carol"]
    text = result.render()
    assert "T2 F2" in text
    assert "R3" in text


def test_a_forfeit_after_some_deals_decides_the_match_and_the_deals_still_count() -> None:
    # alice led bob by 6 over three deals, then did not show up for the rest.
    result = compute_standings(
        ["alice", "bob"],
        [p for deal in HAND_DEALS for p in deal],
        {},
        [Forfeit("alice|bob", absent="alice", present="bob")],
        duplicate=True,
    )
    alice, bob = result.row("alice"), result.row("bob")
    assert (alice.matches_won, alice.matches_drawn, alice.matches_lost) == (0, 0, 1)
    assert (bob.matches_won, bob.matches_drawn, bob.matches_lost) == (1, 0, 0)
    assert alice.deals == bob.deals == 3
    assert alice.points_per_deal == 2.0
    assert alice.faults.forfeits == 1
    assert alice.rank == 1  # ranked by points per deal first


# --- non-duplicate -----------------------------------------------------------


def test_non_duplicate_scores_each_single_play() -> None:
    deals = [
        play("alice", "bob", 1, 1, 0, 5, 2),  # alice NS: +3
        play("alice", "bob", 1, 2, 0, 4, 0, swap=True),  # bob NS made 4: alice -4
    ]
    result = standings(deals, duplicate=False)
    alice, bob = result.row("alice"), result.row("bob")
    assert alice.total_points == -1.0
    assert alice.points_per_deal == -0.5
    assert bob.points_per_deal == 0.5
    # s = |3 - -4| / sqrt(2) = 4.9497; half width 12.706 * s / sqrt(2) = 12.706 * 3.5 = 44.471.
    assert alice.ci_low == pytest.approx(-0.5 - 44.471, abs=1e-2)
    assert alice.ci_high == pytest.approx(-0.5 + 44.471, abs=1e-2)
    assert (bob.matches_won, alice.matches_lost) == (1, 1)
    assert bob.rank == 1
    assert result.unpaired == ()
    assert result.to_json()["duplicate"] is False


def test_non_duplicate_single_deal_has_no_interval() -> None:
    result = standings([play("a", "b", 1, 1, 0, 5, 2)], duplicate=False)
    assert result.row("a").points_per_deal == 3.0
    assert result.row("a").ci_low is None
    assert result.to_json()["entries"][0]["ci95"] is None
    assert "n/a" in result.render()


def test_identical_play_is_called_no_variance_not_a_zero_width_interval() -> None:
    """Two bots that play alike: each deal's two tables mirror each other, every deal
    scores 0, and the standings say so rather than print [+0.00, +0.00]."""
    mirrored = [p for deal in range(1, 6) for p in plays("a", "b", 1, deal, (3 + deal, 7), (3 + deal, 7))]
    result = standings(mirrored)
    row = result.row("a")
    assert (row.points_per_deal, row.no_variance) == (0.0, True)
    assert result.to_json()["entries"][0]["no_variance"] is True
    text = result.render()
    assert "[+0.00, +0.00]" not in text
    assert "no variance: every deal of a (+0.00), b (+0.00) scored exactly the same" in text
    spread = standings([*mirrored, *plays("a", "b", 1, 6, (9, 4), (4, 9))])
    assert not spread.row("a").no_variance
    assert spread.variance_note() is None


def test_non_duplicate_rejects_a_second_table() -> None:
    with pytest.raises(ValueError, match="table 1"):
        standings([play("a", "b", 1, 1, 1, 5, 2)], duplicate=False)


# --- ranking -----------------------------------------------------------------


def test_ranking_ties_fall_to_match_points_then_name() -> None:
    single = [
        play("zed", "o1", 1, 1, 0, 4, 0),  # zed +4: win
        play("zed", "o2", 1, 1, 0, 0, 0),  # zed 0: draw -> zed 2 per deal, 3 match points
        play("amy", "o3", 1, 1, 0, 2, 0),  # amy 2 per deal, 2 match points
        play("cal", "o4", 1, 1, 0, 2, 0),  # cal and bea: 2 per deal, 2 match points
        play("bea", "o5", 1, 1, 0, 2, 0),
    ]
    result = standings(single, duplicate=False)
    # o3, o4 and o5 all lost with -2 per deal: by name. o1 (-4) is last.
    expected = ["zed", "amy", "bea", "cal", "o2", "o3", "o4", "o5", "o1"]
    assert [row.entry for row in result.rows] == expected
    assert [row.rank for row in result.rows] == list(range(1, 10))
    assert result.row("zed").match_points == 3
    assert result.row("amy").match_points == 2


# --- bad input is an error, not a result --------------------------------------


@pytest.mark.parametrize(
    ("entries", "deals", "forfeits", "message"),
    [
        (["a", "a"], [], [], "duplicate entry"),
        (["a"], [play("a", "b", 1, 1, 0, 1, 0)], [], "unknown"),
        (["a", "b"], [play("a", "b", 1, 1, 0, 1, 0)] * 2, [], "twice"),
        (["a", "b"], [play("a", "b", 1, 1, 2, 1, 0)], [], "table 2"),
        (["a", "b"], [play("a", "b", 1, 1, 0, 1, 0), play("a", "b", 1, 1, 1, 1, 0)], [], "swapped"),
        (
            ["a", "b", "c"],
            [play("a", "b", 1, 1, 0, 1, 0), dataclasses.replace(play("a", "c", 1, 2, 0, 1, 0), match="a|b")],
            [],
            "two pairings",
        ),
        (["a", "b", "c"], plays("a", "b", 1, 1, (1, 0), (0, 0)), [Forfeit("a|b", "c", "b")], "does not name"),
        (["a", "b"], [], [Forfeit("a|b", "a", "b")] * 2, "forfeited twice"),
        (["a", "b"], [], [Forfeit("a|b", "a", "x")], "unknown"),
    ],
)
def test_inconsistent_input_raises(
    entries: list[str], deals: list[DealResult], forfeits: list[Forfeit], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        compute_standings(entries, deals, {}, forfeits, duplicate=True)


def test_seats_must_be_the_matchs_entries() -> None:
    bad = DealResult("a|b", "a", "b", 1, 1, 0, "a", "c", 1, 0)
    with pytest.raises(ValueError, match="seats"):
        compute_standings(["a", "b", "c"], [bad], {}, [], duplicate=True)


def test_faults_for_an_unknown_entry_raise() -> None:
    with pytest.raises(ValueError, match="unknown entry"):
        compute_standings(["a", "b"], [], {"c": FaultCounts(timeouts=1)}, [], duplicate=True)


# --- JSON and text output --------------------------------------------------------


def test_to_json_round_trips_with_stable_keys() -> None:
    result = compute_standings(
        ["alice", "bob", "carol"],
        [p for deal in HAND_DEALS for p in deal],
        {"bob": FaultCounts(disconnected=1)},
        [Forfeit("bob|carol", absent="carol", present="bob")],
        duplicate=True,
    )
    data = result.to_json()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert set(data) == {
        "duplicate", "deal_set", "entries", "crosstable", "unpaired", "notes", "time_control", "method"
    }  # fmt: skip
    assert data["time_control"] is None
    assert data["notes"] == []
    first = data["entries"][0]
    assert set(first) == {
        "entry",
        "rank",
        "matches",
        "deals",
        "points_per_deal",
        "ci95",
        "total",
        "faults",
        "no_variance",
        "time",
    }
    assert first["time"]["answered"] == 0
    assert first["time"]["think_ms"] == {"p50": None, "p99": None, "max": None}
    assert first["entry"] == "alice"
    assert first["matches"] == {"won": 1, "drawn": 0, "lost": 0}
    assert first["ci95"][0] == pytest.approx(-5.453, abs=1e-3)
    assert first["total"] == 6.0
    assert set(first["faults"]) == {
        "timeouts",
        "illegal",
        "disconnected",
        "forfeits",
        "refusals",
        "bot_errors",
        "clock",
    }
    assert data["entries"][1]["faults"]["disconnected"] == 1
    assert data["entries"][2]["faults"]["forfeits"] == 1
    assert data["entries"][2]["points_per_deal"] is None
    assert data["crosstable"]["alice"]["bob"] == {"points_per_deal": 2.0, "deals": 3}
    assert data["crosstable"]["carol"]["bob"] == {"points_per_deal": None, "deals": 0}
    assert "alice" not in data["crosstable"]["alice"]
    assert isinstance(data["method"], str)
    assert "\n" not in data["method"]


def test_render_shows_every_entry_and_signed_numbers() -> None:
    result = standings([p for deal in HAND_DEALS for p in deal] + round_robin(["carol", "dave", "erin"]))
    text = result.render()
    for name in ("alice", "bob", "carol", "dave", "erin"):
        assert name in text
    assert "+2.00" in text
    assert "-2.00" in text
    assert "[-5.45, +9.45]" in text
    assert "1-0-0" in text
    assert "—" in text
    assert "\x1b" not in text
    for header in ("#", "entry", "W-D-L", "deals", "pts/deal", "95% CI", "faults"):
        assert header in text
    # The crosstable has one line per entry, with as many "—" as entries in total.
    assert text.count("—") == 5


def test_render_aligns_columns() -> None:
    text = standings([p for deal in HAND_DEALS for p in deal]).render()
    table = [line for line in text.splitlines() if line.startswith(("#", "1 ", "2 "))]
    assert len(table) == 3
    # Numbers are right-aligned: the pts/deal column ends at the same place on every line.
    end = table[0].index("pts/deal") + len("pts/deal")
    assert table[1][:end].endswith("+2.00")
    assert table[2][:end].endswith("-2.00")


# --- Student t quantile ---------------------------------------------------------


@pytest.mark.parametrize(
    ("df", "expected", "tolerance"),
    [
        (1, 12.706, 1e-3),
        (2, 4.303, 1e-3),
        (5, 2.571, 1e-3),
        (30, 2.042, 1e-3),
        # More digits, from published tables (scipy.stats.t.ppf agrees).
        (1, 12.7062047, 1e-6),
        (2, 4.3026527, 1e-6),
        (10, 2.2281389, 1e-6),
        (100, 1.9839715, 1e-6),
        (1000, 1.9623391, 1e-6),
        (10**6, 1.9599664, 1e-6),
        (math.inf, 1.9599640, 1e-6),
    ],
)
def test_t_quantile_975(df: float, expected: float, tolerance: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(expected, abs=tolerance)


def test_t_quantile_closed_forms_and_symmetry() -> None:
    for p in (0.6, 0.9, 0.99, 0.999):
        # df = 1 is the Cauchy distribution; df = 2 has a closed form too.
        assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-10)
        assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-10)
        for df in (1, 3, 8, 250):
            assert t_quantile(1 - p, df) == -t_quantile(p, df)
    assert t_quantile(0.5, 7) == 0.0
    assert t_quantile(0.025, 5) == pytest.approx(-2.571, abs=1e-3)


def test_t_quantile_is_continuous_where_the_method_changes() -> None:
    # Exact series up to 200 degrees of freedom, Cornish-Fisher above: the value
    # at 201 must continue the smooth curve through 198..200 (a quadratic
    # extrapolation is off by ~1e-8 here; a seam would show as much more).
    for p in (0.9, 0.975, 0.999):
        q = {df: t_quantile(p, df) for df in (198, 199, 200, 201)}
        assert q[201] == pytest.approx(3 * q[200] - 3 * q[199] + q[198], abs=1e-7)
        assert q[198] > q[199] > q[200] > q[201]


@pytest.mark.parametrize(("p", "df"), [(0.0, 5), (1.0, 5), (0.975, 0), (0.975, 2.5), (0.975, -math.inf)])
def test_t_quantile_rejects_bad_arguments(p: float, df: float) -> None:
    with pytest.raises(ValueError, match="must be"):
        t_quantile(p, df)


# --- property ----------------------------------------------------------------------


@st.composite
def tournaments(draw: st.DrawFn) -> tuple[list[str], list[DealResult], bool]:
    names = [f"bot{i}" for i in range(draw(st.integers(3, 5)))]
    duplicate = draw(st.booleans())
    points = st.integers(0, 40)
    deals: list[DealResult] = []
    for first, second in itertools.combinations(names, 2):
        for deal in range(1, draw(st.integers(0, 4)) + 1):
            tables = (0, 1) if duplicate else (0,)
            deals += [
                play(first, second, 1, deal, table, draw(points), draw(points), swap=table == 1)
                for table in tables
            ]
    return names, deals, duplicate


@given(tournaments())
def test_standings_invariants(tournament: tuple[list[str], list[DealResult], bool]) -> None:
    names, deals, duplicate = tournament
    result = compute_standings(names, deals, {}, [], duplicate)
    assert sum(row.total_points for row in result.rows) == 0
    assert sorted(row.entry for row in result.rows) == names
    for row in result.rows:
        assert row.deals == sum(cell.deals for cell in result.crosstable[row.entry].values())
        if row.points_per_deal is None:
            assert row.deals == 0
        if row.ci_low is not None and row.ci_high is not None:
            assert row.points_per_deal is not None
            assert row.ci_low <= row.points_per_deal <= row.ci_high
        else:
            assert row.deals < 2
    for e, f in itertools.permutations(names, 2):
        cell, mirror = result.crosstable[e][f], result.crosstable[f][e]
        assert cell.deals == mirror.deals
        if cell.points_per_deal is None:
            assert mirror.points_per_deal is None
        else:
            assert mirror.points_per_deal == -cell.points_per_deal
    assert json.loads(json.dumps(result.to_json(), allow_nan=False)) == result.to_json()
