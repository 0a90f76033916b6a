"""Finished match logs compressed in place, read by every reader, never lost.

A busy ladder writes gigabytes of logs a day; the referee gzips each finished
log under its own name. These tests play real matches through a referee on a
socket with SDK bots, then read the compressed logs back through every reader,
and kill a real process mid-compression.
"""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from oddtrick._log_records import log_text, read_records
from oddtrick._logfile import GZIP_MAGIC, is_compressed, open_log
from oddtrick.analysis import analyze_logs
from oddtrick_referee import RefereeSettings, running_referee
from oddtrick_referee.arena import _log_lines
from oddtrick_referee.competitions.scoring.scored import scored_table
from oddtrick_referee.play.matchlog import check_log, compress_log, read_log, recover_compression
from oddtrick_referee.replay.model import replay_records
from oddtrick_referee.replay.pbn import match_to_pbn
from oddtrick_referee.replay.sources import records_from_data_dir
from oddtrick_referee.storage.log_retention import prune_house_logs
from oddtrick_referee.storage.match_index import MatchStore
from oddtrick_referee.web.data import WebData
from tests.replay_support import CONFIGS, play_logged

CLI = [sys.executable, "-m", "oddtrick._cli"]


def play(data_dir: Path, compress: bool, names: tuple[str, ...] = ("m-a",)) -> list[Path]:
    async def main() -> list[Path]:
        paths = []
        async with running_referee(
            RefereeSettings(port=0, data_dir=data_dir, compress_logs=compress)
        ) as referee:
            for name in names:
                logged = await play_logged(
                    referee, CONFIGS["classic-turned"], seed=f"gz-{name}", match_id=name
                )
                paths.append(logged.log_path)
            referee.finish()
        return paths

    return trio.run(main)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same match (same seed, same bots) logged plain and compressed."""
    plain = play(tmp_path_factory.mktemp("plain"), compress=False)[0]
    packed = play(tmp_path_factory.mktemp("packed"), compress=True)[0]
    return plain, packed


def test_a_finished_log_is_gzipped_under_its_own_name_and_smaller(both: tuple[Path, Path]) -> None:
    plain, packed = both
    assert packed.name == plain.name
    assert packed.read_bytes()[:2] == GZIP_MAGIC
    assert not is_compressed(plain)
    assert is_compressed(packed)
    assert packed.stat().st_size * 4 < plain.stat().st_size
    assert [p.name for p in packed.parent.iterdir()] == [packed.name]  # no temporary left


def _same_records(plain: Path, packed: Path) -> None:
    """Everything but times and the match's id-free details is the same match."""
    a, b = list(read_log(plain)), list(read_log(packed))
    assert [r["type"] for r in a] == [r["type"] for r in b]
    assert [r.get("action") for r in a] == [r.get("action") for r in b]


def test_every_reader_reads_a_compressed_log(both: tuple[Path, Path]) -> None:
    plain, packed = both
    _same_records(plain, packed)
    with open_log(packed) as file:
        assert file.readline().startswith('{"type":"match_start"')
    assert check_log(packed).ok  # oddtrick check
    replayed = replay_records(read_records(packed))  # oddtrick replay, benchmarks/replay.py
    assert len(replayed.hands) == 3
    assert match_to_pbn(replayed) == match_to_pbn(replay_records(read_records(plain)))  # oddtrick export
    # A tournament's recovery and the scoring of a table read it: the same figures as the plain one.
    scored = scored_table(log_text(packed))
    assert scored.deals == scored_table(log_text(plain)).deals  # the same deals, played alike
    assert scored.deals
    assert _log_lines(packed)[0].startswith('{"type":"match_start"')  # GetMatchLog, so oddtrick watch
    report, same = analyze_logs([packed]), analyze_logs([plain])  # oddtrick analyze
    assert report["hands"] == 3
    # The same play, read from either file (times are each play's own).
    assert {k: v for k, v in report.items() if k not in ("logs", "time")} == {
        k: v for k, v in same.items() if k not in ("logs", "time")
    }
    assert report["time"].keys() == same["time"].keys()


def test_the_web_page_and_the_data_folder_read_a_compressed_log(both: tuple[Path, Path]) -> None:
    _, packed = both
    data_dir = packed.parent.parent
    web = WebData(data_dir)
    text = web.log_text("m-a")
    assert text == gzip.decompress(packed.read_bytes()).decode()
    assert len(web.replay("m-a").hands) == 3
    assert records_from_data_dir(data_dir, "m-a")[-1].type == "match_end"


