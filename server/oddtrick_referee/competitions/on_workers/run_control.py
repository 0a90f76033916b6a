"""``oddtrick tournament retry`` and ``oddtrick tournament cancel``: an operator's hand on a run.

A set fails for good when nobody could play it (a bot that dies at start on every
worker, its attempts used up). Once the cause is put right (the missing file
installed), ``retry`` brings the run's failed sets back to waiting with their
attempts at zero, and the workers play them; the run's following command, run
again, follows it to its standings. ``cancel`` stops a run that is no longer
wanted: its waiting and leased sets are cancelled, and a worker playing one finds
at its next beat that its lease no longer holds, so its result is refused.
Both print how many sets they changed, and change nothing for a run that is not there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from oddtrick_referee._exceptions import DatabaseError
from oddtrick_referee.storage.run_store import RunStore
from oddtrick_referee.storage.work_queue import WorkQueue, open_queue


def retry(url: str, name: str) -> int:
    """Bring the run's failed sets back to waiting, attempts reset (their last error kept)."""

    def act(queue: WorkQueue) -> str:
        count = queue.retry_run(name)
        if not count:
            return f"run {name}: no failed sets to retry"
        return (
            f"run {name}: {count} failed set(s) back to waiting, attempts reset (the last error is shown "
            f"by `oddtrick tournament status` until they are played); follow it with the command that "
            "submitted it"
        )

    return _on_run("retry", url, name, act)


def cancel(url: str, name: str) -> int:
    """Cancel the run's waiting and leased sets; the ones done stay done."""

    def act(queue: WorkQueue) -> str:
        count = queue.cancel_run(name)
        return f"run {name}: {count} waiting or leased set(s) cancelled; the sets done are kept"

    return _on_run("cancel", url, name, act)


def _on_run(verb: str, url: str, name: str, act: Callable[[WorkQueue], str]) -> int:
    """Open the database, find the run (or say which there are), act on it, print its line."""
    who = f"oddtrick tournament {verb}"
    try:
        store = RunStore(open_queue(url))
    except DatabaseError as error:
        print(f"{who}: {error}", file=sys.stderr)
        return 1
    try:
        if store.get(name) is None:
            known = ", ".join(store.names()) or "none"
            print(
                f"{who}: no run {name!r} here (runs: {known}); nothing changed. "
                f"`oddtrick tournament status --database {url}` lists them",
                file=sys.stderr,
            )
            return 2
        print(act(store.queue))
    except DatabaseError as error:
        print(f"{who}: {error}", file=sys.stderr)
        return 1
    else:
        return 0
    finally:
        store.queue.close()
