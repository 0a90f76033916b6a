"""Seeded dealing: the published vectors of docs/dealing.md, an independent
re-implementation of the algorithm, the Go reference, and the dealing invariants.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rules_support import play_match

from oddtrick.rules import (
    PACK,
    SEATS,
    Card,
    Deal,
    GameConfig,
    MatchFormat,
    Seat,
    commitment,
    deal_cards,
    format_hand,
    new_seed,
    shuffled_pack,
)

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "dealing.md"
GO_PROGRAM = ROOT / "examples" / "dealing" / "main.go"


# ------------------------------------------------------- the published vectors


def doc_vectors() -> list[dict[str, str]]:
    """Every ``vector:`` block of docs/dealing.md, as its ``key: value`` lines."""
    blocks = re.findall(r"```text\n(vector: .*?)```", DOC.read_text(encoding="utf-8"), re.S)
    vectors = []
    for block in blocks:
        fields = dict(line.split(": ", 1) for line in block.strip().splitlines())
        fields["seed"] = json.loads(fields["seed"])
        vectors.append(fields)
    return vectors


VECTORS = doc_vectors()
VECTOR_IDS = [f"vector-{v['vector']}" for v in VECTORS]


def test_doc_publishes_the_required_vectors() -> None:
    seeds = [v["seed"] for v in VECTORS]
    assert len(VECTORS) >= 5
    assert [v["vector"] for v in VECTORS] == [str(i) for i in range(1, len(VECTORS) + 1)]
    assert "0" in seeds
    assert any(not seed.isascii() for seed in seeds)
    assert {v["dealer"] for v in VECTORS} == {"N", "E", "S", "W"}
    assert any(int(v["deal number"]) > 65535 for v in VECTORS)
    # Two vectors exercise the rejection step of draw(n), one in the shuffle, one in the cut.
    assert {rejections(v["seed"], int(v["deal number"]))[1] for v in VECTORS} >= {
        "shuffle",
        "cut",
    }


@pytest.mark.parametrize("vector", VECTORS, ids=VECTOR_IDS)
def test_engine_deals_the_published_vector(vector: dict[str, str]) -> None:
    seed, number, dealer = vector["seed"], int(vector["deal number"]), Seat.parse(vector["dealer"])
    deal, turned, cut = deal_cards(seed, number, dealer)
    assert str(deal) == vector["deal"]
    assert str(turned) == vector["turned"]
    assert str(cut) == vector["cut"]
    assert commitment(seed) == vector["commitment"]
    assert (seed.encode("utf-8").hex() or "(empty)") == vector["seed bytes"]


@pytest.mark.parametrize("vector", VECTORS, ids=VECTOR_IDS)
def test_independent_implementation_deals_the_published_vector(vector: dict[str, str]) -> None:
    seed, number = vector["seed"], int(vector["deal number"])
    assert reference_deal(seed, number, "NESW".index(vector["dealer"])) == (
        vector["deal"],
        vector["turned"],
        vector["cut"],
    )
    assert hashlib.sha256(seed.encode("utf-8")).hexdigest() == vector["commitment"]


def test_worked_example_in_the_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    fields = dict(re.findall(r"^(block 0 \w+|shuffled pack):\s+(.*)$", text, re.M))
    message = b"oddtrick-deal-v1" + (1).to_bytes(4, "big") + (0).to_bytes(4, "big") + b"example"
    digest = hashlib.sha256(message).digest()
    assert fields["block 0 input"] == message.hex()
    assert fields["block 0 digest"] == digest.hex()
    assert fields["block 0 words"] == " ".join(map(str, struct.unpack(">8I", digest)))
    pack, _ = shuffled_pack("example", 1)
    assert fields["shuffled pack"] == " ".join(map(str, pack))
    assert fields["shuffled pack"] == " ".join(reference_shuffle("example", 1)[0])


# ----------------------------------------------- an independent implementation


def _words(seed: str, number: int) -> list[int]:
    """The first eight blocks of the stream: far more words than a deal needs."""
    words: list[int] = []
    for block in range(8):
        message = b"oddtrick-deal-v1" + struct.pack(">II", number, block) + seed.encode("utf-8")
        words.extend(struct.unpack(">8I", hashlib.sha256(message).digest()))
    return words


def reference_shuffle(seed: str, number: int) -> tuple[list[str], str, list[str]]:
    """The shuffled pack, the cut card (as text) and where words were rejected,
    written from docs/dealing.md without looking at the engine."""
    words = iter(_words(seed, number))
    rejected: list[str] = []

    def draw(n: int, where: str) -> int:
        limit = 2**32 - 2**32 % n
        while (word := next(words)) >= limit:
            rejected.append(where)
        return word % n

    ranks, suits = "23456789TJQKA", "CDHS"
    names = [rank + suit for suit in suits for rank in ranks]
    pack = list(range(52))
    for i in range(51, 0, -1):
        j = draw(i + 1, "shuffle")
        pack[i], pack[j] = pack[j], pack[i]
    cut = draw(52, "cut")
    return [names[i] for i in pack], names[cut], rejected


def rejections(seed: str, number: int) -> tuple[int, str]:
    rejected = reference_shuffle(seed, number)[2]
    return len(rejected), rejected[0] if rejected else ""


def reference_deal(seed: str, number: int, dealer: int) -> tuple[str, str, str]:
    pack, cut, _ = reference_shuffle(seed, number)
    hands: list[list[str]] = [[], [], [], []]
    for k, name in enumerate(pack):
        hands[(dealer + 1 + k) % 4].append(name)
    order = "23456789TJQKA"

    def pbn(hand: list[str]) -> str:
        return ".".join(
            "".join(sorted((c[0] for c in hand if c[1] == suit), key=order.index, reverse=True))
            for suit in "SHDC"
        )

    return "N:" + " ".join(pbn(hand) for hand in hands), pack[51], cut


@settings(max_examples=150)
@given(seed=st.text(max_size=40), number=st.integers(1, 2**32 - 1), dealer=st.integers(0, 3))
def test_engine_agrees_with_the_independent_implementation(seed: str, number: int, dealer: int) -> None:
    deal, turned, cut = deal_cards(seed, number, Seat(dealer))
    assert (str(deal), str(turned), str(cut)) == reference_deal(seed, number, dealer)


# ------------------------------------------------------------------ invariants


@settings(max_examples=150)
@given(seed=st.text(max_size=30), number=st.integers(1, 100_000), dealer=st.sampled_from(SEATS))
def test_every_deal_is_52_distinct_cards_13_each_dealer_last(seed: str, number: int, dealer: Seat) -> None:
    deal, turned, cut = deal_cards(seed, number, dealer)
    assert all(len(deal[seat]) == 13 for seat in SEATS)
    assert sorted(card for seat in SEATS for card in deal[seat]) == list(PACK)
    pack, pack_cut = shuffled_pack(seed, number)
    assert sorted(pack) == list(PACK)
    assert cut is pack_cut
    # Clockwise from the dealer's left, one card at a time: the dealer gets
    # positions 3, 7, …, 51, and the 52nd card is the one turned up.
    for k, card in enumerate(pack):
        assert card in deal[Seat((dealer + 1 + k) % 4)]
    assert turned is pack[51]
    assert turned in deal[dealer]
    assert isinstance(cut, Card)


@settings(max_examples=50)
@given(seed=st.text(max_size=30), number=st.integers(1, 1000))
def test_the_dealer_only_rotates_who_gets_which_cards(seed: str, number: int) -> None:
    north_deals, turned, cut = deal_cards(seed, number, Seat.NORTH)
    for dealer in SEATS:
        deal, dealer_turned, dealer_cut = deal_cards(seed, number, dealer)
        assert (dealer_turned, dealer_cut) == (turned, cut)
        for seat in SEATS:
            assert deal[seat] == north_deals[Seat((seat - dealer) % 4)]


def test_deal_numbers_and_seeds_change_the_deal() -> None:
    deals = {str(deal_cards("seed", n, Seat.NORTH)[0]) for n in range(1, 51)}
    deals |= {str(deal_cards(f"seed{n}", 1, Seat.NORTH)[0]) for n in range(50)}
    assert len(deals) == 100


def test_deal_numbers_start_at_one() -> None:
    with pytest.raises(ValueError, match="start at 1"):
        deal_cards("seed", 0, Seat.NORTH)


def test_new_seeds_are_fresh_and_their_commitment_is_their_sha256() -> None:
    seeds = {new_seed() for _ in range(20)}
    assert len(seeds) == 20
    for seed in seeds:
        assert re.fullmatch(r"[0-9a-f]{64}", seed)
        assert commitment(seed) == hashlib.sha256(seed.encode()).hexdigest()


def test_every_hand_of_a_match_is_dealt_by_its_deal_number_thrown_in_hands_included() -> None:
    config = GameConfig.contract(format=MatchFormat.DEALS, deals=12)
    state = play_match(config, "deal numbers", 4, pass_rate=0.8)
    results = state.hand_results
    assert any(r.deal is not None and r.contract is None for r in results)  # a thrown-in hand
    for number, result in enumerate(results, 1):
        assert result.hand_number == number
        assert result.dealer is Seat((number - 1) % 4)
        assert result.deal == deal_cards(state.seed, number, result.dealer)[0]


def test_hands_print_in_pbn_order() -> None:
    deal = Deal.parse(VECTORS[0]["deal"])
    assert format_hand(deal[Seat.SOUTH]) == "KT985.J7653..QJ5"


# ---------------------------------------------------------- the Go reference


def go_environment(tmp: Path) -> dict[str, str]:
    """The caller's environment, minus settings that could turn a plain build of one
    standard-library file into a module download; a cache dir only if go has none."""
    env = dict(os.environ)
    env["GOFLAGS"] = ""
    env["GO111MODULE"] = "on"
    env["GOTOOLCHAIN"] = "local"
    probe = subprocess.run(["go", "env", "GOCACHE"], capture_output=True, text=True, env=env, check=False)
    if probe.returncode != 0 or not probe.stdout.strip() or probe.stdout.strip() == "off":
        env["GOCACHE"] = str(tmp / "gocache")
    return env


@pytest.fixture(scope="module")
def go_binary(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    if shutil.which("go") is None:
        pytest.skip("the go toolchain is not installed; the Go reference is not checked")
    tmp = tmp_path_factory.mktemp("go")
    env = go_environment(tmp)
    binary = tmp / "dealing"
    build = subprocess.run(
        ["go", "build", "-o", str(binary), str(GO_PROGRAM)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp,
        check=False,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    return binary, env


def expected_output(vector: dict[str, str]) -> str:
    return (
        f"{vector['deal']}\nturned: {vector['turned']}\ncut: {vector['cut']}\n"
        f"commitment: {vector['commitment']}\n"
    )


@pytest.mark.parametrize("vector", VECTORS, ids=VECTOR_IDS)
def test_go_reference_deals_the_published_vector(
    vector: dict[str, str], go_binary: tuple[Path, dict[str, str]]
) -> None:
    binary, env = go_binary
    run = subprocess.run(
        [str(binary), vector["seed"], vector["deal number"], vector["dealer"]],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        check=False,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected_output(vector)


def test_go_reference_agrees_with_the_engine_on_random_inputs(
    go_binary: tuple[Path, dict[str, str]],
) -> None:
    binary, env = go_binary
    rng = random.Random(2024)
    for _ in range(10):
        seed = "".join(rng.choice("abc019 ♠é東") for _ in range(rng.randrange(1, 12)))
        number = rng.randrange(1, 2**32)
        dealer = rng.choice(SEATS)
        deal, turned, cut = deal_cards(seed, number, dealer)
        run = subprocess.run(
            [str(binary), seed, str(number), dealer.letter],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            check=True,
            timeout=30,
        )
        assert run.stdout.splitlines() == [
            str(deal),
            f"turned: {turned}",
            f"cut: {cut}",
            f"commitment: {commitment(seed)}",
        ]


def test_go_run_as_documented(go_binary: tuple[Path, dict[str, str]]) -> None:
    _, env = go_binary
    run = subprocess.run(
        ["go", "run", "examples/dealing/main.go", "example", "1", "N"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        cwd=ROOT,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected_output(VECTORS[0])
    assert run.stdout in DOC.read_text(encoding="utf-8")


def test_go_refuses_bad_arguments(go_binary: tuple[Path, dict[str, str]]) -> None:
    binary, env = go_binary
    for args in (["seed"], ["seed", "0", "N"], ["seed", "1", "X"], ["seed", "x", "N"]):
        run = subprocess.run([str(binary), *args], capture_output=True, text=True, env=env, check=False)
        assert run.returncode == 2, args
        assert run.stdout == ""
