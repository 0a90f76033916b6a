"""What the commands print for people: colour on a terminal, plain text in a pipe.

Every command writes through a :func:`console` (rich), which decides once per
stream: a terminal gets colour (hearts and diamonds in red) and live redrawn
lines; a pipe or a file gets the same words with no escape codes; ``NO_COLOR``
(https://no-color.org) turns colour off everywhere, ``FORCE_COLOR`` on.
Text is always passed as :class:`rich.text.Text`, never as markup, so a
bracket in a bot's name is printed, not interpreted.
"""

from __future__ import annotations

import re
from typing import IO

from rich.console import Console
from rich.text import Text

RED_SUITS = re.compile(r"(?:10|[2-9TJQKA])?[♥♦]")
"""A card of a red suit (``Q♥``, ``10♦``) or a red suit symbol alone."""


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 deal``, ``2 deals``: a count and its noun, agreed."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def console(stream: IO[str]) -> Console:
    """A console on ``stream``: colour only on a terminal, and never with NO_COLOR."""
    return Console(file=stream, highlight=False, emoji=False, markup=False, soft_wrap=True)


def suits(text: str, style: str = "") -> Text:
    """``text`` with every red card or suit symbol in red (and the rest in ``style``)."""
    line = Text(text, style=style)
    line.highlight_regex(RED_SUITS, "red")
    return line
