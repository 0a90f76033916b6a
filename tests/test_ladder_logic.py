"""The ladder's pairing policy and ratings, as pure functions with fixed seeds."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest

from oddtrick.rules import Seat
from oddtrick_referee.competitions.ladder.leaderboard import leaderboard, stronger_probability
from oddtrick_referee.competitions.ladder.pairing import Candidate, Lineup, choose_lineup
from oddtrick_referee.competitions.ladder.ratings import Rater, Rating, RatingSettings
from oddtrick_referee.storage.ladder_store import EntrantRecord

DAY_MS = 86_400_000


def candidate(
    name: str, mu: float = 25.0, matches: int = 10, last: int | None = 1, **kw: object
) -> Candidate:
    values: dict[str, object] = {"free_seats": 1, "house": False}
    values.update(kw)
    return Candidate(name=name, mu=mu, matches=matches, last_played_ms=last, **values)  # type: ignore[arg-type]


def seats_of(lineup: Lineup) -> list[str]:
    return [name for table in lineup.tables for name in table.values()]


def test_every_seat_is_a_different_entrant_and_each_team_holds_both_directions() -> None:
    rng = random.Random(1)
    pool = [candidate(f"e{i}", mu=20 + i) for i in range(12)]
    for _ in range(200):
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        seats = seats_of(lineup)
        assert len(seats) == len(set(seats)) == 8
        one, two = lineup.tables
        assert {one[Seat.NORTH], one[Seat.SOUTH], two[Seat.EAST], two[Seat.WEST]} == set(lineup.team_a)
        assert {one[Seat.EAST], one[Seat.WEST], two[Seat.NORTH], two[Seat.SOUTH]} == set(lineup.team_b)


def test_no_match_without_eight_free_entrants_or_with_house_bots_only() -> None:
    rng = random.Random(2)
    assert choose_lineup([candidate(f"e{i}") for i in range(7)], rng) is None
    houses = [candidate(f"h{i}", house=True) for i in range(10)]
    assert choose_lineup(houses, rng) is None
    busy = [candidate(f"e{i}", free_seats=0) for i in range(8)]
    assert choose_lineup(busy, rng) is None
    lineup = choose_lineup([*houses, candidate("solo")], rng)
    assert lineup is not None
    assert "solo" in lineup.names


def test_entrants_take_seats_before_house_bots() -> None:
    rng = random.Random(3)
    entrants = [candidate(f"e{i}") for i in range(5)]
    houses = [candidate(f"h{i}", house=True, mu=25.0) for i in range(7)]
    for _ in range(50):
        lineup = choose_lineup([*houses, *entrants], rng)
        assert lineup is not None
        assert {f"e{i}" for i in range(5)} <= lineup.names


def test_the_newest_and_longest_waiting_entrant_anchors_the_match() -> None:
    rng = random.Random(4)
    pool = [candidate(f"old{i}", matches=50, last=1000 + i) for i in range(12)]
    pool.append(candidate("newcomer", mu=10.0, matches=0, last=None))
    for _ in range(20):
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        assert "newcomer" in lineup.names


def test_pairing_prefers_similar_ratings_but_mixes_further_away() -> None:
    rng = random.Random(5)
    low = [candidate(f"low{i}", mu=5.0 + i * 0.1) for i in range(10)]
    high = [candidate(f"high{i}", mu=40.0 + i * 0.1) for i in range(10)]
    anchor = candidate("anchor", mu=40.5, matches=0)
    mixed = 0
    for _ in range(300):
        lineup = choose_lineup([*low, *high, anchor], rng, explore=0.25)
        assert lineup is not None
        lows = sum(1 for name in lineup.names if name.startswith("low"))
        assert lows <= 7
        mixed += lows > 0
    # Mostly among its own level, yet regularly mixed (each of 7 seats explores with p = 0.25).
    assert 0.5 < mixed / 300 < 0.99


def test_the_leader_is_not_starved_when_everyone_waits() -> None:
    """Simulate a busy ladder: the anchor rule brings everyone round, the top entrant included."""
    rng = random.Random(6)
    mus = {f"e{i}": 10.0 + 2 * i for i in range(16)}
    played: Counter[str] = Counter()
    last: dict[str, int] = {}
    for clock in range(400):
        pool = [candidate(n, mu=m, matches=played[n], last=last.get(n)) for n, m in mus.items()]
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        for name in lineup.names:
            played[name] += 1
            last[name] = clock
    leader = max(mus, key=lambda n: mus[n])
    fair = 400 * 8 / len(mus)
    # Extremes are nobody's nearest neighbour, so they fill fewer seats than the middle,
    # but the anchor rule keeps every one of them, the leader included, near a fair share.
    assert played[leader] >= 0.8 * fair
    assert min(played.values()) >= 0.8 * fair


def test_an_identical_line_up_is_varied_while_someone_else_waits() -> None:
    rng = random.Random(7)
    pool = [candidate(f"e{i}") for i in range(9)]
    first = choose_lineup(pool, rng)
    assert first is not None
    for _ in range(30):
        again = choose_lineup(pool, rng, recent=[first.names])
        assert again is not None
        assert again.names != first.names


def test_trusted_pairs_seat_two_entrants_each_at_both_tables_in_both_directions() -> None:
    rng = random.Random(8)
    pool = [candidate("a", free_seats=4), candidate("b", free_seats=4), candidate("c", free_seats=3)]
    lineup = choose_lineup(pool, rng, trusted=True)
    assert lineup is not None
    assert lineup.names == {"a", "b"}
    one, two = lineup.tables
    a = lineup.team_a[0]
    assert one[Seat.NORTH] == one[Seat.SOUTH] == two[Seat.EAST] == two[Seat.WEST] == a
    assert lineup.seats_needed() == {"a": 4, "b": 4}


def test_a_team_that_wins_every_deal_gains_and_its_opponents_lose() -> None:
    rater = Rater(RatingSettings())
    start = Rating(25.0, 25.0 / 3)
    new_a, new_b = rater.rate_match([start] * 4, [start] * 4, [10, 3, 7])
    assert all(r.mu > 25 for r in new_a)
    assert all(r.mu < 25 for r in new_b)
    assert all(r.sigma < start.sigma for r in new_a + new_b)
    drawn_a, drawn_b = rater.rate_match([start] * 4, [start] * 4, [0, 0])
    assert drawn_a[0].mu == drawn_b[0].mu


def test_deals_within_the_draw_margin_are_draws() -> None:
    rater = Rater(RatingSettings(draw_margin=2.0))
    assert [rater.outcome(s) for s in (-3, -2, 0, 2, 3)] == ["b", "draw", "draw", "draw", "a"]


def test_ratings_recover_the_order_of_simulated_entrants() -> None:
    """Five entrants of known per-deal strength, three average house bots, noisy deals."""
    rng = random.Random(9)
    rater = Rater(RatingSettings())
    strength = {"e0": -3.0, "e1": -1.5, "e2": 0.0, "e3": 1.5, "e4": 3.0, "h0": 0.0, "h1": 0.0, "h2": 0.0}
    ratings = {name: Rating(25.0, 25.0 / 3) for name in strength}
    for _ in range(300):
        pool = [candidate(n, mu=r.mu, house=n.startswith("h")) for n, r in ratings.items()]
        lineup = choose_lineup(pool, rng)
        assert lineup is not None
        edge = sum(strength[n] for n in lineup.team_a) - sum(strength[n] for n in lineup.team_b)
        deals = [round(edge + rng.gauss(0, 8)) for _ in range(8)]
        new_a, new_b = rater.rate_match(
            [ratings[n] for n in lineup.team_a], [ratings[n] for n in lineup.team_b], deals
        )
        ratings.update(zip(lineup.team_a, new_a, strict=True))
        ratings.update(zip(lineup.team_b, new_b, strict=True))
    order = sorted(("e0", "e1", "e2", "e3", "e4"), key=lambda n: rater.conservative(ratings[n]))
    assert order == ["e0", "e1", "e2", "e3", "e4"]
    assert not any(rater.provisional(ratings[n]) for n in strength)


def test_an_inactive_entrant_is_marked_and_its_uncertainty_grows_but_never_past_the_start() -> None:
    settings = RatingSettings(inactive_after_s=7 * 86400, inactive_sigma_per_day=0.5)
    rater = Rater(settings)
    rating = Rating(30.0, 2.0)
    assert not rater.inactive(0, 6 * DAY_MS)
    assert rater.with_inactivity(rating, 0, 6 * DAY_MS) == rating
    assert rater.inactive(0, 8 * DAY_MS)
    grown = rater.with_inactivity(rating, 0, 11 * DAY_MS)
    assert grown.mu == 30.0
    assert 2.0 < grown.sigma < 3.0
    assert rater.with_inactivity(rating, 0, 10_000 * DAY_MS).sigma == settings.sigma
    assert not rater.inactive(None, 10_000 * DAY_MS)


def test_a_deal_won_by_more_moves_ratings_more_and_the_trusted_format_counts_four_seats() -> None:
    rater = Rater(RatingSettings())
    start = Rating(25.0, 25.0 / 3)
    narrow, _ = rater.rate_match([start] * 4, [start] * 4, [1])
    wide, wide_b = rater.rate_match([start] * 4, [start] * 4, [8])
    assert 25 < narrow[0].mu < wide[0].mu
    assert wide_b[0].mu == 50 - wide[0].mu
    assert narrow[0].sigma == wide[0].sigma < start.sigma
    # One freak deal counts no more than `outlier` standard deviations.
    freak, _ = rater.rate_match([start] * 4, [start] * 4, [10_000])
    capped, _ = rater.rate_match([start] * 4, [start] * 4, [100_000])
    assert freak == capped
    # Trusted pairs: one entrant holds all four seats of its team and moves accordingly.
    alone, other = rater.rate_match([start], [start], [8])
    assert alone[0].mu - 25 > wide[0].mu - 25
    assert other[0].mu == 50 - alone[0].mu
    assert rater.lost_deal() < -1
    assert Rater(RatingSettings(method="outcome")).lost_deal() == -1


def test_an_unknown_rating_method_is_refused() -> None:
    with pytest.raises(ValueError, match="margin, outcome"):
        Rater(RatingSettings(method="elo"))


def test_a_weaker_bot_is_placed_below_five_stronger_ones_within_twenty_matches() -> None:
    """The case that was seen on a ladder: after 14 matches a bot that plays at random half the
    time stood above five heuristic bots. Here it is 2 points per deal and seat weaker than
    five equal bots (the heuristic bot is about 4 better than the random one), with two
    average house bots; the noise is the sample bots' (5 points per table and deal)."""
    rater = Rater(RatingSettings())
    placed = 0
    for seed in range(10):
        rng = random.Random(seed)
        strength = {f"h{i}": 0.0 for i in range(5)} | {"half": -2.0, "x1": 0.0, "x2": 0.0}
        ratings = {name: Rating(25.0, 25.0 / 3) for name in strength}
        for _ in range(20):
            pool = [candidate(n, mu=r.mu, house=n.startswith("x")) for n, r in ratings.items()]
            lineup = choose_lineup(pool, rng)
            assert lineup is not None
            edge = sum(strength[n] for n in lineup.team_a) - sum(strength[n] for n in lineup.team_b)
            deals = [round(edge + rng.gauss(0, 5) - rng.gauss(0, 5)) for _ in range(8)]
            new_a, new_b = rater.rate_match(
                [ratings[n] for n in lineup.team_a], [ratings[n] for n in lineup.team_b], deals
            )
            ratings.update(zip(lineup.team_a, new_a, strict=True))
            ratings.update(zip(lineup.team_b, new_b, strict=True))
        half = rater.conservative(ratings["half"])
        placed += all(half < rater.conservative(ratings[f"h{i}"]) for i in range(5))
        assert not any(rater.provisional(r) for r in ratings.values())
    assert placed >= 8


