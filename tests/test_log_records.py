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
    _PLAIN_ACTION,
    ActionRecord,
    MalformedRecord,
    MatchEnd,
    MatchStart,
    SeatEvent,
    UnknownRecord,
    plain_action_record,
    read_records,
    record_from_dict,
    record_line,
    records_for_check,
    records_from_lines,
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


def test_a_plain_action_line_read_without_json_is_the_record_json_gives(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    writer = MatchLogWriter(path)
    writer.write_action(3, Seat.EAST, "2C", 5, 3)
    writer.write_action(3, Seat.SOUTH, "13NT", None)
    writer.write_action(12, Seat.WEST, "pass", 0, 0, 41_000)
    writer.write_action(1, Seat.NORTH, "QH", 7, clock_ms=0)
    writer.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    lines += [line.rstrip("\n") for log in LOGS for line in log.read_text(encoding="utf-8").splitlines()]
    lines += ['{"type":"action","hand":01,"seat":"N","action":"QH","think_ms":1}']  # JSON refuses it
    actions = [line for line in lines if line.startswith('{"type":"action"')]
    plain = [line for line in actions if _PLAIN_ACTION(line)]
    assert len(plain) > 100  # both ways are taken
    assert len(plain) < len(actions) - 1
    for line in actions[:-1]:
        assert list(records_from_lines([line])) == [record_from_dict(json.loads(line))]
    with pytest.raises(MalformedRecord, match="line 1: not JSON"):
        list(records_from_lines(actions[-1:]))
    # The check's fast path gives the same lines' fields, read back as the same records.
    every = tmp_path / "every.jsonl"
    every.write_text("".join(line + "\n" for line in actions[:-1]), encoding="utf-8")
    fast = [
        plain_action_record(item) if isinstance(item, tuple) else item for item in records_for_check(every)
    ]
    assert fast == list(read_records(every))
    assert sum(isinstance(item, tuple) for item in records_for_check(every)) == len(plain)


def test_a_line_that_is_not_a_record_is_named_by_its_number() -> None:
    start = (LOGS[0]).read_text(encoding="utf-8").splitlines()[0]
    with pytest.raises(MalformedRecord, match="line 2: not a JSON object"):
        list(records_from_lines([start, "[1, 2]"]))
    with pytest.raises(MalformedRecord, match="line 3: a hand_result line without its 'scores'"):
        list(
            records_from_lines(
                [
                    start,
                    '{"type":"x"}',
                    '{"type":"hand_result","hand":1,"outcome":"made","tricks":[7,6],"points":[1,0]}',
                ]
            )
        )
