"""A strong bot: Perfect Information Monte Carlo, the method of the best card-play programs.

For each decision it deals the cards it cannot see many times over, each deal
consistent with everything the seat knows: the cards played, the suits each
player has shown out of, the turned trump card (in the dealer's hand until it
is played) and, in Contract Whist, what the auction says about the bidders'
and passers' hands. Each sampled deal is then solved double-dummy (every card
known, perfect play from here) with DDS, and the bot plays the card, or makes
the call, whose average *score* over the samples is best: the deal's points
for our side less the other side's, not merely tricks, so it knows that the
seventh trick in classic Whist or the contract's last trick is worth more.

Every decision has a time budget (``think_seconds``, and never past the
referee's deadline less a margin measured for transport): samples are solved
one at a time on the SDK's anytime worker (:mod:`oddtrick.anytime`), and the
best answer found so far is played when the budget runs out, even while a
solve is still running.

Needs the ``strong`` extra (``pip install 'oddtrick[strong]'``) for DDS.
Try it::

    oddtrick bot sample_bots/pimc_bot.py:PimcBot --server HOST:PORT --name me --token TOKEN

Its tunables are options (``Bot.options``): ``option.think_seconds=2 option.samples=40``
after the bot file, in ``oddtrick bot`` or after a tournament's ``--bot NAME=FILE.py``;
``oddtrick bot sample_bots/pimc_bot.py --check-options`` lists them. ``option.level=N``
picks one of the graded :data:`LEVELS` (docs/strong-bot.md gives their measured strengths).

Every decision's comment (in the match log and the replays) says how many sampled deals
were solved in how long. One for which none was solved in time is the heuristic bot's
answer, and its comment begins ``fallback:`` (:data:`oddtrick.anytime.FALLBACK_PREFIX`),
which the referee counts: the standings warn when an entry fell back on more than a tenth
of its decisions, for its results then measure the heuristic bot, not this one.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import oddtrick
from oddtrick import PASS, Call, Card, Decision, Denomination, OptionError, Phase, Rank, Seat
from oddtrick.anytime import FALLBACK_PREFIX, Budget, anytime, budget

# The auction's policy (when to open, compete, leave partner's contract alone)
# is the heuristic bot's; only its trick estimates are replaced by sampling.
from oddtrick.bots import STRONG_LEVELS, auction_simulation
from oddtrick.bots.heuristic_bot import HeuristicBot, highest_bid
from oddtrick.double_dummy import Hands, Position, max_tricks, solve
from oddtrick.rules import PACK, GameKind, Side, contract_points, odd_tricks

HIGH_CARD_POINTS = {Rank.ACE: 4, Rank.KING: 3, Rank.QUEEN: 2, Rank.JACK: 1}
"""Milton Work's count, the usual measure of a hand's strength: 40 points in the pack."""


class SamplingFailed(Exception):
    """No deal of the unseen cards fits what the seat knows (it cannot happen
    with a consistent view; the sampler gives up after many tries)."""


# ------------------------------------------------------------------ scoring


def margins(view: oddtrick.BotView) -> tuple[int, ...]:
    """Our points less theirs in this hand for each count of our side's tricks, 0 to 13,
    scored by the rules themselves (:func:`oddtrick.rules.odd_tricks`,
    :func:`oddtrick.rules.contract_points`): a table, since each sampled deal asks it once
    per legal card."""
    assert view.seat is not None
    us = view.seat.side
    contract = view.contract
    if view.config.game is GameKind.CLASSIC or contract is None:
        return tuple(odd_tricks(tricks) - odd_tricks(13 - tricks) for tricks in range(14))
    table = []
    for tricks in range(14):
        by_side = (tricks, 13 - tricks) if us is Side.NORTH_SOUTH else (13 - tricks, tricks)
        points, _, _ = contract_points(contract, by_side)
        table.append(points[us] - points[us.other])
    return tuple(table)


# ----------------------------------------------------------------- sampling


class Knowledge:
    """What one seat knows about where the unseen cards are."""

    def __init__(self, view: oddtrick.BotView) -> None:
        assert view.seat is not None, "a bot always has a seat"
        self.me = view.seat
        self.hand = tuple(view.hand)
        played_by: dict[Seat, int] = dict.fromkeys(Seat, 0)
        for trick in view.tricks:
            for seat, _ in trick.plays:
                played_by[seat] += 1
        for seat, _ in view.current_trick:
            played_by[seat] += 1
        self.counts = {seat: 13 - played_by[seat] for seat in Seat if seat is not self.me}
        seen = set(view.played_cards) | set(self.hand)
        self.fixed: dict[Card, Seat] = {}
        turned = view.turned_card
        if turned is not None and turned not in seen and view.dealer is not self.me:
            self.fixed[turned] = view.dealer  # the turned trump is the dealer's until played
        self.unseen = [card for card in PACK if card not in seen and card not in self.fixed]
        voids = view.voids()
        self.allowed = {
            card: [seat for seat in self.counts if card.suit not in voids[seat]] for card in self.unseen
        }

    def sample(self, rng: random.Random, tries: int = 200) -> Hands:
        """One deal of the unseen cards consistent with the counts, the voids and
        the fixed cards; the most constrained cards are placed first."""
        for _ in range(tries):
            room = dict(self.counts)
            hands: dict[Seat, list[Card]] = {seat: [] for seat in Seat}
            hands[self.me] = list(self.hand)
            for card, seat in self.fixed.items():
                hands[seat].append(card)
                room[seat] -= 1
            cards = list(self.unseen)
            rng.shuffle(cards)
            cards.sort(key=lambda card: len(self.allowed[card]))
            for card in cards:
                seats = [seat for seat in self.allowed[card] if room[seat] > 0]
                if not seats:
                    break
                seat = rng.choices(seats, weights=[room[seat] for seat in seats])[0]
                hands[seat].append(card)
                room[seat] -= 1
            else:
                return (
                    tuple(hands[Seat.NORTH]),
                    tuple(hands[Seat.EAST]),
                    tuple(hands[Seat.SOUTH]),
                    tuple(hands[Seat.WEST]),
                )
        raise SamplingFailed("no deal of the unseen cards fits the voids shown")


def high_card_points(cards: Sequence[Card]) -> int:
    """The hand's :data:`HIGH_CARD_POINTS` (10 is an average hand): what the auction
    model reads a bid or a pass as saying about the caller's cards."""
    return sum(HIGH_CARD_POINTS.get(card.rank, 0) for card in cards)


