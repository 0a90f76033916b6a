"""The index names each log relative to its data folder, so the folder can be read from any
directory: a tournament played in one directory is replayed by `oddtrick web` run from another.

An index written by an older referee names its logs relative to the directory that referee
ran in; those rows are read by looking in the data folder first.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from process_support import Lines, child
from web_support import get

from oddtrick_referee._exceptions import ReplayError
from oddtrick_referee.replay.sources import records_from_data_dir
from oddtrick_referee.storage.match_index import MatchStore

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GUARD_S = 300.0


def _tournament_in(folder: Path) -> None:
    """A short tournament played with ``folder`` as the working directory and ``data`` as
    its data folder, named relatively, as a person types it."""
    folder.mkdir()
    played = subprocess.run(
        [sys.executable, "-m", "oddtrick", "tournament", "--game", "classic", "--deals", "1",
         "--seed", "cwd", "--data-dir", "data", "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        cwd=folder, capture_output=True, text=True, timeout=GUARD_S,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr


def _indexed(data: Path) -> dict[str, str]:
    with sqlite3.connect(data / "oddtrick.sqlite3") as db:
        return dict(db.execute("SELECT match_id, log_path FROM matches").fetchall())


def test_web_run_from_another_directory_replays_every_match(tmp_path: Path) -> None:
    _tournament_in(tmp_path / "played-here")
    data = tmp_path / "played-here" / "data"
    stored = _indexed(data)
    assert len(stored) >= 2
    assert all(path == f"logs/{match_id}.jsonl" for match_id, path in stored.items()), stored

    elsewhere = tmp_path / "served-from-here"
    elsewhere.mkdir()
    command = [sys.executable, "-m", "oddtrick", "web", "--port", "0", "--data-dir", str(data)]
    with child(command, cwd=elsewhere, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as web:
        assert web.stdout is not None
        (line,) = Lines(web.stdout).until("web page on ", timeout=GUARD_S)[-1:]
        url = line.split("web page on ", 1)[1].split()[0].rstrip("/")
        pages = {
            page: get(url + page)[0]
            for match_id in stored
            for page in (
                f"/matches/{match_id}",
                f"/matches/{match_id}/replay.json",
                f"/matches/{match_id}/log.jsonl",
            )
        }
    assert set(pages.values()) == {200}, pages


def test_an_older_index_naming_logs_from_the_referees_directory_is_read_from_the_data_folder(
    tmp_path: Path, monkeypatch
) -> None:
    """Rows written before logs were named relative to the data folder: ``data/logs/ID.jsonl``
    (from the directory the referee ran in) is looked for in the data folder's own logs."""
    _tournament_in(tmp_path / "played-here")
    data = tmp_path / "played-here" / "data"
    with sqlite3.connect(data / "oddtrick.sqlite3") as db:
        db.execute("UPDATE matches SET log_path = 'data/' || log_path")
    (missing, *played) = sorted(_indexed(data))
    (data / "logs" / f"{missing}.jsonl").unlink()
    monkeypatch.chdir(tmp_path)

    assert all(records_from_data_dir(data, match_id) for match_id in played)
    store = MatchStore(data / "oddtrick.sqlite3")
    row = store.get(played[0])
    assert row is not None
    assert Path(row["log_path"]) == data / "logs" / f"{played[0]}.jsonl"
    with pytest.raises(ReplayError) as refused:
        records_from_data_dir(data, missing)
    assert str(refused.value) == (
        f"match {missing}'s log is not in the data folder: no file {data / 'logs' / missing}.jsonl "
        "(moved or deleted?)"
    )
