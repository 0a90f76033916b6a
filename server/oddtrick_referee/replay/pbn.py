"""``oddtrick export --pbn``: a match as Portable Bridge Notation, one PBN game per hand.

PBN is what card players' tools read (deal viewers, double-dummy solvers,
scorers). The mapping, written up in docs/pbn.md:

- standard tags: Event, Site, Date, Board (the hand's number), West, North,
  East, South (the bots), Dealer, Vulnerable ("None": whist has no
  vulnerability), Deal, Scoring ("Whist" or "ContractWhist"), Declarer,
  Contract, Result;
- Contract Whist: a bid of N tricks is PBN level N-6 (7♥ is 1H, 13NT is 7NT),
  a double is X; Result is the declarer's side's tricks; the Auction section
  starts with the first caller (the dealer's left); a hand all four passed is
  Contract "Pass" with no Play section;
- classic Whist has no auction and no declarer: Declarer, Contract and Result
  are empty (PBN's "not applicable"), and the extra tags say what PBN cannot:
  Trumps (a suit letter, or NT), TurnedCard or CutCard;
- both games: Play (the opening leader, then a row per trick in seat order),
  and the extra tags Game, MatchId, TricksNS, TricksEW, ScoreNS, ScoreEW (the
  hand's points) so the result survives without our log.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator

from oddtrick.rules import Card, Denomination, Seat, format_hand
from oddtrick_referee.replay.model import HandReplay, MatchReplay

PBN_VERSION = "2.1"


def pbn_card(card: Card) -> str:
    """Suit then rank, as PBN's Play section writes cards: ``SA``, ``HT``."""
    return card.suit.letter + card.rank.letter


def pbn_call(text_level: int, denomination: Denomination | None) -> str:
    if denomination is None:  # the callers pass bids only: a bug if it happens
        raise ValueError("not a bid")
    return f"{text_level - 6}{'NT' if denomination is Denomination.NO_TRUMPS else denomination.letters}"


def _tag(name: str, value: object) -> str:
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name} "{text}"]'


def _deal(hand: HandReplay) -> str:
    first = hand.dealer
    seats = [Seat((first + i) % 4) for i in range(4)]
    return f"{first}:" + " ".join(format_hand(hand.deal[seat]) for seat in seats)


def _date(match: MatchReplay) -> str:
    if match.started_at_ms is None:
        return "?"
    moment = datetime.datetime.fromtimestamp(match.started_at_ms / 1000, datetime.UTC)
    return moment.strftime("%Y.%m.%d")


def _auction(hand: HandReplay) -> Iterator[str]:
    calls = []
    for step in hand.calls:
        call = step.call
        if call.denomination is not None:
            calls.append(pbn_call(call.level, call.denomination))
        else:
            calls.append("X" if call.kind.value == "double" else "Pass")
    yield _tag("Auction", hand.calls[0].seat)
    for start in range(0, len(calls), 4):
        yield " ".join(calls[start : start + 4])


def _play(hand: HandReplay) -> Iterator[str]:
    leader = hand.first_leader
    assert leader is not None
    yield _tag("Play", leader)
    for _, steps in hand.tricks:
        by_seat = {step.seat: pbn_card(step.card) for step in steps}
        row = [by_seat.get(Seat((leader + i) % 4), "-") for i in range(4)]
        yield " ".join(row)


def scoring(match: MatchReplay) -> str:
    """The Scoring tag's value: PBN's methods (MP, IMP, Rubber, …) are bridge's, and a reader
    that knows one would score whist's tricks wrongly, so the game's own name is given, and
    the points each side scored are in ScoreNS and ScoreEW."""
    return "Whist" if match.classic else "ContractWhist"


def hand_to_pbn(match: MatchReplay, hand: HandReplay) -> list[str]:
    """One PBN game: tags, then the Auction and Play sections."""
    lines = [
        _tag("Event", f"oddtrick {match.config.describe()}"),
        _tag("Site", "oddtrick"),
        _tag("Date", _date(match)),
        _tag("Board", hand.number),
        *(
            _tag(seat.name.title(), match.players.get(seat, "?"))
            for seat in (Seat.WEST, Seat.NORTH, Seat.EAST, Seat.SOUTH)
        ),
        _tag("Dealer", hand.dealer),
        _tag("Vulnerable", "None"),
        _tag("Deal", _deal(hand)),
        _tag("Scoring", scoring(match)),
    ]
    result = hand.result
    contract = hand.contract
    if match.classic:
        lines += [_tag("Declarer", ""), _tag("Contract", ""), _tag("Result", "")]
    elif contract is None:
        lines += [_tag("Declarer", ""), _tag("Contract", "Pass"), _tag("Result", "")]
    else:
        text = pbn_call(contract.level, contract.denomination) + ("X" if contract.doubled else "")
        taken = "" if result is None else str(result.tricks[contract.side])
        lines += [_tag("Declarer", contract.declarer), _tag("Contract", text), _tag("Result", taken)]
    lines.append(_tag("Game", "Whist" if match.classic else "Contract Whist"))
    lines.append(_tag("MatchId", match.match_id))
    if match.classic:
        lines.append(_tag("Trumps", "NT" if hand.trumps is None else hand.trumps.letter))
        if hand.turned_card is not None:
            lines.append(_tag("TurnedCard", pbn_card(hand.turned_card)))
        if hand.cut_card is not None:
            lines.append(_tag("CutCard", pbn_card(hand.cut_card)))
    if result is not None:
        lines += [
            _tag("TricksNS", result.tricks[0]),
            _tag("TricksEW", result.tricks[1]),
            _tag("ScoreNS", result.points[0] + result.honours[0]),
            _tag("ScoreEW", result.points[1] + result.honours[1]),
        ]
    if hand.calls:
        lines += _auction(hand)
    if hand.plays:
        lines += _play(hand)
    return lines


def match_to_pbn(match: MatchReplay) -> str:
    """The whole match: a PBN file, games separated by blank lines."""
    out = [f"% PBN {PBN_VERSION}", "% EXPORT", f"% oddtrick match {match.match_id}", ""]
    for hand in match.hands:
        out += hand_to_pbn(match, hand)
        out.append("")
    return "\n".join(out)
