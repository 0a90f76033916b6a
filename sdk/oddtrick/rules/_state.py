"""The state machine of a whole match: deals, auction, play, scoring, games.

A :class:`GameState` is one match in progress under one :class:`GameConfig`
and one seed. The seed fixes every deal, so the configuration, the seed and
the list of actions are the whole match: :func:`replay` re-creates it.

Speed matters (bots run millions of playouts), so the inside is plain lists
and interned cards; everything that leaves is an immutable value.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NoReturn, TypeAlias

from oddtrick.rules._calls import BIDS, DOUBLE, PASS, Call
from oddtrick.rules._cards import Card, Deal, Suit
from oddtrick.rules._config import GameConfig, GameKind, MatchFormat, TrumpSelection
from oddtrick.rules._dealing import commitment, deal_cards, new_seed
from oddtrick.rules._errors import (
    BidTooLow,
    CardNotHeld,
    DoubleNotAllowed,
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
)
from oddtrick.rules._scoring import (
    classic_trick_points,
    contract_points,
    honours_held,
    honours_points,
)
from oddtrick.rules._seats import SEATS, Seat, Side
from oddtrick.rules._view import SeatView, observe

Action: TypeAlias = Card | Call
"""What a player does on their turn: a call in the auction, a card in play."""

FIRST_DEALER: Final = Seat.NORTH
ROTATION: Final = (Suit.HEARTS, Suit.DIAMONDS, Suit.SPADES, Suit.CLUBS)
"""Whist-drive trump order for ``fixed_rotation``."""

_NEXT: Final = (Seat.EAST, Seat.SOUTH, Seat.WEST, Seat.NORTH)
_AUCTION: Final = Phase.AUCTION
_PLAY: Final = Phase.PLAY


def _call_table() -> tuple[tuple[tuple[Call, ...], tuple[Call, ...]], ...]:
    """Legal calls indexed by [step of the highest bid + 1][double allowed]."""
    rows = []
    for above in range(-1, 35):
        higher = BIDS[above + 1 :]
        rows.append(((PASS, *higher), (PASS, DOUBLE, *higher)))
    return tuple(rows)


_LEGAL_CALLS: Final = _call_table()


def _by_suit(cards: tuple[Card, ...]) -> list[list[Card]]:
    suits: list[list[Card]] = [[], [], [], []]
    for card in cards:
        suits[card.suit].append(card)
    return suits


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
    """

    __slots__ = (
        "_auction",
        "_contract",
        "_current_trick",
        "_cut_card",
        "_deal",
        "_dealer",
        "_doubled",
        "_doubling",
        "_game_hands",
        "_game_number",
        "_game_results",
        "_games_won",
        "_hand_number",
        "_hand_results",
        "_hands",
        "_high",
        "_high_seat",
        "_history",
        "_led_suit",
        "_legal",
        "_match_result",
        "_passes",
        "_phase",
        "_scores",
        "_to_act",
        "_totals",
        "_trick_leader",
        "_tricks",
        "_tricks_won",
        "_trumps",
        "_turned_card",
        "_turned_face_up",
        "config",
        "seed",
    )

    def __init__(self, config: GameConfig, seed: str | None = None) -> None:
        self.config: Final = config
        self.seed: Final = new_seed() if seed is None else seed
        self._scores = [0, 0]
        self._totals = [0, 0]
        self._games_won = [0, 0]
        self._game_number = 1
        self._game_hands = 0
        self._doubling = config.doubling
        self._hand_results: list[HandResult] = []
        self._game_results: list[GameResult] = []
        self._match_result: MatchResult | None = None
        self._history: list[tuple[Seat, Action]] = []
        self._start_hand(1, FIRST_DEALER)

    # ----------------------------------------------------------------- setup

    def _start_hand(self, number: int, dealer: Seat) -> None:
        config = self.config
        deal, turned, cut = deal_cards(self.seed, number, dealer)
        self._hand_number = number
        self._dealer = dealer
        self._deal = deal
        self._hands = [_by_suit(deal[seat]) for seat in SEATS]
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
        self._led_suit: Suit | None = None
        self._tricks: list[tuple[Seat, list[Card], Seat]] = []
        self._tricks_won = [0, 0]
        self._legal: tuple[Action, ...] | None = None
        first = _NEXT[dealer]
        self._trick_leader = first
        self._to_act: Seat | None = first
        if config.game is GameKind.CONTRACT:
            self._trumps: Suit | None = None
            self._phase = Phase.AUCTION
            return
        self._phase = Phase.PLAY
        if config.trump_selection is TrumpSelection.TURN_LAST_CARD:
            self._turned_card = turned
            self._turned_face_up = True
            self._trumps = turned.suit
        elif config.trump_selection is TrumpSelection.CUT:
            self._cut_card = cut
            self._trumps = cut.suit
        else:
            self._trumps = trumps_for_rotation(number, config.no_trump_every_fifth)

    def start_next_hand(self) -> None:
        """Deal the next hand, the deal passing to the left. Only in ``HAND_OVER``."""
        if self._phase is not Phase.HAND_OVER:
            raise WrongPhase(seat=None, action=PASS, phase=self._phase.value) from None
        self._start_hand(self._hand_number + 1, _NEXT[self._dealer])

    # ---------------------------------------------------------------- reading

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def to_act(self) -> Seat | None:
        """Whose turn it is, or ``None`` when the hand or the match is over."""
        return self._to_act

    @property
    def hand_number(self) -> int:
        return self._hand_number

    @property
    def dealer(self) -> Seat:
        return self._dealer

    @property
    def deal(self) -> Deal:
        """The four hands as dealt. Never show this to a player: use :meth:`view`."""
        return self._deal

    @property
    def trumps(self) -> Suit | None:
        """The trump suit, ``None`` at no trumps or while the auction runs."""
        return self._trumps

    @property
    def turned_card(self) -> Card | None:
        return self._turned_card

    @property
    def turned_card_face_up(self) -> bool:
        return self._turned_face_up

    @property
    def cut_card(self) -> Card | None:
        return self._cut_card

    @property
    def contract(self) -> Contract | None:
        return self._contract

    @property
    def auction(self) -> tuple[tuple[Seat, Call], ...]:
        return tuple(self._auction)

    @property
    def current_trick(self) -> tuple[tuple[Seat, Card], ...]:
        leader = self._trick_leader
        return tuple((SEATS[(leader + i) % 4], c) for i, c in enumerate(self._current_trick))

    @property
    def tricks(self) -> tuple[Trick, ...]:
        """The completed tricks of this hand."""
        return tuple(
            Trick(number, leader, (c[0], c[1], c[2], c[3]), winner)
            for number, (leader, c, winner) in enumerate(self._tricks, 1)
        )

    @property
    def tricks_won(self) -> tuple[int, int]:
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
        return (self._games_won[0], self._games_won[1])

    @property
    def game_number(self) -> int:
        return self._game_number

    @property
    def hand_results(self) -> tuple[HandResult, ...]:
        return tuple(self._hand_results)

    @property
    def game_results(self) -> tuple[GameResult, ...]:
        return tuple(self._game_results)

    @property
    def match_result(self) -> MatchResult | None:
        return self._match_result

    @property
    def history(self) -> tuple[tuple[Seat, Action], ...]:
        """Every action of the match in order; with the seed, the whole match."""
        return tuple(self._history)

    @property
    def commitment(self) -> str:
        return commitment(self.seed)

    def view(self, seat: Seat | None) -> SeatView:
        """What ``seat`` may know now (``None``: a spectator). The only door to players."""
        return observe(self, seat)

    def hand_of(self, seat: Seat) -> tuple[Card, ...]:
        """The cards ``seat`` holds now, sorted. Referee-side: players use :meth:`view`."""
        suits = self._hands[seat]
        return (*suits[0], *suits[1], *suits[2], *suits[3])

    # ---------------------------------------------------------------- legality

    @property
    def legal_actions(self) -> tuple[Action, ...]:
        """The actions the seat to act may take, sorted: calls as pass, double,
        then bids low to high; cards by suit then rank. Empty when nobody acts."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> tuple[Action, ...]:
        seat = self._to_act
        if seat is None:
            return ()
        if self._phase is _PLAY:
            suits = self._hands[seat]
            led = self._led_suit
            if led is not None:
                follow = suits[led]
                if follow:
                    return tuple(follow)
            return (*suits[0], *suits[1], *suits[2], *suits[3])
        high = self._high
        if high is None:
            return _LEGAL_CALLS[0][False]
        may_double = self._doubling and not self._doubled and (self._high_seat ^ seat) & 1
        return _LEGAL_CALLS[high.step + 1][bool(may_double)]

    def is_legal(self, action: Action, seat: Seat | None = None) -> bool:
        if seat is not None and seat is not self._to_act:
            return False
        return action in self.legal_actions

    def apply(self, action: Action, seat: Seat | None = None) -> None:
        """Make ``action`` for ``seat`` (default: whoever is to act).

        Raises a subclass of :class:`IllegalAction` naming the cause, and then
        the state is exactly as it was.
        """
        to_act = self._to_act
        legal = self._legal or self._compute_legal()
        # Nobody to act means no legal action, so this also refuses out of phase.
        if action not in legal or (seat is not None and seat is not to_act):
            self._refuse(action, seat if seat is not None else to_act)
        assert to_act is not None
        self._history.append((to_act, action))
        self._legal = None
        if self._phase is not _PLAY:
            self._call(to_act, action)  # type: ignore[arg-type]
            return
        # Card play, inlined: this is the hot path of every playout.
        card: Card = action  # type: ignore[assignment]
        self._hands[to_act][card.suit].remove(card)
        trick = self._current_trick
        if not trick:
            self._led_suit = card.suit
        if self._turned_face_up and to_act is self._dealer:
            # The turned card is an ordinary card once the dealer plays to trick one.
            self._turned_face_up = False
        trick.append(card)
        if len(trick) < 4:
            self._to_act = _NEXT[to_act]
        else:
            self._end_trick(trick)

    def _refuse(self, action: object, seat: Seat | None) -> NoReturn:
        """Raise the specific reason ``action`` is not legal now."""
        if not isinstance(action, Card | Call):
            raise TypeError(f"not an action: {action!r} (expected a Card or a Call)")
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
            if action not in self._hands[seat][action.suit]:
                raise CardNotHeld(seat=seat, card=action)
            assert self._led_suit is not None
            raise MustFollowSuit(seat=seat, card=action, suit=self._led_suit)
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
        if call is PASS:
            self._passes += 1
            if self._high is None:
                if self._passes == 4:
                    self._finish_hand()
                    return
            elif self._passes == 3:
                self._end_auction()
                return
        elif call is DOUBLE:
            self._doubled = True
            self._passes = 0
        else:
            self._high = call
            self._high_seat = seat
            self._doubled = False
            self._passes = 0
        self._to_act = _NEXT[seat]

    def _end_auction(self) -> None:
        high = self._high
        assert high is not None
        assert high.denomination is not None
        declarer = self._high_seat
        self._contract = Contract(high.level, high.denomination, declarer, self._doubled)
        self._trumps = high.denomination.suit
        self._phase = Phase.PLAY
        first = _NEXT[declarer]
        self._trick_leader = first
        self._to_act = first

    # -------------------------------------------------------------------- play

    def _end_trick(self, trick: list[Card]) -> None:
        best = trick[0]
        best_at = 0
        trumps = self._trumps
        for i in (1, 2, 3):
            c = trick[i]
            if c.suit is best.suit:
                if c.rank > best.rank:
                    best, best_at = c, i
            elif c.suit is trumps:
                best, best_at = c, i
        leader = self._trick_leader
        winner = SEATS[(leader + best_at) % 4]
        tricks = self._tricks
        tricks.append((leader, trick, winner))
        self._tricks_won[winner & 1] += 1
        self._current_trick = []
        self._led_suit = None
        if len(tricks) == 13:
            self._finish_hand()
        else:
            self._trick_leader = winner
            self._to_act = winner

    # ----------------------------------------------------------------- scoring

    def _finish_hand(self) -> None:
        self._to_act = None
        self._legal = None
        self._game_hands += 1
        config = self.config
        tricks = (self._tricks_won[0], self._tricks_won[1])
        honours = (0, 0)
        barred = (False, False)
        won_by: Side | None = None
        by_honours = False
        target = config.game_target
        if config.game is GameKind.CONTRACT:
            if self._contract is None:
                points, outcome, margin = (0, 0), Outcome.THROWN_IN, 0
            else:
                points, outcome, margin = contract_points(self._contract, tricks)
            self._add(points)
            if config.plays_to_target:
                won_by = self._contract_game_winner(target)
        else:
            points, margin = classic_trick_points(tricks)
            outcome = Outcome.ODD_TRICKS
            to_target = config.plays_to_target
            if to_target:
                barred = (self._scores[0] == target - 1, self._scores[1] == target - 1)
            self._add(points)
            if to_target:
                won_by = self._classic_game_winner(target)
            if config.honours and won_by is None:
                earned = honours_points(honours_held(self._deal, self._trumps))
                honours = (0 if barred[0] else earned[0], 0 if barred[1] else earned[1])
                self._add(honours)
                if to_target:
                    won_by = self._classic_game_winner(target)
                    by_honours = won_by is not None
        self._hand_results.append(
            HandResult(
                hand_number=self._hand_number,
                dealer=self._dealer,
                deal=self._deal,
                trumps=self._trumps,
                turned_card=self._turned_card,
                cut_card=self._cut_card,
                contract=self._contract,
                tricks=tricks,
                points=points,
                honours=honours,
                honours_barred=barred,
                outcome=outcome,
                margin=margin,
                scores_after=(self._scores[0], self._scores[1]),
                game_won_by=won_by,
            )
        )
        if won_by is not None:
            self._finish_game(won_by, by_honours)
        self._phase = Phase.MATCH_OVER if self._match_is_over() else Phase.HAND_OVER
        if self._phase is Phase.MATCH_OVER:
            self._match_result = self._final_result()

    def _add(self, points: tuple[int, int]) -> None:
        for side in (0, 1):
            self._scores[side] += points[side]
            self._totals[side] += points[side]

    def _classic_game_winner(self, target: int) -> Side | None:
        for side in Side:
            if self._scores[side] >= target:
                return side
        return None

    def _contract_game_winner(self, target: int) -> Side | None:
        ns, ew = self._scores
        if max(ns, ew) >= target and ns != ew:
            return Side.NORTH_SOUTH if ns > ew else Side.EAST_WEST
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
        match self.config.format:
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
        hands = self._hand_number
        if self.config.plays_to_target:
            victor = Side.NORTH_SOUTH if games[0] > games[1] else Side.EAST_WEST
            what = "rubber" if self.config.format is MatchFormat.RUBBER else "game"
            reason = f"{victor} won the {what}" + (
                f" {games[victor]}-{games[victor.other]}" if what == "rubber" else ""
            )
            winner: Side | None = victor
        elif totals[0] == totals[1]:
            winner, reason = None, f"drawn at {totals[0]}-{totals[1]}"
        else:
            winner = Side.NORTH_SOUTH if totals[0] > totals[1] else Side.EAST_WEST
            reason = f"{winner} scored more points, {max(totals)}-{min(totals)}"
        return MatchResult(winner, totals, games, hands, reason)

    # ------------------------------------------------------------- comparison

    def _key(self) -> tuple[object, ...]:
        return (
            self.config,
            self.seed,
            self._phase,
            self._hand_number,
            self._dealer,
            self._to_act,
            tuple(tuple(tuple(s) for s in hand) for hand in self._hands),
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
            tuple(self._history),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<GameState {self.config.game.value} hand {self._hand_number} "
            f"{self._phase.value} to_act={self._to_act} scores={self.scores}>"
        )


def replay(
    config: GameConfig,
    seed: str,
    actions: Iterable[tuple[Seat, Action] | Action],
) -> GameState:
    """Re-create a match from its configuration, seed and actions.

    Actions may carry their seat (as :attr:`GameState.history` does), and then
    the seat is checked; the next hand is dealt whenever one is over.
    """
    state = GameState(config, seed)
    for item in actions:
        if state.phase is Phase.HAND_OVER:
            state.start_next_hand()
        if isinstance(item, tuple):
            seat, action = item
            state.apply(action, seat)
        else:
            state.apply(item)
    return state
