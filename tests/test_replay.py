"""Replaying logs: the model follows the log card by card, the terminal viewer shows it,
PBN carries it to other tools (checked with endplay's independent PBN reader)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_support import reap

from oddtrick._log_records import record_from_dict
from oddtrick.rules import Card, Seat, Suit, deal_cards
from oddtrick_referee.play.matchlog import read_log
from oddtrick_referee.replay.model import ReplayError, replay_log, replay_records
from tests.replay_support import Logged, play_all

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    return play_all(tmp_path_factory.mktemp("replay") / "data")


def logged_hands(path: Path) -> dict[int, dict[str, list[tuple[str, str]]]]:
    """The log's own record of each hand, its calls and its cards, read without the engine:
    in Contract Whist the auction ends at four passes, or three after a bid."""
    hands: dict[int, dict[str, list[tuple[str, str]]]] = {}
    records = list(read_log(path))
    contract = records[0]["config"]["game"] == "contract"
    auction = False
    passes = 0
    bid = False
    for record in records:
        if record["type"] == "hand_start":
            hands[record["hand"]] = {"calls": [], "cards": []}
            auction, passes, bid = contract, 0, False
        if record["type"] != "action":
            continue
        text = record["action"]
        if auction:
            hands[record["hand"]]["calls"].append((record["seat"], text))
            if text == "pass":
                passes += 1
            elif text != "double":
                bid, passes = True, 0
            else:
                passes = 0
            auction = not (passes == 4 or (bid and passes == 3))
        else:
            hands[record["hand"]]["cards"].append((record["seat"], text))
    return hands


def test_every_hand_of_every_game_and_option_follows_the_log_card_by_card(played):
    for logged in played.values():
        match = replay_log(logged.log_path)
        assert match.finished
        records = list(read_log(logged.log_path))
        seed = records[-1]["seed"]
        from_log = logged_hands(logged.log_path)
        assert [hand.number for hand in match.hands] == sorted(from_log)
        results = [r for r in records if r["type"] == "hand_result"]
        for hand, result in zip(match.hands, results, strict=True):
            deal, _, _ = deal_cards(seed, hand.number, hand.dealer)
            assert hand.deal == deal
            assert [(str(c.seat), str(c.call)) for c in hand.calls] == from_log[hand.number]["calls"]
            cards = [(seat, str(Card.parse(text))) for seat, text in from_log[hand.number]["cards"]]
            assert [(str(p.seat), str(p.card)) for p in hand.plays] == cards
            for k in range(hand.positions + 1):
                position = hand.position(k)
                gone = {Card.parse(text) for _, text in cards[:k]}
                for seat in Seat:
                    assert set(position.holding[seat]) == set(deal[seat]) - gone
                if k:
                    trick_cards = cards[(k - 1) // 4 * 4 : k]
                    assert [(str(s), str(c)) for s, c in position.trick] == trick_cards
            if hand.plays:
                assert list(hand.plays[-1].tricks) == result["tricks"]
            assert hand.result is not None
            assert list(hand.result.scores_after) == result["scores"]


def test_the_piped_replay_prints_every_hand_with_its_auction_tricks_and_result(played):
    for name, logged in played.items():
        run = subprocess.run(
            [sys.executable, "-m", "oddtrick", "replay", str(logged.log_path)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        out = run.stdout
        match = replay_log(logged.log_path)
        assert out.count("\nHand ") == len(match.hands), name
        for hand in match.hands:
            assert f"Hand {hand.number} of {len(match.hands)}" in out
            for number, steps in hand.tricks:
                line = f"trick {number:>2}  " + "  ".join(f"{s.seat} {s.card.pretty:<3}" for s in steps)
                assert line in out, (name, hand.number, number)
        if "contract" in name:
            assert "auction: West      North     East      South" in out
        else:
            assert "auction:" not in out
            assert "trumps " in out
        assert "match over:" in out


def test_replay_starts_at_a_hand_and_trick(played):
    logged = played["contract-doubling"]
    match = replay_log(logged.log_path)
    hand = next(h for h in match.hands if h.plays)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "oddtrick",
            "replay",
            str(logged.log_path),
            "--hand",
            str(hand.number),
            "--trick",
            "5",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.count("\nHand ") == 1
    assert f"Hand {hand.number} of" in run.stdout
    assert "trick  5" in run.stdout
    assert "trick  4" not in run.stdout
    # The diagram shows what North still holds before trick 5 is led.
    north = hand.position(hand.trick_start(5)).holding[Seat.NORTH]
    high_first = sorted(north, reverse=True)
    by_suit = [
        f"{suit.symbol} " + (" ".join(c.rank.label for c in high_first if c.suit is suit) or "—")
        for suit in reversed(Suit)
    ]
    diagram = run.stdout.split("trick  5")[0]
    assert [line.strip() for line in diagram.splitlines()[5:9]] == by_suit
    bad = subprocess.run(
        [sys.executable, "-m", "oddtrick", "replay", str(logged.log_path), "--hand", "99"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "no hand 99: this match has hands 1 to" in bad.stderr


def _plain(screen: str) -> str:
    """The screen's text without its colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", screen)


