"""The state machine of a whole match: deals, auction, play, scoring, games.

A :class:`GameState` is one match in progress under one :class:`GameConfig`
and one seed. The seed fixes every deal, so the configuration, the seed and
the list of actions are the whole match: :func:`replay` re-creates it.

Speed matters (bots run millions of playouts), so the inside is plain lists,
ints and interned cards; everything that leaves is an immutable value. Each
hand is a mask of its cards (see ``_cards``), the legal actions are worked out
once as each action is applied, and every card and call has its own bit, so
checking an action is one AND.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, Final, NoReturn, TypeAlias

from oddtrick.rules._calls import BIDS, DOUBLE, PASS, Action, Call, Denomination
from oddtrick.rules._cards import (
    SUIT_BITS,
    SUIT_CARDS,
    Card,
    Deal,
    Suit,
    cards_of_mask,
    deal_masks,
    suit_cards,
)
from oddtrick.rules._config import GameConfig, GameKind, MatchFormat, TrumpSelection
from oddtrick.rules._dealing import commitment, deal_cards, new_seed
from oddtrick.rules._errors import ParseError, PositionError
from oddtrick.rules._events import (
    AuctionEnded,
    CallMade,
    CardPlayed,
    GameEnded,
    HandEnded,
    HandStarted,
    MatchEnded,
    MatchEvent,
    TrickWon,
)
from oddtrick.rules._fixed import FixedDeal
from oddtrick.rules._refusals import (
    BidTooLow,
    CardNotHeld,
    DoubleNotAllowed,
    IllegalAction,
    IllegalStartingAction,
    MustFollowSuit,
    NotYourTurn,
    WrongPhase,
)
from oddtrick.rules._results import (
    Contract,
    GameResult,
    HandResult,
    MatchResult,
    Outcome,
    Phase,
    Trick,
    new_contract,
    new_hand_result,
)
from oddtrick.rules._scoring import HONOUR_POINTS, contract_points, honours_held
from oddtrick.rules._seats import SEATS, Seat, Side
from oddtrick.rules._view import SeatView, denomination_of, shown_result

"""What a player does on their turn: a call in the auction, a card in play."""

FIRST_DEALER: Final = Seat.NORTH
ROTATION: Final = (Suit.HEARTS, Suit.DIAMONDS, Suit.SPADES, Suit.CLUBS)
"""Whist-drive trump order for ``fixed_rotation``."""

_NEXT: Final = (Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH)
_AUCTION: Final = Phase.AUCTION
_PLAY: Final = Phase.PLAY
_CLUBS, _DIAMONDS, _HEARTS, _SPADES = SUIT_BITS
_NO_POINTS: Final = (0, 0)
_NOT_BARRED: Final = (False, False)

_Legal: TypeAlias = tuple[tuple["Action", ...], int]
"""Legal actions and the OR of their bits."""


def _legal(actions: tuple[Action, ...]) -> _Legal:
    return actions, sum(action._bit for action in actions)


def _call_table() -> tuple[tuple[_Legal, _Legal], ...]:
    """Legal calls indexed by [step of the highest bid + 1][double allowed]."""
    rows = []
    for above in range(-1, 35):
        higher = BIDS[above + 1 :]
        rows.append((_legal((PASS, *higher)), _legal((PASS, DOUBLE, *higher))))
    return tuple(rows)


_LEGAL_CALLS: Final = _call_table()


def _power_table() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """How strong each card is in a trick, by [trumps (4: none)][suit led][card index]:
    a trump beats any card of the suit led, which beats any other card; within
    a suit the higher card (index) wins. The trick goes to the strongest card."""
    return tuple(
        tuple(
            tuple(
                100 + index if index // 13 == trumps else index if index // 13 == led else -1
                for index in range(52)
            )
            for led in range(4)
        )
        for trumps in range(5)
    )


_POWER: Final = _power_table()


def _power(trumps: Suit | None) -> tuple[tuple[int, ...], ...]:
    return _POWER[4 if trumps is None else trumps]


def trumps_for_rotation(deal_number: int, no_trump_every_fifth: bool) -> Suit | None:
    """Fixed rotation: H, D, S, C repeating, or H, D, S, C, no trumps."""
    if no_trump_every_fifth:
        place = (deal_number - 1) % 5
        return None if place == 4 else ROTATION[place]
    return ROTATION[(deal_number - 1) % 4]


class GameState:
    """One match in progress. Mutable: :meth:`apply` changes it in place.

    Read the public properties; never reach inside. :meth:`view` is the only
    way to learn what a given seat may know.

    A hand ends in ``Phase.HAND_OVER`` and stays there: the next hand is dealt
    only by :meth:`start_next_hand` (a harness calls it; :func:`replay` and
    ``play_local`` do so themselves). :meth:`from_deal` starts from a chosen deal
    or a position part-way through a hand.
    """

    __slots__ = (
        "_auction",
        "_commitment",
        "_contract",
        "_contract_game",
        "_current_trick",
        "_cut_card",
        "_deal",
        "_dealer",
        "_doubled",
        "_doubling",
        "_format",
        "_game_hands",
        "_game_number",
        "_game_results",
        "_games_won",
        "_hand_number",
        "_hand_results",
        "_high",
        "_high_seat",
        "_history_actions",
        "_history_seats",
        "_honours",
        "_led_bits",
        "_legal",
        "_legal_bits",
        "_masks",
        "_match_result",
        "_passes",
        "_phase",
        "_played",
        "_power",
        "_public_results",
        "_scores",
        "_target",
        "_to_act",
        "_to_target",
        "_totals",
        "_trick_leader",
        "_trick_leaders",
        "_trick_winners",
        "_tricks_won",
        "_trump_selection",
        "_trumps",
        "_turned_card",
        "_turned_face_up",
        "config",
        "fixed_deals",
        "seed",
    )

    def __init__(
        self, config: GameConfig, seed: str | None = None, *, deals: Iterable[FixedDeal] | None = None
    ) -> None:
        """A match dealt from ``seed`` (random if not given), or, with ``deals``, a match
        whose hand ``n`` is ``deals[(n - 1) % len(deals)]``, dealer, turned and cut card
        included (a fixed deal set: oddtrick.deal_sets); the seed is then kept, unused."""
        self.config: Final = config
        self.seed: Final = new_seed() if seed is None else seed
        fixed = tuple(deals) if deals is not None else None
        if fixed is not None and not fixed:
            raise PositionError("a match from fixed deals needs at least one deal")
        self.fixed_deals: Final[tuple[FixedDeal, ...] | None] = fixed
        self._scores = [0, 0]
        self._totals = [0, 0]
        self._games_won = [0, 0]
        self._game_number = 1
        self._game_hands = 0
        # The configuration, read once: every hand needs these.
        self._contract_game = config.game is GameKind.CONTRACT
        self._trump_selection = config.trump_selection
        self._doubling = config.doubling
        self._honours = config.honours
        self._to_target = config.plays_to_target
        self._target = config.game_target
        self._format = config.format
        self._hand_results: list[HandResult] = []
        self._public_results: tuple[HandResult, ...] = ()
        self._commitment: str | None = None
        self._game_results: list[GameResult] = []
        self._match_result: MatchResult | None = None
        # The history as two lists, seats and actions, rather than a list of
        # pairs: a pair per action would be an object the garbage collector
        # keeps walking for the rest of the match.
        self._history_seats: list[Seat] = []
        self._history_actions: list[Action] = []
        self._start_hand(1, FIRST_DEALER)

    @classmethod
    def from_deal(
        cls,
        config: GameConfig,
        deal: Deal | str,
        *,
        dealer: Seat = FIRST_DEALER,
        turned_card: Card | str | None = None,
        cut_card: Card | str | None = None,
        hand_number: int = 1,
        scores: tuple[int, int] = (0, 0),
        games_won: tuple[int, int] = (0, 0),
        actions: Iterable[Action | str] = (),
        seed: str | None = None,
    ) -> GameState:
        """A match that starts from a chosen hand rather than from the seed's first deal.

        For testing a decision in a known position and for re-playing a logged deal
        from a chosen trick: ``deal`` (a :class:`Deal` or its PBN text,
        ``"N:AKQ.… … … …"``) is dealt by ``dealer`` as hand ``hand_number`` of the
        match, with the game ``scores`` (and, in a rubber, ``games_won``) standing
        before it. Classic Whist needs the ``turned_card`` (one of the dealer's cards)
        when trumps are turned, and the ``cut_card`` when they are cut; fixed rotation
        takes its trumps from ``hand_number``. ``actions`` (calls and cards, or their
        text such as ``"7H"``, ``"pass"``, ``"QS"``) are then applied in turn, to reach
        a position part-way through the hand.

        Every refusal is a :class:`PositionError` (only a ``config`` or ``dealer`` of
        the wrong type is a ``TypeError``): a deal that is not a deal, a position the
        configuration cannot reach, and, as :class:`IllegalStartingAction`, the first
        action the rules refuse, with its index in ``actions`` and the rules' own
        refusal (``"pass"`` during the play is a :class:`WrongPhase`).

        Later hands are dealt from ``seed`` (random if not given) as usual, so a state
        made here is not re-created by :func:`replay` from its seed alone.

        >>> from oddtrick.rules import GameConfig, GameState, Seat
        >>> deal = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"
        >>> state = GameState.from_deal(GameConfig.classic(), deal, dealer=Seat.WEST,
        ...                             turned_card="2S", actions=["AS"])
        >>> str(state.to_act), str(state.trumps), state.current_trick
        ('E', 'S', ((<Seat.NORTH: 0>, Card.parse('AS')),))
        """
        if not isinstance(config, GameConfig):
            raise TypeError(f"not a game configuration: {config!r}")
        _check_seat(dealer)
        deal = _deal_of(deal)
        turned = _card_of("turned_card", turned_card)
        cut = _card_of("cut_card", cut_card)
        if isinstance(actions, str | bytes) or not isinstance(actions, Iterable):
            raise PositionError(
                f"actions must be a list of actions, not {actions!r} (e.g. ['7H', 'pass', 'QS'])"
            )
        _check_position(config, deal, dealer, turned, cut, hand_number, scores, games_won)
        state = cls(config, seed)
        state._scores = list(scores)
        state._totals = list(scores)
        state._games_won = list(games_won)
        state._game_number = 1 + sum(games_won)
        state._set_hand(hand_number, dealer, deal, turned, cut)
        for index, action in enumerate(actions):
            try:
                state.apply(_action_of(action, state._phase is _AUCTION))
            except (IllegalAction, ParseError) as error:
                raise IllegalStartingAction(index=index, action=action, error=error) from error
        return state

    # ----------------------------------------------------------------- setup

    def _start_hand(self, number: int, dealer: Seat) -> None:
        fixed = self.fixed_deals
        if fixed is not None:
            given = fixed[(number - 1) % len(fixed)]  # its own dealer, not the rotation's
            self._set_hand(number, given.dealer, given.deal, given.turned, given.cut)
            return
        # Dealt through this module's name deal_cards: the tests rig deals there.
        deal, turned, cut = deal_cards(self.seed, number, dealer)
        self._set_hand(number, dealer, deal, turned, cut)

    def _set_hand(self, number: int, dealer: Seat, deal: Deal, turned: Card | None, cut: Card | None) -> None:
        self._hand_number = number
        self._dealer = dealer
        self._deal = deal
        self._masks = list(deal_masks(deal))
        self._turned_card: Card | None = None
        self._turned_face_up = False
        self._cut_card: Card | None = None
        self._contract: Contract | None = None
        self._auction: list[tuple[Seat, Call]] = []
        self._high: Call | None = None
        self._high_seat = dealer
        self._doubled = False
        self._passes = 0
        self._current_trick: list[Card] = []
        self._led_bits = 0
        # Completed tricks, flat for the same reason: the cards in the order
        # played, four per trick, and each trick's leader and winner.
        self._played: list[Card] = []
        self._trick_leaders: list[Seat] = []
        self._trick_winners: list[Seat] = []
        self._tricks_won = [0, 0]
        first = _NEXT[dealer]
        self._trick_leader = first
        self._to_act: Seat | None = first
        if self._contract_game:
            self._trumps: Suit | None = None
            self._power = _POWER[4]
            self._phase = Phase.AUCTION
            self._legal, self._legal_bits = _LEGAL_CALLS[0][0]
            return
        self._phase = Phase.PLAY
        selection = self._trump_selection
        if selection is TrumpSelection.TURN_LAST_CARD:
            assert turned is not None
            self._turned_card = turned
            self._turned_face_up = True
            self._trumps = turned.suit
        elif selection is TrumpSelection.CUT:
            assert cut is not None
            self._cut_card = cut
            self._trumps = cut.suit
        else:
            self._trumps = trumps_for_rotation(number, self.config.no_trump_every_fifth)
        self._power = _power(self._trumps)
        self._lead(first)

    def _lead(self, seat: Seat) -> None:
        """``seat`` is to lead to a trick: any card it holds is legal."""
        self._to_act = seat
        hand = self._masks[seat]
        self._legal = cards_of_mask(hand)
        self._legal_bits = hand

    def start_next_hand(self) -> HandStarted:
        """Deal the next hand, the deal passing to the left, and say so. Only in ``HAND_OVER``."""
        if self._phase is not Phase.HAND_OVER:
            raise WrongPhase(seat=None, action=None, phase=self._phase.value)
        self._start_hand(self._hand_number + 1, _NEXT[self._dealer])
        return self.hand_started()

    def hand_started(self) -> HandStarted:
        """The event of the hand in progress being dealt (for the match's first hand,
        which no call of :meth:`start_next_hand` reports)."""
        return HandStarted(
            self._hand_number, self._dealer, self.trumps, self._turned_card, self._cut_card, self._deal
        )

    # ---------------------------------------------------------------- reading

    if TYPE_CHECKING:

        @property
        def phase(self) -> Phase:
            """What the match waits for now: a call, a card, the next hand, or nothing."""

        @property
        def to_act(self) -> Seat | None:
            """Whose turn it is, or ``None`` when the hand or the match is over."""

        @property
        def legal_actions(self) -> tuple[Action, ...]:
            """The actions the seat to act may take, sorted: calls as pass, double,
            then bids low to high; cards by suit then rank. Empty when nobody acts."""

    else:
        # Read on every move of every playout, so their getters are C code
        # (attrgetter), which costs much less than a Python function.
        phase = property(
            attrgetter("_phase"),
            doc="What the match waits for now: a call, a card, the next hand, or nothing.",
        )
        to_act = property(
            attrgetter("_to_act"),
            doc="Whose turn it is, or ``None`` when the hand or the match is over.",
        )
        legal_actions = property(
            attrgetter("_legal"),
            doc="The actions the seat to act may take, sorted: calls as pass, double, "
            "then bids low to high; cards by suit then rank. Empty when nobody acts.",
        )

    @property
    def hand_number(self) -> int:
        """The hand in progress (or just scored), counted from 1 over the whole match."""
        return self._hand_number

    @property
    def dealer(self) -> Seat:
        """Who dealt this hand: the seat on the dealer's left calls or leads first."""
        return self._dealer

    @property
    def deal(self) -> Deal:
        """The four hands as dealt. Never show this to a player: use :meth:`view`."""
        return self._deal

    @property
    def trumps(self) -> Suit | None:
        """The trump suit, ``None`` at no trumps *or* while the auction runs (and in a
        thrown-in hand): :attr:`denomination` tells these apart."""
        return self._trumps

    @property
    def denomination(self) -> Denomination | None:
        """What the hand is played in: a suit or :attr:`Denomination.NO_TRUMPS`;
        ``None`` only while Contract Whist's auction runs, or after it was thrown in."""
        return denomination_of(self.config.game, self._trumps, self._contract)

    @property
    def turned_card(self) -> Card | None:
        """Classic Whist's card turned up to name trumps (one of the dealer's), or ``None``
        when trumps are cut, rotate, or come from an auction."""
        return self._turned_card

    @property
    def turned_card_face_up(self) -> bool:
        """Whether the turned card still lies face up: from the deal until the first trick
        is complete (the dealer plays last to it), every seat knows the dealer holds it."""
        return self._turned_face_up

    @property
    def cut_card(self) -> Card | None:
        """The card cut from a second pack to name trumps (``TrumpSelection.CUT``), or ``None``:
        nobody holds it."""
        return self._cut_card

    @property
    def contract(self) -> Contract | None:
        """Contract Whist's contract once the auction is over; ``None`` before, in classic
        Whist, and in a thrown-in hand."""
        return self._contract

    @property
    def auction(self) -> tuple[tuple[Seat, Call], ...]:
        """This hand's calls so far, each with its seat, first call first (empty in classic Whist)."""
        return tuple(self._auction)

    @property
    def current_trick(self) -> tuple[tuple[Seat, Card], ...]:
        """The cards played to the trick in progress, each with its seat, the lead first."""
        leader = self._trick_leader
        return tuple((SEATS[(leader + i) % 4], c) for i, c in enumerate(self._current_trick))

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The completed tricks of this hand."""
        cards = self._played
        return tuple(
            Trick(number, leader, (cards[at], cards[at + 1], cards[at + 2], cards[at + 3]), winner)
            for number, at, leader, winner in zip(
                range(1, 14), range(0, 52, 4), self._trick_leaders, self._trick_winners, strict=False
            )
        )

    @property
    def tricks_won(self) -> tuple[int, int]:
        """Tricks each side has taken in this hand, North-South first (index by ``Side``)."""
        return (self._tricks_won[0], self._tricks_won[1])

    @property
    def scores(self) -> tuple[int, int]:
        """Points of the game in progress (the whole match outside games)."""
        return (self._scores[0], self._scores[1])

    @property
    def totals(self) -> tuple[int, int]:
        """Every point scored in the match, across games."""
        return (self._totals[0], self._totals[1])

    @property
    def games_won(self) -> tuple[int, int]:
        """Games each side has won in this match, North-South first (a rubber ends at two)."""
        return (self._games_won[0], self._games_won[1])

    @property
    def game_number(self) -> int:
        """The game in progress, counted from 1."""
        return self._game_number

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        """Every scored hand of the match, first hand first, with its deal (the engine's own
        record: a seat's :meth:`view` hides a thrown-in hand's cards)."""
        return tuple(self._hand_results)

    @property
    def game_results(self) -> tuple[GameResult, ...]:
        """Every finished game of the match, first game first."""
        return tuple(self._game_results)

    @property
    def match_result(self) -> MatchResult | None:
        """How the match ended; ``None`` while it goes on."""
        return self._match_result

    @property
    def history(self) -> tuple[tuple[Seat, Action], ...]:
        """Every action of the match in order; with the seed, the whole match."""
        return tuple(zip(self._history_seats, self._history_actions, strict=True))

    @property
    def commitment(self) -> str:
        """The SHA-256 of the seed (hex), which the referee publishes before the first card:
        once the seed is revealed, anyone can check the deals were fixed in advance."""
        if self._commitment is None:  # the seed never changes: hash it once
            self._commitment = commitment(self.seed)
        return self._commitment

    def _results_as_shown(self, hide: Callable[[HandResult], HandResult]) -> tuple[HandResult, ...]:
        """The hand results as every view shows them (``hide`` applied to thrown-in
        hands), built once per new result rather than once per view."""
        shown = self._public_results
        if len(shown) != len(self._hand_results):
            shown = shown + tuple(hide(r) for r in self._hand_results[len(shown) :])
            self._public_results = shown
        return shown

    def view(self, seat: Seat | None) -> SeatView:
        """What ``seat`` may know now (``None``: a spectator). The only door to players."""
        phase = self.phase
        return SeatView(
            seat=seat,
            config=self.config,
            seed_commitment=self.commitment,
            phase=phase,
            hand_number=self.hand_number,
            dealer=self.dealer,
            to_act=self.to_act,
            hand=self.hand_of(seat) if seat is not None else (),
            legal_actions=self.legal_actions if seat is not None and seat is self.to_act else (),
            trumps=self.trumps,
            turned_card=self.turned_card,
            turned_card_face_up=self.turned_card_face_up,
            cut_card=self.cut_card,
            auction=self.auction,
            contract=self.contract,
            current_trick=self.current_trick,
            tricks=self.tricks,
            tricks_won=self.tricks_won,
            scores=self.scores,
            totals=self.totals,
            games_won=self.games_won,
            game_number=self.game_number,
            hand_results=self._results_as_shown(shown_result),
            game_results=self.game_results,
            match_result=self.match_result,
            seed=self.seed if phase is Phase.MATCH_OVER else None,
        )

    def hand_of(self, seat: Seat) -> tuple[Card, ...]:
        """The cards ``seat`` holds now, sorted. Referee-side: players use :meth:`view`."""
        return cards_of_mask(self._masks[seat])

    # ---------------------------------------------------------------- legality

    def is_legal(self, action: Action, seat: Seat | None = None) -> bool:
        """Whether ``seat`` (default: whoever is to act) may make ``action`` now.

        Raises TypeError for a seat that is not a :class:`Seat` (``Seat(1)``, not ``1``):
        answering False would hide the mistake.
        """
        if seat is not None and seat is not self._to_act:
            _check_seat(seat)
            return False
        return bool(getattr(action, "_bit", 0) & self._legal_bits)

    def apply(self, action: Action, seat: Seat | None = None) -> None:
        """Make ``action`` for ``seat`` (default: whoever is to act).

        Raises a subclass of :class:`IllegalAction` naming the cause, and then
        the state is exactly as it was.
        """
        to_act = self._to_act
        # Nobody to act means no legal action, so this also refuses out of phase.
        try:
            allowed = action._bit & self._legal_bits
        except AttributeError:  # not a card or a call
            allowed = 0
        if not allowed or (seat is not None and seat is not to_act):
            self._refuse(action, seat if seat is not None else to_act)
        assert to_act is not None
        self._history_seats.append(to_act)
        self._history_actions.append(action)
        if self._phase is not _PLAY:
            self._call(to_act, action)  # type: ignore[arg-type]
            return
        # Card play, inlined: this is the hot path of every playout.
        card: Card = action  # type: ignore[assignment]
        masks = self._masks
        masks[to_act] ^= card._bit
        trick = self._current_trick
        trick.append(card)
        played = len(trick)
        if played == 4:
            self._end_trick(trick)
            return
        if played == 1:
            led_bits = self._led_bits = card._suit_bits
        else:
            led_bits = self._led_bits
        to_act = self._to_act = _NEXT[to_act]
        hand = masks[to_act]
        follow = hand & led_bits
        if follow:
            try:
                self._legal = SUIT_CARDS[follow]
            except KeyError:
                self._legal = suit_cards(follow)
            self._legal_bits = follow
        else:
            self._legal = cards_of_mask(hand)
            self._legal_bits = hand

    def step(self, action: Action, seat: Seat | None = None) -> tuple[MatchEvent, ...]:
        """:meth:`apply`, returning what happened: the call or card, then, when it ended
        them, the auction, the trick, the hand, the game and the match, in that order.

        Refused like :meth:`apply` (the state unchanged, no event). The rules know what
        the action did as they do it; this reads only the counters it moved.
        """
        to_act = self._to_act if seat is None else seat
        trick_number = len(self._trick_winners) + 1
        in_play = self._phase is _PLAY
        self.apply(action, seat)
        assert to_act is not None
        if not in_play:
            made = CallMade(to_act, action)  # type: ignore[arg-type]
            if self._phase is _AUCTION:
                return (made,)
            contract = self._contract
            if contract is not None:
                return (made, AuctionEnded(contract, self._trick_leader))
            return (made, AuctionEnded(None, None), *self._hand_over())
        played = CardPlayed(to_act, action, trick_number)  # type: ignore[arg-type]
        if len(self._trick_winners) < trick_number:
            return (played,)
        at = 4 * (trick_number - 1)
        cards = self._played
        trick = Trick(
            trick_number,
            self._trick_leaders[-1],
            (cards[at], cards[at + 1], cards[at + 2], cards[at + 3]),
            self._trick_winners[-1],
        )
        won = TrickWon(trick, (self._tricks_won[0], self._tricks_won[1]))
        if self._to_act is not None:
            return (played, won)
        return (played, won, *self._hand_over())

    def _hand_over(self) -> tuple[MatchEvent, ...]:
        """The events of the hand just scored: its result, the game's and the match's."""
        result = self._hand_results[-1]
        events: list[MatchEvent] = [HandEnded(shown_result(result))]
        if result.game_won_by is not None:
            events.append(GameEnded(self._game_results[-1]))
        if self._match_result is not None:
            events.append(MatchEnded(self._match_result))
        return tuple(events)

    def _refuse(self, action: object, seat: Seat | None) -> NoReturn:
        """Raise the specific reason ``action`` is not legal now."""
        if not isinstance(action, Card | Call):
            raise TypeError(f"not an action: {action!r} (expected a Card or a Call)")
        if seat is not None:
            _check_seat(seat)
        phase = self._phase
        to_act = self._to_act
        if to_act is None:
            raise WrongPhase(seat=seat, action=action, phase=phase.value)
        if seat is not to_act:
            assert seat is not None
            raise NotYourTurn(seat=seat, to_act=to_act, action=action)
        if phase is _PLAY:
            if not isinstance(action, Card):
                raise WrongPhase(seat=seat, action=action, phase=phase.value)
            if not action._bit & self._masks[seat]:
                raise CardNotHeld(seat=seat, card=action)
            raise MustFollowSuit(seat=seat, card=action, suit=self._current_trick[0].suit)
        if not isinstance(action, Call):
            raise WrongPhase(seat=seat, action=action, phase=phase.value)
        if action is DOUBLE:
            raise DoubleNotAllowed(seat=seat, call=action, why=self._why_no_double(seat))
        assert self._high is not None
        raise BidTooLow(seat=seat, bid=action, highest=self._high)

    def _why_no_double(self, seat: Seat) -> str:
        if not self.config.doubling:
            return "doubling is off in this game"
        if self._high is None:
            return "there is no bid to double"
        if self._doubled:
            return f"{self._high} is already doubled (there is no redouble)"
        return f"{self._high} was bid by {seat.name.title()}'s own side"

    # ----------------------------------------------------------------- auction

    def _call(self, seat: Seat, call: Call) -> None:
        self._auction.append((seat, call))
        high = self._high
        if call is PASS:
            passes = self._passes = self._passes + 1
            if high is None:
                if passes == 4:
                    self._finish_hand()
                    return
            elif passes == 3:
                self._end_auction()
                return
        elif call is DOUBLE:
            self._doubled = True
            self._passes = 0
        else:
            high = self._high = call
            self._high_seat = seat
            self._doubled = False
            self._passes = 0
        seat = self._to_act = _NEXT[seat]
        if high is None:
            self._legal, self._legal_bits = _LEGAL_CALLS[0][0]
        else:
            may_double = self._doubling and not self._doubled and (self._high_seat ^ seat) & 1
            self._legal, self._legal_bits = _LEGAL_CALLS[high.step + 1][1 if may_double else 0]

    def _end_auction(self) -> None:
        high = self._high
        assert high is not None
        assert high.denomination is not None
        declarer = self._high_seat
        self._contract = new_contract(high.level, high.denomination, declarer, self._doubled)
        trumps = self._trumps = high.denomination.suit
        self._power = _power(trumps)
        self._phase = Phase.PLAY
        first = _NEXT[declarer]
        self._trick_leader = first
        self._lead(first)

    # -------------------------------------------------------------------- play

    def _end_trick(self, trick: list[Card]) -> None:
        # The strongest card wins (see _power_table): three comparisons, no loop.
        first, second, third, fourth = trick
        power = self._power[first.suit]
        best = power[first.index]
        best_at = 0
        strength = power[second.index]
        if strength > best:
            best, best_at = strength, 1
        strength = power[third.index]
        if strength > best:
            best, best_at = strength, 2
        if power[fourth.index] > best:
            best_at = 3
        if self._turned_face_up:
            # The turned card is an ordinary card once the dealer plays to trick
            # one; the dealer, on the leader's right, plays last to it.
            self._turned_face_up = False
        leader = self._trick_leader
        winner = SEATS[(leader + best_at) % 4]
        self._played += trick
        trick.clear()
        self._trick_leaders.append(leader)
        winners = self._trick_winners
        winners.append(winner)
        self._tricks_won[winner & 1] += 1
        if len(winners) == 13:
            self._finish_hand()
            return
        # The winner leads: any card it holds (cards_of_mask, inlined).
        self._trick_leader = self._to_act = winner
        hand = self._masks[winner]
        cache = SUIT_CARDS
        try:
            self._legal = (
                cache[hand & _CLUBS] + cache[hand & _DIAMONDS] + cache[hand & _HEARTS] + cache[hand & _SPADES]
            )
        except KeyError:
            self._legal = cards_of_mask(hand)
        self._legal_bits = hand

    # ----------------------------------------------------------------- scoring

    def _finish_hand(self) -> None:
        self._to_act = None
        self._legal = ()
        self._legal_bits = 0
        self._game_hands += 1
        ns_tricks, ew_tricks = tricks = (self._tricks_won[0], self._tricks_won[1])
        honours = _NO_POINTS
        barred = _NOT_BARRED
        won_by: Side | None = None
        by_honours = False
        target = self._target
        to_target = self._to_target
        scores = self._scores
        if self._contract_game:
            if self._contract is None:
                points, outcome, margin = _NO_POINTS, Outcome.THROWN_IN, 0
            else:
                points, outcome, margin = contract_points(self._contract, tricks)
            self._add(points)
            if to_target:
                ns, ew = scores
                if (ns >= target or ew >= target) and ns != ew:
                    won_by = Side.NORTH_SOUTH if ns > ew else Side.EAST_WEST
        else:
            # Odd tricks: exactly one side takes more than six of the thirteen.
            if ns_tricks > 6:
                points, margin = (ns_tricks - 6, 0), ns_tricks - 6
            else:
                points, margin = (0, ew_tricks - 6), ew_tricks - 6
            outcome = Outcome.ODD_TRICKS
            if to_target:
                barred = (scores[0] == target - 1, scores[1] == target - 1)
            self._add(points)
            if to_target:
                won_by = self._classic_game_winner(target)
            if self._honours and won_by is None:
                ns_held, ew_held = honours_held(self._deal, self._trumps)
                honours = (
                    0 if barred[0] else HONOUR_POINTS[ns_held],
                    0 if barred[1] else HONOUR_POINTS[ew_held],
                )
                self._add(honours)
                if to_target:
                    won_by = self._classic_game_winner(target)
                    by_honours = won_by is not None
        self._hand_results.append(
            new_hand_result(
                self._hand_number,
                self._dealer,
                self._deal,
                self._trumps,
                self._turned_card,
                self._cut_card,
                self._contract,
                tricks,
                points,
                honours,
                barred,
                outcome,
                margin,
                (scores[0], scores[1]),
                won_by,
            )
        )
        if won_by is not None:
            self._finish_game(won_by, by_honours)
        if self._match_is_over():
            self._phase = Phase.MATCH_OVER
            self._match_result = self._final_result()
        else:
            self._phase = Phase.HAND_OVER

    def _add(self, points: tuple[int, int]) -> None:
        ns, ew = points
        scores = self._scores
        totals = self._totals
        scores[0] += ns
        scores[1] += ew
        totals[0] += ns
        totals[1] += ew

    def _classic_game_winner(self, target: int) -> Side | None:
        ns, ew = self._scores
        if ns >= target:
            return Side.NORTH_SOUTH
        if ew >= target:
            return Side.EAST_WEST
        return None

    def _finish_game(self, winner: Side, by_honours: bool) -> None:
        self._game_results.append(
            GameResult(
                game_number=self._game_number,
                winner=winner,
                scores=(self._scores[0], self._scores[1]),
                hands=self._game_hands,
                by_honours=by_honours,
            )
        )
        self._games_won[winner] += 1
        if self.config.format is MatchFormat.RUBBER and max(self._games_won) < 2:
            self._scores = [0, 0]
            self._game_number += 1
            self._game_hands = 0

    def _match_is_over(self) -> bool:
        match self._format:
            case MatchFormat.HAND:
                return True
            case MatchFormat.DEALS:
                return self._hand_number >= (self.config.deals or 0)
            case MatchFormat.GAME:
                return bool(self._game_results)
            case MatchFormat.RUBBER:
                return max(self._games_won) >= 2
        raise AssertionError(self.config.format)

    def _final_result(self) -> MatchResult:
        totals = (self._totals[0], self._totals[1])
        games = (self._games_won[0], self._games_won[1])
        winner, reason = match_outcome(self.config, totals, games)
        return MatchResult(winner, totals, games, self._hand_number, reason)

    # ------------------------------------------------------------- comparison

    def _key(self) -> tuple[object, ...]:
        return (
            self.config,
            self.seed,
            self.fixed_deals,
            self._phase,
            self._hand_number,
            self._dealer,
            self._to_act,
            tuple(self._masks),
            self._turned_face_up,
            tuple(self._current_trick),
            self._trick_leader,
            self.tricks,
            tuple(self._auction),
            self._contract,
            self._trumps,
            tuple(self._scores),
            tuple(self._totals),
            tuple(self._games_won),
            tuple(self._hand_results),
            tuple(self._game_results),
            self._match_result,
            self.history,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<GameState {self.config.game.value} hand {self._hand_number} "
            f"{self._phase.value} to_act={self._to_act} scores={self.scores}>"
        )


def _check_seat(seat: object) -> None:
    if not isinstance(seat, Seat):
        raise TypeError(
            f"not a seat: {seat!r} (expected a Seat, e.g. Seat.EAST or Seat.parse('E');"
            " Seat(n) turns a number 0-3 into one)"
        )


def _deal_of(deal: object) -> Deal:
    """``from_deal``'s deal, from a :class:`Deal` or its PBN text."""
    if isinstance(deal, Deal):
        return deal
    if isinstance(deal, str):
        try:
            return Deal.parse(deal)
        except ParseError as error:
            raise PositionError(str(error)) from error
    raise PositionError(f"not a deal: {deal!r} (expected a Deal or PBN text 'N:… … … …')")


def _card_of(name: str, card: object) -> Card | None:
    if card is None or isinstance(card, Card):
        return card
    if isinstance(card, str):
        try:
            return Card.parse(card)
        except ParseError as error:
            raise PositionError(f"{name}: {error}") from error
    raise PositionError(f"{name} must be a card, e.g. 'QH', not {card!r}")


def _action_of(action: object, auction: bool) -> Action:
    """An action of ``from_deal``'s list, its text read as the phase reads it (``7C`` is a
    bid in the auction and a card in play). Text that spells only the other kind (``pass``
    in play, ``QH`` in the auction) is returned as that kind, for the rules to refuse as
    :class:`WrongPhase`."""
    if isinstance(action, Card | Call):
        return action
    if not isinstance(action, str):
        raise ParseError(f"not an action: {action!r} (expected a Card, a Call or their text)")
    first, other = (Call.parse, Card.parse) if auction else (Card.parse, Call.parse)
    try:
        return first(action)
    except ParseError as refusal:
        error = refusal
    try:
        return other(action)
    except ParseError:
        raise error from None


def _check_position(
    config: GameConfig,
    deal: Deal,
    dealer: Seat,
    turned: Card | None,
    cut: Card | None,
    hand_number: int,
    scores: tuple[int, int],
    games_won: tuple[int, int],
) -> None:
    """Raise PositionError unless :meth:`GameState.from_deal` may start here."""
    selection = None if config.game is GameKind.CONTRACT else config.trump_selection
    if selection is TrumpSelection.TURN_LAST_CARD:
        if turned is None:
            raise PositionError("give turned_card: trumps are turned from the dealer's last card")
        if turned not in deal[dealer]:
            raise PositionError(
                f"the turned card {turned} is not in the dealer's ({dealer.name.title()}) hand"
            )
    elif turned is not None:
        raise PositionError("turned_card is only for classic Whist with trumps turned (turn_last_card)")
    if selection is TrumpSelection.CUT:
        if cut is None:
            raise PositionError("give cut_card: trumps are cut from a second pack")
    elif cut is not None:
        raise PositionError("cut_card is only for classic Whist with trumps cut")
    if not isinstance(hand_number, int) or hand_number < 1:
        raise PositionError(f"hand numbers start at 1, not {hand_number!r}")
    if config.format is MatchFormat.DEALS and hand_number > (config.deals or 0):
        last = "its only deal" if config.deals == 1 else f"its {config.deals} deals"
        raise PositionError(f"hand {hand_number} is past this match's end: {last}")
    if config.format is MatchFormat.HAND and hand_number != 1:
        raise PositionError("a one-hand match has only hand 1")
    for name, pair in (("scores", scores), ("games_won", games_won)):
        if (
            not isinstance(pair, tuple | list)
            or len(pair) != 2
            or any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in pair)
        ):
            raise PositionError(f"{name} must be two whole numbers, NS then EW, e.g. (0, 0), not {pair!r}")
    # Contract Whist plays on while the sides are level at or above the target (docs/rules.md,
    # Game); a side at or past it and ahead has already won.
    level_play_on = config.game is GameKind.CONTRACT and scores[0] == scores[1]
    if config.plays_to_target and max(scores) >= config.game_target and not level_play_on:
        raise PositionError(f"scores {tuple(scores)} have already reached the target {config.game_target}")
    if any(games_won) and config.format is not MatchFormat.RUBBER:
        raise PositionError("games_won is only for rubbers")
    if max(games_won) >= 2:
        raise PositionError(f"games_won {games_won}: the rubber is already over")


