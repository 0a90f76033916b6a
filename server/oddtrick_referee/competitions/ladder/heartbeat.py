"""A ladder referee's heartbeat, and the taking over of a silent peer's matches.

Several referees may share one ladder database (docs/ladder.md). Each beats a row of
its own every few seconds, stamped by the database's clock; a match left ``running`` by
a referee whose row has not moved for ``missed`` beats is recorded aborted (unrated) by
whichever live referee sees it first, so a referee killed for good (its data folder
gone, its host lost) does not leave its match running for ever.

A live referee takes over only after it has itself beaten without a gap for a whole
expiry window: a peer silent through that window was silent while the database was
answering, not merely cut off from it with everyone else (a database restart, a network
cut, this referee stopped) in which case every peer missed its beats at once.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time

import trio

from oddtrick_referee.storage.ladder_store import LadderStore

log = logging.getLogger("oddtrick.ladder")

TAKEN_OVER = "its referee stopped answering"
"""The cause recorded for a match aborted because its referee's heartbeat expired."""


class Heartbeat:
    """Beats for one referee and aborts the running matches of referees that stopped."""

    def __init__(self, store: LadderStore, referee_id: str, every_s: float, missed: int) -> None:
        self.store = store
        self.referee_id = referee_id
        self.every_s = every_s
        self.expiry_s = every_s * missed
        self.run_id = secrets.token_hex(6)
        """This process (the referee id stays the same across restarts on its data folder)."""
        self.taken_over: list[str] = []
        """Matches of silent referees this one recorded aborted."""
        self._last_beat: float | None = None
        self._in_touch_since: float | None = None

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Beat now (before this referee claims a match), then every ``every_s`` until cancelled."""
        await self.beat()
        task_status.started()
        while True:
            await trio.sleep(self.every_s)
            await self.beat()

    async def beat(self) -> None:
        """One beat and, once in touch for a whole expiry window, one look for silent peers.
        A database that does not answer is said in the log; the ladder plays on."""
        try:
            await trio.to_thread.run_sync(
                self.store.beat, self.referee_id, self.run_id, socket.gethostname(), os.getpid()
            )
        except Exception as error:  # a database down: the next beat tries again
            self._in_touch_since = None
            log.warning("ladder heartbeat not recorded: %s", " ".join(str(error).split()) or repr(error))
            return
        now = trio.current_time()
        if self._in_touch_since is None or self._last_beat is None or now - self._last_beat > self.expiry_s:
            self._in_touch_since = now  # a gap (this process stopped, or the database gone)
        self._last_beat = now
        if now - self._in_touch_since >= self.expiry_s:
            await self._take_over()

    async def _take_over(self) -> None:
        try:
            aborted = await trio.to_thread.run_sync(
                self.store.abort_abandoned,
                self.referee_id,
                int(self.expiry_s * 1000),
                TAKEN_OVER,
                int(time.time() * 1000),
            )
        except Exception as error:  # a database down: the next beat tries again
            log.warning("ladder heartbeat: silent referees not checked: %s", " ".join(str(error).split()))
            return
        for match_id, referee in aborted:
            self.taken_over.append(match_id)
            log.warning(
                "ladder match %s aborted: %s (%s, silent for over %.0f s); not rated",
                match_id,
                TAKEN_OVER,
                referee,
                self.expiry_s,
            )
