"""How fast the rules engine plays random hands, next to OpenSpiel and a bare loop.

Run ``python benchmarks/engine.py`` (``--seconds`` to measure longer). It prints
``name: value`` lines on stdout, progress on stderr:

* ``classic_hands_per_s`` and ``contract_hands_per_s``: full random hands
  through the public API (deal, the auction in Contract Whist, 13 tricks,
  scoring), each action picked uniformly among ``state.legal_actions``.
  A ``GameState`` plays a match of ``MatchFormat.DEALS`` (100 deals) and
  ``start_next_hand()`` deals each hand from the seed, so every hand pays for
  its shuffle (SHA-256 counter mode), the validated play and its
  ``HandResult``; building the state is shared by the 100 hands of a match,
  as in any real match. (A much longer match would only measure the memory
  its history takes: millions of actions.) Thrown-in contract hands (four
  passes) count as hands: they are dealt and scored like any other.
* ``openspiel_spades_playouts_per_s`` (when the optional ``open-spiel``
  package is installed, ``pip install -e .[bench]``): OpenSpiel's spades
  from ``new_initial_state()`` to terminal, the 52 chance nodes of the deal
  included, picking uniformly among ``legal_actions()`` the same way: the
  fastest honest loop a Python bot can drive. A spades playout is one hand
  (deal, four bids, 13 tricks), so the ratios compare like with like.
* ``minimal_python_loop_hands_per_s``: a bare whist loop (ints and lists,
  ``random.shuffle``, follow suit, trick winner; no validation, no history,
  no scoring) to calibrate this machine against others.

The games take turns in rounds of a quarter of a second until each has run
for ``--seconds``, and each figure is the median of its rounds' rates: a
change in the machine's load then affects all of them alike and the ratios
hold, even on a busy machine.
"""

from __future__ import annotations

import argparse
import math
import random as random_module
import statistics
import sys
import time
from collections.abc import Callable
from random import random, shuffle

from oddtrick.rules import GameConfig, GameState, MatchFormat, Phase

DEALS_PER_MATCH = 100
ROUND_SECONDS = 0.25
BATCH = 20
"""Hands per call of a player; the clock is read between batches."""


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def engine_player(config: GameConfig, label: str) -> Callable[[], None]:
    """Plays ``BATCH`` random hands through the public API of ``oddtrick.rules``."""
    matches = 0
    state = GameState(config, f"bench-{label}-0")

    def play() -> None:
        nonlocal state, matches
        for _ in range(BATCH):
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

    return play


def openspiel_player() -> Callable[[], None] | None:
    """Plays ``BATCH`` random spades playouts, or ``None`` without open-spiel."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")

    def play() -> None:
        for _ in range(BATCH):
            state = game.new_initial_state()
            while not state.is_terminal():
                actions = state.legal_actions()
                state.apply_action(actions[int(random() * len(actions))])

    return play


def minimal_player() -> Callable[[], None]:
    """Plays ``BATCH`` whist hands in the fewest Python operations: card = suit * 13 + rank."""
    deck = list(range(52))

    def hand(leader: int) -> None:
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
                follow = [card for card in held if card // 13 == led] or held
                card = follow[int(random() * len(follow))]
                held.remove(card)
                if card // 13 == best // 13:
                    if card > best:
                        best, winner = card, seat
                elif card // 13 == trumps:
                    best, winner = card, seat
            won[winner & 1] += 1
            leader = winner

    def play() -> None:
        for dealer in range(BATCH):
            hand((dealer + 1) & 3)

    return play


def measure(players: dict[str, Callable[[], None]], seconds: float) -> dict[str, float]:
    """Hands per second of each player: the median over interleaved rounds."""
    rounds = max(3, math.ceil(seconds / ROUND_SECONDS))
    rates: dict[str, list[float]] = {name: [] for name in players}
    for number in range(rounds):
        for name, play in players.items():
            hands = 0
            start = time.perf_counter()
            deadline = start + ROUND_SECONDS
            while True:
                play()
                hands += BATCH
                now = time.perf_counter()
                if now >= deadline:
                    break
            rates[name].append(hands / (now - start))
        if number % 4 == 3 or number == rounds - 1:
            so_far = ", ".join(f"{name} {statistics.median(r):.0f}" for name, r in rates.items())
            progress(f"round {number + 1}/{rounds}: {so_far} per second")
    return {name: statistics.median(r) for name, r in rates.items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Random full hands per second through oddtrick.rules, "
        "compared with OpenSpiel's spades (if installed) and a minimal Python loop. "
        "Figures on stdout, progress on stderr."
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="how long to measure each game, at least (default: 3)",
    )
    args = parser.parse_args(argv)
    if not args.seconds > 0:
        parser.error("--seconds must be positive")
    random_module.seed(2024)

    classic = GameConfig.classic(format=MatchFormat.DEALS, deals=DEALS_PER_MATCH)
    contract = GameConfig.contract(format=MatchFormat.DEALS, deals=DEALS_PER_MATCH)
    players = {
        "classic": engine_player(classic, "classic"),
        "contract": engine_player(contract, "contract"),
    }
    spades = openspiel_player()
    if spades is None:
        progress("open-spiel is not installed: no spades (pip install -e '.[bench]')")
    else:
        players["openspiel spades"] = spades
    players["minimal loop"] = minimal_player()
    progress(f"measuring {', '.join(players)}: at least {args.seconds:g} s each, interleaved")
    rates = measure(players, args.seconds)

    print(f"classic_hands_per_s: {rates['classic']:.0f}")
    print(f"contract_hands_per_s: {rates['contract']:.0f}")
    if spades is not None:
        spades_rate = rates["openspiel spades"]
        print(f"openspiel_spades_playouts_per_s: {spades_rate:.0f}")
        print(f"ratio_contract_vs_openspiel: {rates['contract'] / spades_rate:.2f}")
        print(f"ratio_classic_vs_openspiel: {rates['classic'] / spades_rate:.2f}")
    print(f"minimal_python_loop_hands_per_s: {rates['minimal loop']:.0f}")


if __name__ == "__main__":
    main()
