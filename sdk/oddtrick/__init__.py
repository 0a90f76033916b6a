"""oddtrick: write bots that play classic Whist and Contract Whist.

A bot is a class with two decisions::

    import oddtrick

    class MyBot(oddtrick.Bot):
        def choose_call(self, view):
            return oddtrick.PASS

        def choose_card(self, view):
            return view.legal_actions[0]

Try it in-process with :func:`play_local`, unit-test it with
:class:`FakeReferee`, and play it on a referee with :func:`run` or
``oddtrick bot mybot.py:MyBot --server HOST:PORT --name NAME --token TOKEN``.

The other public modules:

- :mod:`oddtrick.rules`: the rules themselves (cards, calls, seats, the game
  state, scoring), the one source of truth the referee uses too.
- :mod:`oddtrick.bots`: the sample bots, to copy, subclass or play against.
- :mod:`oddtrick.anytime`: search until the time budget, then answer with the
  best so far.
- :mod:`oddtrick.double_dummy`: double-dummy solving with DDS (``strong`` extra).
- :mod:`oddtrick.duplicate`, :mod:`oddtrick.sprt`: compare two bots on the
  same deals, and stop once the difference is clear.
- :mod:`oddtrick.deal_sets`: matches dealt from a PBN file.
- :mod:`oddtrick.analysis`: what every card of a played match cost, double dummy.

Everything else (modules whose names start with ``_``, and the generated
protocol code ``oddtrick.v1``) is internal and may change.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING

from oddtrick._bot import Bot, BotView, Decision, FunctionBot
from oddtrick._fake import FakeReferee
from oddtrick._local import play_local
from oddtrick._options import OptionError, with_options
from oddtrick.rules import (
    DOUBLE,
    PASS,
    Action,
    Call,
    Card,
    Contract,
    Denomination,
    GameConfig,
    GameKind,
    GameState,
    IllegalAction,
    MatchFormat,
    Phase,
    Rank,
    Seat,
    Side,
    Suit,
    Trick,
    TrumpSelection,
)

if TYPE_CHECKING:
    from oddtrick._run import BotRefused, run
    from oddtrick._tls import TlsOptions

__all__ = [
    "DOUBLE",
    "PASS",
    "Action",
    "Bot",
    "BotRefused",
    "BotView",
    "Call",
    "Card",
    "Contract",
    "Decision",
    "Denomination",
    "FakeReferee",
    "FunctionBot",
    "GameConfig",
    "GameKind",
    "GameState",
    "IllegalAction",
    "MatchFormat",
    "OptionError",
    "Phase",
    "Rank",
    "Seat",
    "Side",
    "Suit",
    "TlsOptions",
    "Trick",
    "TrumpSelection",
    "__version__",
    "play_local",
    "run",
    "with_options",
]


def __getattr__(name: str) -> object:
    # The client (gRPC, asyncio) loads only when used, so that importing the
    # rules or writing a bot's unit tests stays light.
    if name in ("run", "BotRefused"):
        from oddtrick import _run

        return getattr(_run, name)
    if name == "TlsOptions":
        from oddtrick import _tls

        return _tls.TlsOptions
    raise AttributeError(f"module 'oddtrick' has no attribute {name!r}")