def auction_likelihood(auction: Sequence[tuple[Seat, Call]], me: Seat, hands: Hands) -> float:
    """How well a sampled deal fits the auction, between 0 and 1 (a sample is
    kept with this probability). The model is the textbook one most bots
    follow: a player's first bid names a suit of four or more cards, and one
    that opens the bidding has about an opening hand (10+ high-card points);
    a player who passes while nobody has bid has less than about 14."""
    likelihood = 1.0
    opened = False
    have_bid: set[Seat] = set()
    for seat, call in auction:
        first = call.is_bid and seat not in have_bid
        if call.is_bid:
            have_bid.add(seat)
        if seat is me:
            opened = opened or call.is_bid
            continue
        cards = hands[seat]
        if first:
            suit = call.denomination.suit if call.denomination is not None else None
            if suit is not None:
                length = sum(1 for card in cards if card.suit is suit)
                likelihood *= 0.35 ** max(0, 4 - length)
            if not opened:
                likelihood *= 0.6 ** (max(0, 10 - high_card_points(cards)) / 2)
        elif call is PASS and not opened:
            likelihood *= 0.6 ** (max(0, high_card_points(cards) - 13) / 2)
        opened = opened or call.is_bid
    return likelihood


# ------------------------------------------------------------------- levels


@dataclasses.dataclass(frozen=True)
class Level:
    """A graded strength: how many deals the bot may sample, and for how long it may think."""

    samples: int
    call_samples: int
    think_seconds: float


LEVELS: dict[int, Level] = {
    1: Level(samples=2, call_samples=1, think_seconds=1.0),
    2: Level(samples=6, call_samples=3, think_seconds=1.0),
    3: Level(samples=24, call_samples=12, think_seconds=1.0),
}
"""``option.level=N``: the bot at a named strength, each level sampling three to four times
as many deals as the one below (level 3 is the bot's defaults). Samples, not seconds,
set them, so that they play alike on a fast and on a busy machine (their second of
thinking is a cap they seldom reach). There is no level above the defaults: 64 samples
a card in 2 s, at twice the time, was not measured stronger than 24 in 1 s (classic
Whist: +0.13 and +0.05 a deal on 120 and 250 deal pairs, neither interval above zero;
Contract Whist: +1.04 against the heuristic bot on the 60 deal pairs where level 3 took
+1.36), and a level the benchmark cannot tell from the one below would promise what it
does not give. Measured strengths: docs/strong-bot.md."""


