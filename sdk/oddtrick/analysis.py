"""Double-dummy analysis of played matches: what every card cost.

For every card of every hand in a match log, the double-dummy number of tricks
the player's side could still take (over the whole hand, tricks already won
included) before and after the card: their difference is what the card lost
against perfect play with all hands known. A perfect double-dummy player loses
nothing; a real player loses tricks by mistakes, and also by sensible guesses
that happen to be wrong on the actual layout (double-dummy analysis cannot
tell a bad card from an unlucky one, so read it in totals over many hands).

Totals come per seat and per bot ("tricks lost per hand"), with each deal's
*par*: the result with perfect play by everyone — in classic Whist the
double-dummy tricks from the opening lead, in Contract Whist the contract that
perfect bidding by both sides reaches on the double-dummy trick table.

:func:`analyze_logs` returns plain data (dicts, lists, strings, numbers) that
tools, ``oddtrick analyze --json`` and a replay page can use as they are.
Needs the ``strong`` extra (DDS through endplay).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from oddtrick import _accuracy
from oddtrick._codec_text import parse_action
from oddtrick._drive import next_turn
from oddtrick._log_records import (
    ActionRecord,
    HandStart,
    MalformedRecord,
    MatchEnd,
    MatchStart,
    Record,
    read_records,
)
from oddtrick._timing import TIME_NOTE, DecisionTimes
from oddtrick.deal_sets import DealSetError, deals_from_log
from oddtrick.double_dummy import Hands, Position, analyse_plays, solve, trick_tables
from oddtrick.rules import (
    BIDS,
    Card,
    Contract,
    Denomination,
    GameConfig,
    GameKind,
    GameState,
    Phase,
    RulesError,
    Seat,
    Side,
    Suit,
)
from oddtrick.rules._words import contract_text

__all__ = ["AnalysisError", "analyze_logs", "contract_par", "render"]

SEAT_LETTERS = {seat: seat.name[0] for seat in Seat}

Won: TypeAlias = tuple[Position, tuple[int, int]]
"""A position before a card, and the tricks each side had won by then (North-South first)."""

_Outcome: TypeAlias = tuple[int, int | None, Side | None]
"""Par search: North-South's margin, the final bid's step and its side (``None``: thrown in)."""


class AnalysisError(Exception):
    """A log that cannot be analysed (not a match log, or its actions do not replay)."""


@dataclasses.dataclass
class _Hand:
    """One played hand waiting for the solver."""

    log: int
    number: int
    dealer: Seat
    hands: Hands
    trumps: Suit | None
    leader: Seat
    contract: Contract | None
    plays: list[tuple[Seat, Card]]
    tricks: tuple[int, int]
    points: tuple[int, int]
    positions: list[Won]
    """The position before each card of ``plays``, with the tricks each side had won then."""


def _seat_times(records: Sequence[Record]) -> dict[str, tuple[DecisionTimes, int]]:
    """Each seat's decision times (think time and lag apart) and time-outs, from its
    action lines: every decision of the match, thrown-in hands' included."""
    times: dict[str, tuple[DecisionTimes, int]] = {}
    for record in records:
        if not isinstance(record, ActionRecord):
            continue
        seat_times, timeouts = times.get(record.seat, (DecisionTimes(), 0))
        seat_times.add(record.think_ms, record.bot_think_ms, record.comment)
        timeouts += record.fault in TIMEOUT_FAULTS
        times[record.seat] = (seat_times, timeouts)
    return times


TIMEOUT_FAULTS = ("timeout", "clock")
"""The faults counted as time-outs: the decision's deadline, or the seat's time bank, ran out."""