def _entrant(name: str, mu: float, sigma: float, matches: int) -> EntrantRecord:
    return EntrantRecord(name, False, 0, None, mu, sigma, matches, 0, 0, 0, 0, 0, 1 if matches else None)


def test_provisional_entrants_are_listed_below_every_rated_one_and_neighbours_carry_odds() -> None:
    rater = Rater(RatingSettings())
    entrants = [
        _entrant("new-a", 25.0, 25.0 / 3, 0),
        _entrant("weak", 21.0, 1.0, 40),  # rated, conservative 18
        _entrant("strong", 27.0, 1.0, 40),
        _entrant("new-b", 25.0, 25.0 / 3, 0),
        _entrant("lucky", 30.0, 4.0, 2),
        _entrant("gone", 40.0, 1.0, 40),
    ]
    entrants[-1] = dataclasses.replace(entrants[-1], retired_ms=5)
    rows = leaderboard(entrants, rater, now_ms=10)
    assert [r.name for r in rows] == ["strong", "weak", "lucky", "new-a", "new-b"]
    assert [r.rank for r in rows] == [1, 2, 3, 4, 5]
    assert [r.provisional for r in rows] == [False, False, True, True, True]
    odds = [r.stronger_than_next for r in rows]
    assert odds[-1] is None
    assert odds[0] == stronger_probability(Rating(27.0, 1.0), Rating(21.0, 1.0))
    assert 0.999 < odds[0] < 1  # 6 points apart, sigma 1 each
    assert odds[3] == 0.5  # two newcomers: a coin toss
    assert stronger_probability(Rating(20, 1), Rating(25, 1)) < 0.01
    assert stronger_probability(Rating(25, 0), Rating(25, 0)) == 0.5
