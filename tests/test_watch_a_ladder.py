"""`oddtrick watch` on a ladder: every table a ladder plays is sealed while it plays, so a
spectator waiting for a match is told, once, that matches are being played sealed, and
what it is waiting for, rather than left waiting in silence.

The ladder runs on a real socket with its house bots; the entrant is a raw client that
takes its seat and does not answer, so its match stays in play; `oddtrick watch` is the
command a person runs.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import trio
from ladder_support import ladder_serving, ladder_settings, register
from process_support import Lines, child, stop
from referee_support import PATIENCE_S, RawBot, in_thread

from oddtrick_referee.competitions.ladder.service import default_house_bots
from oddtrick_referee.play.table import TableRules

NOTICE = "being played on "


async def test_watch_on_a_ladder_says_once_that_its_matches_are_played_sealed(tmp_path: Path) -> None:
    settings = ladder_settings(
        tmp_path / "data",
        house_bots=default_house_bots(7),
        house_seats=1,
        rules=TableRules(deadline_s=PATIENCE_S, grace_s=2.0),
    )
    token = register(settings, "alice")["alice"]
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address
        command = [sys.executable, "-m", "oddtrick", "watch", "--server", address]
        with child(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as watcher:
            assert watcher.stderr is not None
            said = Lines(watcher.stderr)
            await in_thread(said.until, f"waiting for a match to start on {address}", PATIENCE_S)
            alice = RawBot(address, "alice", token)  # seated, never answers: her table plays on
            await in_thread(alice.hello)
            (notice,) = (await in_thread(said.until, NOTICE, 60))[-1:]
            alice.drop()  # her match ends (forfeited after the grace period) while the watcher waits on
            with trio.fail_after(PATIENCE_S):
                await ladder.wait_outcomes(1)
            assert stop(watcher, signal.SIGINT) == 130
            rest = await in_thread(said.rest, PATIENCE_S)
        ladder.referee.finish()
    assert re.match(
        rf"(1 match is|[2-9] matches are) being played on {re.escape(address)}, sealed: (its|their) "
        r"deals are \(or may be\) still to be dealt at another table \(the twin table of a ladder match",
        notice,
    ), notice
    assert "Waiting for a match open to spectators to start" in notice
    assert not any(NOTICE in line for line in rest), rest  # said once
