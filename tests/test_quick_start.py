"""The README's quick start, exactly as written, on the machine a new user has.

A fresh copy of the checkout, a new virtual environment, the quick start's command line
read from the README and run by a shell, with ``bwrap`` (which ``scripts/test.sh``
installs for other tests, and a new user does not have) hidden from ``PATH``. As root,
the demo's bots must not need the sandbox meant for strangers' bots: they are the
package's own code.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def quick_start_command() -> str:
    """The README's one line that installs oddtrick and plays the demo."""
    lines = [line.strip() for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()]
    (command,) = [line for line in lines if line.endswith("-m oddtrick demo") and "pip install" in line]
    return command


def fresh_checkout(into: Path) -> Path:
    """The project's files as a clone has them (tracked, and new ones not ignored)."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if not source.exists():
            continue  # deleted in the work tree, not yet in the index
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target, follow_symlinks=False)
    return into


def path_without(program: str, into: Path) -> str:
    """A ``PATH`` with every command of this one but ``program``: links in one folder."""
    into.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not Path(folder).is_dir():
            continue
        for entry in Path(folder).iterdir():
            link = into / entry.name
            if entry.name != program and not link.exists() and os.access(entry, os.X_OK):
                link.symlink_to(entry)
    return str(into)


def test_the_quick_start_works_as_root_without_bubblewrap(tmp_path: Path) -> None:
    checkout = fresh_checkout(tmp_path / "oddtrick")
    hidden = path_without("bwrap", tmp_path / "bin")
    assert shutil.which("bwrap", path=hidden) is None
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    venv_bin = tmp_path / "venv" / "bin"
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "PYTHONHOME"}}
    # As after `. .venv/bin/activate` (the README's advice), on a PATH with no bubblewrap.
    env.update(PATH=f"{venv_bin}{os.pathsep}{hidden}", VIRTUAL_ENV=str(tmp_path / "venv"), HOME=str(tmp_path))
    run = subprocess.run(
        ["bash", "-c", quick_start_command()],
        cwd=checkout,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    said = run.stdout + run.stderr
    assert run.returncode == 0, said[-3000:]
    assert said.count("Standings (duplicate)") == 2, said[-3000:]
    assert "bubblewrap" not in said
    logs = list((checkout / "oddtrick-data" / "logs").glob("*.jsonl*"))
    assert len(logs) == 8, logs  # 4 tables of each game