def _screen_after(master: int, marker: str, timeout: float = 15.0) -> str:
    """Read the terminal until a screen containing ``marker`` is complete."""
    buffer = ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(master, 65536).decode("utf-8", "replace")
        except OSError:
            break
        buffer += chunk
        last = buffer.rsplit("\x1b[2J", 1)[-1]
        if marker in last and "q quit" in last:
            return last
    raise AssertionError(f"no screen with {marker!r}; got {buffer[-2000:]!r}")


def test_on_a_terminal_the_keys_step_trick_by_trick_and_hand_by_hand(played):
    logged = played["classic-turned"]
    match = replay_log(logged.log_path)
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "oddtrick", "replay", str(logged.log_path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm"},
    )
    os.close(slave)
    try:
        shown = _screen_after(master, "hand 1/3 · trick 0/13")
        assert "\x1b[31m♥\x1b[0m" in shown  # the red suits in red, as oddtrick watch shows them
        first = _plain(shown)
        assert "trick  1" not in first
        for expected in (1, 2, 3):
            os.write(master, b"\x1b[C")
            screen = _plain(_screen_after(master, f"hand 1/3 · trick {expected}/13"))
            steps = dict(match.hands[0].tricks)[expected]
            assert (
                f"trick {expected:>2}  " + "  ".join(f"{s.seat} {s.card.pretty:<3}" for s in steps) in screen
            )
        os.write(master, b"\x1b[D")
        screen = _plain(_screen_after(master, "hand 1/3 · trick 2/13"))
        assert "trick  3" not in screen
        os.write(master, b"\x1b[B")
        screen = _plain(_screen_after(master, "hand 2/3 · trick 0/13"))
        assert "Hand 2 of 3" in screen
        os.write(master, b"q")
        assert process.wait(timeout=15) == 0
    finally:
        reap(process)
        os.close(master)


