"""The kinds of work a worker can do, each a function from a job's payload to its result.

A kind's function gets the payload as submitted and returns plain JSON data;
it raises :class:`BadJob` when the payload itself is wrong (retrying it on
another worker cannot help, so the job is marked failed).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oddtrick import __version__
from oddtrick._logfile import open_log
from oddtrick_referee._exceptions import BadJob

MAX_LOG_BYTES = 16 * 1024 * 1024
"""The largest match log a job may carry (a 100-deal match log is well under 1 MiB)."""

ANALYSIS = "analysis"


def analysis_payload(path: Path, par: bool) -> dict[str, Any]:
    """The payload of one match log's analysis: the log's text travels in it.

    Workers then need nothing but the database: no shared folder, no path that
    means something else on another machine, and a log moved or compressed
    after submission is analysed as it was submitted.
    """
    if path.stat().st_size > MAX_LOG_BYTES:
        raise BadJob(f"{path} is larger than {MAX_LOG_BYTES // (1024 * 1024)} MiB, too large to submit")
    with open_log(path) as file:
        text = file.read()
    if len(text.encode("utf-8")) > MAX_LOG_BYTES:
        raise BadJob(
            f"{path} holds more than {MAX_LOG_BYTES // (1024 * 1024)} MiB of text, too large to submit"
        )
    return {"log_name": path.name, "log_text": text, "par": par}


def describe(kind: str, payload: dict[str, Any]) -> str:
    """A few words for a progress line: what the job is about."""
    if kind == ANALYSIS:
        return f"analysis of {payload.get('log_name', '?')}"
    return kind


def analyse(payload: dict[str, Any]) -> Any:
    """What ``oddtrick analyze --json`` prints for the log carried in the payload."""
    from oddtrick.analysis import AnalysisError, analyze_logs

    text, name = payload.get("log_text"), payload.get("log_name", "log.jsonl")
    if not isinstance(text, str) or not isinstance(name, str):
        raise BadJob("an analysis job carries log_name and log_text, both strings")
    with tempfile.TemporaryDirectory(prefix="oddtrick-work-") as folder:
        path = Path(folder) / Path(name).name
        path.write_text(text, encoding="utf-8")
        try:
            result = analyze_logs([path], par=bool(payload.get("par", True)))
        except (AnalysisError, ValueError, KeyError) as error:
            raise BadJob(f"{name}: {error}") from error
    for log in result.get("logs", []):
        log["path"] = name  # the name it was submitted under, not the worker's temporary copy
    return result


KINDS: dict[str, Callable[[dict[str, Any]], Any]] = {ANALYSIS: analyse}
"""Every kind this worker does, by name."""

FIRST_VERSION: dict[str, str] = {ANALYSIS: "0.1.0"}
"""The first oddtrick whose workers do each kind: the version such work requires by default."""

WORKER_VERSION = __version__