def _replay(
    path: Path, index: int
) -> tuple[dict[str, Any], list[_Hand], dict[str, tuple[DecisionTimes, int]]]:
    """The match's header, every hand that was played out and each seat's decision
    times and time-outs, from its log."""
    try:
        records = list(read_records(path))
    except MalformedRecord as error:
        raise AnalysisError(f"{path}: not a match log ({error})") from None
    except OSError as error:
        raise AnalysisError(f"{path}: cannot read it as a match log ({error})") from None
    if not records or not isinstance(records[0], MatchStart):
        raise AnalysisError(f"{path}: not a match log (the first line is not a match_start record)")
    start, end = records[0], records[-1]
    if not isinstance(end, MatchEnd) or not end.seed:
        raise AnalysisError(f"{path}: the match did not finish, so its seed (and its deals) are unknown")
    header = start.to_dict()
    try:
        fixed = deals_from_log(start, end)
    except DealSetError as error:
        raise AnalysisError(f"{path}: {error}") from None
    state = GameState(GameConfig.from_dict(start.config), end.seed, deals=fixed)
    hands: list[_Hand] = []
    plays: list[tuple[Seat, Card]] = []
    positions: list[Won] = []
    for record in records[1:-1]:
        if isinstance(record, HandStart):
            next_turn(state)  # deals the next hand if the last one is over
            plays, positions = [], []
        elif isinstance(record, ActionRecord):
            seat = Seat.parse(record.seat)
            try:
                action = parse_action(record.action, state)
                if isinstance(action, Card):
                    positions.append(_position_now(state))
                state.apply(action, seat)
            except RulesError as error:
                raise AnalysisError(
                    f"{path}: hand {record.hand}: {record.seat} {record.action} "
                    f"does not replay ({error}); run oddtrick check on it"
                ) from None
            if isinstance(action, Card):
                plays.append((seat, action))
            if state.phase in (Phase.HAND_OVER, Phase.MATCH_OVER) and len(plays) == 52:
                result = state.hand_results[-1]
                deal = result.deal
                assert deal is not None
                leader = plays[0][0]
                hands.append(
                    _Hand(
                        index,
                        result.hand_number,
                        result.dealer,
                        (deal[Seat.NORTH], deal[Seat.EAST], deal[Seat.SOUTH], deal[Seat.WEST]),
                        result.trumps,
                        leader,
                        result.contract,
                        plays,
                        result.tricks,
                        (
                            result.points[0] + result.honours[0],
                            result.points[1] + result.honours[1],
                        ),
                        positions,
                    )
                )
    return header, hands, _seat_times(records)


def _position_now(state: GameState) -> Won:
    """The position the seat to play is in, every hand known, and the tricks won so far."""
    trick = state.current_trick
    leader = trick[0][0] if trick else state.to_act
    assert leader is not None
    hands: Hands = (
        state.hand_of(Seat.NORTH),
        state.hand_of(Seat.EAST),
        state.hand_of(Seat.SOUTH),
        state.hand_of(Seat.WEST),
    )
    return Position(hands, state.trumps, leader, tuple(card for _, card in trick)), state.tricks_won


# ----------------------------------------------------------------------- par


