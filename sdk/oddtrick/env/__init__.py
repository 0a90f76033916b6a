"""Learning environments over the rules engine, for reinforcement-learning libraries.

- :class:`WhistAECEnv` (:mod:`oddtrick.env.aec`): the four seats as a PettingZoo AEC
  environment, for self-play and multi-agent training.
- :class:`WhistGymEnv` (:mod:`oddtrick.env.gym`): one seat as a Gymnasium environment,
  the other three played by SDK bots exactly as a referee's table would show them the
  game, for single-agent libraries (Stable-Baselines3, sb3-contrib's MaskablePPO).

Both play classic Whist or Contract Whist, a chosen number of deals an episode, dealt
reproducibly from ``reset(seed=...)``. docs/learning-agents.md describes the
observation element by element, the action numbers, the masks and the rewards.

Needs the ``env`` extra (PettingZoo, Gymnasium, NumPy): ``pip install "oddtrick[env]"``.
"""

try:
    import gymnasium  # noqa: F401 (checked here first, so the message names the extra)
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as missing:
    raise ImportError(f'oddtrick.env needs {missing.name}: pip install "oddtrick[env]"') from missing

from oddtrick.env._actions import ACTIONS, action_count, action_number, action_of
from oddtrick.env._observation import SEGMENTS, SIZE, Segment, segment
from oddtrick.env.aec import AGENTS, IllegalActionNumber, WhistAECEnv, agent_of, seat_of
from oddtrick.env.gym import WhistGymEnv

__all__ = [
    "ACTIONS",
    "AGENTS",
    "SEGMENTS",
    "SIZE",
    "IllegalActionNumber",
    "Segment",
    "WhistAECEnv",
    "WhistGymEnv",
    "action_count",
    "action_number",
    "action_of",
    "agent_of",
    "seat_of",
    "segment",
]
