"""Where a replay's log comes from: a file, the data folder's index, or a referee.

Every way in applies the Arena's rule for who may see a log: a match still in
progress, or one play of a duplicate pair whose other play is not over
(sealed), is not replayed. A log is only ever found through the index, never
by building a path from a match id, and only inside the data folder's logs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oddtrick._address import with_default_port
from oddtrick._codec_arena import match_log_request
from oddtrick._log_records import MalformedRecord, Record, read_records, records_from_lines
from oddtrick.v1 import arena_pb2_grpc
from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.storage.match_index import MatchStore, log_file


def log_visibility(row: dict[str, Any]) -> str | None:
    """Why a spectator may not see this match's log (``None``: it may).

    The rule GetMatchLog applies: a sealed play's log shows deals still to be
    played at the other table, and so may an aborted or running one's from a
    referee that did not record whether it was sealed.
    """
    details = row.get("details")
    if isinstance(details, str):
        details = json.loads(details) if details else None
    status = row["status"]
    withheld = status == "sealed" or (
        status in ("running", "aborted") and (not isinstance(details, dict) or details.get("sealed", True))
    )
    if withheld:
        return (
            f"match {row['match_id']} is (or may be) one play of a duplicate pair whose deals are still "
            "to be played; its log is shown once the pair is over"
        )
    if status == "running":
        return f"match {row['match_id']} is still in progress; its log is shown once it ends"
    if isinstance(details, dict) and details.get("log_deleted"):
        return (
            f"match {row['match_id']}'s log was deleted by the ladder's retention policy "
            "(--keep-house-logs: one entrant played it against house bots); its result is still recorded"
        )
    return None


def safe_log_path(data_dir: Path, stored: str) -> Path | None:
    """The indexed log's file (:func:`log_file`: relative to the data folder, whatever the
    directory it is read from) if it lies inside ``data_dir/logs`` (``None`` otherwise)."""
    root = (data_dir / "logs").resolve()
    path = log_file(data_dir, stored)
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return None
    if not resolved.is_relative_to(root) or resolved.suffix != ".jsonl":
        return None
    return resolved


def records_from_file(path: Path) -> list[Record]:
    """A log file's records (the one reader's); what cannot be read is a :class:`ReplayError`."""
    try:
        return list(read_records(path))
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
    except MalformedRecord as error:
        raise ReplayError(f"{path}, {error}") from None


def file_withheld(path: Path, match_id: str) -> str | None:
    """Why a log file given by its path must not be shown yet (``None``: it may), when the
    file lies in a referee data folder's ``logs/`` whose index lists the match: the rule
    :func:`log_visibility` applies, so a sealed play of a duplicate pair stays unpublished
    whichever way it is named. A file outside a data folder is its holder's own."""
    try:
        folder = path.resolve().parent
    except (OSError, RuntimeError):
        return None
    index = folder.parent / "oddtrick.sqlite3"
    if folder.name != "logs" or not index.is_file():
        return None
    row = MatchStore(index).get(match_id)
    return None if row is None else log_visibility(row)


def records_from_data_dir(data_dir: Path, match_id: str) -> list[Record]:
    """A finished, public match's log records, found through the data folder's index."""

    index = data_dir / "oddtrick.sqlite3"
    if not index.exists():
        raise ReplayError(f"no referee data in {data_dir} (no oddtrick.sqlite3): give the right --data-dir")
    store = MatchStore(index)
    row = store.get(match_id)
    if row is None:
        tables = [f"{match_id}-t{number}" for number in (1, 2) if store.get(f"{match_id}-t{number}")]
        if tables:  # a ladder match: its id names the pair of tables
            raise ReplayError(
                f"{match_id} is a ladder match played at two tables: give one of them, {' or '.join(tables)}"
            )
        raise ReplayError(f"no match {match_id!r} in {data_dir} (oddtrick web lists them)")
    problem = log_visibility(row)
    if problem:
        raise ReplayError(problem)
    path = safe_log_path(data_dir, row["log_path"])
    if path is None:
        raise ReplayError(f"match {match_id}'s log is not inside {data_dir / 'logs'}; refusing to read it")
    if not path.exists():
        raise ReplayError(missing_log(match_id, data_dir / "logs" / path.name))
    return records_from_file(path)


def missing_log(match_id: str, where: Path) -> str:
    """What to say of a match the index lists whose log is not where it belongs (``where``)."""
    return f"match {match_id}'s log is not in the data folder: no file {where} (moved or deleted?)"


def records_from_server(server: str, match_id: str) -> list[Record]:
    """A finished match's log from a referee's Arena service (GetMatchLog, every page)."""
    import grpc

    lines: list[str] = []
    try:
        server = with_default_port(server)
    except ValueError as error:
        raise ReplayError(str(error)) from None
    with grpc.insecure_channel(server) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        token = ""
        try:
            while True:
                response = arena.GetMatchLog(match_log_request(match_id, token), timeout=30)
                lines.extend(response.lines)
                token = response.next_page_token
                if not token:
                    break
        except grpc.RpcError as error:
            if error.code() is grpc.StatusCode.UNAVAILABLE:
                raise ReplayError(f"no referee answers at {server} (is oddtrick serve running?)") from None
            raise ReplayError(f"{server}: {error.details()}") from None
    try:
        return list(records_from_lines(lines))
    except MalformedRecord as error:
        raise ReplayError(f"match {match_id}, {error}") from None