def contract_par(table: Mapping[tuple[Denomination, Seat], int], dealer: Seat) -> dict[str, Any]:
    """The par of a Contract Whist deal (no doubling): the contract reached when
    both sides bid perfectly knowing the double-dummy trick table, and its points.

    Each side, when the other holds the highest bid, either lets it stand or
    bids higher; the side holding it may also bid higher itself (a better
    denomination). Solved backwards over the 35-bid ladder, each side
    maximising its points less the other's; a side makes a contract with
    whichever of its two players takes more tricks in that denomination. An
    auction in which nobody bids throws the hand in (0 each).
    """

    def best(side: Side, denomination: Denomination) -> tuple[Seat, int]:
        return max(((seat, table[(denomination, seat)]) for seat in side.seats), key=lambda st: st[1])

    def ns_margin(step: int, side: Side) -> int:
        bid = BIDS[step]
        assert bid.denomination is not None
        _, tricks = best(side, bid.denomination)
        made = tricks >= bid.level
        declarer_points = tricks if made else 0
        margin = declarer_points - (13 - tricks)
        return margin if side is Side.NORTH_SOUTH else -margin

    sign = {Side.NORTH_SOUTH: 1, Side.EAST_WEST: -1}
    respond: dict[tuple[int, Side], _Outcome] = {}  # the side not holding the bid to act
    improve: dict[tuple[int, Side], _Outcome] = {}  # the holder may still bid over itself
    for step in range(len(BIDS) - 1, -1, -1):
        for holder in Side:
            other = holder.other
            own: list[_Outcome] = [(ns_margin(step, holder), step, holder)]
            own += [respond[(later, holder)] for later in range(step + 1, len(BIDS))]
            improve[(step, holder)] = max(own, key=lambda o: sign[holder] * o[0])
            theirs: list[_Outcome] = [improve[(step, holder)]]
            theirs += [respond[(later, other)] for later in range(step + 1, len(BIDS))]
            respond[(step, holder)] = max(theirs, key=lambda o: sign[other] * o[0])
    first = dealer.left.side
    second = first.other
    after_pass: list[_Outcome] = [(0, None, None)] + [respond[(step, second)] for step in range(len(BIDS))]
    second_choice = max(after_pass, key=lambda o: sign[second] * o[0])
    opening: list[_Outcome] = [second_choice] + [respond[(step, first)] for step in range(len(BIDS))]
    margin, final, side = max(opening, key=lambda o: sign[first] * o[0])
    if final is None or side is None:
        return {"contract": None, "points": [0, 0], "margin_ns": 0}
    bid = BIDS[final]
    assert bid.denomination is not None
    declarer, tricks = best(side, bid.denomination)
    made = tricks >= bid.level
    declarer_points, defender_points = (tricks if made else 0), 13 - tricks
    points = [0, 0]
    points[side] = declarer_points
    points[side.other] = defender_points
    return {
        "contract": f"{bid} by {SEAT_LETTERS[declarer]}",
        "declarer_tricks": tricks,
        "points": points,
        "margin_ns": margin,
    }


def _classic_par(ns_tricks: int) -> dict[str, Any]:
    side = Side.NORTH_SOUTH if ns_tricks >= 7 else Side.EAST_WEST
    tricks = ns_tricks if side is Side.NORTH_SOUTH else 13 - ns_tricks
    points = [0, 0]
    points[side] = tricks - 6
    return {"tricks": [ns_tricks, 13 - ns_tricks], "points": points, "margin_ns": points[0] - points[1]}


# ------------------------------------------------------------------ analysis


def bot_of(player: str) -> str:
    """The bot behind a player name: a tournament's local entries connect as
    ``name~0`` and ``name~1`` (one process per play), both the same bot."""
    name, mark, slot = player.rpartition("~")
    return name if mark and slot.isdigit() else player


