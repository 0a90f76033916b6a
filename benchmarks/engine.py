"""How fast the rules engine plays random hands, next to OpenSpiel and a bare loop.

Run ``python benchmarks/engine.py`` (``--seconds`` to measure longer). It prints
``name: value`` lines on stdout, progress on stderr:

* ``classic_hands_per_s`` and ``contract_hands_per_s``: full random hands
  through the public API (deal, the auction in Contract Whist, 13 tricks,
  scoring), each action picked uniformly among ``state.legal_actions``.
  One ``GameState`` plays a long match of ``MatchFormat.DEALS`` and
  ``start_next_hand()`` deals each hand from the seed, so every hand pays for
  its shuffle (SHA-256 counter mode), the validated play and its
  ``HandResult``, but not for building a match; a fresh state is made only
  when its match runs out of deals. Thrown-in contract hands (four passes)
  count as hands: they are dealt and scored like any other.
* ``openspiel_spades_playouts_per_s`` (when the optional ``open-spiel``
  package is installed, ``pip install -e .[bench]``): OpenSpiel's spades
  from ``new_initial_state()`` to terminal, the 52 chance nodes of the deal
  included, picking uniformly among ``legal_actions()`` the same way: the
  fastest honest loop a Python bot can drive. A spades playout is one hand
  (deal, four bids, 13 tricks), so the ratios compare like with like.
* ``minimal_python_loop_hands_per_s``: a bare whist loop (ints and lists,
  ``random.shuffle``, follow suit, trick winner; no validation, no history,
  no scoring) to calibrate this machine against others.
"""

from __future__ import annotations

import argparse
import random as random_module
import sys
import time
from collections.abc import Callable
from random import random, shuffle

from oddtrick.rules import GameConfig, GameState, MatchFormat, Phase

MAX_DEALS = 100_000


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def measure(name: str, play: Callable[[], int], seconds: float) -> float:
    """Call ``play`` (which plays a batch and returns how many hands it played)
    until ``seconds`` have passed; return hands per second."""
    progress(f"{name}: running for {seconds:g} s ...")
    hands = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        hands += play()
        now = time.perf_counter()
        if now >= deadline:
            break
    rate = hands / (now - start)
    progress(f"{name}: {hands} in {now - start:.2f} s, {rate:.0f}/s")
    return rate


def engine_player(config: GameConfig, label: str) -> Callable[[], int]:
    """A batch of random hands through the public API of ``oddtrick.rules``."""
    matches = 0
    state = GameState(config, f"bench-{label}-0")

    def play() -> int:
        nonlocal state, matches
        for _ in range(100):
            phase = state.phase
            if phase is Phase.MATCH_OVER:
                matches += 1
                state = GameState(config, f"bench-{label}-{matches}")
            elif phase is Phase.HAND_OVER:
                state.start_next_hand()
            apply = state.apply
            while state.to_act is not None:
                actions = state.legal_actions
                apply(actions[int(random() * len(actions))])
        return 100

    return play


def openspiel_player() -> Callable[[], int] | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")

    def play() -> int:
        for _ in range(100):
            state = game.new_initial_state()
            while not state.is_terminal():
                actions = state.legal_actions()
                state.apply_action(actions[int(random() * len(actions))])
        return 100

    return play


def minimal_player() -> Callable[[], int]:
    """A whist hand in the fewest Python operations: card = suit * 13 + rank."""
    deck = list(range(52))

    def hand(leader: int) -> list[int]:
        shuffle(deck)
        hands = [deck[0:13], deck[13:26], deck[26:39], deck[39:52]]
        trumps = deck[51] // 13
        won = [0, 0]
        for _ in range(13):
            held = hands[leader]
            best = held.pop(int(random() * len(held)))
            led = best // 13
            winner = seat = leader
            for _ in range(3):
                seat = (seat + 1) & 3
                held = hands[seat]
                follow = [c for c in held if c // 13 == led] or held
                card = follow[int(random() * len(follow))]
                held.remove(card)
                if card // 13 == best // 13:
                    if card > best:
                        best, winner = card, seat
                elif card // 13 == trumps:
                    best, winner = card, seat
            won[winner & 1] += 1
            leader = winner
        return won

    def play() -> int:
        for dealer in range(100):
            hand((dealer + 1) & 3)
        return 100

    return play


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Random full hands per second through oddtrick.rules, "
        "compared with OpenSpiel's spades (if installed) and a minimal Python loop."
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="how long to measure each game (default: 3)",
    )
    args = parser.parse_args(argv)
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    random_module.seed(2024)
    seconds = args.seconds

    classic = GameConfig.classic(format=MatchFormat.DEALS, deals=MAX_DEALS)
    contract = GameConfig.contract(format=MatchFormat.DEALS, deals=MAX_DEALS)
    classic_rate = measure("classic", engine_player(classic, "classic"), seconds)
    contract_rate = measure("contract", engine_player(contract, "contract"), seconds)
    openspiel = openspiel_player()
    spades_rate = None
    if openspiel is None:
        progress("open-spiel is not installed: skipping spades (pip install -e .[bench])")
    else:
        spades_rate = measure("openspiel spades", openspiel, seconds)
    minimal_rate = measure("minimal python loop", minimal_player(), seconds)

    print(f"classic_hands_per_s: {classic_rate:.0f}")
    print(f"contract_hands_per_s: {contract_rate:.0f}")
    if spades_rate is not None:
        print(f"openspiel_spades_playouts_per_s: {spades_rate:.0f}")
        print(f"ratio_contract_vs_openspiel: {contract_rate / spades_rate:.2f}")
        print(f"ratio_classic_vs_openspiel: {classic_rate / spades_rate:.2f}")
    print(f"minimal_python_loop_hands_per_s: {minimal_rate:.0f}")


if __name__ == "__main__":
    main()
