"""Fixed deal sets: matches dealt from a PBN file instead of from fresh seeds.

``oddtrick tournament``, ``oddtrick sprt`` and ``oddtrick ladder serve`` take
``--deals-from FILE.pbn``, as cutechess takes an opening book: every deal of
the file is played duplicate as usual (at two tables, partnerships swapped).
This module is the one place the three read the file and hand deals out
(docs/deal-sets.md gives the rules):

- **Order and a short file.** Deals are handed out in file order, match after
  match (a tournament's sets in its playing order; the ladder's matches as they
  start). At the end of the file the next deal is the file's first again: the
  set *cycles*, as cutechess rewinds an opening book it has read to the end.
- **Dealer.** The PBN ``Dealer`` tag (mandatory in PBN) names who deals the
  hand: the seat on its left leads (classic) or calls first (contract), and the
  deal does not follow the usual rotation.
- **Classic Whist's trump.** A ``TurnedCard`` tag (what ``oddtrick export``
  writes) names the dealer's card turned up; without one, the turned card is
  the dealer's card number ``SHA-256("oddtrick-fixed-turned-v1" ‖ deal) mod 13``
  in pack order (2♣ … A♠), where ``deal`` is the deal's canonical text
  (``N:…``, North first). A ``CutCard`` tag names the card cut from a second
  pack; without one it is card ``SHA-256("oddtrick-fixed-cut-v1" ‖ deal) mod 52``.
  A ``Trumps`` tag is not read: the game's trump selection decides.

A malformed file (a card twice, a 12-card hand, a bad rank or suit letter, a
missing Deal or Dealer tag) is refused whole with :class:`DealSetError`,
naming the deal and the line; nothing is played. So is one past the bounds any
file from anyone is held to: a tag line over :data:`MAX_TAG_CHARS` characters, a
file over :data:`MAX_DEAL_SET_BYTES`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from oddtrick._log_records import MatchEnd, MatchStart
from oddtrick.rules import PACK, Card, Deal, FixedDeal, ParseError, Rank, Seat, Suit

__all__ = [
    "DEALS_FROM_HELP",
    "DealSet",
    "DealSetError",
    "MatchDeals",
    "deals_from_log",
    "read_deal_set",
    "short_set_note",
]

DEALS_FROM_HELP: Final = (
    "play the deals of a PBN file (e.g. one oddtrick export wrote) instead of deals from fresh "
    "seeds, duplicate as usual, in file order; past the file's last deal the next is its first "
    "again (a short file cycles, as cutechess does with a short opening book). Each deal is dealt "
    "by its Dealer tag's seat; classic Whist turns its TurnedCard tag's card (without one, a card "
    "of the dealer's picked from the deal's SHA-256: docs/deal-sets.md). The file's SHA-256 is "
    "written in every match log. A malformed file is refused, naming the deal and line"
)
"""The ``--deals-from`` help, the same in every command that takes it."""

_TAG: Final = re.compile(r'^\[\s*([A-Za-z0-9_]+)\s+"((?:[^"\\]|\\.)*)"\s*\]')
_RANK_LETTERS: Final = "23456789TJQKA"
MAX_TAG_CHARS: Final = 1024
"""The longest tag line read (PBN asks for lines of 255 characters at most; a Deal tag is
some 70): a file is anyone's, and a tag of megabytes would cost the tag's pattern
gigabytes to match. A longer one is refused, naming its line."""
MAX_DEAL_SET_BYTES: Final = 16 * 1024 * 1024
"""The largest deal set file read: some 50,000 deals of a few hundred bytes each."""
_SEAT_LETTERS: Final = "NESW"


class DealSetError(ValueError):
    """A deal set file that cannot be played, and why: the deal and line are named."""


@dataclasses.dataclass(frozen=True)
class DealSet:
    """The deals of one PBN file, in file order, and the SHA-256 of the file's bytes."""

    name: str
    sha256: str
    deals: tuple[FixedDeal, ...]

    def take(self, first: int, count: int) -> MatchDeals:
        """``count`` deals from the ``first``-th (0-based), cycling past the file's end."""
        size = len(self.deals)
        indices = tuple((first + offset) % size for offset in range(count))
        return MatchDeals(self, indices)

    def describe(self) -> str:
        """What the standings header and command lines show: file name, size, short digest."""
        return f"{self.name} ({len(self.deals)} deals, sha256 {self.sha256[:12]})"


