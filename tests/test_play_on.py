"""Playing a finished hand on from a step (``oddtrick replay LOG --from HAND:CARD --with
SEAT=BOT``): the real command on real logs of both games, each continuation re-checked by
the rules engine and scored again; what a bot is shown; the double-dummy player's result
against the solver's own; unpublished deals and bad input refused, saying what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from oddtrick import BotView
from oddtrick._log_records import read_records
from oddtrick.bots.random_bot import RandomBot
from oddtrick.rules import Card, Seat
from oddtrick_referee.replay import play_on_players
from oddtrick_referee.replay.model import replay_log
from oddtrick_referee.replay.play_on import Step, parse_seats, play_on
from tests.play_on_support import check_as_played, check_played_on
from tests.replay_support import Logged, play_all


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    return play_all(tmp_path_factory.mktemp("play-on") / "data", sealed=True)


def oddtrick(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", *args], capture_output=True, text=True, check=False
    )


def played_out(logged: Logged) -> int:
    """The first hand of the log that was played to its end (Contract Whist throws some in)."""
    return next(hand.number for hand in replay_log(logged.log_path).hands if len(hand.plays) == 52)


@pytest.mark.parametrize(
    ("name", "card", "seats", "others"),
    [
        ("classic-turned", 17, "NS=heuristic", "random"),
        ("classic-cut", 0, "E=random", "dd"),
        ("contract-doubling", 6, "W=heuristic", "dd"),
        ("contract-game", 0, "NS=pimc", "heuristic"),
    ],
)
def test_the_command_plays_a_hand_on_legally_and_scores_it_as_the_rules_do(played, name, card, seats, others):
    logged = played[name]
    hand = played_out(logged)
    run = oddtrick(
        "replay", str(logged.log_path), "--from", f"{hand}:{card}", "--with", seats, "--others", others,
        "--think", "0.05", "--json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout)
    assert (found["hand"], found["card"], found["cards"]) == (hand, card, 52)
    picked = parse_seats([seats])
    assert found["players"] == {str(seat): picked.get(seat, others) for seat in Seat}
    assert found["picked"] == [str(seat) for seat in Seat if seat in picked]
    check_played_on(logged.log_path, hand, card, found["played_on"])
    check_as_played(logged.log_path, hand, card, found["as_played"])
    text = oddtrick(
        "replay", str(logged.log_path), "--from", f"{hand}:{card}", "--with", seats, "--others", others
    )
    assert text.returncode == 0, text.stderr
    assert f"hand {hand} played on from card {card} of 52" in text.stdout
    assert found["as_played"]["text"] in text.stdout
    if "pimc" not in found["players"].values():  # pimc's samples depend on its time; the others' do not
        assert found["played_on"]["text"] in text.stdout


def test_played_on_double_dummy_by_all_four_takes_what_the_solver_says(played):
    from oddtrick import double_dummy

    logged = played["classic-rotation"]
    hand = played_out(logged)
    records = list(read_records(logged.log_path))
    found = play_on(records, Step(hand, 9), dict.fromkeys(Seat, "dd"))
    replayed = replay_log(logged.log_path).hands[hand - 1]
    at = replayed.position(9)
    leader = at.trick[0][0] if len(at.trick) < 4 else at.to_play
    assert leader is not None
    trick = tuple(card for _, card in at.trick) if len(at.trick) < 4 else ()
    hands = tuple(at.holding[seat] for seat in Seat)
    solved = double_dummy.solve([double_dummy.Position(hands, replayed.trumps, leader, trick)])[0]  # type: ignore[arg-type]
    to_play = at.to_play
    assert to_play is not None
    before = at.tricks if len(at.trick) in (0, 4) else _completed(replayed, 9)
    side = int(to_play) % 2
    assert found.result.tricks[side] == before[side] + max(solved.values())


def _completed(replayed: Any, card: int) -> tuple[int, int]:
    """Each side's tricks after the last completed trick before ``card``."""
    done = (card // 4) * 4
    return replayed.position(done).tricks if done else (0, 0)


def test_a_bot_is_shown_its_own_cards_and_the_public_play_only(played, monkeypatch):
    seen: list[tuple[Seat, BotView]] = []

    class Watching(RandomBot):
        def choose_card(self, view: BotView) -> Any:
            assert view.seat is not None
            seen.append((view.seat, view))
            return super().choose_card(view)

    monkeypatch.setattr(play_on_players, "RandomBot", Watching)
    logged = played["contract-doubling"]
    hand = played_out(logged)
    found = play_on(
        list(read_records(logged.log_path)), Step(hand, 3), dict.fromkeys(Seat, "random"), "random"
    )
    deal = replay_log(logged.log_path).hands[hand - 1].deal
    played_cards = [p.card for p in replay_log(logged.log_path).hands[hand - 1].plays[:3]]
    assert len(seen) == 49
    for (seat, view), play in zip(seen, found.plays, strict=True):
        assert seat is play.seat
        assert set(view.hand) <= set(deal[seat])  # its own cards, nothing of another seat's
        assert len(view.hand) == 13 - sum(
            1 for p in found.plays[: found.plays.index(play)] if p.seat is seat
        ) - sum(1 for card in played_cards if card in deal[seat])
        assert play.card in view.legal_actions
        assert all(isinstance(action, Card) and action in view.hand for action in view.legal_actions)


def test_an_unpublished_deal_is_not_played_on_by_its_file_or_its_id(played):
    sealed = played["sealed"]
    data_dir = sealed.log_path.parent.parent
    for source in ([str(sealed.log_path)], [sealed.match_id, "--data-dir", str(data_dir)]):
        run = oddtrick("replay", *source, "--from", "1:0", "--with", "N=random")
        assert run.returncode == 1
        assert "duplicate pair whose deals are still to be played" in run.stderr
        assert run.stdout == ""


@pytest.mark.parametrize(
    ("step", "seats", "said"),
    [
        ("1:52", "N=random", "is over after card 52: give a step from 1:0 to 1:51"),
        ("1:99", "N=random", "give a step from 1:0 to 1:51"),
        ("9:0", "N=random", "no hand 9: this match has hands 1 to 3"),
        ("1-3", "N=random", "--from '1-3' is not HAND:CARD, such as 3:17"),
        ("1:3", "Q=random", "--with 'Q': not a seat; seats are N, E, S and W"),
        ("1:3", "N=deep", "no bot 'deep'; give one of random, heuristic, pimc or dd"),
        ("1:3", "N", "--with 'N' is not SEAT=BOT, such as N=pimc"),
    ],
)
def test_bad_input_is_refused_saying_what_to_give(played, step, seats, said):
    run = oddtrick("replay", str(played["classic-turned"].log_path), "--from", step, "--with", seats)
    assert run.returncode == 1
    assert said in run.stderr
    assert run.stdout == ""


def test_play_on_options_without_a_step_or_seats_say_what_is_missing(played):
    log = str(played["classic-turned"].log_path)
    no_step = oddtrick("replay", log, "--with", "N=random")
    assert no_step.returncode == 1
    assert "give --from HAND:CARD too" in no_step.stderr
    no_seats = oddtrick("replay", log, "--from", "1:0")
    assert no_seats.returncode == 1
    assert "--with SEAT=BOT" in no_seats.stderr
    helped = oddtrick("replay", "--help")
    assert "--from HAND:CARD" in helped.stdout
    assert "HAND:CARD is hand HAND after CARD cards were played, as the replay page shows it" in " ".join(
        helped.stdout.split()
    )


@pytest.mark.parametrize("stepping", [["--hand", "2"], ["--trick", "3"], ["--print"]])
def test_stepping_options_beside_a_play_on_are_refused_not_ignored(played, stepping):
    """--hand, --trick and --print step the replay; beside --from they would be dropped silently."""
    log = str(played["classic-turned"].log_path)
    run = oddtrick("replay", log, "--from", "1:4", "--with", "N=dd", *stepping)
    assert run.returncode == 1
    assert "--from HAND:CARD plays a hand on from one step: give one or the other" in run.stderr
    assert run.stdout == ""


def test_the_page_player_stops_at_close_and_answers_busy_after(played):
    import threading

    from oddtrick_referee.web.data import WebData
    from oddtrick_referee.web.play_on import PlayOns, read_question

    logged = played["contract-game"]
    hand = played_out(logged)
    players = PlayOns(WebData(logged.log_path.parent.parent))
    slow = read_question(logged.match_id, {"hand": str(hand), "card": "0", "seats": "NESW", "bot": "pimc"})
    assert players.status(slow)["status"] == "pending"
    players.close()  # stops before the pimc bots' next card, and joins the thread
    assert not [thread for thread in threading.enumerate() if thread.name == "oddtrick-play-on"]
    assert players.status(slow)["status"] == "busy"
