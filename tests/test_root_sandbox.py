"""The sandbox for local bots that must run as root, attacked as a cheat would.

A bot runs as root when the unprivileged user cannot run it: here, because it lives in
pytest's temporary folder, which is closed to other users (mode 0700). Each attack
below worked against the old sandbox (a mount and PID namespace in which root kept
CAP_SYS_ADMIN): two ``umount``s showed the master seed and the other bots' tokens.
"""

from __future__ import annotations

import dataclasses
import io
import os
import shutil
import sys
from pathlib import Path

import pytest
import trio

from oddtrick.rules import GameConfig
from oddtrick_referee._exceptions import EntrantExited
from oddtrick_referee.competitions.entries import sandbox
from oddtrick_referee.competitions.tournaments.tournament import (
    TournamentSettings,
    parse_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GUARD_S = 90.0
"""Guards against a hang only."""

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="bots run as root only when the referee is root")


@pytest.fixture(autouse=True)
def _needs_the_sandbox() -> None:
    problem = sandbox.problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the root sandbox is missing on CI: {problem}")
        pytest.skip(problem)


def plan(*entries: str, seed: str) -> TournamentSettings:
    return TournamentSettings(
        entries=tuple(parse_entry(text) for text in entries),
        config=GameConfig.classic(),
        deals=2,
        set_size=1,
        tables=1,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed=seed,
        duplicate=False,
    )


PROBE = r"""#!/bin/sh
# Instead of playing, try every way out of the sandbox and say what worked.
# What it needs to know comes as arguments: its environment holds nothing of the referee's.
data="${1#data=}"
referee="$2"
PROBE_PYTHON="$3"
echo "uid $(id -u)"
grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status
leak() { # leak WHAT FILE: say so if FILE could be read
    if cat "$2" >/dev/null 2>&1; then
        echo "LEAK $1: $(tr -c '[:print:]' '\n' < "$2" | grep -a -m3 -E 'seed|TOKEN')"
    else
        echo "held $1"
    fi
}
# The issue's shortest form: take the cover off the data folder and read the database.
umount "$data" 2>/dev/null && echo "ESCAPED umount $data"
umount -l "$data" 2>/dev/null && echo "ESCAPED umount -l $data"
leak database "$data/oddtrick.sqlite3"
mount -o remount,mode=755 "$data" 2>/dev/null && echo "ESCAPED remount $data"
mount -o remount,rw / 2>/dev/null && echo "ESCAPED remount /"
mount -t tmpfs x /mnt 2>/dev/null && echo "ESCAPED mount tmpfs"
ls "$data" 2>/dev/null | grep -q . && echo "LEAK listing $data"
# Another user namespace would bring capabilities back inside it.
unshare --user --map-root-user --mount sh -c "umount '$data' && cat '$data/oddtrick.sqlite3'" 2>/dev/null \
    && echo "ESCAPED unshare"
# The host's processes: take /proc away to find the host's under it, then look.
umount /proc 2>/dev/null && echo "ESCAPED umount /proc"
umount -l /proc 2>/dev/null && echo "ESCAPED umount -l /proc"
echo "processes $(ls -d /proc/[0-9]* | wc -l)"
for proc in /proc/[0-9]*; do
    tr '\0' '\n' < "$proc/environ" 2>/dev/null | grep -a '^ODDTRICK_TOKEN=' | grep -v "=$ODDTRICK_TOKEN\$" \
        | sed "s|^|LEAK $proc/environ: |"
    tr '\0' ' ' < "$proc/cmdline" 2>/dev/null | grep -a -q -e ' -m pytest' -e 'launcher.py' \
        && echo "LEAK saw $proc"
    grep '^CapEff:' "$proc/status" | grep -v -q '0000000000000000$' && echo "LEAK $proc has capabilities"
done
mount -t proc proc /proc 2>/dev/null && echo "ESCAPED mount proc"
leak "the referee's environment" "/proc/$referee/environ"
ls -l "/proc/$referee/fd" 2>/dev/null | grep -q . && echo "LEAK the referee's open files"
kill -0 "$referee" 2>/dev/null && echo "ESCAPED signal to the referee"
# Its own descriptors: none may lead to the data folder or to the referee's sockets.
for fd in /proc/$$/fd/*; do echo "fd $(basename "$fd") -> $(readlink "$fd")"; done
# ptrace the referee (the sandbox's own processes hold nothing: see the capabilities above).
"$PROBE_PYTHON" -I -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
if libc.ptrace(16, pid, None, None) == 0:  # PTRACE_ATTACH
    print("ESCAPED ptrace", pid)
else:
    print("held ptrace", pid, os.strerror(ctypes.get_errno()))
' "$referee"
# The database by any other name, and root's files.
find / -path /proc -prune -o -name 'oddtrick.sqlite3' -print 2>/dev/null | while read -r found; do
    leak "found $found" "$found"
done
leak shadow /etc/shadow
ls -A /root 2>/dev/null | grep -v -x -e .pyenv -e .local | sed 's/^/LEAK \/root has /'
touch "$(dirname "$0")/written" 2>/dev/null && echo "ESCAPED wrote beside the probe"
touch /written 2>/dev/null && echo "ESCAPED wrote in /"
echo "probe done"
"""