@dataclasses.dataclass(frozen=True)
class MatchDeals:
    """The deals one match (one table) plays, by their 0-based index in the set."""

    deal_set: DealSet
    indices: tuple[int, ...]

    @property
    def deals(self) -> tuple[FixedDeal, ...]:
        """The match's deals themselves, in the order it plays them."""
        return tuple(self.deal_set.deals[index] for index in self.indices)

    def records(self) -> list[dict[str, str]]:
        """The deals as the match log writes them (:meth:`FixedDeal.to_record`), in playing
        order: what the commitment in :meth:`start_record` is taken over."""
        return [deal.to_record() for deal in self.deals]

    def start_record(self) -> dict[str, Any]:
        """The match_start field: which set (its digest), not the cards (those are secret
        until the match is over), and a commitment to the deals the match will play."""
        return {
            "deal_set": {
                "name": self.deal_set.name,
                "sha256": self.deal_set.sha256,
                "size": len(self.deal_set.deals),
                "deals_commitment": deals_commitment(self.records()),
            }
        }

    def end_record(self) -> dict[str, Any]:
        """The match_end field: the deals played and where they are in the set."""
        return {"fixed_deals": {"indices": list(self.indices), "deals": self.records()}}


def short_set_note(deal_set: DealSet, needed: int) -> str | None:
    """A line to print when the set has fewer deals than will be played (None otherwise)."""
    size = len(deal_set.deals)
    if needed <= size:
        return None
    return (
        f"note: {deal_set.name} has {size} deals and {needed} will be played: after its last deal "
        "the set starts again from its first (as cutechess does with a short opening book)"
    )