def test_the_commands_read_a_compressed_log(both: tuple[Path, Path]) -> None:
    _, packed = both
    check = subprocess.run([*CLI, "check", str(packed)], capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stderr
    assert "OK:" in check.stdout
    export = subprocess.run([*CLI, "export", str(packed)], capture_output=True, text=True, timeout=120)
    assert export.returncode == 0, export.stderr
    assert '[Deal "' in export.stdout


KILLED_MID_COMPRESSION = """
import os, signal, sys
from pathlib import Path
from oddtrick_referee.play import matchlog

def killed(source, destination):
    os.kill(os.getpid(), signal.SIGKILL)  # the copy is written and fsynced, not yet renamed

matchlog.os.replace = killed
matchlog.compress_log(Path(sys.argv[1]))
"""


def test_a_crash_mid_compression_leaves_the_plain_log_and_a_start_recovers(
    both: tuple[Path, Path], tmp_path: Path
) -> None:
    plain, _ = both
    logs = tmp_path / "data" / "logs"
    logs.mkdir(parents=True)
    log = logs / plain.name
    log.write_bytes(plain.read_bytes())
    run = subprocess.run([sys.executable, "-c", KILLED_MID_COMPRESSION, str(log)], timeout=60, check=False)
    assert run.returncode == -signal.SIGKILL
    leftovers = [p.name for p in logs.iterdir() if p != log]
    assert len(leftovers) == 1
    assert leftovers[0].endswith(".gz-new")
    assert log.read_bytes() == plain.read_bytes()
    assert check_log(log).ok

    # A referee starting on the folder removes the half-made copy and compresses the log.
    async def start() -> None:
        async with running_referee(RefereeSettings(port=0, data_dir=tmp_path / "data", compress_logs=True)):
            pass

    trio.run(start)
    assert [p.name for p in logs.iterdir()] == [log.name]
    assert is_compressed(log)
    assert check_log(log).ok


def test_recovery_leaves_unfinished_logs_plain_and_compressing_twice_changes_nothing(
    both: tuple[Path, Path], tmp_path: Path
) -> None:
    plain, packed = both
    torn = tmp_path / "torn.jsonl"
    torn.write_text(plain.read_text().rsplit("\n", 2)[0] + "\n")  # no match_end: still running
    done = tmp_path / "done.jsonl"
    done.write_bytes(packed.read_bytes())
    assert recover_compression(tmp_path, compress_finished=True) == (0, 0)
    assert not is_compressed(torn)
    assert compress_log(done) == 0
    assert done.read_bytes() == packed.read_bytes()


def test_the_retention_policy_deletes_old_logs_of_one_entrant_against_the_house_and_keeps_results(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    first, second = play(data_dir, compress=True, names=("m-old", "m-second"))
    index = MatchStore(data_dir / "oddtrick.sqlite3")
    future = int(time.time() * 1000) + 60_000
    # Not yet old enough: nothing goes.
    assert prune_house_logs(index, {"bob"}, cutoff_ms=0) == (0, 0)
    # Two entrants (alice and bob, neither a house bot) played them: they stay.
    assert prune_house_logs(index, {"carol"}, cutoff_ms=future) == (0, 0)
    size = first.stat().st_size + second.stat().st_size
    # bob a house bot: alice played the house, alone.
    assert prune_house_logs(index, {"bob"}, cutoff_ms=future) == (2, size)
    assert not first.exists()
    assert not second.exists()
    row = index.get("m-old")
    assert row is not None
    assert len(json.loads(row["result"])["totals"]) == 2
    assert prune_house_logs(index, {"bob"}, cutoff_ms=future) == (0, 0)  # done once
    with pytest.raises(ValueError, match="retention policy"):
        records_from_data_dir(data_dir, "m-old")


def test_ladder_serve_refuses_a_negative_retention(tmp_path: Path) -> None:
    run = subprocess.run(
        [*CLI, "ladder", "serve", "--data-dir", str(tmp_path), "--keep-house-logs", "-1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode != 0
    assert "--keep-house-logs" in run.stderr
    assert not (tmp_path / "oddtrick.sqlite3").exists()
