"""The ``oddtrick`` command's argument parser: argparse, with mistakes answered helpfully.

Plain argparse answers ``oddtrick bot --sever HOST`` with "required: --server" (the
typo is never mentioned) and ``oddtrick tournament --bots …`` with the top-level
usage. Here an unknown option is named first, in the usage of the command it was
given to, with the closest option that command has ("did you mean --server?"), as
git and cargo suggest a subcommand.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from oddtrick._options import PREFIX, OptionError, OptionValue, parse_words


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that names unknown options and suggests the closest one; its
    subcommands' parsers are of this class too (argparse makes them of the parent's)."""

    _given: list[str]
    intermixed = False
    """Read positional words wherever they come among the options (``oddtrick bot FILE.py
    --server A option.x=1``), as ``parse_intermixed_args`` does, also as a subcommand."""
    _mixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self.intermixed and not self._mixing:
            self._mixing = True  # (the intermixed parse calls this method twice itself)
            try:
                parsed, extras = self.parse_known_intermixed_args(args, namespace)
            finally:
                self._mixing = False
        else:
            self._given = list(sys.argv[1:] if args is None else args)
            parsed, extras = super().parse_known_args(args, namespace)
        # An option word the intermixed parse's first pass leaves is a positional of its second.
        starts = "-" if self._mixing else ("-", PREFIX)
        unknown = [extra for extra in extras if extra.startswith(starts) and extra != "-"]
        if unknown:  # said by the command that was given them, in its own usage
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        unknown = self._unknown_options()
        if not unknown and "unrecognized arguments: " in message and PREFIX in message:
            message += (
                f"; {PREFIX}NAME=VALUE words go right after the entry they are for, before any "
                f"other option (--bot NAME=FILE.py {PREFIX}think_seconds=2, or oddtrick bot FILE.py "
                f"{PREFIX}think_seconds=2); a --remote entry takes none: its author gives them"
            )
        elif unknown and (
            message.startswith("the following arguments are required") or "unrecognized" in message
        ):
            message = f"unrecognized option {unknown[0]}" + self._suggestion(unknown[0])
        elif message.startswith("argument ") and "invalid choice: " in message:
            message += self._choice_suggestion(message)
        super().error(message)

    def _unknown_options(self) -> list[str]:
        """The words given that look like options this parser does not have."""
        unknown = []
        for word in getattr(self, "_given", []):
            if word == "--":
                break
            if not word.startswith("-") or word == "-" or _is_number(word):
                continue
            name = word.split("=", 1)[0]
            if name in self._option_string_actions:
                continue
            if not name.startswith("--") and len(name) > 2 and name[:2] in self._option_string_actions:
                continue  # -vv, -n5: a short option with its value
            abbreviates = any(option.startswith(name) for option in self._option_string_actions)
            if self.allow_abbrev and name.startswith("--") and abbreviates:
                continue  # an abbreviation argparse accepts
            unknown.append(name)
        return unknown

    def _suggestion(self, unknown: str) -> str:
        options = [option for option in self._option_string_actions if option.startswith("--")]
        close = difflib.get_close_matches(unknown, options, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}?" if close else f" (`{self.prog} --help` lists the options)"

    def _choice_suggestion(self, message: str) -> str:
        given = message.split("invalid choice: ", 1)[1].split(" ", 1)[0].strip("'\"")
        choices = [choice for action in self._actions for choice in _choices(action)]
        close = difflib.get_close_matches(given, choices, n=1, cutoff=0.6)
        return f"; did you mean {close[0]}?" if close else ""


@dataclasses.dataclass(frozen=True)
class EntryArgument:
    """An entry as a command line gave it: its kind (the ``const`` of its option:
    ``bot``, ``in-process``, ``remote``…), its text and the options that followed it."""

    kind: str
    text: str
    options: dict[str, OptionValue] = dataclasses.field(default_factory=dict)


class EntryWords(argparse.Action):
    """``--bot NAME=FILE.py option.think_seconds=2 …`` (``nargs="+"``): the entry, then the
    ``option.NAME=VALUE`` words that follow it, as cutechess-cli takes an engine's
    ``option.Name=value``; each use appends an :class:`EntryArgument` to the destination."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [values] if isinstance(values, str) else list(values or [])
        try:
            options = parse_words(words[1:], f"{option_string} {words[0]}")
        except OptionError as error:
            raise argparse.ArgumentError(self, str(error)) from None
        given = list(getattr(namespace, self.dest, None) or [])
        given.append(EntryArgument(str(self.const or "bot"), words[0], options))
        setattr(namespace, self.dest, given)


def _choices(action: argparse.Action) -> list[str]:
    choices: Any = action.choices
    return [str(choice) for choice in choices] if choices else []


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def positive_seconds(text: str) -> float:
    """``--deadline`` and ``--grace``: a number of seconds above zero (a zero deadline
    would time every seat out, a negative one stop the referee at its first request)."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds > 0 or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds: give one above 0, e.g. 5")
    return seconds