assert tuple(LEVELS) == STRONG_LEVELS, "the levels the commands name are these"


def level_text() -> str:
    """``1 (2 samples a card, …), 2 (…)``: the levels as an error message lists them."""
    return ", ".join(
        f"{number} ({level.samples} samples a card, {level.call_samples} a call, {level.think_seconds:g} s)"
        for number, level in LEVELS.items()
    )


def search_comment(done: int, asked: int, seconds: float) -> str:
    """A decision's comment: the samples solved, and ``fallback:`` first when none was."""
    said = f"{done} of {asked} samples solved in {seconds:.2f} s"
    return f"{FALLBACK_PREFIX} {said}; the heuristic bot's answer" if done == 0 else said


def is_close(values: dict[Card, list[float]], errors: float = 2.0) -> bool:
    """Whether more samples may change the best card: its lead over the next best is under
    ``errors`` standard errors of their deal-by-deal difference (cards equal on every
    sample are not close: no sample will part them)."""
    count = min((len(scores) for scores in values.values()), default=0)
    if count < 2 or len(values) < 2:
        return False
    ranked = sorted(values, key=lambda card: sum(values[card][:count]), reverse=True)
    lead, error = auction_simulation.paired_lead(values[ranked[0]][:count], values[ranked[1]][:count])
    return lead < errors * error


# ---------------------------------------------------------------------- bot


def best_card(totals: dict[Card, float], preferred: Card | None = None, tolerance: float = 1e-9) -> Card:
    """The card of the best total. Among cards within ``tolerance`` of it, the
    ``preferred`` one if it is there, else the lowest, keeping high cards."""
    best = max(totals.values())
    good = [card for card, total in totals.items() if total >= best - tolerance]
    if preferred in good:
        return preferred
    return min(good, key=lambda card: (card.rank, card.suit))


