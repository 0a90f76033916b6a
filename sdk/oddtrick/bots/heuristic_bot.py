"""A bot that plays both games by the rules of thumb the rule texts teach.

It bids by counting tricks (its own sure tricks plus about three from an
unknown partner) and plays the classic maxims: second hand low, third hand
high, win cheaply, don't trump partner's winner, draw trumps as declarer, lead
the longest suit, and remember which cards are gone. Everything it knows comes
from the view (``view.hand``, the tricks played, the auction, the turned card);
it never looks at another hand.

Each rule is a small method: subclass :class:`HeuristicBot` and override one to
try an idea, e.g. ``choose_lead`` or ``should_double``. Try it::

    oddtrick bot sample_bots/heuristic_bot.py:HeuristicBot --server HOST:PORT --name me --token TOKEN
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, TypeAlias

import oddtrick
from oddtrick import DOUBLE, PASS, Call, Card, Denomination, Rank, Seat, Suit
from oddtrick.rules import PACK, SUITS

Bid: TypeAlias = tuple[Seat, Call]
"""A call in the auction and who made it."""
Rule: TypeAlias = Callable[["Table"], Card | None]
"""A leading rule: a card to lead, or ``None`` when the rule has nothing to say."""


# ----------------------------------------------------------------- card helpers


def lowest(cards: Iterable[Card]) -> Card:
    """The lowest-ranked card (ties broken by suit order, so the choice is stable)."""
    return min(cards, key=lambda card: (card.rank, card.suit))


def highest(cards: Iterable[Card]) -> Card:
    """The highest-ranked card (ties broken by suit order, as :func:`lowest` does)."""
    return max(cards, key=lambda card: (card.rank, card.suit))


def beats(card: Card, winning: Card, trumps: Suit | None) -> bool:
    """Whether ``card`` played now takes the trick from ``winning`` (which is
    either of the suit led or a trump)."""
    if card.suit is winning.suit:
        return card.rank > winning.rank
    return card.suit is trumps


def trick_winner(plays: Sequence[tuple[Seat, Card]], trumps: Suit | None) -> tuple[Seat, Card]:
    """Who is winning a trick so far, and with which card."""
    seat, winning = plays[0]
    for other, card in plays[1:]:
        if beats(card, winning, trumps):
            seat, winning = other, card
    return seat, winning


# ------------------------------------------------------------- hand valuation


def high_card_tricks(cards: Sequence[Card]) -> float:
    """Tricks the top cards of one suit should take: an ace is a trick, a king
    with a small card beside it usually is, a queen with two guards is half one."""
    ranks = {card.rank for card in cards}
    tricks = 0.0
    if Rank.ACE in ranks:
        tricks += 1
    if Rank.KING in ranks and len(cards) >= 2:
        tricks += 1 if Rank.ACE in ranks else 0.75
    if Rank.QUEEN in ranks and len(cards) >= 3:
        tricks += 1 if {Rank.ACE, Rank.KING} <= ranks else 0.5
    return tricks


def trump_tricks(cards: Sequence[Card]) -> float:
    """Trump honours, plus every trump beyond the third (the defenders run out first)."""
    return high_card_tricks(cards) + max(0, len(cards) - 3)


def ruffing_tricks(by_suit: dict[Suit, tuple[Card, ...]], trumps: Suit) -> float:
    """Short side suits let spare trumps score: a void about one trick, a
    singleton half one, never more than the trumps beyond the third."""
    shortness = sum(
        1.0 if not cards else 0.5 if len(cards) == 1 else 0.0
        for suit, cards in by_suit.items()
        if suit is not trumps
    )
    return min(shortness, max(0, len(by_suit[trumps]) - 3))


def is_balanced(by_suit: dict[Suit, tuple[Card, ...]]) -> bool:
    """4-3-3-3, 4-4-3-2 or 5-3-3-2: no short suit for the opponents to run."""
    lengths = sorted(len(cards) for cards in by_suit.values())
    return lengths[0] >= 2 and lengths[1] >= 3


def is_stopped(cards: Sequence[Card]) -> bool:
    """Whether we can win a trick in this suit before the opponents run it."""
    ranks = {card.rank for card in cards}
    return (
        Rank.ACE in ranks
        or (Rank.KING in ranks and len(cards) >= 2)
        or (Rank.QUEEN in ranks and len(cards) >= 3)
    )


def hand_tricks(by_suit: dict[Suit, tuple[Card, ...]], denomination: Denomination) -> float | None:
    """Tricks our own hand should take in ``denomination``; ``None`` for no trumps
    with a hand unfit for it (unbalanced, or fewer than three suits stopped)."""
    trumps = denomination.suit
    if trumps is None:
        stopped = sum(is_stopped(cards) for cards in by_suit.values())
        if not is_balanced(by_suit) or stopped < 3:
            return None
        return sum(
            high_card_tricks(cards) + (max(0, len(cards) - 4) if high_card_tricks(cards) >= 1 else 0)
            for cards in by_suit.values()
        )
    side = sum(high_card_tricks(cards) for suit, cards in by_suit.items() if suit is not trumps)
    return side + trump_tricks(by_suit[trumps]) + ruffing_tricks(by_suit, trumps)


def defensive_tricks(by_suit: dict[Suit, tuple[Card, ...]], trumps: Suit | None) -> float:
    """Tricks we expect to take against a contract: aces, half a guarded king
    (the declarer may hold the ace over it), and our trump holding."""
    tricks = 0.0
    for suit, cards in by_suit.items():
        if suit is trumps:
            tricks += trump_tricks(cards)
            continue
        ranks = {card.rank for card in cards}
        tricks += Rank.ACE in ranks
        if Rank.KING in ranks and len(cards) >= 2:
            tricks += 1 if Rank.ACE in ranks else 0.5
    return tricks


# ------------------------------------------------------------ what we know


@dataclasses.dataclass(frozen=True, slots=True)
class Table:
    """What the bot works out from the view before choosing a card: the cards
    still out, who has shown out of which suit, where the turned card is, and
    how the current trick stands."""

    view: oddtrick.BotView
    me: Seat
    trumps: Suit | None
    out: frozenset[Card]
    """Cards not played and not in our hand: the other three hands."""
    known: dict[Card, Seat]
    """Cards whose holder we know (the turned trump, in the dealer's hand until played)."""
    voids: dict[Seat, frozenset[Suit]]
    led: Suit | None
    winner: Seat | None
    winning: Card | None

    @classmethod
    def of(cls, view: oddtrick.BotView) -> Table:
        """Work the table out from ``view``: once per decision, so that every rule reads
        the same facts rather than each working them out again."""
        me = view.seat
        assert me is not None, "a bot always has a seat"
        out = frozenset(PACK).difference(view.played_cards, view.hand)
        known: dict[Card, Seat] = {}
        turned = view.turned_card
        if turned is not None and turned in out and view.dealer is not me:
            known[turned] = view.dealer
        led = winner = winning = None
        if view.current_trick:
            led = view.current_trick[0][1].suit
            winner, winning = trick_winner(view.current_trick, view.trumps)
        return cls(view, me, view.trumps, out, known, view.voids(), led, winner, winning)

    @property
    def partner(self) -> Seat:
        """Our partner's seat."""
        return self.me.partner

    @property
    def opponents(self) -> tuple[Seat, Seat]:
        """The two opponents: the one on our left (plays after us), then the one on our right."""
        return (self.me.left, self.me.right)

    @property
    def position(self) -> int:
        """1 when leading, 2 for second hand, 3 for third, 4 for fourth."""
        return len(self.view.current_trick) + 1

    @property
    def we_declare(self) -> bool:
        """Whether our side declares the contract (Contract Whist only: in classic Whist
        nobody declares, so it is ``False``)."""
        contract = self.view.contract
        return contract is not None and contract.side is self.me.side

    def suit(self, suit: Suit) -> tuple[Card, ...]:
        """Our cards of ``suit``, highest first."""
        return tuple(sorted((card for card in self.view.hand if card.suit is suit), reverse=True))

    def may_hold(self, seat: Seat, card: Card) -> bool:
        """Whether ``seat`` could hold ``card``, as far as we can tell."""
        if seat is self.me:
            return card in self.view.hand
        if card not in self.out:
            return False
        holder = self.known.get(card)
        if holder is not None:
            return holder is seat
        return card.suit not in self.voids[seat]

    def is_void(self, seat: Seat, suit: Suit) -> bool:
        """Whether ``seat`` surely holds no card of ``suit``."""
        return not any(self.may_hold(seat, card) for card in self.out if card.suit is suit)

    def may_hold_higher(self, seat: Seat, card: Card) -> bool:
        """Whether ``seat`` could hold a higher card of ``card``'s suit, as far as we can tell."""
        return any(
            self.may_hold(seat, other)
            for other in self.out
            if other.suit is card.suit and other.rank > card.rank
        )

    def may_ruff(self, seat: Seat, suit: Suit) -> bool:
        """Whether ``seat`` is out of ``suit`` and may still trump it."""
        trumps = self.trumps
        if trumps is None or suit is trumps or not self.is_void(seat, suit):
            return False
        return not self.is_void(seat, trumps)

    def can_beat(self, seat: Seat, card: Card, led: Suit) -> bool:
        """Whether ``seat``, still to play to a trick led in ``led``, might beat ``card``."""
        if card.suit is led:
            return self.may_hold_higher(seat, card) or self.may_ruff(seat, led)
        return self.is_void(seat, led) and self.may_hold_higher(seat, card)

    def is_safe(self, card: Card, seats: Iterable[Seat]) -> bool:
        """Whether ``card`` (winning the trick or about to lead it) can't be beaten by ``seats``."""
        led = self.led if self.led is not None else card.suit
        return not any(self.can_beat(seat, card, led) for seat in seats)

    def is_winner(self, card: Card) -> bool:
        """A card the opponents can't beat if we lead it now: the highest of
        its suit still out (and not to be trumped)."""
        return self.is_safe(card, self.opponents)

    def opponents_to_play(self) -> tuple[Seat, ...]:
        """The opponents who play to the current trick after us."""
        later = (Seat((self.me + step) % 4) for step in range(1, 5 - self.position))
        return tuple(seat for seat in later if seat.side is not self.me.side)

    def opponents_may_hold_trumps(self) -> bool:
        """Whether either opponent could still hold a trump (``False`` at no trumps): while
        one may, the bot draws trumps (:meth:`HeuristicBot.lead_trumps`) so that our
        winners are not trumped."""
        trumps = self.trumps
        return trumps is not None and not all(self.is_void(seat, trumps) for seat in self.opponents)

    def suits_led_by(self, seat: Seat) -> list[Suit]:
        """The suits ``seat`` has led this hand, first lead first."""
        return [trick.cards[0].suit for trick in self.view.tricks if trick.leader is seat]

    def cheapest_equal(self, card: Card) -> Card:
        """The lowest of our cards that is as good as ``card``: every card between
        them has been played (or is ours), so holding K Q we play the queen."""
        best = card
        for rank in range(card.rank - 1, 1, -1):
            below = Card(card.suit, Rank(rank))
            if below in self.view.hand:
                best = below
            elif below in self.out:
                break
        return best


# ---------------------------------------------------------------------- bot


class HeuristicBot(oddtrick.Bot):
    """Plays classic Whist and Contract Whist by counting tricks and following
    the classic maxims of play."""

    name = "heuristic"
    version = "1"
    options: ClassVar[tuple[str, ...]] = (
        "unknown_partner_tricks",
        "passed_partner_tricks",
        "misfit_penalty",
        "fit_bonus",
        "push_allowance",
        "double_margin",
        "better_contract_margin",
        "trump_leader_length",
    )
    """Each tunable below, set from a command line with ``option.NAME=VALUE``."""

    # The auction's judgement, in tricks; an option each (or a subclass may tune them).
    unknown_partner_tricks: ClassVar[float] = 3.0
    """Tricks an unknown partner is expected to bring (about a quarter of the pack)."""
    passed_partner_tricks: ClassVar[float] = 2.5
    """A partner who passed has shown less than an opening hand."""
    misfit_penalty: ClassVar[float] = 0.5
    """Partner's tricks are worth less when we play in a suit they did not bid."""
    fit_bonus: ClassVar[float] = 0.5
    """Three or more cards in partner's suit: our short suits and trumps work together."""
    push_allowance: ClassVar[float] = 1.0
    """Against the opponents' contract we compete this many tricks below our
    estimate, to push them a level higher."""
    double_margin: ClassVar[float] = 0.5
    """Double only when we expect to beat the contract by at least this much."""
    better_contract_margin: ClassVar[float] = 1.5
    """Take partner's contract out into ours only if ours should take this many
    more tricks."""

    trump_leader_length: ClassVar[int] = 4
    """Classic Whist: with this many trumps we lead them. The traditional advice
    is five; against this bot's own play four did better."""

    # ------------------------------------------------------------- decisions

    def choose_call(self, view: oddtrick.BotView) -> Call:
        """Contract Whist's auction. The answer is always one of the legal calls."""
        legal = [action for action in view.legal_actions if isinstance(action, Call)]
        call = self.decide_call(view)
        if call in legal:
            return call
        return PASS if PASS in legal else legal[0]

    def choose_card(self, view: oddtrick.BotView) -> Card:
        """The play. The answer is always one of the legal cards."""
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        card = self.decide_card(view)
        return card if card in legal else lowest(legal)

    def decide_card(self, view: oddtrick.BotView) -> Card:
        """Lead, follow suit, or (out of the suit led) trump or throw a card."""
        legal = [action for action in view.legal_actions if isinstance(action, Card)]
        if len(legal) == 1:
            return legal[0]
        table = Table.of(view)
        if table.led is None:
            return self.choose_lead(table)
        if any(card.suit is table.led for card in legal):
            return self.follow_suit(table, legal)
        return self.play_void(table)

    # ----------------------------------------------------------------- auction

    def decide_call(self, view: oddtrick.BotView) -> Call:
        """Double a contract we expect to beat; leave partner's contract alone
        unless we have a clearly better one; otherwise bid the cheapest contract
        our side should make."""
        assert view.seat is not None
        high = highest_bid(view.auction)
        if high is None:
            return self.best_bid(view, None) or PASS
        holder, _ = high
        if holder is view.seat:
            return PASS
        if holder is view.seat.partner:
            return self.bid_over_partner(view, high)
        if self.should_double(view, high):
            return DOUBLE
        return self.best_bid(view, high) or PASS

    def shown_tricks(self, auction: Sequence[Bid], seat: Seat) -> float:
        """Tricks ``seat``'s own hand has shown in ``auction``. Its first bid at
        level L shows L less what it counted on from its partner (less our push
        allowance too, if it was competing). Later bids may only be competing,
        so they show nothing more: else two partners would push each other ever
        higher. A pass while its side held no bid shows a weak hand."""
        passed = False
        for index, (caller, call) in enumerate(auction):
            if caller is not seat:
                continue
            before = auction[:index]
            high = highest_bid(before)
            if call.is_bid:
                counted = self.shown_tricks(before, seat.partner)
                partner_suits = bid_denominations(before, seat.partner)
                if partner_suits:
                    fits = call.denomination in partner_suits
                    counted += self.fit_bonus if fits else -self.misfit_penalty
                competing = high is not None and high[0].side is not seat.side
                return max(0.0, call.level - counted - (self.push_allowance if competing else 0.0))
            passed = passed or high is None or high[0].side is not seat.side
        return self.passed_partner_tricks if passed else self.unknown_partner_tricks

    def partnership_tricks(self, view: oddtrick.BotView, denomination: Denomination) -> float | None:
        """Our side's expected tricks in ``denomination``: ours plus partner's,
        a little more in a suit partner bid and we hold three of, a little less
        in a suit partner didn't bid."""
        assert view.seat is not None
        by_suit = view.hand_by_suit()
        mine = hand_tricks(by_suit, denomination)
        if mine is None:
            return None
        partner = view.seat.partner
        help_ = self.shown_tricks(view.auction, partner)
        partner_suits = bid_denominations(view.auction, partner)
        if partner_suits and denomination not in partner_suits:
            help_ -= self.misfit_penalty
        elif partner_suits and (denomination.suit is None or len(by_suit[denomination.suit]) >= 3):
            help_ += self.fit_bonus
        return mine + help_

    def best_bid(self, view: oddtrick.BotView, high: Bid | None) -> Call | None:
        """The cheapest bid in the denomination where our side takes most tricks,
        if our estimate reaches its level. Against an opponents' contract we
        compete a little below our estimate, to push them up."""
        allowance = self.push_allowance if high is not None else 0.0
        options: list[tuple[float, int, Call]] = []
        for denomination in Denomination:
            bid = lowest_bid(view, denomination)
            estimate = self.partnership_tricks(view, denomination)
            if bid is None or estimate is None:
                continue
            pushing = high is not None and bid.level <= high[1].level + 1
            if estimate >= bid.level - (allowance if pushing else 0.0):
                options.append((estimate, -bid.step, bid))
        return max(options)[2] if options else None

    def bid_over_partner(self, view: oddtrick.BotView, high: Bid) -> Call:
        """Partner holds the contract: raising it gains nothing (the score is the
        tricks taken), so pass unless another denomination adds a clear trick."""
        _, contract = high
        assert contract.denomination is not None
        current = self.partnership_tricks(view, contract.denomination) or 0.0
        for denomination in Denomination:
            bid = lowest_bid(view, denomination)
            estimate = self.partnership_tricks(view, denomination)
            if bid is None or estimate is None or denomination is contract.denomination:
                continue
            if estimate >= bid.level and estimate >= current + self.better_contract_margin:
                return bid
        return PASS

    def should_double(self, view: oddtrick.BotView, high: Bid) -> bool:
        """Double when our defensive tricks and partner's leave the declarers
        short of their level."""
        if not view.config.doubling or DOUBLE not in view.legal_actions or view.seat is None:
            return False
        _, contract = high
        assert contract.denomination is not None
        ours = defensive_tricks(view.hand_by_suit(), contract.denomination.suit)
        partner = min(self.shown_tricks(view.auction, view.seat.partner), self.unknown_partner_tricks)
        tricks_to_beat = 14 - contract.level
        return ours + partner >= tricks_to_beat + self.double_margin

    # ------------------------------------------------------------------ leads

    def choose_lead(self, table: Table) -> Card:
        """Try the leading rules in order; the first with an answer decides."""
        for rule in self.lead_rules(table):
            card = rule(table)
            if card is not None:
                return card
        return lowest(table.view.hand)

    def lead_rules(self, table: Table) -> list[Rule]:
        """The declaring side (or, in classic Whist, a hand long in trumps)
        draws trumps first; defenders cash winners, return partner's suit and
        look for ruffs."""
        if self.wants_trumps_drawn(table):
            return [
                self.lead_trumps,
                self.lead_winner,
                self.lead_for_partner_ruff,
                self.lead_long_suit,
            ]
        return [
            self.lead_winner,
            self.lead_partner_suit,
            self.lead_singleton,
            self.lead_for_partner_ruff,
            self.lead_long_suit,
        ]

    def wants_trumps_drawn(self, table: Table) -> bool:
        """Declarers draw trumps; in classic Whist, where nobody declares, a hand
        long in trumps does."""
        if table.trumps is None:
            return False
        if table.view.contract is not None:
            return table.we_declare
        return len(table.suit(table.trumps)) >= self.trump_leader_length

    def lead_trumps(self, table: Table) -> Card | None:
        """Draw trumps while the opponents may still hold some, so they can't
        trump our winners."""
        trumps = table.trumps
        if trumps is None or not table.opponents_may_hold_trumps():
            return None
        ours = table.suit(trumps)
        if not ours or (len(ours) < 2 and not table.is_winner(ours[0])):
            return None
        return self.lead_from(table, ours)

    def lead_for_partner_ruff(self, table: Table) -> Card | None:
        """Lead a suit partner is out of while partner may still trump it."""
        for suit in SUITS:
            ours = table.suit(suit)
            if ours and table.may_ruff(table.partner, suit):
                return ours[-1]
        return None

    def lead_winner(self, table: Table) -> Card | None:
        """Cash a card the opponents can't beat, from our longest such suit."""
        winners = [
            cards[0]
            for suit in SUITS
            if suit is not table.trumps and (cards := table.suit(suit)) and table.is_winner(cards[0])
        ]
        if not winners:
            return None
        return max(winners, key=lambda card: (len(table.suit(card.suit)), card.rank))

    def lead_partner_suit(self, table: Table) -> Card | None:
        """Return the suit partner led: their strength is there."""
        for suit in table.suits_led_by(table.partner):
            ours = table.suit(suit)
            if suit is not table.trumps and ours:
                return ours[0] if len(ours) <= 2 else ours[-1]
        return None

    def lead_singleton(self, table: Table) -> Card | None:
        """Against a trump contract, lead a small singleton to trump the suit later."""
        trumps = table.trumps
        if trumps is None or not table.suit(trumps) or table.we_declare:
            return None
        for suit in SUITS:
            ours = table.suit(suit)
            if suit is not trumps and len(ours) == 1 and ours[0].rank < Rank.JACK:
                return ours[0]
        return None

    def lead_long_suit(self, table: Table) -> Card | None:
        """Lead our longest side suit (one the opponents can't trump, if we can)."""
        suits = [suit for suit in SUITS if suit is not table.trumps and table.suit(suit)]
        if not suits:
            return None

        def appeal(suit: Suit) -> tuple[bool, int, float]:
            safe = not any(table.may_ruff(seat, suit) for seat in table.opponents)
            return (safe, len(table.suit(suit)), high_card_tricks(table.suit(suit)))

        return self.lead_from(table, table.suit(max(suits, key=appeal)))

    def lead_from(self, table: Table, cards: Sequence[Card]) -> Card:
        """Which card of a suit to lead (``cards`` highest first): a winner or the
        top of a sequence; else fourth best from four or more, low from an
        honour and two, top of a short suit."""
        top = cards[0]
        if table.is_winner(top) or len(cards) <= 2:
            return top
        if top.rank >= Rank.TEN and table.cheapest_equal(top) is not top:
            return top
        if len(cards) >= 4:
            return cards[3]
        return cards[-1] if top.rank >= Rank.JACK else top

    # --------------------------------------------------------------- following

    def follow_suit(self, table: Table, legal: Sequence[Card]) -> Card:
        """Second hand low, third hand high, fourth hand wins as cheaply as it can."""
        assert table.winning is not None
        winners = [card for card in legal if beats(card, table.winning, table.trumps)]
        if not winners or (table.winner is table.partner and self.partner_is_safe(table)):
            return lowest(legal)
        later = table.opponents_to_play()
        sure = [card for card in winners if table.is_safe(card, later)]
        if table.position == 2:
            return self.second_hand(table, legal, sure)
        if sure:
            return lowest(sure)
        if table.position == 3:
            return table.cheapest_equal(highest(winners))
        return lowest(legal)

    def second_hand(self, table: Table, legal: Sequence[Card], sure: Sequence[Card]) -> Card:
        """Play low and leave the trick to partner, but cover an honour led
        when our card is sure to win."""
        assert table.winning is not None
        if sure and table.winning.rank >= Rank.JACK:
            return lowest(sure)
        return lowest(legal)

    def partner_is_safe(self, table: Table) -> bool:
        """Partner is winning and nobody still to play can beat their card."""
        assert table.winning is not None
        return table.winner is table.partner and table.is_safe(table.winning, table.opponents_to_play())

    def play_void(self, table: Table) -> Card:
        """Out of the suit led: trump an opponent's winning card with the
        cheapest trump that wins, else throw away our least useful card."""
        trumps = table.trumps
        assert table.winning is not None
        ruffs = [] if trumps is None else [c for c in table.suit(trumps) if beats(c, table.winning, trumps)]
        if not ruffs or not self.should_ruff(table):
            return self.discard(table)
        later = table.opponents_to_play()
        safe = [card for card in ruffs if table.is_safe(card, later)]
        return lowest(safe or ruffs)

    def should_ruff(self, table: Table) -> bool:
        """Don't trump a trick partner is sure to win. Third hand trumps partner's
        card only when the last player could still beat it; second hand trumps
        only a card partner can't beat anyway (or an honour)."""
        assert table.winning is not None
        assert table.led is not None
        if table.winner is table.partner:
            return table.position == 3 and not self.partner_is_safe(table)
        if table.position == 2:
            partner_can_win = table.can_beat(table.partner, table.winning, table.led)
            return not partner_can_win or table.winning.rank >= Rank.QUEEN
        return True

    def discard(self, table: Table) -> Card:
        """The lowest card of our weakest side suit (fewest winners, fewest honours,
        shortest), keeping trumps and winners when we can."""
        suits = [suit for suit in SUITS if suit is not table.trumps and table.suit(suit)]
        if not suits:
            return lowest(table.view.hand)

        def strength(suit: Suit) -> tuple[int, float, int]:
            cards = table.suit(suit)
            winners = sum(table.is_winner(card) for card in cards)
            return (winners, high_card_tricks(cards), len(cards))

        return table.suit(min(suits, key=strength))[-1]


# ------------------------------------------------------------- auction helpers


def highest_bid(auction: Sequence[Bid]) -> Bid | None:
    """The highest bid of an auction and its bidder, if any bid was made."""
    bids = [(seat, call) for seat, call in auction if call.is_bid]
    return bids[-1] if bids else None


def bid_denominations(auction: Sequence[Bid], seat: Seat) -> set[Denomination]:
    """The denominations ``seat`` has bid."""
    return {call.denomination for caller, call in auction if caller is seat and call.denomination is not None}


def lowest_bid(view: oddtrick.BotView, denomination: Denomination) -> Call | None:
    """The cheapest legal bid in ``denomination`` now."""
    bids = [
        action
        for action in view.legal_actions
        if isinstance(action, Call) and action.is_bid and action.denomination is denomination
    ]
    return min(bids, key=lambda call: call.step) if bids else None
