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
    "command", [[], ["bot"], ["watch"], ["serve"], ["demo"], ["check"], ["tournament"], ["play"]]
)
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    assert "usage: oddtrick" in capsys.readouterr().out


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


def test_check_reports_a_log_that_did_not_finish(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "cut.jsonl"
    log.write_text('{"type": "match_start", "format": "oddtrick-match-log/1"}\n')
    assert main(["check", str(log)]) == 1
    assert "did not finish" in capsys.readouterr().out


def test_watch_without_a_referee_says_where_it_looked(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["watch", "--server", "127.0.0.1:1"]) == 1
    error = capsys.readouterr().err
    assert "127.0.0.1:1" in error
    assert "oddtrick serve" in error
