"""One validated, immutable value that says which game is played and how.

It travels in the protocol and in every log, so it has a plain dict form
(:meth:`GameConfig.to_dict` / :meth:`GameConfig.from_dict`) whose keys and
values are the same words the docs use.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import Any

from oddtrick.rules._errors import ConfigError


class GameKind(enum.Enum):
    """Which of the two games is played: its value is the word configs and logs use."""

    CLASSIC = "classic"
    """Classic Whist: trumps are turned (or cut, or rotate), no auction; 5 points a game."""
    CONTRACT = "contract"
    """Contract Whist: an auction names trumps and the tricks to take; 100 points a game."""


class TrumpSelection(enum.Enum):
    """How classic Whist chooses trumps for a deal."""

    TURN_LAST_CARD = "turn_last_card"
    """The dealer's last card is turned face up; its suit is trumps."""
    CUT = "cut"
    """A card drawn from a second pack names trumps; nobody holds it."""
    FIXED_ROTATION = "fixed_rotation"
    """Hearts, diamonds, spades, clubs, repeating (a whist drive)."""


class MatchFormat(enum.Enum):
    """How long a match lasts and how its winner is decided."""

    HAND = "hand"
    """A single deal."""
    GAME = "game"
    """Hands until one partnership wins a game."""
    RUBBER = "rubber"
    """Best of three games."""
    DEALS = "deals"
    """A fixed number of deals; the result is each side's total."""


DEFAULT_TARGET = {GameKind.CLASSIC: 5, GameKind.CONTRACT: 100}
MAX_TARGET = 10_000
MAX_DEALS = 100_000


@dataclasses.dataclass(frozen=True, slots=True)
class GameConfig:
    """Every option of docs/rules.md. Options that do not apply to the chosen game
    must be left at their defaults; anything else is refused with a reason.

    ``target`` and ``trump_selection`` default by game (5 and turn-last-card
    for classic Whist, 100 for Contract Whist); ``deals`` is required exactly
    when ``format`` is :attr:`MatchFormat.DEALS`.
    """

    game: GameKind = GameKind.CLASSIC
    trump_selection: TrumpSelection | None = None
    no_trump_every_fifth: bool = False
    honours: bool = False
    target: int | None = None
    doubling: bool = False
    format: MatchFormat = MatchFormat.GAME
    deals: int | None = None

    def __post_init__(self) -> None:
        for name, kind in (("game", GameKind), ("format", MatchFormat)):
            if not isinstance(getattr(self, name), kind):
                raise ConfigError(f"{name} must be a {kind.__name__}, not {getattr(self, name)!r}")
        classic = self.game is GameKind.CLASSIC
        if self.trump_selection is None:
            if classic:
                object.__setattr__(self, "trump_selection", TrumpSelection.TURN_LAST_CARD)
        elif not classic:
            raise ConfigError("trump selection applies only to classic Whist")
        elif not isinstance(self.trump_selection, TrumpSelection):
            raise ConfigError(f"trump_selection must be a TrumpSelection, not {self.trump_selection!r}")
        if self.no_trump_every_fifth and self.trump_selection is not TrumpSelection.FIXED_ROTATION:
            raise ConfigError("no_trump_every_fifth needs trump_selection fixed_rotation")
        if self.honours and not classic:
            raise ConfigError("honours are scored only in classic Whist")
        if self.doubling and classic:
            raise ConfigError("doubling exists only in Contract Whist")
        if self.target is None:
            object.__setattr__(self, "target", DEFAULT_TARGET[self.game])
        elif type(self.target) is not int or not 1 <= self.target <= MAX_TARGET:
            raise ConfigError(f"target must be a whole number from 1 to {MAX_TARGET}, not {self.target!r}")
        if self.format is MatchFormat.DEALS:
            if type(self.deals) is not int or not 1 <= self.deals <= MAX_DEALS:
                raise ConfigError(
                    f"format 'deals' needs a number of deals from 1 to {MAX_DEALS}, not {self.deals!r}"
                )
        elif self.deals is not None:
            raise ConfigError("a number of deals is given only with format 'deals'")
        for flag in ("no_trump_every_fifth", "honours", "doubling"):
            if type(getattr(self, flag)) is not bool:
                raise ConfigError(f"{flag} must be true or false, not {getattr(self, flag)!r}")

    @classmethod
    def classic(cls, **options: Any) -> GameConfig:
        """Classic Whist, with any other option given by name: ``GameConfig.classic(honours=True)``."""
        return cls(game=GameKind.CLASSIC, **options)

    @classmethod
    def contract(cls, **options: Any) -> GameConfig:
        """Contract Whist, with any other option given by name: ``GameConfig.contract(doubling=True)``."""
        return cls(game=GameKind.CONTRACT, **options)

    @property
    def game_target(self) -> int:
        """The target with its default resolved (never ``None`` after construction)."""
        assert self.target is not None
        return self.target

    @property
    def plays_to_target(self) -> bool:
        """Whether hands count towards a game (and so the honours bar applies)."""
        return self.format in (MatchFormat.GAME, MatchFormat.RUBBER)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form with every option spelled out."""
        return {
            "game": self.game.value,
            "trump_selection": self.trump_selection.value if self.trump_selection else None,
            "no_trump_every_fifth": self.no_trump_every_fifth,
            "honours": self.honours,
            "target": self.target,
            "doubling": self.doubling,
            "format": self.format.value,
            "deals": self.deals,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameConfig:
        """Inverse of :meth:`to_dict`; missing keys take their defaults, unknown keys
        are refused (a typo must not silently become a default)."""
        unknown = set(data) - {field.name for field in dataclasses.fields(cls)}
        if unknown:
            raise ConfigError(f"unknown configuration keys: {', '.join(sorted(unknown))}")
        values: dict[str, Any] = dict(data)
        try:
            if "game" in values:
                values["game"] = GameKind(values["game"])
            if values.get("trump_selection") is not None:
                values["trump_selection"] = TrumpSelection(values["trump_selection"])
            if "format" in values:
                values["format"] = MatchFormat(values["format"])
        except ValueError as error:
            raise ConfigError(str(error)) from None
        return cls(**values)

    def describe(self) -> str:
        """One line for people, e.g. ``contract whist, target 100, doubling, a game``."""
        parts = [f"{self.game.value} whist"]
        if self.game is GameKind.CLASSIC:
            assert self.trump_selection is not None
            parts.append(self.trump_selection.value.replace("_", " "))
            if self.no_trump_every_fifth:
                parts.append("no trumps every fifth deal")
            if self.honours:
                parts.append("honours")
        elif self.doubling:
            parts.append("doubling")
        if self.format is MatchFormat.DEALS:
            parts.append("one deal" if self.deals == 1 else f"{self.deals} deals")
        elif self.format is MatchFormat.HAND:
            parts.append("one hand")
        else:
            parts.append(f"target {self.target}")
            parts.append("a game" if self.format is MatchFormat.GAME else "a rubber")
        return ", ".join(parts)
