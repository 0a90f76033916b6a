"""An analysis job's payload, built from one match log: where both the workers and the
ladder (``ladder serve --analyse``) reach it, the ladder not importing the workers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oddtrick._log_records import log_text
from oddtrick._logfile import LogTooLarge
from oddtrick_referee._exceptions import BadJob
from oddtrick_referee.storage.work_queue import open_queue, parse_version

ANALYSIS = "analysis"
"""The kind of work that analyses one match log."""

ANALYSIS_FIRST_VERSION = "0.1.0"
"""The first oddtrick whose workers do analysis: the version such work requires by default."""

MAX_LOG_BYTES = 16 * 1024 * 1024
"""The largest match log a job may carry (a 100-deal match log is well under 1 MiB)."""


def analysis_payload(path: Path, par: bool) -> dict[str, Any]:
    """The payload of one match log's analysis: the log's text travels in it.

    Workers then need nothing but the database: no shared folder, no path that
    means something else on another machine, and a log moved or compressed
    after submission is analysed as it was submitted.
    """
    if path.stat().st_size > MAX_LOG_BYTES:
        raise BadJob(f"{path} is larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB, too large to submit")
    try:
        text = log_text(path, MAX_LOG_BYTES)  # stops reading past the limit (a gzip bomb)
    except LogTooLarge:
        raise BadJob(
            f"{path} holds more than {MAX_LOG_BYTES // (1024 * 1024)} MiB of text, too large to submit"
        ) from None
    return {"log_name": path.name, "log_text": text, "par": par}


def submit_analyses(url: str, logs: list[Path], par: bool = True) -> list[int]:
    """One analysis job per log in the work queue at ``url`` (PostgreSQL), all or none; their ids.

    Blocking (it reads the logs and writes the database): the ladder calls it on a worker thread.
    """
    payloads = [analysis_payload(path, par) for path in logs]
    queue = open_queue(url)
    try:
        return queue.submit(ANALYSIS, payloads, parse_version(ANALYSIS_FIRST_VERSION))
    finally:
        queue.close()