class PimcBot(HeuristicBot):
    """Samples consistent deals, solves each double-dummy, picks the best average.

    In the auction it keeps the heuristic bot's policy (bid the cheapest
    contract our side should make, compete a little below it, leave partner's
    contract alone unless ours is clearly better) but estimates the tricks by
    sampling: for each denomination, the average double-dummy tricks our side
    takes with this seat declaring, over deals consistent with the auction so
    far, combined with the heuristic's own count by how many deals were solved.
    """

    name = "pimc"
    version = "1"
    options: ClassVar[tuple[str, ...]] = (
        "level",
        "think_seconds",
        "samples",
        "call_samples",
        "call_think_factor",
        "deadline_share",
        "prior_samples",
        "tie_margin",
        "optimism",
        "close_factor",
        "simulate_auction",
        "jump_levels",
        "call_tie_margin",
        "call_confidence",
    )
    """Each tunable below (and the heuristic bot's), set from a command line with
    ``option.NAME=VALUE``: ``option.think_seconds=2 option.samples=40``."""

    level: ClassVar[int] = 0
    """One of :data:`LEVELS` (1 to 3) sets ``samples``, ``call_samples`` and
    ``think_seconds`` at once, unless they are given too; 0, the default, leaves them be
    (the bot's own settings are level 3's)."""

    samples: ClassVar[int] = 24
    """At most this many sampled deals per card decision."""
    call_samples: ClassVar[int] = 12
    """At most this many per call (each solves one contract per denomination)."""
    think_seconds: ClassVar[float] = 1.0
    """Time budget per decision (never past the referee's deadline less the
    margin :func:`oddtrick.anytime.budget` holds back)."""
    call_think_factor: ClassVar[float] = 2.0
    """A call may take this many times ``think_seconds``: each sample solves
    five contracts, and a hand has far fewer calls than cards."""
    deadline_share: ClassVar[float] = 0.5
    """Never think longer than this share of the referee's time left, whatever
    ``think_seconds`` says. On a shared machine this process can wake up late
    by a good part of a second (the conformance kit, whose deadline is 1 s, once
    saw an answer after 1275 ms from a 0.6 s budget), and the margin the SDK
    measures learns of a late wake-up only after it. At the referee's default
    5 s deadline this changes nothing (1 s to think, 2 s for a call)."""
    prior_samples: ClassVar[float] = 6.0
    """The heuristic bot's trick count weighs as much as this many samples:
    with few samples (a short deadline, a busy machine) the estimate leans on
    it, with many on the sampled double-dummy average."""
    tie_margin: ClassVar[float] = 0.05
    """Cards whose average scores are this close are as good double-dummy; among
    them the heuristic bot's choice is played. Double-dummy values cannot tell
    apart the cards that only matter against opponents who cannot see every
    card (ducking, keeping a guard, not unblocking early); the heuristic's
    maxims were made for exactly those."""
    optimism: ClassVar[float] = 0.5
    """Tricks taken off a sampled double-dummy estimate before bidding on it:
    double-dummy play flatters the declarer (the defenders' blind opening lead
    is found perfectly, every finesse guessed)."""

    close_factor: ClassVar[float] = 1.0
    """A card decision still close when its samples or its time are spent (the best card's
    lead over the next is under two standard errors of their deal-by-deal difference) may
    solve this many times as many samples in as many times as long, so that time goes
    where it can change the card. Off (1) by default: at 2, on the same 30 Contract Whist
    deal pairs against the heuristic bot, it measured +0.85 points a deal against +2.00 and
    +1.15 in two runs without it (docs/strong-bot.md), no gain the runs could show."""
    simulate_auction: ClassVar[bool] = False
    """Let a call that scores clearly better when the auction is played out on the sampled
    deals (each candidate call, then the heuristic bot's policy for all four players, the
    contract scored double-dummy: :mod:`oddtrick.bots.auction_simulation`) overrule the
    estimates' call, except over partner's contract. Off by default: on the same 30
    Contract Whist deal pairs it measured +1.43 points a deal against the heuristic bot,
    where the estimates alone measured +2.00 and +1.15 (docs/strong-bot.md)."""
    jump_levels: ClassVar[int] = 1
    """Bids tried in each denomination beyond the cheapest: jumps that may shut the other
    side out of the auction."""
    call_tie_margin: ClassVar[float] = 0.25
    """A simulated call replaces the estimates' call only if it scores this many points a
    deal more..."""
    call_confidence: ClassVar[float] = 1.0
    """...plus this many standard errors of the deal-by-deal difference: with a few
    samples, noise must not move the auction."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass holding ``level`` (``option.level=N`` makes one) takes the level's
        settings for those it does not hold itself; an unknown level is an OptionError,
        raised when the options are checked, before any match."""
        super().__init_subclass__(**kwargs)
        own = vars(cls)
        if "level" not in own or cls.level == 0:
            return
        if cls.level not in LEVELS:
            raise OptionError(
                f"option level of {cls.__name__} is {cls.level}: the levels are {level_text()}; "
                "0, the default, sets none (the bot's own settings are level 3's)"
            )
        chosen = LEVELS[cls.level]
        for name in ("samples", "call_samples", "think_seconds"):
            if name not in own:
                setattr(cls, name, getattr(chosen, name))

    def __init__(self, seed: int | str | None = None, think_seconds: float | None = None) -> None:
        self.rng = random.Random(seed)
        self.think = self.think_seconds if think_seconds is None else think_seconds
        self._estimates: dict[Denomination, tuple[float, int]] | None = None

    # ------------------------------------------------------------ time

    def budget(self, view: oddtrick.BotView, stretch: float = 1.0) -> Budget:
        """When this decision must be answered (``stretch``: for a close one, that many
        times the thinking time, within the same share of the referee's time left)."""
        seconds = self.think * stretch
        if view.phase is Phase.AUCTION:
            seconds *= self.call_think_factor
        if view.time_left_ms is not None:
            seconds = min(seconds, self.deadline_share * view.time_left_ms / 1000)
        return budget(view, seconds)

    def _samples(self, view: oddtrick.BotView, limit: Budget, count: int) -> Iterator[Hands]:
        """Up to ``count`` consistent deals, one at a time; none once the budget
        would be overrun by one more step as long as the last (the worker is
        shared: a step started too late only delays the next decision's search)."""
        knowledge = Knowledge(view)
        for _ in range(count):
            started = limit.left()
            yield self._draw(knowledge, view)
            took = started - limit.left()
            if limit.left() <= took:
                return

    def _draw(self, knowledge: Knowledge, view: oddtrick.BotView) -> Hands:
        """A consistent deal, kept with the auction's likelihood (rejection sampling;
        after many rejections the last draw is taken, so the bot never stalls)."""
        assert view.seat is not None
        hands = knowledge.sample(self.rng)
        if not view.auction:
            return hands
        for _ in range(50):
            if self.rng.random() < auction_likelihood(view.auction, view.seat, hands):
                return hands
            hands = knowledge.sample(self.rng)
        return hands

    # ------------------------------------------------------------ card play

    # Async where the heuristic bot's is not: a Bot's decision may be either.
    async def choose_card(self, view: oddtrick.BotView) -> Decision:  # type: ignore[override]
        """The card of the best average score over sampled deals, the heuristic
        bot's among equally good ones; the heuristic bot's card when there is no
        time to solve a single deal. The comment says how many were solved."""
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        if len(legal) == 1:
            return Decision(legal[0], "the only legal card")
        maxim = super().choose_card(view)
        limit = self.budget(view, stretch=self.close_factor)
        started = time.monotonic()
        search = self.card_search(view, maxim, limit, self.budget(view))
        card, done = await anytime(limit, search, (maxim, 0))
        return Decision(card, search_comment(done, self.samples, time.monotonic() - started))

    def card_search(
        self, view: oddtrick.BotView, maxim: Card, limit: Budget, usual: Budget | None = None
    ) -> Iterator[tuple[Card, int]]:
        """The best card after each sampled deal solved, with the deals solved so far
        (runs on the anytime worker). Once ``samples`` are solved or the ``usual`` budget
        is spent, it goes on (within ``limit``) only while the decision is close."""
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        totals = dict.fromkeys(legal, 0.0)
        values: dict[Card, list[float]] = {card: [] for card in legal}
        most = max(self.samples, round(self.samples * self.close_factor))
        margin = margins(view)
        for done, hands in enumerate(self._samples(view, limit, most), 1):
            step_started = time.monotonic()
            for card, value in self.card_values(view, [hands], margin).items():
                totals[card] += value
                values[card].append(value)
            yield best_card(totals, maxim, self.tie_margin * done), done
            step = time.monotonic() - step_started
            spent = done >= self.samples or (usual is not None and usual.left() <= step)
            if spent and not is_close(values):
                return

    def card_values(
        self, view: oddtrick.BotView, deals: Sequence[Hands], margin: Sequence[int] | None = None
    ) -> dict[Card, float]:
        """Each legal card's total, over ``deals`` (full layouts of the cards still
        held), of our points less theirs when everyone plays double-dummy after it.
        ``margin`` is :func:`margins` of the view, given by a caller that asks many times
        in one decision so that the table is built once."""
        assert view.seat is not None
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        leader = view.current_trick[0][0] if view.current_trick else view.seat
        trick = tuple(card for _, card in view.current_trick)
        won = view.tricks_won[view.seat.side]
        if margin is None:
            margin = margins(view)
        totals = dict.fromkeys(legal, 0.0)
        for scores in solve([Position(hands, view.trumps, leader, trick) for hands in deals]):
            for card in legal:
                # Our side's tricks: those won, plus what DDS says we take from here.
                totals[card] += margin[won + scores[card]]
        return totals

    # ------------------------------------------------------------ auction

    async def choose_call(self, view: oddtrick.BotView) -> Decision:  # type: ignore[override]
        """The heuristic bot's auction on sampled trick estimates, overruled by the call that
        scores clearly better when the auction is played out on the same samples
        (:attr:`simulate_auction`). The comment says how many deals were solved."""
        if not self.simulate_auction:
            return await self.estimated_call(view)
        heuristic = HeuristicBot.choose_call(self, view)
        legal = [action for action in view.legal_actions if isinstance(action, Call)]
        if len(legal) == 1:
            return Decision(legal[0], "the only legal call")
        limit = self.budget(view)
        started = time.monotonic()
        search = self.call_search(view, limit)
        (call, said), done = await anytime(limit, search, ((heuristic, ""), 0))
        comment = search_comment(done, self.call_samples, time.monotonic() - started)
        return Decision(call, f"{comment}; {said}" if said else comment)

    def call_search(self, view: oddtrick.BotView, limit: Budget) -> Iterator[tuple[tuple[Call, str], int]]:
        """After each sampled deal: the call, what it and the estimates' call scored when
        played out, and the deals done so far (runs on the anytime worker). The estimates'
        call is the heuristic policy on the sampled tricks of each denomination with this
        seat declaring; the candidates' scores come from the same deals' double-dummy
        tricks, one batch of searches a deal."""
        assert view.seat is not None
        me = view.seat
        needed = self._needed(view)
        # Over partner's contract the estimates decide alone: two partners each overruling
        # the other's contract by simulation, each sure of their own suit, bid on to 13.
        standing = highest_bid(view.auction)
        partners = standing is not None and standing[0] is me.partner
        candidates = [] if partners else auction_simulation.candidate_calls(view, self.jump_levels)
        scores: dict[Call, list[float]] = {call: [] for call in candidates}
        totals = dict.fromkeys(needed, 0.0)
        estimator = copy.copy(self)  # holds this search's estimates, off the event loop's bot
        policy = HeuristicBot()
        for done, hands in enumerate(self._samples(view, limit, self.call_samples), 1):
            contracts = auction_simulation.play_out_all(view, hands, candidates, policy)
            ours = [(denomination, me) for denomination in needed]
            endings = [*auction_simulation.endings_of(contracts), *ours]
            tricks = auction_simulation.declarer_tricks(hands, endings)
            for call, contract in contracts.items():
                scores[call].append(auction_simulation.score_of(me, contract, tricks, self.optimism))
            for denomination in needed:
                totals[denomination] += tricks[(denomination, me)]
            estimator._estimates = {d: (total / done, done) for d, total in totals.items()}
            model = HeuristicBot.choose_call(estimator, view)
            if model not in scores:
                yield (model, ""), done
                continue
            chosen = auction_simulation.best_call(scores, model, self.call_tie_margin, self.call_confidence)
            yield (chosen, auction_simulation.describe(scores, chosen, model)), done

    async def estimated_call(self, view: oddtrick.BotView) -> Decision:
        """The heuristic bot's auction on sampled trick estimates (its own
        estimates when there is no time to solve a single deal, or nothing to
        estimate). The comment says how many deals were solved."""
        needed = self._needed(view)
        comment = "no contract to estimate: the heuristic bot's call"
        if needed:
            limit = self.budget(view)
            started = time.monotonic()
            search = self.trick_search(view, limit, needed)
            self._estimates, done = await anytime(limit, search, (None, 0))
            comment = search_comment(done, self.call_samples, time.monotonic() - started)
        try:
            return Decision(super().choose_call(view), comment)
        finally:
            self._estimates = None

    def _needed(self, view: oddtrick.BotView) -> list[Denomination]:
        """The denominations the policy may ask about: one we can still bid or the
        one standing, and not one the heuristic rules out (no trumps unfit)."""
        standing = next((call.denomination for _, call in reversed(view.auction) if call.is_bid), None)
        biddable = {action.denomination for action in view.legal_actions if isinstance(action, Call)}
        return [
            denomination
            for denomination in Denomination
            if (denomination in biddable or denomination is standing)
            and HeuristicBot.partnership_tricks(self, view, denomination) is not None
        ]

    def trick_search(
        self, view: oddtrick.BotView, limit: Budget, needed: Sequence[Denomination]
    ) -> Iterator[tuple[dict[Denomination, tuple[float, int]] | None, int]]:
        """For each of the ``needed`` denominations, the average double-dummy tricks
        our side takes with this seat declaring (its left leading), over deals
        consistent with what the auction says, and how many deals that is: after
        each deal solved (runs on the anytime worker)."""
        assert view.seat is not None
        me = view.seat
        totals = dict.fromkeys(needed, 0.0)
        for done, hands in enumerate(self._samples(view, limit, self.call_samples), 1):
            positions = [Position(hands, denomination.suit, me.left) for denomination in needed]
            # The defenders are on lead: our tricks are the thirteen they don't take.
            for denomination, theirs in zip(needed, max_tricks(positions), strict=True):
                totals[denomination] += 13 - theirs
            yield {denomination: (total / done, done) for denomination, total in totals.items()}, done

    def partnership_tricks(self, view: oddtrick.BotView, denomination: Denomination) -> float | None:
        """The heuristic's count (``None``: no trumps with a hand unfit for it)
        and the sampled average, less its optimism, weighed by sample count."""
        prior = super().partnership_tricks(view, denomination)
        if self._estimates is None or prior is None or denomination not in self._estimates:
            return prior
        sampled, count = self._estimates[denomination]
        weight = count / (count + self.prior_samples)
        return weight * (sampled - self.optimism) + (1 - weight) * prior
