"""Choosing a call by playing the auction out: what each call leads to, scored double-dummy.

A call's worth is not the tricks our side could take but the contract the auction ends
in after it, and who is then at risk: in Contract Whist a declaring side that falls
short scores nothing while the defenders score every trick they took, so a bid one
trick too high costs some seven points, and letting the other side overreach gains as
much. Bidding programs (GIB's "borel" simulations, WBridge5's) judge a call the same
way: on each sampled deal consistent with the auction so far, every candidate call is
made, the rest of the auction is played out by a model of the four players (here the
heuristic bot's policy, the textbook one), and the contract it ends in is scored with
the double-dummy tricks of that deal. The call with the best average score over the
samples is made, but only when it beats the model's own call clearly enough for the
samples to tell (a paired comparison, deal by deal): with few samples the model's call
stands.

Everything here runs on the rules engine (:class:`oddtrick.GameState`), the one source of
truth for what is legal and how an auction ends.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import oddtrick
from oddtrick import Call, Phase, Seat
from oddtrick._local import bot_view
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.double_dummy import Hands, Position, max_tricks
from oddtrick.rules import Contract, Deal, Denomination, GameState, contract_points

Ending = tuple[Denomination, Seat]
"""A contract's denomination and declarer: what its double-dummy tricks depend on."""

_NOBODY: Mapping[Seat, str] = dict.fromkeys(Seat, "")


def candidate_calls(view: oddtrick.BotView, levels_above: int, also: Iterable[Call] = ()) -> list[Call]:
    """The calls worth playing out: pass, double when legal, and in each denomination the
    cheapest legal bid and up to ``levels_above`` levels over it (a jump can shut the other
    side out), with ``also`` (the model's own call) always among them."""
    legal = [action for action in view.legal_actions if isinstance(action, Call)]
    chosen = [call for call in legal if not call.is_bid]
    for denomination in Denomination:
        bids = sorted(
            (call for call in legal if call.is_bid and call.denomination is denomination),
            key=lambda call: call.step,
        )
        chosen.extend(bids[: levels_above + 1])
    chosen.extend(call for call in also if call in legal and call not in chosen)
    return chosen


def play_out(view: oddtrick.BotView, deal: Deal, call: Call, policy: HeuristicBot) -> Contract | None:
    """The contract the auction ends in on ``deal`` when this seat makes ``call`` and every
    call after it is ``policy``'s; ``None`` when all four pass (the hand is thrown in)."""
    actions: list[Call] = [made for _, made in view.auction]
    actions.append(call)
    state = GameState.from_deal(view.config, deal, dealer=view.dealer, actions=actions)
    while state.phase is Phase.AUCTION:
        seat = state.to_act
        assert seat is not None
        state.apply(policy.choose_call(bot_view(state, seat, _NOBODY)))
    return state.contract


def declarer_tricks(hands: Hands, endings: Iterable[Ending]) -> dict[Ending, int]:
    """The double-dummy tricks the declaring side takes in each ending, its left leading
    (one DDS search each, in one batch)."""
    wanted = list(dict.fromkeys(endings))
    positions = [Position(hands, denomination.suit, declarer.left) for denomination, declarer in wanted]
    # The side on lead is the defence: the declarer's side takes the rest.
    return {ending: 13 - theirs for ending, theirs in zip(wanted, max_tricks(positions), strict=True)}


def contract_score(me: Seat, contract: Contract | None, declarers: int, optimism: float) -> float:
    """Our points less theirs for ``contract`` when the declaring side takes ``declarers``
    tricks, as the rules score the hand. Double-dummy play flatters the declarer (the
    blind opening lead is found, every finesse guessed): ``optimism`` of a trick is taken
    off, as the weighted mean of the scores with the tricks as counted and with one fewer."""
    if contract is None:
        return 0.0
    declaring_side = contract.declarer & 1

    def score(tricks: int) -> int:
        tricks = max(0, tricks)
        taken = (tricks, 13 - tricks) if declaring_side == 0 else (13 - tricks, tricks)
        points, _, _ = contract_points(contract, taken)
        return points[me & 1] - points[1 - (me & 1)]

    return (1 - optimism) * score(declarers) + optimism * score(declarers - 1)


def play_out_all(
    view: oddtrick.BotView, hands: Hands, candidates: Sequence[Call], policy: HeuristicBot
) -> dict[Call, Contract | None]:
    """The contract each candidate call leads to on one sampled deal (:func:`play_out`)."""
    deal = Deal(dict(zip(Seat, hands, strict=True)))
    return {call: play_out(view, deal, call, policy) for call in candidates}


def endings_of(contracts: Mapping[Call, Contract | None]) -> list[Ending]:
    """The endings (denomination and declarer) of the contracts played out, hands thrown in left out."""
    return [(contract.denomination, contract.declarer) for contract in contracts.values() if contract]


def score_of(me: Seat, contract: Contract | None, tricks: Mapping[Ending, int], optimism: float) -> float:
    """:func:`contract_score` with the declaring side's tricks looked up in ``tricks``."""
    if contract is None:
        return 0.0
    return contract_score(me, contract, tricks[(contract.denomination, contract.declarer)], optimism)


def paired_lead(ours: Sequence[float], theirs: Sequence[float]) -> tuple[float, float]:
    """The mean of ``ours`` less ``theirs`` sample by sample, and its standard error (at
    least two samples): how far one choice leads another on the same deals, and how sure
    that lead is."""
    count = len(ours)
    differences = [mine - other for mine, other in zip(ours, theirs, strict=True)]
    mean = sum(differences) / count
    variance = sum((difference - mean) ** 2 for difference in differences) / (count - 1)
    return mean, math.sqrt(variance / count)


def best_call(scores: Mapping[Call, Sequence[float]], model: Call, tie: float, confidence: float) -> Call:
    """The call of the best mean score, if it beats ``model``'s call by more than ``tie``
    points plus ``confidence`` standard errors of the deal-by-deal difference; else the
    model's call (always, with fewer than two samples)."""
    count = len(scores[model])
    if count < 2:
        return model
    best = max(scores, key=lambda call: (sum(scores[call]), call is model))
    if best is model:
        return model
    mean, error = paired_lead(scores[best], scores[model])
    return best if mean > tie + confidence * error else model


def describe(scores: Mapping[Call, Sequence[float]], chosen: Call, model: Call) -> str:
    """``8♠ +2.9, pass +1.2 (model)``: the chosen call's mean score, then the model's
    (the model's alone when it was chosen)."""
    shown = [chosen] if chosen is model else [chosen, model]
    parts = []
    for call in shown:
        values = scores[call]
        mean = sum(values) / len(values) if values else 0.0
        parts.append(f"{call.pretty} {mean:+.1f}{' (model)' if call is model else ''}")
    return ", ".join(parts)


__all__ = [
    "best_call",
    "candidate_calls",
    "contract_score",
    "declarer_tricks",
    "describe",
    "endings_of",
    "paired_lead",
    "play_out",
    "play_out_all",
    "score_of",
]
