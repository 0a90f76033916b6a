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
from oddtrick.double_dummy import Hands, Position, analyse_plays, trick_tables
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
    for record in records[1:-1]:
        if isinstance(record, HandStart):
            next_turn(state)  # deals the next hand if the last one is over
            plays = []
        elif isinstance(record, ActionRecord):
            seat = Seat.parse(record.seat)
            try:
                action = parse_action(record.action, state)
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
                    )
                )
    return header, hands, _seat_times(records)


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
    the player's side over the whole hand); per bot the tricks lost in total
    and per hand it played (a bot holding two seats plays each hand twice).
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
    seats: dict[str, dict[str, float]] = {}
    bots: dict[str, dict[str, float]] = {}
    for hand, ns_values, hand_par in zip(hands, values, pars, strict=True):
        log = logs[hand.log]
        if log["game"] == GameKind.CLASSIC.value:
            hand_par = _classic_par(ns_values[0])
        cards = []
        lost = dict.fromkeys(SEAT_LETTERS.values(), 0)
        for step, (seat, card) in enumerate(hand.plays):
            before, after = _for_side(ns_values[step], seat), _for_side(ns_values[step + 1], seat)
            cost = max(0, before - after)
            lost[SEAT_LETTERS[seat]] += cost
            cards.append(
                {
                    "seat": SEAT_LETTERS[seat],
                    "card": str(card),
                    "before": before,
                    "after": after,
                    "lost": cost,
                }
            )
        log["hands"].append(
            {
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
        )
        for letter, cost in lost.items():
            key = f"{log['match_id']}:{letter}"
            seat_total = seats.setdefault(key, {"bot": log["players"][letter], "lost": 0, "hands": 0})
            seat_total["lost"] += cost
            seat_total["hands"] += 1
            bot_total = bots.setdefault(bot_of(log["players"][letter]), {"lost": 0, "hands": 0})
            bot_total["lost"] += cost
            bot_total["hands"] += 1
    for totals in (*seats.values(), *bots.values()):
        totals["per_hand"] = totals["lost"] / totals["hands"] if totals["hands"] else 0.0
    time = {bot: whole.summary(timeouts) for bot, (whole, timeouts) in sorted(times.items())}
    return {"logs": logs, "seats": seats, "bots": bots, "hands": len(hands), "time": time}


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
                    lines.append(
                        f"      {card['seat']} {_pretty(card['card'])}: {card['before']} → {card['after']}"
                        + (f", lost {card['lost']}" if card["lost"] else "")
                    )
    lines.append("")
    lines.append(f"Tricks lost to double-dummy play, {result['hands']} hands")
    width = max([len(name) for name in result["bots"]] + [3])
    lines.append(f"  {'bot':<{width}}  hands   lost  per hand")
    for name, totals in sorted(result["bots"].items(), key=lambda item: item[1]["per_hand"]):
        lines.append(
            f"  {name:<{width}}  {totals['hands']:>5}  {totals['lost']:>5}  {totals['per_hand']:>8.2f}"
        )
    if result.get("time"):
        lines += ["", "Time per decision (ms)", *_time_lines(result["time"])]
    return "\n".join(lines)


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