def replay(
    config: GameConfig,
    seed: str,
    actions: Iterable[tuple[Seat, Action] | Action],
    deals: Iterable[FixedDeal] | None = None,
) -> GameState:
    """Re-create a match from its configuration, seed (or fixed ``deals``) and actions.

    Actions may carry their seat (as :attr:`GameState.history` does), and then
    the seat is checked; the next hand is dealt whenever one is over.
    """
    state = GameState(config, seed, deals=deals)
    for item in actions:
        if state.phase is Phase.HAND_OVER:
            state.start_next_hand()
        if isinstance(item, tuple):
            seat, action = item
            state.apply(action, seat)
        else:
            state.apply(item)
    return state


def match_outcome(
    config: GameConfig, totals: tuple[int, int], games: tuple[int, int]
) -> tuple[Side | None, str]:
    """Who won a finished match (None: drawn) and why, in words: from its totals and games
    alone, so a match's end read back from the wire, which holds those, says it too."""
    if config.plays_to_target:
        victor = Side.NORTH_SOUTH if games[0] > games[1] else Side.EAST_WEST
        what = "rubber" if config.format is MatchFormat.RUBBER else "game"
        rubber = f" {games[victor]}-{games[victor.other]}" if what == "rubber" else ""
        return victor, f"{victor} won the {what}{rubber}"
    if totals[0] == totals[1]:
        return None, f"drawn at {totals[0]}-{totals[1]}"
    winner = Side.NORTH_SOUTH if totals[0] > totals[1] else Side.EAST_WEST
    return winner, f"{winner} scored more points, {max(totals)}-{min(totals)}"
