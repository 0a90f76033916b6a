"""The sequential test (docs/sprt.md) played through a referee, between entries of any kind.

``oddtrick sprt`` plays two Python bot files in its own process; when an
entry is a ``cmd:`` program or a remote bot (any language), or the test is
to be played under the referee's clock, it is played here instead: a
two-entry duplicate tournament (:mod:`.tournament`, so the entries are
parsed, started, sandboxed and stored exactly as a tournament's) whose sets
are single deals, ``SEED-0``, ``SEED-1``, … as in-process, each played at
two tables with the partnerships swapped. After each deal pair the test
takes A's paired deal score; it stops when it decides or at the cap.

Pairs already stored by an earlier run of the same test (the same entries,
game, seed and rules) are not played again: a stopped test resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import trio

from oddtrick.deal_sets import DealSet
from oddtrick.rules import GameConfig
from oddtrick.sprt import SprtState
from oddtrick_referee.competitions.scoring.standings import DealResult, Standings
from oddtrick_referee.competitions.tournaments.tournament import Progress, Tournament
from oddtrick_referee.competitions.tournaments.tournament_plan import Entry, TableRun, TournamentSettings
from oddtrick_referee.play.table import TableRules


@dataclass(frozen=True)
class SequentialTest:
    """What the test plays and how long: the two entries (A first), the seed of the
    deals, the cap of deal pairs and how many are played at once."""

    a: Entry
    b: Entry
    config: GameConfig
    seed: str
    max_pairs: int
    pairs_at_once: int = 1
    rules: TableRules = dataclasses.field(default_factory=TableRules)
    remote_wait_s: float = 60.0
    bot_user: str | None = None
    deal_set: DealSet | None = None
    """Deal pair ``i`` plays the set's deal ``i`` (cycling past its end) instead of ``SEED-i``."""

    def settings(self) -> TournamentSettings:
        """The two-entry tournament the test is stored as; its name is a digest of
        what decides the deals and their play, so a re-run resumes it."""
        settings = TournamentSettings(
            entries=(self.a, self.b),
            config=self.config,
            deals=self.max_pairs,
            duplicate=True,
            set_size=1,
            tables=2 * self.pairs_at_once,
            rules=self.rules,
            remote_wait_s=self.remote_wait_s,
            bot_user=self.bot_user,
            seed=self.seed,
            deal_set=self.deal_set,
        )
        described = {**settings.describe(), "rules": self.rules.to_record(), "kind": "sprt"}
        digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()
        return dataclasses.replace(settings, name=f"sprt-{digest[:12]}")


def pair_runs(test: SequentialTest, index: int) -> tuple[TableRun, TableRun]:
    """The two plays of deal pair ``index``: the deal ``SEED-index``, A North-South at
    the first table, B at the second (set ``index + 1`` of the match ``A|B``)."""
    a, b = test.a.name, test.b.name
    seed = f"{test.seed}-{index}"
    key = f"{a}|{b}"
    first_deal = None if test.deal_set is None else index
    return (
        TableRun(key, index + 1, 0, a, b, 1, seed, first_deal),
        TableRun(key, index + 1, 1, b, a, 1, seed, first_deal),
    )


def pair_scores(deals: Sequence[DealResult], a: str) -> dict[int, float]:
    """A's paired deal score for every deal pair (set) both plays of which are stored:
    the mean of A's margin at the two tables, as :func:`oddtrick.duplicate.play_pair`."""
    margins: dict[int, dict[int, int]] = {}
    for deal in deals:
        difference = deal.ns_points - deal.ew_points
        margins.setdefault(deal.set_number, {})[deal.table] = (
            difference if deal.ns_entry == a else -difference
        )
    return {number: (m[0] + m[1]) / 2 for number, m in margins.items() if len(m) == 2}


@dataclass
class Outcome:
    """How the test ended: its state, the standings of every pair played, and the
    entry that never connected when that stopped it."""

    state: SprtState
    standings: Standings | None = None
    absent: str | None = None


def player(
    test: SequentialTest, state: SprtState, report: Callable[[SprtState], None], outcome: Outcome
) -> Callable[[Tournament, Progress, str], Awaitable[Standings]]:
    """The ``play`` of :func:`~.tournament.run_tournament` that plays deal pairs in
    order, ``pairs_at_once`` at a time, feeding A's scores to ``state`` in the order
    of their seeds (so the verdict does not depend on ``pairs_at_once``), until it
    decides, the cap is reached or an entry does not connect."""

    async def play(tournament: Tournament, progress: Progress, master_seed: str) -> Standings:
        index = 0
        while state.verdict == "undecided" and state.count < test.max_pairs:
            batch = range(index, min(index + test.pairs_at_once, test.max_pairs))
            index = batch.stop
            finished = await trio.to_thread.run_sync(tournament.store.finished_runs, tournament.id)
            runs = [run for number in batch for run in pair_runs(test, number) if run.key not in finished]
            async with trio.open_nursery() as nursery:
                for run in runs:
                    nursery.start_soon(tournament.play_run, run, progress)
            forfeits = await trio.to_thread.run_sync(tournament.store.forfeited_matches, tournament.id)
            if forfeits:
                outcome.absent = forfeits[0].absent
                break
            deals = await trio.to_thread.run_sync(tournament.store.deal_results, tournament.id)
            scores = pair_scores(deals, test.a.name)
            for number in batch:
                state.add(scores[number + 1])
                report(state)
                if state.verdict != "undecided" or state.count >= test.max_pairs:
                    break
        if outcome.absent is None and tournament.sealed:
            # The test is over: the deal pairs it will never play deal nothing to anyone.
            await tournament.publish(await trio.to_thread.run_sync(tournament.played_sets))
        outcome.standings = tournament.standings()
        return outcome.standings

    return play
