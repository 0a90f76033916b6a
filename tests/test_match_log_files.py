"""A match log file never exists without its first line, however the referee dies.

Before, the file was created when a match was seated and its first line written only
after the match had been recorded in the index (a database transaction away): a ladder
SIGKILLed in between left a log of 0 lines, which the index named and no reader accepts.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oddtrick_referee.play.matchlog import MatchLogWriter

KILL_AFTER = """
import os, signal, sys
from pathlib import Path
from oddtrick_referee.play.matchlog import MatchLogWriter

path, lines = Path(sys.argv[1]), int(sys.argv[2])
writer = MatchLogWriter(path)
for number in range(lines):
    writer.write({"type": "match_start" if number == 0 else "note", "n": number})
os.kill(os.getpid(), signal.SIGKILL)
"""


def killed_after(path: Path, lines: int) -> None:
    run = subprocess.run([sys.executable, "-c", KILL_AFTER, str(path), str(lines)], timeout=60, check=False)
    assert run.returncode == -signal.SIGKILL


@pytest.mark.parametrize("lines", [0, 1, 3])
def test_a_referee_killed_at_any_line_leaves_no_empty_log(tmp_path: Path, lines: int) -> None:
    path = tmp_path / "logs" / "m1.jsonl"
    killed_after(path, lines)
    if lines == 0:
        assert not path.exists()  # seated, killed before its first line: no log at all
    else:
        assert path.read_text().count("\n") == lines
        assert path.read_text().startswith('{"type":"match_start"')
    assert sorted(p.name for p in path.parent.iterdir()) == ([path.name] if lines else [])


def test_a_log_is_never_overwritten_even_by_a_writer_made_before_it_existed(tmp_path: Path) -> None:
    path = tmp_path / "m2.jsonl"
    first, second = MatchLogWriter(path), MatchLogWriter(path)
    first.write({"type": "match_start", "by": "first"})
    with pytest.raises(FileExistsError):
        second.write({"type": "match_start", "by": "second"})
    with pytest.raises(FileExistsError):
        MatchLogWriter(path)
    first.close()
    assert path.read_text() == '{"type":"match_start","by":"first"}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
