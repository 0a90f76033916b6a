"""Running a bot against a referee from Python or from the command line."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import inspect
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from oddtrick._address import referee_list
from oddtrick._bot import Bot, make_bot
from oddtrick._client import BotRefused, BotStopped, ClientOptions, run_bot_async
from oddtrick._options import OptionValue, with_options
from oddtrick._tls import TlsOptions
from oddtrick.rules import GameKind

__all__ = ["BotRefused", "load_bot", "run"]


def run(
    bot: Any,
    *,
    server: str | Sequence[str],
    name: str,
    token: str,
    seats: int = 1,
    version: str = "0",
    games: Sequence[GameKind] = (GameKind.CLASSIC, GameKind.CONTRACT),
    max_matches: int | None = None,
    tls: TlsOptions | None = None,
    options: Mapping[str, OptionValue] | None = None,
) -> None:
    """Play ``bot`` (a Bot subclass or a function of a view) on ``seats`` seats of
    the referee at ``server`` until stopped or ``max_matches`` are played on each seat.
    Ctrl-C or SIGTERM (on the main thread) stops it gracefully: the seats finish the
    matches they are in, take no new one, and it returns; a second signal stops it at
    once (KeyboardInterrupt for Ctrl-C, SystemExit with status 143 for SIGTERM).
    Each seat gets its own bot instance when ``bot`` is a class.
    A ``server`` without a port means the referee's default, 50051; several (``"A,B"``
    or a list: a ladder run on several referees) are tried in turn, the bot moving to
    the next when the one it plays at cannot be reached; ``seats`` is at least 1
    (ValueError otherwise).
    ``tls`` connects over TLS (see :class:`oddtrick.TlsOptions`). ``options`` are the
    bot's options (:func:`oddtrick.with_options`; a ``cmd:`` program finds those of its
    entry in ``ODDTRICK_OPTIONS``), checked before anything connects.

    Objects that exist when it is called are frozen out of the garbage
    collector's reach (``gc.freeze()``): they live as long as the process.
    """
    # Everything loaded so far (gRPC, protobuf, the bot's module) lives as long as the
    # process: take it out of the collector's reach, or every full collection walks it
    # again, a pause of milliseconds every few hundred decisions.
    if not isinstance(seats, int) or seats < 1:
        raise ValueError(f"seats must be a whole number, at least 1, not {seats!r}")
    bot = with_options(bot, options or {})
    servers = referee_list(server if isinstance(server, str) else ",".join(server))
    gc.collect()
    gc.freeze()
    client = ClientOptions(
        server=servers[0],
        fallbacks=servers[1:],
        name=name,
        token=token,
        version=version,
        games=tuple(games),
        seats=seats,
        max_matches=max_matches,
        tls=tls,
        stop_on_signals=True,
    )
    try:
        asyncio.run(run_bot_async(_factory(bot), client))
    except BotStopped as stopped:
        if stopped.signal_number == signal.SIGINT:
            raise KeyboardInterrupt from None
        raise SystemExit(128 + stopped.signal_number) from None


def _factory(bot: Any) -> Callable[[], Bot]:
    if isinstance(bot, type):
        return lambda: make_bot(bot)
    if isinstance(bot, Bot):
        return lambda: bot
    return lambda: make_bot(bot)


def bot_factory(spec: str, options: Mapping[str, OptionValue] | None = None) -> Callable[[], Bot]:
    """Fresh bots of the one ``FILE.py[:Name]`` names (see :func:`load_bot`), with
    ``options`` set, one per call: what a referee plays in its own process. OptionError
    for options the bot does not take."""
    return _factory(with_options(load_bot(spec), options or {}))


def split_bot_spec(spec: str) -> tuple[Path, str]:
    """``FILE.py:Name`` as its file and name; ``FILE.py`` alone (or a colon not followed by
    a name) as the file and ``""``."""
    path_text, colon, attribute = spec.rpartition(":")
    if not colon or not attribute.isidentifier():
        path_text, attribute = spec, ""
    return Path(path_text), attribute


def load_bot(spec: str) -> Any:
    """Load ``path/to/file.py:Name`` (a Bot subclass or a function), or ``path/to/file.py``
    when the file defines exactly one Bot subclass (or, with none, exactly one public function)."""
    path, attribute = split_bot_spec(spec)
    if not path.is_file():
        raise FileNotFoundError(f"no bot file {path} (expected FILE.py or FILE.py:ClassName)")
    # As for `python FILE.py`: modules beside the bot's file are importable by it (bots are
    # started in safe-path mode, which leaves the working folder out).
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = f"oddtrick_bot_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    found = [
        value
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, Bot) and value.__module__ == module_name
    ]
    if not attribute:
        if len(found) == 1:
            return found[0]
        functions = [
            value
            for name, value in vars(module).items()
            if inspect.isfunction(value) and value.__module__ == module_name and not name.startswith("_")
        ]
        if not found and len(functions) == 1:
            return functions[0]  # a plain function of the view
        if found:
            names = ", ".join(v.__name__ for v in found)
            raise AttributeError(
                f"{path} defines {len(found)} Bot subclasses ({names}): name one, FILE.py:Name"
            )
        listed = ", ".join(f.__name__ for f in functions) or "none"
        raise AttributeError(
            f"{path} defines no Bot subclass and {len(functions)} functions ({listed}): "
            "name the bot, FILE.py:Name (a Bot subclass, or a function of the view)"
        )
    try:
        return getattr(module, attribute)
    except AttributeError:
        hint = f"; bots in that file: {', '.join(v.__name__ for v in found)}" if found else ""
        raise AttributeError(f"{path} has no {attribute!r}{hint}") from None
