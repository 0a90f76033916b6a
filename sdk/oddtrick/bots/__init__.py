"""The sample bots, shipped inside the package so every command finds them.

Each module is also a file a person can run or copy: ``oddtrick bot
sample_bots/random_bot.py`` from a checkout (``sample_bots/`` links here), or
``oddtrick bot "$(python -c 'import oddtrick.bots as b; print(b.FOLDER)')/random_bot.py"``
from an installed package; and each is importable for in-process play::

    from oddtrick.bots.heuristic_bot import HeuristicBot

- ``random_bot``: uniform over the legal actions, the file to copy.
- ``heuristic_bot``: both games by the classic strategy.
- ``pimc_bot``: the strong one (needs the ``strong`` extra).

``auction_simulation`` is not a bot: it judges a call by playing the auction out
on sampled deals, an option of the strong bot (``option.simulate_auction=true``).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
"""Where the sample bots' files are, inside the installed package."""

STRONG_LEVELS = (1, 2, 3)
"""The strong bot's levels (``option.level=N``; ``pimc_bot.LEVELS`` says what each is),
here so that commands can name them without the ``strong`` extra that bot needs."""


def strong_levels_text() -> str:
    """``1 to 3``: the strong bot's levels as help and error messages name them."""
    return f"{STRONG_LEVELS[0]} to {STRONG_LEVELS[-1]}"


def bot_file(kind: str) -> Path:
    """The file of the sample bot ``kind`` (``random``, ``heuristic`` or ``pimc``)."""
    return FOLDER / f"{kind}_bot.py"