def deals_commitment(records: Sequence[Mapping[str, str]]) -> str:
    """SHA-256 of the deals' records as compact JSON: published at the start of a match,
    checked against the deals its end reveals (as the seed's commitment is)."""
    text = json.dumps(list(records), separators=(",", ":"), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def deals_from_log(start: MatchStart, end: MatchEnd) -> tuple[FixedDeal, ...] | None:
    """The fixed deals a logged match played (None: it was dealt from its seed), from its
    log's first and last records (``deal_set`` and ``fixed_deals``, kept in their ``extra``).

    Raises :class:`DealSetError` when the deals its end reveals are not the ones its
    start committed to, or cannot be read.
    """
    fixed = end.extra.get("fixed_deals")
    if not isinstance(fixed, dict):
        return None
    records = fixed.get("deals")
    if not isinstance(records, list) or not records:
        raise DealSetError("the log's fixed_deals has no deals")
    committed = (start.extra.get("deal_set") or {}).get("deals_commitment")
    if committed != deals_commitment(records):
        raise DealSetError("the deals revealed at the end do not match the commitment published at the start")
    try:
        return tuple(FixedDeal.from_record(record) for record in records)
    except (ParseError, KeyError, TypeError) as error:
        raise DealSetError(f"the log's fixed deals cannot be read: {error}") from None


# ------------------------------------------------------------------ reading PBN


@dataclasses.dataclass
class _Game:
    number: int
    line: int
    tags: dict[str, tuple[str, int]] = dataclasses.field(default_factory=dict)

    def where(self, line: int | None = None) -> str:
        board = self.tags.get("Board")
        named = f" (board {board[0]})" if board and board[0] else ""
        return f"deal {self.number}{named}, line {line if line is not None else self.line}"


def _games(text: str) -> list[_Game]:
    """The tag sections of a PBN file, one per game; a blank line ends a game."""
    games: list[_Game] = []
    current: _Game | None = None
    in_comment = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if in_comment:
            in_comment = "}" not in line
            continue
        if not line:
            current = None
            continue
        if line.startswith("%") or line.startswith(";"):
            continue
        if line.startswith("{"):
            in_comment = "}" not in line
            continue
        if line.startswith("[") and len(line) > MAX_TAG_CHARS:
            raise DealSetError(
                f"line {number}: a tag line of {len(line):,} characters, longer than a PBN tag may be "
                f"({MAX_TAG_CHARS:,})"
            )
        found = _TAG.match(line)
        if found is None:
            continue  # the rows of an Auction or Play section
        if current is None:
            current = _Game(len(games) + 1, number)
            games.append(current)
        name, value = found.group(1), found.group(2).replace('\\"', '"').replace("\\\\", "\\")
        current.tags.setdefault(name, (value, number))
    return games


def _seat(letter: str, game: _Game, line: int, what: str) -> Seat:
    if len(letter) != 1 or letter.upper() not in _SEAT_LETTERS:
        raise DealSetError(f"{game.where(line)}: {what} {letter!r} is not a seat (N, E, S or W)")
    return Seat(_SEAT_LETTERS.index(letter.upper()))


def _deal(game: _Game) -> Deal:
    if "Deal" not in game.tags:
        raise DealSetError(f"{game.where()}: no Deal tag")
    text, line = game.tags["Deal"]
    head, colon, rest = text.strip().partition(":")
    if not colon:
        raise DealSetError(f"{game.where(line)}: the Deal tag {text!r} does not start with a seat and ':'")
    first = _seat(head.strip(), game, line, "the Deal's first seat")
    parts = rest.split()
    if len(parts) != 4:
        raise DealSetError(f"{game.where(line)}: the Deal tag has {len(parts)} hands, not 4")
    holder: dict[Card, Seat] = {}
    hands: dict[Seat, list[Card]] = {}
    suits = (Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS)
    for offset, part in enumerate(parts):
        seat = Seat((first + offset) % 4)
        who = seat.name.title()
        if part == "-":
            raise DealSetError(
                f"{game.where(line)}: {who}'s hand is unknown ('-'); a played deal needs all 52"
            )
        groups = part.split(".")
        if len(groups) != 4:
            raise DealSetError(
                f"{game.where(line)}: {who}'s hand {part!r} has {len(groups)} suits, not 4 "
                "(spades.hearts.diamonds.clubs)"
            )
        cards: list[Card] = []
        for suit, group in zip(suits, groups, strict=True):
            for letter in group.upper().replace("10", "T"):
                if letter not in _RANK_LETTERS:
                    raise DealSetError(
                        f"{game.where(line)}: {letter!r} in {who}'s hand {part!r} is not a rank "
                        "(A K Q J T 9 8 7 6 5 4 3 2)"
                    )
                card = Card(suit, Rank(_RANK_LETTERS.index(letter) + 2))
                if card in holder:
                    other = holder[card].name.title()
                    twice = "twice to " + who if other == who else f"to both {other} and {who}"
                    raise DealSetError(f"{game.where(line)}: {card.pretty} is dealt {twice}")
                holder[card] = seat
                cards.append(card)
        if len(cards) != 13:
            raise DealSetError(f"{game.where(line)}: {who} holds {len(cards)} cards, not 13")
        hands[seat] = cards
    return Deal(hands)


def _card(text: str, game: _Game, line: int, tag: str) -> Card:
    """A card as PBN writes it (suit then rank, ``SA``) or as oddtrick does (``AS``)."""
    key = text.strip().upper().replace("10", "T")
    if len(key) == 2:
        for suit_letter, rank_letter in ((key[0], key[1]), (key[1], key[0])):
            if suit_letter in "CDHS" and rank_letter in _RANK_LETTERS:
                return Card(Suit("CDHS".index(suit_letter)), Rank(_RANK_LETTERS.index(rank_letter) + 2))
    raise DealSetError(
        f"{game.where(line)}: the {tag} tag {text!r} is not a card "
        "(a suit letter C D H S and a rank, e.g. SA)"
    )


def _pick(domain: bytes, deal: Deal, count: int) -> int:
    digest = hashlib.sha256(domain + str(deal).encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % count


def _fixed(game: _Game) -> FixedDeal:
    deal = _deal(game)
    if "Dealer" not in game.tags:
        raise DealSetError(f"{game.where()}: no Dealer tag (PBN's mandatory tag naming who deals)")
    value, line = game.tags["Dealer"]
    dealer = _seat(value.strip(), game, line, "the Dealer")
    if "TurnedCard" in game.tags:
        value, line = game.tags["TurnedCard"]
        turned = _card(value, game, line, "TurnedCard")
        if turned not in deal[dealer]:
            raise DealSetError(
                f"{game.where(line)}: the TurnedCard {turned.pretty} is not in the dealer's "
                f"({dealer.name.title()}'s) hand"
            )
    else:
        own = sorted(deal[dealer], key=lambda card: card.index)
        turned = own[_pick(b"oddtrick-fixed-turned-v1", deal, 13)]
    if "CutCard" in game.tags:
        value, line = game.tags["CutCard"]
        cut = _card(value, game, line, "CutCard")
    else:
        cut = PACK[_pick(b"oddtrick-fixed-cut-v1", deal, 52)]
    return FixedDeal(deal, dealer, turned, cut)


def parse_deal_set(text: str, name: str = "the deal set", sha256: str | None = None) -> DealSet:
    """The deals of a PBN file's text; raises :class:`DealSetError` for the first bad one."""
    try:
        deals = tuple(_fixed(game) for game in _games(text) if game.tags)
    except DealSetError as error:
        raise DealSetError(f"{name}: {error}") from None
    if not deals:
        raise DealSetError(f"{name}: no deals (no PBN game with a Deal tag)")
    digest = sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest()
    return DealSet(name, digest, deals)


def read_deal_set(path: Path) -> DealSet:
    """Read a PBN deal set file (see the module's docstring for what is read and how)."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_DEAL_SET_BYTES + 1)
    except OSError as error:
        raise DealSetError(f"cannot read the deal set {path}: {error.strerror or error}") from None
    if len(data) > MAX_DEAL_SET_BYTES:
        raise DealSetError(
            f"{path.name}: larger than a deal set may be ({MAX_DEAL_SET_BYTES // (1024 * 1024)} MiB)"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")  # PBN 1.0 files are ISO 8859-1
    return parse_deal_set(text, path.name, hashlib.sha256(data).hexdigest())
