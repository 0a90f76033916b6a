"""The match log's typed records write exactly the lines the log has always had.

Every line of the logs an earlier referee wrote (tests/data/match_logs), read as a typed
record and written again, is the same text byte for byte: the format did not move when
the records became values. Fields a record does not know are kept, unknown record types
are kept whole, and a log is read through the one door that opens plain and gzip logs.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from oddtrick._log_records import (
    ActionRecord,
    MatchEnd,
    MatchStart,
    SeatEvent,
    UnknownRecord,
    read_records,
    record_from_dict,
    record_line,
)
from oddtrick.rules import Seat
from oddtrick_referee.play.matchlog import MatchLogWriter

LOGS = sorted((Path(__file__).parent / "data" / "match_logs").glob("*.jsonl"))


@pytest.mark.parametrize("log", LOGS, ids=[log.stem for log in LOGS])
def test_every_line_of_an_old_log_is_written_again_as_it_was(log: Path) -> None:
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [record_from_dict(json.loads(line)) for line in lines]
    assert not [r for r in records if isinstance(r, UnknownRecord)]
    assert [record_line(record) for record in records] == lines


def test_the_kinds_of_record_read_from_old_logs() -> None:
    records = [record for log in LOGS for record in read_records(log)]
    assert isinstance(records[0], MatchStart)
    assert isinstance(records[-1], MatchEnd)
    kinds = {type(record).__name__ for record in records}
    assert {"MatchStart", "HandStart", "ActionRecord", "SeatEvent", "HandResultRecord", "MatchEnd"} <= kinds
    faults = {record.fault for record in records if isinstance(record, ActionRecord)}
    assert {None, "timeout", "forfeited"} <= faults
    assert {record.kind for record in records if isinstance(record, SeatEvent)} == {
        "disconnect",
        "reconnect",
        "forfeit",
    }


def test_unknown_fields_and_records_are_kept() -> None:
    start = {
        "type": "match_start",
        "format": "oddtrick-match-log/1",
        "match_id": "m",
        "table_id": "t",
        "started_at_ms": 1,
        "config": {"game": "classic"},
        "rules": {"deadline_ms": 1000, "grace_ms": 0},
        "players": {},
        "seed_commitment": "c",
        "later_field": [1, 2],
    }
    record = record_from_dict(start)
    assert isinstance(record, MatchStart)
    assert record.extra == {"later_field": [1, 2]}
    assert record.to_dict() == start
    note = {"type": "note_from_a_later_version", "text": "x"}
    assert record_from_dict(note).to_dict() == note


def test_the_writer_writes_typed_records_and_the_reader_reads_them_plain_or_compressed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "log.jsonl"
    writer = MatchLogWriter(path)
    writer.write(SeatEvent("disconnect", 1, "N"))
    writer.write(ActionRecord(1, "N", "QH", None, fault="timeout"))
    writer.write_action(1, Seat.EAST, "2C", 5, 3)  # the fast path: formatted as text
    writer.close()
    expected = [SeatEvent("disconnect", 1, "N"), ActionRecord(1, "N", "QH", None, fault="timeout")]
    expected.append(ActionRecord(1, "E", "2C", 5, 3))
    assert list(read_records(path)) == expected
    packed = tmp_path / "packed.jsonl"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert list(read_records(packed)) == expected