def analyze_logs(
    paths: Sequence[Path | str],
    progress: Callable[[int, int], None] | None = None,
    par: bool = True,
) -> dict[str, Any]:
    """Analyse every hand played out in the logs (thrown-in hands have no play).

    Returns ``{"logs": [...], "seats"/"bots": totals, "time": ...}`` of plain data: per log
    its players and hands; per hand its par, the double-dummy tricks from the
    opening lead and every card with ``before``/``after``/``lost`` (tricks of
    the player's side over the whole hand), ``options`` (every legal card of the
    seat then, with the tricks it keeps for the side, as a hand viewer shows them) and
    ``best`` (the cards that keep the most); per seat and per bot the tricks lost in total
    and per hand it played (a bot holding two seats plays each hand twice), and its
    accuracy: cards played, those that lost nothing, and the inaccuracies (one trick
    lost), mistakes (two) and blunders (three or more) of :mod:`oddtrick._accuracy`.
    ``progress(done, total)`` is called as hands are solved. Contract Whist's
    par needs the whole trick table of each deal (twenty solves), the slowest
    part: ``par=False`` leaves it out (``"par": null``). ``time`` holds per bot its
    decision times, think time and lag apart, and its time-outs, as the standings'
    ``--json`` gives them: decisions answered, those with the bot's own time, the
    median, 99th percentile and maximum (ms) of each, and the time-outs.
    """
    starts: list[dict[str, Any]] = []
    hands: list[_Hand] = []
    times: dict[str, tuple[DecisionTimes, int]] = {}
    for index, path in enumerate(paths):
        start, played, seat_times = _replay(Path(path), index)
        starts.append(start)
        hands.extend(played)
        for letter, (part, timeouts) in seat_times.items():
            bot = bot_of(start.get("players", {}).get(letter, {}).get("name", "?"))
            whole, counted = times.get(bot, (DecisionTimes(), 0))
            whole.merge(part)
            times[bot] = (whole, counted + timeouts)
    values = _solve_plays(hands, progress)
    pars = _pars(hands, starts) if par else [None] * len(hands)
    logs: list[dict[str, Any]] = [
        {
            "path": str(path),
            "match_id": start.get("match_id"),
            "game": start["config"]["game"],
            "players": {
                letter: start.get("players", {}).get(letter, {}).get("name", "?") for letter in "NESW"
            },
            "hands": [],
        }
        for path, start in zip(paths, starts, strict=True)
    ]
    options = _solve_options(hands)
    seats: dict[str, dict[str, Any]] = {}
    bots: dict[str, dict[str, Any]] = {}
    for hand, ns_values, hand_par, hand_options in zip(hands, values, pars, options, strict=True):
        log = logs[hand.log]
        if log["game"] == GameKind.CLASSIC.value:
            hand_par = _classic_par(ns_values[0])
        entry = _hand_entry(hand, ns_values, hand_par, hand_options)
        log["hands"].append(entry)
        for letter in SEAT_LETTERS.values():
            key = f"{log['match_id']}:{letter}"
            seat_total = seats.setdefault(
                key, {"bot": log["players"][letter], "hands": 0, **_accuracy.empty()}
            )
            bot_total = bots.setdefault(bot_of(log["players"][letter]), {"hands": 0, **_accuracy.empty()})
            for total in (seat_total, bot_total):
                total["hands"] += 1
                for card in entry["cards"]:
                    if card["seat"] == letter:
                        _accuracy.add_card(total, card["lost"])
    for totals in (*seats.values(), *bots.values()):
        totals["per_hand"] = totals["lost"] / totals["hands"] if totals["hands"] else 0.0
        totals["accuracy"] = _accuracy.accuracy(totals)
    time = {bot: whole.summary(timeouts) for bot, (whole, timeouts) in sorted(times.items())}
    return {"logs": logs, "seats": seats, "bots": bots, "hands": len(hands), "time": time}


def _hand_entry(
    hand: _Hand, ns_values: Sequence[int], hand_par: dict[str, Any] | None, options: Sequence[dict[Card, int]]
) -> dict[str, Any]:
    """One hand of the result: its deal's facts, par, and every card with what it cost and
    what else the seat could have played."""
    cards = []
    lost = dict.fromkeys(SEAT_LETTERS.values(), 0)
    for step, ((seat, card), scores) in enumerate(zip(hand.plays, options, strict=True)):
        before, after = _for_side(ns_values[step], seat), _for_side(ns_values[step + 1], seat)
        cost = max(0, before - after)
        lost[SEAT_LETTERS[seat]] += cost
        top = max(scores.values())
        cards.append(
            {
                "seat": SEAT_LETTERS[seat],
                "card": str(card),
                "before": before,
                "after": after,
                "lost": cost,
                "options": {str(option): value for option, value in scores.items()},
                "best": [str(option) for option, value in scores.items() if value == top],
            }
        )
    return {
        "hand": hand.number,
        "dealer": SEAT_LETTERS[hand.dealer],
        "trumps": None if hand.trumps is None else str(hand.trumps),
        "contract": None if hand.contract is None else contract_text(hand.contract, letters=True),
        "leader": SEAT_LETTERS[hand.leader],
        "double_dummy_tricks": [ns_values[0], 13 - ns_values[0]],
        "tricks": list(hand.tricks),
        "points": list(hand.points),
        "par": hand_par,
        "lost": lost,
        "cards": cards,
    }


