"""What people read: colour only on a terminal (and never with NO_COLOR), tables and a
progress bar on a terminal, plain lines in a pipe."""

from __future__ import annotations

import io

import pytest

from oddtrick._terminal import console, suits
from oddtrick_referee.competitions.scoring.standings import FaultCounts, compute_standings
from oddtrick_referee.competitions.scoring.standings_table import print_standings
from oddtrick_referee.competitions.tournaments.tournament import Progress

RED = "\x1b[31m"


class Screen(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def shown(stream: io.StringIO, text: str) -> str:
    console(stream).print(suits(text))
    return stream.getvalue()


def test_hearts_and_diamonds_are_red_on_a_terminal(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    out = shown(Screen(), "N Q♥  E 10♦  S 2♠  W A♣")
    assert f"{RED}Q♥" in out
    assert f"{RED}10♦" in out
    assert f"{RED}2♠" not in out


@pytest.mark.parametrize("stream", [io.StringIO(), Screen()], ids=["piped", "terminal with NO_COLOR"])
def test_no_colour_when_piped_or_with_no_color(monkeypatch, stream):
    monkeypatch.setenv("TERM", "xterm-256color")
    if isinstance(stream, Screen):
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    assert shown(stream, "N Q♥ [1/2] 10♦") == "N Q♥ [1/2] 10♦\n"  # brackets printed, not read as markup


def standings():
    return compute_standings(["alpha", "beta"], [], {"beta": FaultCounts(bot_errors=1)}, [], duplicate=True)


def test_standings_are_plain_fixed_width_text_in_a_pipe():
    out = io.StringIO()
    print_standings(standings(), out)
    assert out.getvalue() == standings().render()


def test_standings_are_tables_on_a_terminal(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    out = Screen()
    print_standings(standings(), out)
    text = out.getvalue()
    assert "┃" in text or "│" in text  # drawn as a table
    assert "Crosstable" in text
    assert "E1" in text


def test_a_tournament_shows_a_progress_bar_with_rate_and_time_left_on_a_terminal(monkeypatch):
    monkeypatch.setenv("TERM", "xterm-256color")
    out = Screen()
    progress = Progress(8, out)
    progress.update("starting", finished_one=False)
    progress.update("alpha v beta set 1 table 1 done")
    progress.close()
    text = out.getvalue()
    assert "1/8" in text
    assert "tables/min" in text
    assert "left" in text
    assert "━" in text  # the bar


def test_a_piped_tournament_prints_one_plain_line_per_table():
    out = io.StringIO()
    progress = Progress(8, out)
    progress.update("alpha v beta set 1 table 1 done")
    progress.close()
    assert out.getvalue().startswith("[1/8 tables, ")
    assert out.getvalue().endswith("] alpha v beta set 1 table 1 done\n")
    assert "\x1b" not in out.getvalue()


def test_the_remote_wait_and_its_forfeit_are_in_the_tournaments_help(capsys):
    from oddtrick._cli import main

    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--remote-wait S seconds each match waits for a remote entry to connect" in text
    assert "forfeits that match (default 60)" in text