def test_pbn_export_reads_back_in_an_independent_pbn_parser(played, tmp_path):
    from endplay.parsers import pbn
    from endplay.types import Denom, Player

    letters = {Denom.spades: "S", Denom.hearts: "H", Denom.diamonds: "D", Denom.clubs: "C"}
    for name, logged in played.items():
        match = replay_log(logged.log_path)
        out = tmp_path / f"{name}.pbn"
        run = subprocess.run(
            [sys.executable, "-m", "oddtrick", "export", str(logged.log_path), "--pbn", "-o", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stderr
        boards = pbn.loads(out.read_text(encoding="utf-8"))
        assert len(boards) == len(match.hands), name
        from_log = logged_hands(logged.log_path)
        for board, hand in zip(boards, match.hands, strict=True):
            assert board.board_num == hand.number
            for seat in Seat:
                held = board.deal[Player.find(str(seat))]
                assert sorted(f"{c.rank.abbr}{letters[c.suit]}" for c in held) == sorted(
                    str(c) for c in hand.deal[seat]
                )
            assert board.dealer == Player.find(str(hand.dealer))
            assert board.info["Scoring"] == ("Whist" if match.classic else "ContractWhist")
            logged_cards = [str(Card.parse(text)) for _, text in from_log[hand.number]["cards"]]
            parsed = [f"{c.rank.abbr}{letters.get(c.suit, '?')}" for c in board.play]
            if match.classic:
                assert board.info["Trumps"] == ("NT" if hand.trumps is None else hand.trumps.letter)
                # The PBN reader orders each trick by a contract's trumps; whist's are in a tag of
                # their own, so compare each trick's cards as a set.
                for at in range(0, 52, 4):
                    assert sorted(parsed[at : at + 4]) == sorted(logged_cards[at : at + 4])
            else:
                calls = []
                for bid in board.auction:
                    if hasattr(bid, "level"):
                        denom = "NT" if bid.denom == Denom.nt else letters[bid.denom]
                        calls.append(f"{bid.level + 6}{denom}")
                    else:
                        calls.append("pass" if bid.penalty.name == "passed" else "double")
                assert calls == [text for _, text in from_log[hand.number]["calls"]]
                if hand.contract is None:
                    assert board.contract.level == 0
                    assert not board.play
                else:
                    assert board.contract.level == hand.contract.level - 6
                    assert board.contract.declarer == Player.find(str(hand.contract.declarer))
                    # Counted from the first caller (the dealer's left), the last bid is the declarer's.
                    last_bid = max(k for k, bid in enumerate(board.auction) if hasattr(bid, "level"))
                    assert Player.find(str(hand.dealer)).lho.next(last_bid) == board.contract.declarer
                    assert parsed == logged_cards
            assert int(board.info["TricksNS"]) == hand.result.tricks[0]


def test_export_writes_pbn_by_default_and_the_replay_as_json(played, tmp_path):
    for name, logged in played.items():
        default = subprocess.run(
            [sys.executable, "-m", "oddtrick", "export", str(logged.log_path)], capture_output=True, text=True
        )
        pbn = subprocess.run(
            [sys.executable, "-m", "oddtrick", "export", str(logged.log_path), "--pbn"],
            capture_output=True,
            text=True,
        )
        assert default.returncode == 0, default.stderr
        assert default.stdout == pbn.stdout
        assert default.stdout.startswith("% PBN 2.1")
        out = tmp_path / f"{name}.json"
        written = subprocess.run(
            [sys.executable, "-m", "oddtrick", "export", str(logged.log_path), "--json", "-o", str(out)],
            capture_output=True,
            text=True,
        )
        assert written.returncode == 0, written.stderr
        match = replay_log(logged.log_path)
        data = json.loads(out.read_text(encoding="utf-8"))
        assert (
            written.stderr
            == f"wrote {len(match.hands)} hand{'s' if len(match.hands) != 1 else ''} to {out} (JSON)\n"
        )
        assert data["format"] == 1
        assert data["match_id"] == match.match_id
        assert data["config"] == logged.config.to_dict()
        assert data["seed"] == match.seed
        assert data["players"] == {str(seat): player for seat, player in match.players.items()}
        assert len(data["hands"]) == len(match.hands)
        for hand, replayed in zip(data["hands"], match.hands, strict=True):
            assert hand["dealer"] == str(replayed.dealer)
            assert hand["deal"] == {str(seat): [str(c) for c in replayed.deal[seat]] for seat in Seat}
            assert [(c["seat"], c["call"]) for c in hand["calls"]] == [
                (str(step.seat), str(step.call)) for step in replayed.calls
            ]
            assert [(p["seat"], p["card"], p["trick"], p["winner"]) for p in hand["plays"]] == [
                (str(s.seat), str(s.card), s.trick, None if s.winner is None else str(s.winner))
                for s in replayed.plays
            ]
            assert replayed.result is not None
            assert hand["result"]["scores_after"] == list(replayed.result.scores_after)
            assert hand["result"]["tricks"] == list(replayed.result.tricks)
        assert match.result is not None
        assert data["result"]["totals"] == list(match.result.totals)
        assert data["result"]["winner"] == (None if match.result.winner is None else str(match.result.winner))


def test_a_log_that_cannot_be_replayed_says_why(played, tmp_path):
    path = played["contract-game"].log_path
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    unfinished = tmp_path / "unfinished.jsonl"
    unfinished.write_text("".join(lines[:-1]), encoding="utf-8")
    with pytest.raises(ReplayError, match="did not finish"):
        replay_log(unfinished)
    records = [json.loads(line) for line in lines]
    hand = logged_hands(path)[1]
    first_card = next(
        i
        for i, r in enumerate(records)
        if r["type"] == "action" and r["hand"] == 1 and r["action"] == hand["cards"][0][1]
    )
    tampered = [dict(r) for r in records]
    tampered[first_card]["action"] = "ZZ"
    with pytest.raises(ReplayError, match=r"against the rules|not a card"):
        replay_records(record_from_dict(r) for r in tampered)
    wrong_seed = [dict(r) for r in records]
    wrong_seed[-1]["seed"] = "not the seed"
    with pytest.raises(ReplayError, match="commitment"):
        replay_records(record_from_dict(r) for r in wrong_seed)
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "replay", str(unfinished)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "did not finish" in run.stderr


@pytest.mark.parametrize("command", ["replay", "export", "web"])
def test_replay_and_export_have_help(command):
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", command, "--help"], capture_output=True, text=True, check=True
    )
    assert "--server" in run.stdout
    assert "--data-dir" in run.stdout
    assert "usage: oddtrick" in run.stdout


async def test_replay_and_export_fetch_a_match_by_id_from_a_referee_or_a_data_folder(tmp_path):
    from oddtrick_referee import RefereeSettings, running_referee
    from tests.referee_support import in_thread
    from tests.replay_support import CONFIGS, play_logged

    def oddtrick(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "oddtrick", *args], capture_output=True, text=True, check=False
        )

    data_dir = tmp_path / "data"
    async with running_referee(RefereeSettings(port=0, data_dir=data_dir)) as referee:
        public = await play_logged(referee, CONFIGS["contract-doubling"], "by-id", match_id="public-1")
        sealed = await play_logged(
            referee, CONFIGS["classic-turned"], "by-id-2", match_id="sealed-1", sealed=True
        )
        by_server = await in_thread(oddtrick, "replay", "public-1", "--server", referee.address)
        pbn_by_server = await in_thread(oddtrick, "export", "public-1", "--pbn", "--server", referee.address)
        sealed_by_server = await in_thread(oddtrick, "replay", "sealed-1", "--server", referee.address)
        await play_logged(referee, CONFIGS["classic-turned"], "by-id-3", match_id="L20261201-1-t1")
        referee.finish()
    from_file = oddtrick("replay", str(public.log_path))
    assert by_server.returncode == 0, by_server.stderr
    assert by_server.stdout == from_file.stdout
    assert pbn_by_server.stdout == oddtrick("export", str(public.log_path), "--pbn").stdout
    assert sealed_by_server.returncode == 1
    assert "sealed" in sealed_by_server.stderr or "duplicate pair" in sealed_by_server.stderr
    assert "Hand" not in sealed_by_server.stdout
    by_folder = oddtrick("replay", "public-1", "--data-dir", str(data_dir))
    assert by_folder.stdout == from_file.stdout
    sealed_by_folder = oddtrick("replay", sealed.match_id, "--data-dir", str(data_dir))
    assert sealed_by_folder.returncode == 1
    assert "duplicate pair" in sealed_by_folder.stderr
    assert sealed_by_folder.stdout == ""
    ladder_match = oddtrick("replay", "L20261201-1", "--data-dir", str(data_dir))
    assert ladder_match.returncode == 1
    assert "L20261201-1 is a ladder match played at two tables: give one of them, L20261201-1-t1" in (
        ladder_match.stderr
    )
    unknown = oddtrick("replay", "../../etc/passwd", "--data-dir", str(data_dir))
    assert unknown.returncode == 1
    assert "no match" in unknown.stderr