def _solve_options(hands: Sequence[_Hand]) -> list[list[dict[Card, int]]]:
    """For each card of each hand, every legal card of the seat that played it, with the
    tricks it keeps for that seat's side over the whole hand (those already won included),
    sorted by suit then rank. One position after another on one thread: DDS keeps its search
    memory from one to the next, which makes a hand's 52 positions about as fast as a batch
    shared among threads (a 4-deal match: 0.26 s against 0.50 s)."""
    flat = [position for hand in hands for position, _ in hand.positions]
    scores = iter(solve(flat))
    results: list[list[dict[Card, int]]] = []
    for hand in hands:
        per_card = []
        for (_, won), (seat, _) in zip(hand.positions, hand.plays, strict=True):
            already = won[seat.side]
            found = next(scores)
            per_card.append({card: already + found[card] for card in sorted(found)})
        results.append(per_card)
    return results


def _for_side(ns_tricks: int, seat: Seat) -> int:
    return ns_tricks if seat.side is Side.NORTH_SOUTH else 13 - ns_tricks


def _solve_plays(hands: Sequence[_Hand], progress: Callable[[int, int], None] | None) -> list[list[int]]:
    """North-South's double-dummy tricks before and after each card of each hand:
    DDS analyses each hand's whole play in one call, keeping its search from one
    card to the next, and takes many hands per call."""
    results: list[list[int]] = []
    step = 50
    for offset in range(0, len(hands), step):
        chunk = hands[offset : offset + step]
        starts = [Position(hand.hands, hand.trumps, hand.leader) for hand in chunk]
        plays = [[card for _, card in hand.plays] for hand in chunk]
        for hand, values in zip(chunk, analyse_plays(starts, plays), strict=True):
            # DDS counts for the side that did not lead the first trick.
            side = hand.leader.right.side
            ns = values if side is Side.NORTH_SOUTH else [13 - value for value in values]
            # The last trick's cards are forced: DDS stops before them.
            ns += [ns[-1]] * (53 - len(ns))
            results.append(ns)
        if progress is not None:
            progress(min(offset + step, len(hands)), len(hands))
    return results


