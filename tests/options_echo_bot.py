"""A bot that says, in the comment of every decision, the options it plays with.

As an SDK bot file (``--bot NAME=options_echo_bot.py option.depth=3``, ``--in-process``)
it is :class:`EchoBot`, whose options are class attributes, and it says their values.
Run as a program (a ``cmd:`` entry, as a bot in another language is), it reads nothing
but its environment: it says the ``ODDTRICK_OPTIONS`` it was given, as it found it, and
first prints the names of every variable of its environment on its output (the bot
output log), for the test of the launcher's allowlist.
"""

from __future__ import annotations

import os

import oddtrick


class EchoBot(oddtrick.Bot):
    name = "echo"
    options = ("label", "depth", "ratio", "loud")
    label = "plain"
    depth = 1
    ratio = 0.5
    loud = False

    def said(self) -> str:
        return f"options label={self.label} depth={self.depth!r} ratio={self.ratio!r} loud={self.loud!r}"

    def choose_call(self, view: oddtrick.BotView) -> tuple[oddtrick.Action, str]:
        return view.legal_actions[0], self.said()

    def choose_card(self, view: oddtrick.BotView) -> tuple[oddtrick.Action, str]:
        return view.legal_actions[0], self.said()


def _as_given(view: oddtrick.BotView) -> tuple[oddtrick.Action, str]:
    return view.legal_actions[0], "raw " + os.environ.get("ODDTRICK_OPTIONS", "")


if __name__ == "__main__":
    print("ENV " + " ".join(sorted(os.environ)), flush=True)
    oddtrick.run(
        _as_given,
        server=os.environ["ODDTRICK_SERVER"],
        name=os.environ["ODDTRICK_NAME"],
        token=os.environ["ODDTRICK_TOKEN"],
        seats=int(os.environ["ODDTRICK_SEATS"]),
    )
