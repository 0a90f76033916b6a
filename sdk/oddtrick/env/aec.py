"""The four seats as a PettingZoo AEC environment (agents act in turn, as at the table).

>>> from oddtrick.env import WhistAECEnv
>>> env = WhistAECEnv("contract", deals=2)
>>> env.reset(seed=7)
>>> observation, reward, terminated, truncated, info = env.last()
>>> sorted(observation), env.agent_selection
(['action_mask', 'observation'], 'player_1')

Agents ``player_0`` … ``player_3`` are North, East, South and West. Each observes a
dict: ``observation``, the seat's array (:mod:`oddtrick.env._observation`), and
``action_mask``, 1 at each legal action's number (:mod:`oddtrick.env._actions`). At the
step that ends a deal every agent is rewarded with its side's points for that deal,
from the rules' own score; the episode ends after its last deal. docs/learning-agents.md
describes it all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

try:
    import numpy as np
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from numpy.typing import NDArray
    from pettingzoo import AECEnv
except ImportError as missing:
    raise ImportError(f'oddtrick.env needs {missing.name}: pip install "oddtrick[env]"') from missing

from oddtrick.env._actions import action_count, action_of, describe
from oddtrick.env._episode import Episode, draw_seed, episode_config, reward
from oddtrick.env._observation import SIZE, action_mask, highs, observe
from oddtrick.env._render import table_text
from oddtrick.rules import SEATS, GameConfig, GameState, IllegalAction, Seat

AGENTS: Final = ("player_0", "player_1", "player_2", "player_3")
"""The agents, North, East, South, West: PettingZoo's usual names (its API test asks for
``name_number``); :func:`seat_of` and :func:`agent_of` translate."""


def seat_of(agent: str) -> Seat:
    """The seat an agent plays."""
    try:
        return SEATS[AGENTS.index(agent)]
    except ValueError:
        raise ValueError(f"no agent {agent!r}: the agents are {', '.join(AGENTS)}") from None


def agent_of(seat: Seat) -> str:
    return AGENTS[seat]


class IllegalActionNumber(ValueError):
    """An action the rules refuse now; the environment is as it was."""


class WhistAECEnv(AECEnv):  # type: ignore[misc]
    """Classic Whist or Contract Whist for four agents, ``deals`` deals an episode.

    ``rules`` takes house rules of docs/rules.md (``trump_selection``, ``honours``,
    ``no_trump_every_fifth``, ``doubling``); ``zero_sum`` makes each deal's reward the
    side's points less the other side's. ``render_mode="ansi"`` makes :meth:`render`
    return the table as a spectator sees it.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "oddtrick_whist_v0",
        "render_modes": ["ansi"],
        "render_fps": 1,
        "is_parallelizable": False,
    }

    def __init__(
        self,
        game: str = "classic",
        deals: int = 1,
        *,
        rules: Mapping[str, Any] | None = None,
        zero_sum: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode is None or 'ansi', not {render_mode!r}")
        self.config: GameConfig = episode_config(game, deals, rules)
        self.deals: int = deals
        self.zero_sum = zero_sum
        self.render_mode = render_mode
        self.possible_agents: list[str] = list(AGENTS)
        self.agents: list[str] = []
        count = action_count(self.config.game)
        observation = spaces.Dict(
            {
                "observation": spaces.Box(0.0, highs(deals), (SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (count,), np.int8),
            }
        )
        self._observation_spaces = dict.fromkeys(AGENTS, observation)
        self._action_spaces = {agent: spaces.Discrete(count) for agent in AGENTS}
        self._rng: np.random.Generator | None = None
        self._episode: Episode | None = None

    # ------------------------------------------------------------------ spaces

    def observation_space(self, agent: str) -> spaces.Dict:
        """The same object every time (PettingZoo seeds spaces through it)."""
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._action_spaces[agent]

    # ------------------------------------------------------------------ episode

    @property
    def game_state(self) -> GameState:
        """The rules' state of the episode: every hand, for a harness or a test; never an
        agent's input (an agent knows what :meth:`observe` gives it)."""
        return self._current().state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new episode; with ``seed``, the same cards every time (``options`` unused)."""
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
        self._episode = Episode(self.config, draw_seed(self._rng))
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = self._to_act()

    def step(self, action: Any) -> None:
        """The selected agent's action, by number; ``None`` for an agent whose episode is over.

        An action the rules refuse raises :class:`IllegalActionNumber` (its message says
        why and which actions are legal) and changes nothing.
        """
        episode = self._current()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        chosen = action_of(action, self.config.game)
        try:
            stepped = episode.play(chosen, seat_of(agent))
        except IllegalAction as refused:
            legal = ", ".join(f"{describe(int(n))}={n}" for n in np.flatnonzero(self._mask(agent)))
            raise IllegalActionNumber(f"{agent}: {refused} (legal now: {legal})") from refused
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if stepped.points is not None:
            for other in self.agents:
                self.rewards[other] = reward(stepped.points, seat_of(other), self.zero_sum)
        if episode.over:
            self.terminations = dict.fromkeys(self.agents, True)
            totals = episode.state.totals
            for other in self.agents:
                side = seat_of(other).side
                self.infos[other] = {"seed": episode.state.seed, "scores": (totals[side], totals[1 - side])}
        else:
            self.agent_selection = self._to_act()
        self._accumulate_rewards()

    def _current(self) -> Episode:
        if self._episode is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._episode

    def _to_act(self) -> str:
        seat = self._current().state.to_act
        assert seat is not None
        return agent_of(seat)

    # ------------------------------------------------------------------ observing

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        """What ``agent`` knows now: its array and its mask (all zero when it is not to act)."""
        view = self._current().state.view(seat_of(agent))
        return {
            "observation": observe(view, self.deals),
            "action_mask": action_mask(view.legal_actions, int(self._action_spaces[agent].n)),
        }

    def _mask(self, agent: str) -> NDArray[np.int8]:
        view = self._current().state.view(seat_of(agent))
        return action_mask(view.legal_actions, int(self._action_spaces[agent].n))

    def render(self) -> str | None:
        """The table as a spectator sees it (``render_mode="ansi"``), else nothing."""
        if self.render_mode != "ansi" or self._episode is None:
            return None
        return table_text(self._episode.state.view(None))

    def close(self) -> None:
        """Nothing to release: the environment holds no process, file or window."""
