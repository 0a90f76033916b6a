"""Bot options (``option.NAME=VALUE`` after an entry) reach every kind of entry, are
recorded, and are refused, with nothing played, when the bot does not take them.

The tournaments are real: ``oddtrick tournament`` run as a process, its referee on a
socket, a bot file's entry and a ``cmd:`` program started as processes through the
launcher, an in-process entry in the referee. The bot (``options_echo_bot.py``) says its
options in the comment of every decision, which the referee writes in the match log, so
what each bot was given is read from the logs; the ``cmd:`` program also lists the
variables of its environment, which must be the launcher's allowlist and the options.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from oddtrick import OptionError, with_options
from oddtrick._log_records import ActionRecord, MatchStart, read_records
from oddtrick._options import declared, parse_value
from oddtrick.bots.pimc_bot import PimcBot
from oddtrick_referee.competitions.entries import launcher
from oddtrick_referee.competitions.entries.launcher import OPTIONS, PASSED
from oddtrick_referee.storage.tournament_store import TournamentStore

ROOT = Path(__file__).resolve().parents[1]
ECHO = Path(__file__).with_name("options_echo_bot.py")
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"
GUARD_S = 300.0
"""Guards against a hang only."""
SECRETS = {"PGPASSWORD": "the-queue-password", "AWS_SECRET_ACCESS_KEY": "an-operator-secret"}
"""What an operator's environment holds, set in the referee's for the test."""


def oddtrick(
    folder: Path, *words: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "oddtrick", *words],
        cwd=folder,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=False,
    )


def tournament(
    folder: Path, *entries: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    plan = ["tournament", "--game", "classic", "--deals", "1", "--tables", "2", "--seed", "options"]
    return oddtrick(folder, *plan, "--data-dir", "data", *entries, env=env)


ENTRIES = (
    # The first entry plays each other one (a gauntlet): every kind of entry plays it.
    *("--gauntlet", "--bot", f"file={ECHO}", "option.label=filed", "option.depth=3"),
    *("--bot", f"prog=cmd:{sys.executable} {ECHO}", "option.label=programmed", "option.ratio=0.25"),
    *("--in-process", f"inside={ECHO}", "option.loud=true", "option.ratio=2"),
    *("--bot", f"plain=cmd:{sys.executable} {ECHO}"),
)
GIVEN = {
    "file": {"label": "filed", "depth": 3},
    "prog": {"label": "programmed", "ratio": 0.25},
    "inside": {"loud": True, "ratio": 2},
}
SAID = {
    "file": "options label=filed depth=3 ratio=0.5 loud=False",
    "prog": 'raw {"label":"programmed","ratio":0.25}',
    "inside": "options label=plain depth=1 ratio=2.0 loud=True",
    # The referee's own ODDTRICK_OPTIONS (set for the test) reaches no entry.
    "plain": "raw ",
}


def played(data: Path) -> dict[str, tuple[list[dict[str, object] | None], set[str | None]]]:
    """Per entry: the options its seats have in every log's match_start, and every comment
    its decisions carried."""
    found: dict[str, tuple[list[dict[str, object] | None], set[str | None]]] = {}
    for path in sorted((data / "logs").glob("*.jsonl")):
        entry_of: dict[str, str] = {}
        for record in read_records(path):
            if isinstance(record, MatchStart):
                for seat, player in record.players.items():
                    entry_of[seat] = player["name"].split("~")[0]
                    found.setdefault(entry_of[seat], ([], set()))[0].append(player.get("options"))
            elif isinstance(record, ActionRecord) and record.fault is None:
                found[entry_of[record.seat]][1].add(record.comment)
    return found


def test_options_reach_every_kind_of_entry_and_are_in_the_logs_and_the_standings(tmp_path: Path) -> None:
    secrets = {**SECRETS, OPTIONS: '{"label": "leaked"}'}
    run = tournament(tmp_path, *ENTRIES, "--json", env=secrets)
    assert run.returncode == 0, run.stderr
    standings = json.loads(run.stdout)
    assert standings["options"] == GIVEN
    logs = played(tmp_path / "data")
    assert set(logs) == {"file", "prog", "inside", "plain"}
    for entry, (options, comments) in logs.items():
        assert options, entry
        assert all(given == GIVEN.get(entry) for given in options), (entry, options)
        assert comments == {SAID[entry]}, entry

    # The cmd: program's environment: the allowlist, its own folder, its token and its options.
    output = (tmp_path / "data" / "bot-output" / "prog~0.log").read_text()
    names = set(next(line for line in output.splitlines() if line.startswith("ENV ")).split()[1:])
    own = {"HOME", "TMPDIR", "ODDTRICK_TOKEN_FD", "ODDTRICK_TOKEN", OPTIONS}
    own.add("PWD")  # the folder it runs in, set by bubblewrap when the entry runs in its sandbox
    assert not [
        name for name in names if name not in PASSED and name not in own and not name.startswith("LC_")
    ]
    assert OPTIONS in names
    for secret in SECRETS:
        assert secret not in names

    # The same tournament again: found with the same options (nothing left to play), the
    # plain standings' header saying each entry's options.
    again = tournament(tmp_path, *ENTRIES)
    assert again.returncode == 0, again.stderr
    assert "(resumed" in again.stderr
    header = again.stdout.split("\n\n")[0].splitlines()
    assert (
        "options: file label=filed depth=3; prog label=programmed ratio=0.25; inside loud=true ratio=2"
        in header
    )


def test_an_entry_resumed_with_other_options_is_another_entrant(tmp_path: Path) -> None:
    first = tournament(
        tmp_path, "--in-process", f"a={ECHO}", "option.depth=2", "--in-process", f"b={RANDOM_BOT}"
    )
    assert first.returncode == 0, first.stderr
    logs = sorted((tmp_path / "data" / "logs").glob("*.jsonl"))
    other = tournament(
        tmp_path, "--in-process", f"a={ECHO}", "option.depth=4", "--in-process", f"b={RANDOM_BOT}"
    )
    assert other.returncode == 1
    assert "entry 'a' of tournament 't-" in other.stderr
    assert f"is in-process:{ECHO} option.depth=2, not in-process:{ECHO} option.depth=4" in other.stderr
    assert sorted((tmp_path / "data" / "logs").glob("*.jsonl")) == logs


@pytest.mark.parametrize(
    ("kind", "option", "said"),
    [
        ("--bot", "option.depht=3", "EchoBot has no option 'depht' (did you mean depth?); its options: "
         "label (a string, default plain), depth (an int, default 1), ratio (a float, default 0.5), "
         "loud (a bool, default false)"),
        ("--bot", "option.depth=deep", "option depth of EchoBot is an int, default 1, not 'deep': give "
         "e.g. option.depth=1"),
        ("--in-process", "option.loud=2", "option loud of EchoBot is a bool, default false, not '2': give "
         "e.g. option.loud=false"),
        ("--in-process", "option.ratio=fast", "option ratio of EchoBot is a float, default 0.5, not 'fast'"),
    ],
)  # fmt: skip
def test_options_the_bot_does_not_take_stop_the_tournament_before_it_starts(
    tmp_path: Path, kind: str, option: str, said: str
) -> None:
    run = tournament(tmp_path, kind, f"echo={ECHO}", option, "--bot", f"other={RANDOM_BOT}")
    assert run.returncode == 1, run.stderr
    error = run.stderr.strip().splitlines()[-1]
    assert error.startswith(f"oddtrick tournament: entry 'echo': {said}"), error
    assert error.endswith("; nothing was played")
    data = tmp_path / "data"
    assert list(data.glob("logs/*")) == []
    assert TournamentStore(data / "oddtrick.sqlite3").tournaments() == []


def test_option_words_are_read_where_they_belong(tmp_path: Path) -> None:
    """Words after an entry that are not options, a misplaced option word and options for a
    remote entry are command-line errors, said before anything starts."""
    stray = tournament(tmp_path, "--bot", f"a={ECHO}", "depth=3", "--bot", f"b={RANDOM_BOT}")
    assert stray.returncode == 2
    assert "'depth=3' is not an option; only option.NAME=VALUE words may follow an entry" in stray.stderr
    late = tournament(
        tmp_path, "--bot", f"a={ECHO}", "--bot", f"b={RANDOM_BOT}", "--name", "x", "option.depth=3"
    )
    assert late.returncode == 2
    assert "option.NAME=VALUE words go right after the entry they are for" in late.stderr
    remote = tournament(tmp_path, "--bot", f"a={ECHO}", "--remote", "r", "option.depth=3")
    assert remote.returncode == 2
    assert "a --remote entry takes none" in remote.stderr
    assert not (tmp_path / "data").exists()


def test_a_bot_author_gives_and_checks_options_on_the_command_line(tmp_path: Path) -> None:
    listed = oddtrick(
        tmp_path, "bot", str(ECHO), "--check-options", "option.depth=3", env={OPTIONS: '{"ratio": 1}'}
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == [
        "EchoBot option.label=plain  (a string, default plain)",
        "EchoBot option.depth=3  (an int, default 1)",
        "EchoBot option.ratio=1.0  (a float, default 0.5)",
        "EchoBot option.loud=false  (a bool, default false)",
    ]
    overridden = oddtrick(
        tmp_path, "bot", str(ECHO), "--check-options", "option.depth=5", env={OPTIONS: '{"depth": 3}'}
    )
    assert "EchoBot option.depth=5  (an int, default 1)" in overridden.stdout.splitlines()
    wrong = oddtrick(tmp_path, "bot", str(ECHO), "option.deep=1", "--server", "127.0.0.1:9", "--name", "me")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("oddtrick bot: EchoBot has no option 'deep'")
    garbled = oddtrick(tmp_path, "bot", str(ECHO), "--check-options", env={OPTIONS: "depth=3"})
    assert garbled.returncode == 2
    assert "ODDTRICK_OPTIONS is not a JSON object of option names and values" in garbled.stderr


def test_play_sprt_and_the_ladder_refuse_options_their_bots_do_not_take(tmp_path: Path) -> None:
    play = oddtrick(tmp_path, "play", "--opponents", str(ECHO), "option.nope=1", "--data-dir", "data")
    assert play.returncode == 2
    assert play.stderr.startswith("oddtrick play: --opponents: EchoBot has no option 'nope'"), play.stderr
    assert list((tmp_path / "data").glob("logs/*")) == []
    sprt = oddtrick(tmp_path, "sprt", "--bot", f"a={ECHO}", "option.depth=x", "--bot", f"b={RANDOM_BOT}")
    assert sprt.returncode == 2
    assert "oddtrick sprt: option depth of EchoBot is an int" in sprt.stderr
    assert "deal pairs  a" not in sprt.stdout
    ladder = oddtrick(
        tmp_path, "ladder", "serve", "--house-bot", f"h={ECHO}", "option.loud=maybe", "--data-dir", "lad"
    )
    assert ladder.returncode == 2
    assert "house bot 'h': option loud of EchoBot is a bool, default false, not 'maybe'" in ladder.stderr
    assert ladder.stderr.strip().endswith("the ladder did not start")
    assert list((tmp_path / "lad").iterdir()) == []


def test_the_launcher_passes_the_options_and_nothing_else_beyond_its_allowlist() -> None:
    given = {
        **SECRETS,
        "PATH": "/usr/bin",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": "/somewhere",
        "ODDTRICK_NAME": "a~0",
        OPTIONS: '{"depth":3}',
    }
    assert launcher.environment(given, "/tmp/own", "the-token", 5) == {
        "PATH": "/usr/bin",
        "LC_ALL": "C.UTF-8",
        "ODDTRICK_NAME": "a~0",
        OPTIONS: '{"depth":3}',
        "HOME": "/tmp/own",
        "TMPDIR": "/tmp/own",
        "ODDTRICK_TOKEN_FD": "5",
    }


def test_values_are_read_by_their_form_and_set_on_a_subclass() -> None:
    assert [parse_value(text) for text in ("true", "False", "40", "-2", "0.5", "1e-3", "fast", "")] == [
        True, False, 40, -2, 0.5, 0.001, "fast", "",
    ]  # fmt: skip
    strong = with_options(PimcBot, {"think_seconds": 2, "samples": 40, "fit_bonus": 1})
    assert issubclass(strong, PimcBot)
    assert (strong.think_seconds, strong.samples, strong.fit_bonus) == (2.0, 40, 1.0)
    assert strong().think == 2.0  # what its __init__ reads: the option's value
    assert PimcBot.think_seconds == 1.0
    assert declared(strong)["think_seconds"] == 2.0
    assert "trump_leader_length" in declared(strong)  # the heuristic bot's, inherited
    assert pickle.loads(pickle.dumps(strong)) is strong  # a process pool sends it by name
    assert with_options(PimcBot, {}) is PimcBot
    with pytest.raises(OptionError, match="declares no options"):
        with_options(lambda view: view.legal_actions[0], {"depth": 1})