async def test_root_cannot_leave_the_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    probe = tmp_path / "bots" / "probe.sh"  # 0700 above it: the bot runs as root, sandboxed
    probe.parent.mkdir()
    data = probe.parent / "data"  # in a folder the bot sees: only the cover hides it
    probe.write_text(PROBE)
    probe.chmod(0o755)
    monkeypatch.chdir(probe.parent)  # a cmd: entry runs where the tournament was started
    referee = os.getpid()  # the referee runs in this process
    settings = plan(
        f"good={RANDOM_BOT}",
        f"prober=cmd:{probe} data={data} {referee} {sys.executable}",
        seed="the-master-seed-44",
    )
    warnings = io.StringIO()
    with trio.fail_after(GUARD_S), pytest.raises(EntrantExited):
        await run_tournament(settings, data, progress_stream=warnings)
    assert "prober run as root in a sandbox" in warnings.getvalue()
    report = (data / "bot-output" / "prober.log").read_text()
    assert "probe done" in report, report
    assert "uid 0" in report  # root indeed: only the sandbox holds it
    assert "CapEff:\t0000000000000000" in report
    assert "CapBnd:\t0000000000000000" in report
    assert "NoNewPrivs:\t1" in report
    assert "ESCAPED" not in report, report
    assert "LEAK" not in report, report
    assert "held database" in report
    assert f"held ptrace {os.getpid()} No such process" in report
    assert "the-master-seed-44" not in report
    for entry in settings.entries:
        assert entry.token not in report.replace(f"={settings.entries[1].token}", "")
    descriptors = [line for line in report.splitlines() if line.startswith("fd ")]
    assert descriptors
    assert not [line for line in descriptors if str(data) in line or "socket:" in line], descriptors
    assert not (probe.parent / "written").exists()


async def test_an_honest_table_in_the_sandbox_finishes_without_faults(tmp_path: Path) -> None:
    bots = tmp_path / "bots"  # closed to other users, as pytest's folders are: root, sandboxed
    bots.mkdir()
    mine = bots / "random_bot.py"
    shutil.copy(RANDOM_BOT, mine)
    settings = dataclasses.replace(plan(f"one={mine}", f"two={mine}", seed="honest"), duplicate=True)
    warnings = io.StringIO()
    with trio.fail_after(GUARD_S):
        standings = await run_tournament(settings, tmp_path / "data", progress_stream=warnings)
    assert "one, two run as root in a sandbox" in warnings.getvalue()
    assert {row.entry: row.deals for row in standings.rows} == {"one": 2, "two": 2}
    for row in standings.rows:
        assert dataclasses.asdict(row.faults) == dict.fromkeys(dataclasses.asdict(row.faults), 0)


async def test_a_cmd_entry_naming_a_symlinked_bot_file_plays_in_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot file is named by a link in another folder than the one it runs in: the
    sandbox shows it at the name the command line gives, not only where the link leads."""
    real = tmp_path / "real"
    real.mkdir()
    shutil.copy(RANDOM_BOT, real / "random_bot.py")
    links = tmp_path / "links"
    links.mkdir()
    (links / "bot.py").symlink_to(Path("..") / "real" / "random_bot.py")
    run = tmp_path / "run"  # where the tournament is started: a cmd: entry runs there
    run.mkdir()
    monkeypatch.chdir(run)
    linked = f"linked=cmd:{sys.executable} -P -m oddtrick bot {links / 'bot.py'}"
    settings = plan(f"plain={real / 'random_bot.py'}", linked, seed="linked")
    warnings = io.StringIO()
    with trio.fail_after(GUARD_S):
        standings = await run_tournament(settings, tmp_path / "data", progress_stream=warnings)
    assert "linked run as root in a sandbox" in warnings.getvalue()
    assert {row.entry for row in standings.rows if row.deals} == {"plain", "linked"}


def test_the_sandbox_shows_no_more_of_the_system_than_another_user_sees(tmp_path: Path) -> None:
    """What is not on the bot's command line does not exist for it: root's home, other
    folders under /tmp, the machine's other top-level folders; /etc/shadow is covered."""
    import subprocess

    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "secret").write_text("root's own\n")
    mine = tmp_path / "mine"
    mine.mkdir()
    needs = [Path(shutil.which("sh") or "/bin/sh")]
    command = sandbox.sandboxed(
        ["sh", "-c", f"ls {other}; ls /root; cat /etc/shadow; ls /var; ls -d /tmp/*; touch /usr/x; pwd"],
        mine,
        needs,
        hide=[],
    )
    run = subprocess.run(command, capture_output=True, text=True, timeout=GUARD_S, check=False)
    assert "root's own" not in run.stdout
    assert "secret" not in run.stdout
    assert "root:" not in run.stdout  # /etc/shadow's first line
    assert str(mine) in run.stdout.splitlines()[-1]  # it runs in its own folder
    assert "Read-only file system" in run.stderr
    assert "No such file or directory" in run.stderr  # /var and the other folder are not there
