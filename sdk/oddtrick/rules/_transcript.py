"""A whole match written out as text for people, and for golden tests.

:func:`transcript` is a pure function of a :class:`GameState`: the same match
always gives the same text, byte for byte. Cards read the way people write them
(``10♠``, ``Q♥``) in the body; the closing ``history`` section spells every
action in the canonical machine form (``TS``, ``7H``, ``pass``), so the match
can be re-created from the transcript alone with :func:`replay`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from oddtrick.rules._calls import Action, Call
from oddtrick.rules._cards import Card, pretty_hand
from oddtrick.rules._config import GameConfig, GameKind
from oddtrick.rules._results import Contract, HandResult, Phase, Trick
from oddtrick.rules._scoring import honours_held, honours_points
from oddtrick.rules._seats import SEATS, Seat, Side
from oddtrick.rules._state import GameState
from oddtrick.rules._words import contract_text

FORMAT_LINE = "# oddtrick match transcript v1"
"""The first line of every transcript; bump the version if the layout changes."""


def transcript(state: GameState) -> str:
    """The match so far as readable text, ending with a newline.

    Every hand is re-created from the state's configuration, seed and history,
    so the transcript shows each hand's deal, auction and tricks even after the
    state has moved on. Raises :class:`ValueError` if the state does not match
    its own history (which cannot happen to a state built by the rules).
    """
    hands = _rebuild(state)
    config = state.config
    lines = [
        FORMAT_LINE,
        f"game: {config.describe()}",
        f"config: {json.dumps(config.to_dict(), ensure_ascii=False)}",
        f"seed: {json.dumps(state.seed, ensure_ascii=False)}",
        f"commitment: {state.commitment}",
        f"status: {_status(state)}",
    ]
    results = state.hand_results
    game_number = 1
    for index, hand in enumerate(hands):
        result = results[index] if index < len(results) else None
        lines.append("")
        lines.extend(_hand_lines(state, hand, result, game_number))
        if result is not None and result.game_won_by is not None:
            game_number += 1
    if state.game_results:
        lines.append("")
        lines.append("## Games")
        for game in state.game_results:
            how = " (on honours)" if game.by_honours else ""
            lines.append(
                f"game {game.game_number}: {game.winner} won {_pair(game.scores, game.winner)}"
                f" in {_count(game.hands, 'hand')}{how}"
            )
    match = state.match_result
    if match is not None:
        lines.append("")
        lines.append("## Match")
        lines.append(f"result: {match.reason}")
        lines.append(f"winner: {match.winner if match.winner is not None else 'none (a draw)'}")
        lines.append(f"totals: {_scores(match.totals)}")
        lines.append(f"games won: {_scores(match.games_won)}")
        lines.append(f"hands played: {match.hands_played}")
    lines.append("")
    lines.append("## History")
    for hand in hands:
        if hand.calls:
            lines.append(f"hand {hand.number} calls: {_actions(hand.calls)}")
        if hand.cards:
            lines.append(f"hand {hand.number} cards: {_actions(hand.cards)}")
    return "\n".join(lines) + "\n"


class _Hand:
    """What the transcript needs of one hand, captured while replaying."""

    __slots__ = (
        "calls",
        "cards",
        "contract",
        "current_trick",
        "cut_card",
        "deal",
        "dealer",
        "first_lead",
        "number",
        "tricks",
        "trumps",
        "turned_card",
    )

    def __init__(self, state: GameState) -> None:
        self.number = state.hand_number
        self.dealer = state.dealer
        self.deal = state.deal
        self.turned_card = state.turned_card
        self.cut_card = state.cut_card
        self.trumps = state.trumps
        self.first_lead: Seat | None = state.to_act if state.phase is Phase.PLAY else None
        self.contract: Contract | None = None
        self.calls: list[tuple[Seat, Call]] = []
        self.cards: list[tuple[Seat, Card]] = []
        self.tricks: tuple[Trick, ...] = ()
        self.current_trick: tuple[tuple[Seat, Card], ...] = ()

    def capture(self, state: GameState) -> None:
        """Record the end state of the hand (or of the hand in progress)."""
        self.contract = state.contract
        self.trumps = state.trumps
        self.tricks = state.tricks
        self.current_trick = state.current_trick


def _rebuild(state: GameState) -> list[_Hand]:
    copy = GameState(state.config, state.seed, deals=state.fixed_deals)
    hands = [_Hand(copy)]
    for seat, action in state.history:
        if copy.phase is Phase.HAND_OVER:
            hands[-1].capture(copy)
            copy.start_next_hand()
            hands.append(_Hand(copy))
        hand = hands[-1]
        was_auction = copy.phase is Phase.AUCTION
        copy.apply(action, seat)
        if was_auction:
            assert isinstance(action, Call)
            hand.calls.append((seat, action))
            if copy.phase is Phase.PLAY:
                hand.first_lead = copy.to_act
        else:
            assert isinstance(action, Card)
            hand.cards.append((seat, action))
    if state.phase is not Phase.HAND_OVER and copy.phase is Phase.HAND_OVER:
        # The state has dealt the next hand but nobody has acted in it yet.
        hands[-1].capture(copy)
        copy.start_next_hand()
        hands.append(_Hand(copy))
    hands[-1].capture(copy)
    if copy != state:
        raise ValueError("the state does not match its own configuration, seed and history")
    return hands


def _hand_lines(state: GameState, hand: _Hand, result: HandResult | None, game_number: int) -> list[str]:
    config = state.config
    classic = config.game is GameKind.CLASSIC
    title = f"## Hand {hand.number}"
    if config.plays_to_target:
        title += f" (game {game_number})"
    lines = [title, f"dealer: {_name(hand.dealer)}", f"deal: {hand.deal}"]
    width = max(len(_name(seat)) for seat in SEATS)
    for seat in SEATS:
        lines.append(f"  {_name(seat):<{width}}  {pretty_hand(hand.deal[seat])}")
    if classic:
        lines.append(f"trumps: {_trumps_text(hand)}")
        if config.honours and hand.trumps is not None:
            held = honours_held(hand.deal, hand.trumps)
            lines.append(f"honours held: {_scores(held)}")
    else:
        lines.extend(_auction_lines(hand, result))
    if hand.first_lead is not None:
        lines.append(f"first lead: {_name(hand.first_lead)}")
    for trick in hand.tricks:
        plays = "  ".join(f"{seat}: {card.pretty:<3}" for seat, card in trick.plays)
        lines.append(f"trick {trick.number:>2}  {plays}  won by {_name(trick.winner)}")
    if hand.current_trick:
        plays = "  ".join(f"{seat}: {card.pretty:<3}" for seat, card in hand.current_trick)
        lines.append(f"trick {len(hand.tricks) + 1:>2}  {plays}  (in progress)")
    if result is None:
        lines.append("(hand in progress)")
        return lines
    if hand.tricks:
        lines.append(f"tricks: {_scores(result.tricks)}")
    lines.extend(_honours_notes(config, hand, result))
    lines.append(f"result: {result.describe()}")
    lines.append(f"scores: {_scores(result.scores_after)}")
    if result.game_won_by is not None:
        games = state.game_results
        how = " on honours" if len(games) >= game_number and games[game_number - 1].by_honours else ""
        lines.append(
            f"game {game_number} won by {result.game_won_by} "
            f"{_pair(result.scores_after, result.game_won_by)}{how}"
        )
    return lines


def _auction_lines(hand: _Hand, result: HandResult | None) -> list[str]:
    lines = [f"auction ({_name(hand.dealer.left)} first):"]
    row: list[str] = []
    for seat, call in hand.calls:
        row.append(f"{seat}: {call.pretty}")
        if len(row) == 4:
            lines.append("  " + "".join(f"{cell:<12}" for cell in row).rstrip())
            row = []
    if row:
        lines.append("  " + "".join(f"{cell:<12}" for cell in row).rstrip())
    contract = hand.contract
    if contract is not None:
        trumps = "no trumps" if contract.trumps is None else contract.trumps.symbol
        lines.append(f"contract: {contract_text(contract, side=True)}; trumps: {trumps}")
    elif result is not None:
        lines.append("contract: none, the hand is thrown in")
    return lines


def _honours_notes(config: GameConfig, hand: _Hand, result: HandResult) -> list[str]:
    if not config.honours or hand.trumps is None:
        return []
    notes = []
    for side in Side:
        if result.honours_barred[side]:
            notes.append(
                f"honours barred: {side} (on {config.game_target - 1} at the start of the deal, "
                "one short of the target)"
            )
    earned = honours_points(honours_held(hand.deal, hand.trumps))
    if result.honours == (0, 0) and result.game_won_by is not None and any(earned):
        notes.append("honours not scored: the game was won on tricks first")
    return notes


def _trumps_text(hand: _Hand) -> str:
    if hand.turned_card is not None:
        return (
            f"{hand.turned_card.suit.symbol} (turned card {hand.turned_card.pretty}, "
            f"{_name(hand.dealer)}'s last card)"
        )
    if hand.cut_card is not None:
        return f"{hand.cut_card.suit.symbol} (cut {hand.cut_card.pretty} from a second pack)"
    if hand.trumps is None:
        return f"no trumps (fixed rotation, deal {hand.number})"
    return f"{hand.trumps.symbol} (fixed rotation, deal {hand.number})"


def _actions(actions: Iterable[tuple[Seat, Action]]) -> str:
    return " ".join(f"{seat}:{action}" for seat, action in actions)


def _status(state: GameState) -> str:
    if state.phase is Phase.MATCH_OVER:
        return "match over"
    if state.phase is Phase.HAND_OVER:
        return f"hand {state.hand_number} over"
    return f"hand {state.hand_number}, {state.phase.value}, {_name(state.to_act)} to act"


def _name(seat: Seat | None) -> str:
    return "nobody" if seat is None else seat.name.title()


def _scores(pair: tuple[int, int]) -> str:
    return f"NS {pair[0]}, EW {pair[1]}"


def _pair(scores: tuple[int, int], winner: Side) -> str:
    return f"{scores[winner]}-{scores[winner.other]}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