def _pars(hands: Sequence[_Hand], starts: Sequence[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """Each Contract Whist hand's par (``None`` for classic Whist, whose par is
    the double-dummy result of the play); a deal played twice (duplicate) is
    solved once."""
    pars: list[dict[str, Any] | None] = [None] * len(hands)
    contract_deals: dict[Hands, list[int]] = {}
    for index, hand in enumerate(hands):
        if GameKind(starts[hand.log]["config"]["game"]) is GameKind.CLASSIC:
            continue
        contract_deals.setdefault(hand.hands, []).append(index)
    deals = list(contract_deals)
    for deal, table in zip(deals, trick_tables(deals), strict=True):
        for index in contract_deals[deal]:
            pars[index] = contract_par(table, hands[index].dealer)
    return pars


def render(result: dict[str, Any], cards: bool = False) -> str:
    """The analysis for people: each hand's par, result and costly cards, then
    the totals per seat and per bot."""
    lines: list[str] = []
    for log in result["logs"]:
        players = ", ".join(f"{seat} {name}" for seat, name in log["players"].items())
        lines.append(f"{log['path']} ({log['game']} whist; {players})")
        for hand in log["hands"]:
            lines.append("  " + _hand_line(hand))
            for card in hand["cards"]:
                if cards or card["lost"]:
                    lines.append("      " + _card_line(card, cards))
    lines.append("")
    lines.append(f"Tricks lost to double-dummy play, {result['hands']} hands")
    lines += _accuracy_lines(result["bots"], "bot")
    seats = {key.rsplit(":", 1)[1] + " " + totals["bot"]: totals for key, totals in result["seats"].items()}
    if len(result["logs"]) == 1 and seats:
        lines += ["", "Per seat", *_accuracy_lines(seats, "seat")]
    lines.append(f"  {ACCURACY_NOTE}")
    if result.get("time"):
        lines += ["", "Time per decision (ms)", *_time_lines(result["time"])]
    return "\n".join(lines)


ACCURACY_NOTE = (
    "?! inaccuracy: a card that lost 1 trick; ? mistake: 2; ?? blunder: 3 or more; "
    "accuracy: the share of cards that lost none"
)
"""The grades' key, printed under the accuracy table."""


def _card_line(card: Mapping[str, Any], every: bool) -> str:
    """A card with its tricks before and after; when it lost, the best card(s) instead;
    with ``every``, every legal card's tricks (as a hand viewer shows them)."""
    line = f"{card['seat']} {_pretty(card['card'])}: {card['before']} → {card['after']}"
    options = card.get("options") or {}
    if card["lost"]:
        best = " ".join(_pretty(text) for text in card.get("best", []))
        line += f", lost {card['lost']}" + (f" (best {best}: {card['before']})" if best else "")
    if every and len(options) > 1:
        line += "; " + " ".join(f"{_pretty(text)} {value}" for text, value in options.items())
    return line


def _accuracy_lines(totals: Mapping[str, Mapping[str, Any]], what: str) -> list[str]:
    """Per bot (or seat): hands, tricks lost in all and per hand, the grades, accuracy."""
    width = max([len(name) for name in totals] + [len(what)])
    lines = [f"  {what:<{width}}  hands   lost  per hand  ?!   ?  ??  accuracy"]
    for name, row in sorted(totals.items(), key=lambda item: item[1]["per_hand"]):
        share = row.get("accuracy")
        lines.append(
            f"  {name:<{width}}  {row['hands']:>5}  {row['lost']:>5}  {row['per_hand']:>8.2f}"
            f"  {row.get('inaccuracies', 0):>2}  {row.get('mistakes', 0):>2}  {row.get('blunders', 0):>2}"
            f"  {'n/a' if share is None else f'{share:.0%}':>8}"
        )
    return lines


def _time_lines(time: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Per bot: decisions answered, think time and lag (median, 99th percentile), time-outs."""
    width = max([len(name) for name in time] + [3])
    lines = [f"  {'bot':<{width}}  answered  think p50  think p99  lag p50  lag p99  time-outs"]

    def cell(value: int | None, mark: str = "") -> str:
        return "n/a" if value is None else f"{value}{mark}"

    for name, figures in time.items():
        if figures["reported"]:
            think, lag = figures["think_ms"], figures["lag_ms"]
            cells = [cell(think["p50"]), cell(think["p99"]), cell(lag["p50"]), cell(lag["p99"])]
        else:
            answer = figures["answer_ms"]
            cells = [cell(answer["p50"], "*"), cell(answer["p99"], "*"), "n/a", "n/a"]
        lines.append(
            f"  {name:<{width}}  {figures['answered']:>8}  {cells[0]:>9}  {cells[1]:>9}  {cells[2]:>7}  "
            f"{cells[3]:>7}  {figures['timeouts']:>9}"
        )
    lines.append("  " + TIME_NOTE)
    return lines


def _pretty(text: str) -> str:
    return Card.parse(text).pretty


def _hand_line(hand: dict[str, Any]) -> str:
    par = hand["par"]
    dd = hand["double_dummy_tricks"]
    if hand["contract"] is not None:
        head = f"hand {hand['hand']}: {hand['contract']}, took {hand['tricks'][0]}-{hand['tricks'][1]}"
        par_text = f"par {par['contract']} NS {par['points'][0]} EW {par['points'][1]}" if par else ""
        if par and par["contract"] is None:
            par_text = "par: thrown in"
    else:
        trumps = Suit.parse(hand["trumps"]).symbol if hand["trumps"] else "no trumps"
        head = f"hand {hand['hand']}: trumps {trumps}, took {hand['tricks'][0]}-{hand['tricks'][1]}"
        par_text = f"par NS {par['points'][0]} EW {par['points'][1]}" if par else ""
    lost = " ".join(f"{seat} {count}" for seat, count in hand["lost"].items())
    return (
        f"{head} (NS {hand['points'][0]} EW {hand['points'][1]}); "
        f"double dummy {dd[0]}-{dd[1]}; {par_text}; lost {lost}"
    )
