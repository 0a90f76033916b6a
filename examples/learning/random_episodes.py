"""Play random episodes through the learning environments and print how fast they run.

Trains nothing: every action is drawn uniformly among the legal ones (the action mask),
as a learner's first episodes are, so the rate printed is the environment's own cost per
episode, the ceiling of any training loop on top of it.

    python examples/learning/random_episodes.py                 # 1,000 episodes, classic, PettingZoo
    python examples/learning/random_episodes.py --game contract --deals 4
    python examples/learning/random_episodes.py --env gym --bots heuristic

Needs the env extra: pip install "oddtrick[env]". docs/learning-agents.md describes the
environments.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

try:
    import numpy as np

    from oddtrick.bots.heuristic_bot import HeuristicBot
    from oddtrick.bots.random_bot import RandomBot
    from oddtrick.env import WhistAECEnv, WhistGymEnv
except ImportError as missing:
    sys.exit(f'{missing}\n(the learning environments need the env extra: pip install "oddtrick[env]")')

BOTS = {"random": RandomBot, "heuristic": HeuristicBot}


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run random episodes (masked random actions) through oddtrick's learning "
        "environments and print their rate in episodes/s and steps/s.",
    )
    parser.add_argument("--episodes", type=int, default=1000, help="episodes to play (default 1000)")
    parser.add_argument("--game", choices=("classic", "contract"), default="classic", help="default classic")
    parser.add_argument("--deals", type=int, default=1, help="deals per episode (default 1)")
    parser.add_argument(
        "--env",
        choices=("aec", "gym"),
        default="aec",
        help="aec: the four seats through PettingZoo (default); gym: South through Gymnasium, "
        "the other three seats played by --bots",
    )
    parser.add_argument(
        "--bots", choices=sorted(BOTS), default="random", help="the other seats' bots with --env gym"
    )
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the random actions")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        parser.error(f"--episodes must be at least 1, not {args.episodes}")
    if args.deals < 1:
        parser.error(f"--deals must be at least 1, not {args.deals}")
    return args


def pick(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A legal action drawn uniformly (cheaper than ``rng.choice``, which would be a good
    part of what is measured)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def aec_episodes(args: argparse.Namespace, rng: np.random.Generator) -> int:
    """Play the episodes with the four seats; the number of actions taken."""
    env = WhistAECEnv(args.game, deals=args.deals)
    steps = 0
    for episode in range(args.episodes):
        env.reset(seed=args.seed + episode)
        for _ in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            env.step(pick(observation["action_mask"], rng))
            steps += 1
    return steps


def gym_episodes(args: argparse.Namespace, rng: np.random.Generator) -> int:
    """Play the episodes at one seat against bots; the number of the learner's actions."""
    env = WhistGymEnv(args.game, deals=args.deals, bots=BOTS[args.bots])
    steps = 0
    for episode in range(args.episodes):
        _, info = env.reset(seed=args.seed + episode)
        over = False
        while not over:
            _, _, over, _, info = env.step(pick(info["action_mask"], rng))
            steps += 1
    return steps


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    rng = np.random.default_rng(args.seed)
    started, cpu_started = time.perf_counter(), time.process_time()
    steps = (aec_episodes if args.env == "aec" else gym_episodes)(args, rng)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    against = f", against {args.bots} bots" if args.env == "gym" else ""
    deals = "1 deal" if args.deals == 1 else f"{args.deals} deals"
    # Beside the wall-clock rate, the rate per second of this process's CPU time: on a
    # machine shared with other work, the figure that depends least on the others.
    print(
        f"{args.episodes} episodes of {args.game} whist ({deals} each, {args.env}{against}): "
        f"{steps} steps in {seconds:.2f} s, {args.episodes / seconds:.1f} episodes/s, "
        f"{steps / seconds:.0f} steps/s ({args.episodes / max(cpu, 1e-9):.1f} episodes per CPU second)"
    )


if __name__ == "__main__":
    main()
