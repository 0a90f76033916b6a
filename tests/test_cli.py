"""The command line: help everywhere, options read as documented, clear errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from oddtrick._cli import build_parser, main
from oddtrick.rules import GameKind, MatchFormat
from oddtrick_referee.cli import config_from_args

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["bot"],
        ["watch"],
        ["serve"],
        ["demo"],
        ["check"],
        ["tournament"],
        ["tournament", "status"],
        ["play"],
        ["worker"],
        ["analyze"],
    ],
)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert "usage: oddtrick" in capsys.readouterr().out


def test_every_commands_help_is_wrapped_for_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    (commands,) = (action for action in parser._actions if action.choices and action.dest != "help")
    assert commands.choices
    for name in commands.choices:
        with pytest.raises(SystemExit):
            main([name, "--help"])
        long = [line for line in capsys.readouterr().out.splitlines() if len(line) > 100]
        assert not long, (name, long)


def test_the_top_level_help_lists_every_command_and_the_rules_file() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "oddtrick", "--help"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    for command in (
        "bot",
        "watch",
        "serve",
        "tournament",
        "ladder",
        "play",
        "check",
        "conformance",
        "worker",
    ):
        assert f"    {command}" in shown, command
    assert "docs/rules.md" in shown
    assert "RULES.md" not in shown.replace("docs/rules.md", "")


def test_a_config_file_gives_defaults_and_the_command_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"game": "classic", "honours": True, "deals": 3, "ns": "a", "deadline": 2}))
    args = build_parser().parse_args(["serve", "--config", str(path), "--ew", "b", "--deals", "5"])
    config = config_from_args(args, arena_keys=True)
    assert (config.game, config.honours, config.format, config.deals) == (
        GameKind.CLASSIC,
        True,
        MatchFormat.DEALS,
        5,
    )
    assert (args.ns, args.ew, args.deadline) == ("a", "b", 2)


def test_arena_keys_are_refused_where_they_mean_nothing(tmp_path: Path) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps({"game": "contract", "ns": "a"}))
    args = build_parser().parse_args(["tournament", "--config", str(path)])
    with pytest.raises(ValueError, match="unknown configuration keys: ns"):
        config_from_args(args)


def test_an_invalid_combination_is_refused_with_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--game", "classic", "--doubling", "--ns", "a", "--ew", "b"]) == 2
    assert "doubling exists only in Contract Whist" in capsys.readouterr().err


def test_a_tournament_needs_two_entries(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["tournament", "--deals", "2", "--bot", f"only={ROOT / 'sample_bots' / 'random_bot.py'}"]) == 2
    )
    assert "at least two entries" in capsys.readouterr().err


def test_a_missing_bot_file_says_what_was_expected() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "bot", "nowhere.py:Bot", "--server", "x:1", "--name", "n"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert run.returncode == 2
    assert "no bot file nowhere.py" in run.stderr


@pytest.mark.parametrize(
    ("environment", "options", "said"),
    [
        ({}, [], "no referee address: pass --server HOST:PORT (or set ODDTRICK_SERVER)"),
        ({"ODDTRICK_SERVER": "x:1"}, [], "no bot name: pass --name NAME (or set ODDTRICK_NAME)"),
        (
            {"ODDTRICK_SERVER": "x:1", "ODDTRICK_NAME": "n", "ODDTRICK_SEATS": "two"},
            [],
            "ODDTRICK_SEATS is 'two'",
        ),
        (
            {"ODDTRICK_SERVER": "x:1", "ODDTRICK_NAME": "n", "ODDTRICK_SEATS": "0"},
            [],
            "ODDTRICK_SEATS is 0: a bot holds at least one seat",
        ),
        ({"ODDTRICK_SERVER": "x:1,,y:2"}, [], "ODDTRICK_SERVER: an empty address in 'x:1,,y:2'"),
        ({"ODDTRICK_SERVER": "x,x:50051"}, [], "ODDTRICK_SERVER: x:50051 is listed twice"),
        ({}, ["--server", "a:1", "--server", "b:2,a:1", "--name", "n"], "a:1 is listed twice"),
    ],
)
def test_bot_takes_what_it_lacks_from_the_cmd_environment_or_says_which_is_missing(
    environment: dict[str, str],
    options: list[str],
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for key in ("ODDTRICK_SERVER", "ODDTRICK_NAME", "ODDTRICK_SEATS"):
        monkeypatch.delenv(key, raising=False)
    for key, value in environment.items():
        monkeypatch.setenv(key, value)
    assert main(["bot", str(ROOT / "sample_bots" / "random_bot.py"), *options]) == 2
    assert said in capsys.readouterr().err


def test_options_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from oddtrick._cli import _connection_from_environment

    monkeypatch.setenv("ODDTRICK_SERVER", "env:1")
    monkeypatch.setenv("ODDTRICK_NAME", "from-env")
    monkeypatch.setenv("ODDTRICK_SEATS", "2")
    parser = build_parser(with_referee=False)
    assert _connection_from_environment(parser.parse_args(["bot", "b.py"])) == ("env:1", "from-env", 2)
    given = parser.parse_args(["bot", "b.py", "--server", "cli:2", "--name", "cli", "--seats", "3"])
    assert _connection_from_environment(given) == ("cli:2", "cli", 3)


def test_several_referees_come_in_order_from_commas_repeated_options_or_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ladder on several referees: the bot tries them in the order given, each with the
    default port if it names none."""
    from oddtrick._cli import _connection_from_environment

    monkeypatch.setenv("ODDTRICK_SERVER", "one:1, two")
    monkeypatch.setenv("ODDTRICK_NAME", "n")
    parser = build_parser(with_referee=False)
    assert _connection_from_environment(parser.parse_args(["bot", "b.py"]))[0] == "one:1,two:50051"
    repeated = parser.parse_args(["bot", "b.py", "--server", "b:2,c:3", "--server", "a"])
    assert _connection_from_environment(repeated)[0] == "b:2,c:3,a:50051"
    with pytest.raises(SystemExit):
        parser.parse_args(["bot", "b.py", "--server", "a:1,"])
    assert "an empty address in 'a:1,'" in capsys.readouterr().err


def test_check_reports_a_log_that_did_not_finish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "cut.jsonl"
    whole = sorted((Path(__file__).parent / "data" / "match_logs").glob("*.jsonl"))[0]
    log.write_text(whole.read_text(encoding="utf-8").splitlines(keepends=True)[0])  # its first line only
    assert main(["check", str(log)]) == 1
    assert "did not finish" in capsys.readouterr().out


def test_watch_without_a_referee_says_where_it_looked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--server", "127.0.0.1:1"]) == 1
    error = capsys.readouterr().err
    assert "127.0.0.1:1" in error
    assert "oddtrick serve" in error


HEAVY_MODULES = ("grpc", "trio", "oddtrick_referee", "google.protobuf", "psycopg", "starlette", "rich")
"""What ``oddtrick --version`` has no use for: the transport, the event loop, the referee
and what they bring (loading them cost a second of CPU before the version was printed)."""


def test_the_version_is_printed_without_loading_the_transport_or_the_referee() -> None:
    shown = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "oddtrick", "--version"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert shown.stdout.strip().startswith("oddtrick ")
    # -X importtime writes one line per module imported: "import time: SELF | CUMULATIVE | NAME".
    imported = {line.rsplit("|", 1)[1].strip() for line in shown.stderr.splitlines() if "|" in line}
    assert "oddtrick" in imported  # the trace was read
    loaded = sorted(
        name for name in imported for heavy in HEAVY_MODULES if name == heavy or name.startswith(heavy + ".")
    )
    assert not loaded, loaded