def test_check_spreads_many_logs_over_the_cores_and_reports_them_in_order(played, tmp_path):
    logs = []
    for copy in range(2):
        for name, logged in played.items():
            path = tmp_path / f"{copy}-{name}.jsonl"
            path.write_bytes(logged.log_path.read_bytes())
            logs.append(path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(logs[0].read_text(encoding="utf-8").splitlines(keepends=True)[:-1]))
    logs.insert(3, broken)
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", *map(str, logs)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert [line.split(": ", 1)[0] for line in lines if not line.startswith("  ")] == [str(p) for p in logs]
    assert sum(": OK:" in line for line in lines) == len(logs) - 1
    assert f"{broken}: FAILED:" in run.stdout


def test_check_takes_a_folder_for_every_log_in_it_and_names_a_missing_file_plainly(played, tmp_path):
    folder = tmp_path / "logs" / "2026"
    folder.mkdir(parents=True)
    for name, logged in played.items():
        (folder / f"{name}.jsonl").write_bytes(logged.log_path.read_bytes())
    (folder / "notes.txt").write_text("not a log")
    run = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(tmp_path / "logs"), str(tmp_path / "missing.jsonl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1  # the missing one
    lines = [line for line in run.stdout.splitlines() if not line.startswith("  ")]
    assert lines[:-1] == [
        f"{folder / name}.jsonl: {lines[i].split(': ', 1)[1]}" for i, name in enumerate(sorted(played))
    ]
    assert all(": OK:" in line for line in lines[:-1])
    assert lines[-1].startswith(f"{tmp_path / 'missing.jsonl'}: no such file")
    (tmp_path / "none").mkdir()
    empty = subprocess.run(
        [sys.executable, "-m", "oddtrick", "check", str(tmp_path / "none")], capture_output=True, text=True
    )
    assert (empty.returncode, empty.stderr.strip()) == (
        1,
        "oddtrick check: no match logs (*.jsonl, *.jsonl.gz) in the folders given",
    )


def test_a_reader_that_goes_away_stops_a_long_output_quietly(played):
    """``oddtrick export LOG --json | head``: no BrokenPipeError traceback, the shell's status
    for SIGPIPE (the output is longer than one buffer, so it is written while the command runs)."""
    log = max((logged.log_path for logged in played.values()), key=lambda path: path.stat().st_size)
    command = [sys.executable, "-m", "oddtrick", "export", str(log), "--json"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as shown:
        assert shown.stdout is not None
        assert shown.stderr is not None
        shown.stdout.close()  # as head does once it has its lines, here before the first
        stderr = shown.stderr.read()
        status = shown.wait(timeout=120)
    assert "Traceback" not in stderr, stderr
    assert status == 141, stderr
