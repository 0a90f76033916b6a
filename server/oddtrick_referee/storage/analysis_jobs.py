"""An analysis job's payload, built from one match log: where both the workers and the
ladder (``ladder serve --analyse``) reach it, the ladder not importing the workers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oddtrick._log_records import log_text
from oddtrick._logfile import LogTooLarge
from oddtrick_referee._exceptions import BadJob
from oddtrick_referee.storage.json_checks import RecordInvalid, checked, optional
from oddtrick_referee.storage.work_queue import open_queue, parse_version

ANALYSIS = "analysis"
"""The kind of work that analyses one match log."""

ANALYSIS_FIRST_VERSION = "0.1.0"
"""The first oddtrick whose workers do analysis: the version such work requires by default."""

MAX_LOG_BYTES = 16 * 1024 * 1024
"""The largest match log a job may carry (a 100-deal match log is well under 1 MiB)."""


@dataclass(frozen=True)
class AnalysisPayload:
    """One match log to analyse, its text carried in the job (see :func:`analysis_payload`)."""

    log_name: str
    log_text: str
    par: bool = True
    """Whether the analysis computes par (double-dummy) scores too."""

    def to_dict(self) -> dict[str, Any]:
        return {"log_name": self.log_name, "log_text": self.log_text, "par": self.par}

    @classmethod
    def from_dict(cls, data: Any) -> AnalysisPayload:
        """The payload as submitted; :class:`BadJob` saying which field is missing or wrong."""
        what = "an analysis job's payload"
        try:
            return cls(
                optional(data, "log_name", str, what, "log.jsonl"),
                checked(data, "log_text", str, what),
                optional(data, "par", bool, what, True),
            )
        except RecordInvalid as error:
            raise BadJob(f"{error}: an analysis job carries log_name and log_text, both strings") from error


def analysis_payload(path: Path, par: bool) -> AnalysisPayload:
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
    return AnalysisPayload(path.name, text, par)


def submit_analyses(url: str, logs: list[Path], par: bool = True) -> list[int]:
    """One analysis job per log in the work queue at ``url`` (PostgreSQL), all or none; their ids.

    Blocking (it reads the logs and writes the database): the ladder calls it on a worker thread.
    """
    payloads = [analysis_payload(path, par).to_dict() for path in logs]
    queue = open_queue(url)
    try:
        return queue.submit(ANALYSIS, payloads, parse_version(ANALYSIS_FIRST_VERSION))
    finally:
        queue.close()
