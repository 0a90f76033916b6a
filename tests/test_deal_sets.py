"""Fixed deal sets (``--deals-from FILE.pbn``): read, refused when malformed, played duplicate.

The round trip reads back what ``oddtrick export`` wrote of real matches; the
tournament runs on a real referee with its bots as processes, and its logs are
then checked for the file's digest, the deals and their commitment.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from bounds_support import MEMORY_CEILING, oddtrick_measured

from oddtrick._log_records import read_records
from oddtrick.deal_sets import DealSetError, parse_deal_set, read_deal_set
from oddtrick.duplicate import deal_config, play_pair
from oddtrick.rules import PACK, Card, Deal, GameConfig, GameState, Phase, Seat
from oddtrick.sprt import scores_of
from oddtrick_referee import check_log, read_log
from oddtrick_referee.competitions.tournaments.tournament import parse_entry, plan_runs, run_tournament
from oddtrick_referee.play.matchlog import logged_action
from oddtrick_referee.replay.model import replay_records
from oddtrick_referee.replay.pbn import match_to_pbn
from oddtrick_referee.replay.terminal import match_header
from tests.replay_support import Logged, play_all
from tests.test_tournament import RANDOM_BOT, settings

CLI = [sys.executable, "-m", "oddtrick._cli"]

DEAL_1 = "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"
DEAL_2 = "E:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"


def pbn(*games: str) -> str:
    return "% PBN 2.1\n\n" + "\n\n".join(games) + "\n"


def game(deal: str, dealer: str = "N", board: int = 1, extra: str = "") -> str:
    return f'[Board "{board}"]\n[Dealer "{dealer}"]\n[Deal "{deal}"]\n{extra}'


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Logged]:
    return play_all(tmp_path_factory.mktemp("played"))


@pytest.mark.parametrize("name", ["classic-turned", "classic-cut", "contract-doubling"])
def test_what_oddtrick_export_writes_reads_back_as_the_same_deals(
    logged: dict[str, Logged], name: str
) -> None:
    match = replay_records(read_records(logged[name].log_path))
    deal_set = parse_deal_set(match_to_pbn(match), "export.pbn")
    assert len(deal_set.deals) == len(match.hands)
    for fixed, hand in zip(deal_set.deals, match.hands, strict=True):
        assert fixed.deal == Deal({seat: hand.deal[seat] for seat in Seat})
        assert fixed.dealer == hand.dealer
        if hand.turned_card is not None:
            assert fixed.turned == hand.turned_card
        if hand.cut_card is not None:
            assert fixed.cut == hand.cut_card
    # Played from the file with the logged actions, the match is the one exported.
    state = GameState(match.config, "unused", deals=deal_set.deals)
    for record in read_log(logged[name].log_path):
        if record["type"] == "action":
            if state.phase is Phase.HAND_OVER:
                state.start_next_hand()
            state.apply(logged_action(record["action"], state), Seat.parse(record["seat"]))
    assert state.match_result == match.result


def test_without_a_turned_card_tag_the_dealers_card_is_picked_from_the_deals_digest() -> None:
    deal_set = parse_deal_set(pbn(game(DEAL_1, "W")))
    (fixed,) = deal_set.deals
    deal = Deal.parse(DEAL_1)
    canonical = str(deal).encode()
    own = sorted(deal[Seat.WEST], key=lambda card: card.index)
    turned = int.from_bytes(hashlib.sha256(b"oddtrick-fixed-turned-v1" + canonical).digest(), "big") % 13
    cut = int.from_bytes(hashlib.sha256(b"oddtrick-fixed-cut-v1" + canonical).digest(), "big") % 52
    assert fixed.dealer is Seat.WEST
    assert fixed.turned == own[turned]
    assert fixed.cut == PACK[cut]
    # A tag wins, in PBN's order (suit, rank) or ours.
    tagged = parse_deal_set(pbn(game(DEAL_1, "W", extra='[TurnedCard "H5"]\n[CutCard "2C"]')))
    assert (tagged.deals[0].turned, tagged.deals[0].cut) == (Card.parse("5H"), Card.parse("2C"))


BAD = [
    # (what is wrong, the second deal's Deal tag or extra tags, words the error must say)
    ("a card twice", "N:AKQJ.AKQ.AKQ.AKQ AT98.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432", "A♠ is dealt"),
    ("a 12-card hand", "N:AKQJ.AKQ.AKQ.AK T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432", "12 cards"),
    ("a bad rank", "N:AKQJ.AKQ.AKQ.AKZ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432", "'Z'"),
    ("a bad seat", "X:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432", "not a seat"),
]


@pytest.mark.parametrize(("wrong", "deal", "says"), BAD, ids=[b[0] for b in BAD])
def test_a_malformed_deal_is_refused_naming_the_deal_and_line(wrong: str, deal: str, says: str) -> None:
    text = pbn(game(DEAL_1), game(deal, board=7))
    with pytest.raises(DealSetError) as caught:
        parse_deal_set(text, "bad.pbn")
    message = str(caught.value)
    assert message.startswith("bad.pbn: deal 2 (board 7), line 10:"), message
    assert says in message


def test_a_bad_suit_letter_in_the_turned_card_and_a_missing_dealer_are_refused() -> None:
    with pytest.raises(DealSetError, match=r"deal 1 \(board 1\), line 6: the TurnedCard tag 'X5'"):
        parse_deal_set(pbn(game(DEAL_1, extra='[TurnedCard "X5"]')), "bad.pbn")
    with pytest.raises(DealSetError, match="not in the dealer's"):
        parse_deal_set(pbn(game(DEAL_1, extra='[TurnedCard "S2"]')), "bad.pbn")  # West's card
    with pytest.raises(DealSetError, match="deal 1, line 3: no Dealer tag"):
        parse_deal_set(pbn(f'[Deal "{DEAL_1}"]'), "bad.pbn")


def test_a_tournament_refuses_a_malformed_file_and_plays_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbn"
    bad.write_text(pbn(game(DEAL_1), game(BAD[1][1], board=2)))
    data = tmp_path / "data"
    command = [*CLI, "tournament", "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}", "--deals", "2"]
    command += ["--deals-from", str(bad), "--data-dir", str(data)]
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2
    assert "bad.pbn: deal 2 (board 2), line 10: North holds 12 cards, not 13" in run.stderr
    assert not data.exists()


def test_a_tag_of_megabytes_is_refused_naming_its_line_in_bounded_memory(tmp_path: Path) -> None:
    huge = tmp_path / "huge.pbn"
    huge.write_text(pbn(game(DEAL_1), game(DEAL_1 + " " * 10 * 1024 * 1024, board=2)))
    words = ["tournament", "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}", "--deals", "2"]
    done, peak = oddtrick_measured(
        tmp_path / "peak", *words, "--deals-from", str(huge), "--data-dir", str(tmp_path)
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "oddtrick tournament: huge.pbn: line 10: a tag line of 10,485,838 characters, "
        "longer than a PBN tag may be (1,024)"
    ]
    assert peak < MEMORY_CEILING, f"reading the file held {peak / 2**20:.0f} MiB"


def test_a_file_larger_than_a_deal_set_may_be_is_refused(tmp_path: Path) -> None:
    large = tmp_path / "large.pbn"
    large.write_text(pbn(*(game(DEAL_1, board=n) for n in range(1, 180_001))))
    assert large.stat().st_size > 16 * 1024 * 1024
    with pytest.raises(DealSetError, match=r"large.pbn: larger than a deal set may be \(16 MiB\)"):
        read_deal_set(large)


def test_the_tournaments_help_says_what_a_short_file_does() -> None:
    run = subprocess.run([*CLI, "tournament", "--help"], capture_output=True, text=True, timeout=120)
    assert "--deals-from" in run.stdout
    assert "cutechess" in " ".join(run.stdout.split())


def test_sets_take_the_files_deals_in_order_and_cycle_past_its_end() -> None:
    deal_set = parse_deal_set(pbn(game(DEAL_1), game(DEAL_2, "E", 2), game(DEAL_1, "S", 3)))
    entries = tuple(parse_entry(f"{n}={RANDOM_BOT}") for n in ("a", "b", "c"))
    plan = settings(entries, deals=2, set_size=1, deal_set=deal_set)
    firsts = [run.first_deal for run in plan_runs(plan, "seed") if run.table_no == 0]
    assert firsts == [0, 1, 2, 3, 4, 5]  # three pairings, two sets each; take() cycles
    assert deal_set.take(4, 3).indices == (1, 2, 0)
    assert settings(entries).describe() != plan.describe()  # a deal set is another tournament


async def test_a_tournament_plays_the_files_deals_duplicate_and_logs_its_digest(tmp_path: Path) -> None:
    file = tmp_path / "three.pbn"
    file.write_text(pbn(game(DEAL_1, "N", 1), game(DEAL_2, "E", 2), game(DEAL_1, "W", 3)))
    deal_set = read_deal_set(file)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    entries = tuple(parse_entry(f"{n}={RANDOM_BOT}") for n in ("alpha", "beta"))
    plan = settings(entries, config=GameConfig.classic(), deals=4, set_size=2, deal_set=deal_set)
    standings = await run_tournament(plan, tmp_path / "data", progress_stream=io.StringIO())
    assert f"deals from three.pbn (3 deals, sha256 {digest[:12]})" in standings.render()
    assert standings.to_json()["deal_set"] == deal_set.describe()

    logs = sorted((tmp_path / "data" / "logs").glob("*.jsonl"))
    assert len(logs) == 4  # two sets, each at two tables
    played: dict[str, list[tuple[str, str, str]]] = {}
    north: dict[str, list[str]] = {}
    for log in logs:
        records = list(read_log(log))
        start, end = records[0], records[-1]
        assert start["deal_set"]["sha256"] == digest
        assert "deals" not in start  # the cards are revealed at the end only
        report = check_log(log)
        assert report.ok, report.problems
        assert digest in report.describe()
        dealt = [(r["dealer"]) for r in records if r["type"] == "hand_start"]
        assert dealt == [d["dealer"] for d in end["fixed_deals"]["deals"]]
        key = start["table_id"] + str(end["fixed_deals"]["indices"])
        north.setdefault(key, []).append(start["players"]["N"]["name"].split("~")[0])
        played[key] = [(d["deal"], d["dealer"], d["turned"]) for d in end["fixed_deals"]["deals"]]
        assert f"  deals from three.pbn (3 deals, sha256 {digest})" in match_header(
            replay_records(read_records(log))
        )
    # Set 1 plays deals 1-2, set 2 deals 3 and (cycling) 1, each at both tables.
    indices = sorted({key[key.index("[") :] for key in played})
    assert indices == ["[0, 1]", "[2, 0]"]
    assert all(sorted(names) == ["alpha", "beta"] for names in north.values())  # swapped
    for key, deals in played.items():
        wanted = [deal_set.deals[int(i)] for i in json.loads(key[key.index("[") :])]
        assert deals == [(str(d.deal), str(d.dealer), str(d.turned)) for d in wanted]


def test_sprt_plays_deal_pair_n_from_the_files_deal_n() -> None:
    deal_set = parse_deal_set(pbn(game(DEAL_1), game(DEAL_2, "E", 2)))
    config = deal_config("classic")

    def lowest(view: object) -> object:
        return view.legal_actions[0]  # type: ignore[attr-defined]

    scores = scores_of(lowest, lowest, config, "unused", None, deal_set)
    got = [next(scores) for _ in range(3)]
    expected = [play_pair(lowest, lowest, config, "x", deal_set.deals[i % 2]).score for i in range(3)]
    assert got == expected
    # The top hand (all the honours) wins every trick whoever holds it: exactly 0 per pair.
    assert got == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "command",
    [
        ["sprt", "--bot", f"a={RANDOM_BOT}", "--bot", f"b={RANDOM_BOT}"],
        ["ladder", "serve", "--port", "0"],
    ],
    ids=["sprt", "ladder"],
)
def test_sprt_and_the_ladder_refuse_a_malformed_file_before_playing(
    command: list[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.pbn"
    bad.write_text(pbn(game(DEAL_1), game(BAD[0][1], board=2)))
    data = tmp_path / "data"
    extra = ["--data-dir", str(data)] if command[0] == "ladder" else []
    run = subprocess.run(
        [*CLI, *command, "--deals-from", str(bad), *extra], capture_output=True, text=True, timeout=120
    )
    assert run.returncode != 0
    assert "bad.pbn: deal 2 (board 2), line 10: A♠ is dealt to both North and East" in run.stderr
    assert "deal pairs" not in run.stdout  # sprt played nothing
    assert not (data / "ladder.sqlite3").exists()
