"""A bot's options: the class attributes a run may set without a subclass file.

A :class:`~oddtrick.Bot` subclass names its tunables in ``options``; each is a class
attribute, and the type of its default (``bool``, ``int``, ``float`` or ``str``) is the
option's type::

    class Searcher(oddtrick.Bot):
        options = ("think_seconds", "samples")
        think_seconds = 1.0
        samples = 24

Given ``option.think_seconds=2`` (after ``--bot NAME=FILE.py``, or after ``FILE.py`` in
``oddtrick bot``), the bot played is a subclass with ``think_seconds = 2.0``: exactly the
subclass file one would otherwise write, so ``__init__`` and every method see the value.
A subclass inherits its bases' options and may name more.

On a command line a value is read by its form: ``true``/``false`` a bool, ``40`` an int,
``0.5`` or ``1e-3`` a float, anything else a string. A bot process gets its options in
the environment variable ``ODDTRICK_OPTIONS``, a JSON object (``{"think_seconds": 2}``),
which is how a ``cmd:`` program in any language reads them. An unknown name, or a value
of another type than the default's, is an :class:`OptionError` naming the bot's options.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from oddtrick._bot import Bot

OptionValue: TypeAlias = bool | int | float | str
"""What an option may hold."""

VARIABLE = "ODDTRICK_OPTIONS"
"""The environment variable a bot process finds its options in: a JSON object."""
PREFIX = "option."
"""The start of an option word on a command line: ``option.NAME=VALUE``."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")
_INT = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT = re.compile(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?\Z")
_TYPES = {bool: "a bool", int: "an int", float: "a float", str: "a string"}
_EXAMPLES = {bool: "true", int: "40", float: "2.5", str: "text"}


class OptionError(ValueError):
    """Options that cannot be given: a word that is not ``option.NAME=VALUE``, a name the
    bot does not declare, or a value of another type than the option's."""


def parse_value(text: str) -> OptionValue:
    """A command line's value by its form: ``true``/``false``, an int, a float, else the text."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def parse_words(words: Sequence[str], where: str) -> dict[str, OptionValue]:
    """``option.NAME=VALUE`` words (those following an entry) as a mapping, in order;
    ``where`` names the entry in the error."""
    found: dict[str, OptionValue] = {}
    for word in words:
        name, equals, text = word.removeprefix(PREFIX).partition("=")
        if not word.startswith(PREFIX):
            raise OptionError(
                f"{where}: {word!r} is not an option; only option.NAME=VALUE words may follow an "
                "entry (e.g. option.think_seconds=2)"
            )
        if not equals or not _NAME.match(name):
            raise OptionError(
                f"{where}: {word!r} is not option.NAME=VALUE (a name of letters, digits and _, "
                "then =, then the value; e.g. option.think_seconds=2)"
            )
        if name in found:
            raise OptionError(f"{where}: option {name} is given twice; give it once")
        found[name] = parse_value(text)
    return found


def shown(value: OptionValue) -> str:
    """A value as it is written on a command line (``true``, ``2``, ``0.5``, ``text``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def options_text(options: Mapping[str, OptionValue]) -> str:
    """``think_seconds=2 samples=40``: options as a line says them."""
    return " ".join(f"{name}={shown(value)}" for name, value in options.items())


def to_variable(options: Mapping[str, OptionValue]) -> str:
    """The value of :data:`VARIABLE` for these options."""
    return json.dumps(dict(options), ensure_ascii=False, separators=(",", ":"))


def from_variable(text: str) -> dict[str, OptionValue]:
    """The options :data:`VARIABLE` holds (none when it is empty); OptionError when it is
    not a JSON object of names and values."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or not all(
        isinstance(value, bool | int | float | str) for value in data.values()
    ):
        raise OptionError(
            f"{VARIABLE} is not a JSON object of option names and values (numbers, true/false, "
            f'strings): {text[:80]!r}; set it like {{"think_seconds": 2}}, or unset it'
        )
    return data


def declared(target: type[Bot]) -> dict[str, OptionValue]:
    """The options ``target`` and its bases name, each with its value on ``target``;
    TypeError (the author's mistake) for a name that is not such a class attribute."""
    names: list[str] = []
    for klass in target.__mro__:  # its own first, then its bases'
        if klass is object:
            continue
        named = vars(klass).get("options", ())
        if isinstance(named, str) or not isinstance(named, tuple | list):
            raise TypeError(f"{klass.__name__}.options must be a tuple of attribute names, not {named!r}")
        names += [name for name in named if name not in names]
    values: dict[str, OptionValue] = {}
    for name in names:
        value: OptionValue | None = getattr(target, name, None)
        if value is None or type(value) not in _TYPES:
            raise TypeError(
                f"{target.__name__} names the option {name!r}, but its class attribute {name} is "
                f"{value!r}: give it a default of type bool, int, float or str"
            )
        values[name] = value
    return values


def known_text(values: Mapping[str, OptionValue]) -> str:
    """``think_seconds (a float, default 1.0), samples (an int, default 24)``."""
    return ", ".join(f"{name} ({described(value)})" for name, value in values.items())


def described(default: OptionValue) -> str:
    """``a float, default 1.0``: an option's type and default."""
    return f"{_TYPES[type(default)]}, default {shown(default)}"


def checked(target: type[Bot], given: Mapping[str, OptionValue]) -> dict[str, OptionValue]:
    """``given`` as ``target``'s options take them (an int for a float option becomes a
    float); OptionError naming the bot's options for an unknown name or a wrong type."""
    known = declared(target)
    values: dict[str, OptionValue] = {}
    for name, value in given.items():
        if name not in known and not known:
            raise OptionError(
                f"{target.__name__} has no option {name!r}: it takes none (it names none in `options`)"
            )
        if name not in known:
            close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise OptionError(
                f"{target.__name__} has no option {name!r}{hint}; its options: {known_text(known)}"
            )
        values[name] = _as_type(target, name, value, known[name])
    return values


def _as_type(target: type[Bot], name: str, value: OptionValue, default: OptionValue) -> OptionValue:
    kind = type(default)
    if kind is str:
        return shown(value)  # a string option takes any word as it was written
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind is bool and isinstance(value, bool):
        return value
    # The example is the option's own default (a value it surely takes), or a word of its
    # type where the default is empty.
    example = shown(default) or _EXAMPLES[kind]
    raise OptionError(
        f"option {name} of {target.__name__} is {described(default)}, not "
        f"{shown(value)!r}: give e.g. option.{name}={example}"
    )


def with_options(target: Any, options: Mapping[str, OptionValue]) -> Any:
    """``target`` (a Bot subclass) with ``options`` set: a subclass whose class attributes
    hold them (``target`` itself when there are none). OptionError for options it does not
    declare, for values of the wrong type, and for a target that is not a Bot subclass (a
    function or an instance declares no options)."""
    if not options:
        return target
    if not (isinstance(target, type) and issubclass(target, Bot)):
        what = "a Bot instance" if isinstance(target, Bot) else "not a Bot subclass"
        raise OptionError(
            f"{getattr(target, '__name__', target)!r} is {what}, which declares no options; options "
            "are class attributes a Bot subclass names in its `options`"
        )
    values = checked(target, options)
    digest = hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]
    qualname = f"_{target.__name__}_options_{digest}"  # private: no API page lists it
    derived = type(target.__name__, (target,), {**values, "__module__": target.__module__})
    derived.__qualname__ = qualname
    # Found by name in its module, as pickle looks a class up: a process pool (oddtrick sprt
    # --jobs) can then send it to its workers like the class it derives from.
    module = sys.modules.get(target.__module__)
    if module is not None and "<locals>" not in target.__qualname__:
        setattr(module, qualname, derived)
    return derived
