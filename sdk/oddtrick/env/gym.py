"""One seat as a Gymnasium environment, the other three played by SDK bots.

>>> from oddtrick.bots.heuristic_bot import HeuristicBot
>>> from oddtrick.env.gym import WhistGymEnv
>>> env = WhistGymEnv("classic", bots=HeuristicBot)
>>> observation, info = env.reset(seed=3)
>>> observation.shape, int(info["action_mask"].sum()) == int(env.action_masks().sum())
((868,), True)

The learner sits at ``seat`` (South by default) and acts by action number; each step
plays its action, then the bots' until it is the learner's turn again or the episode is
over. The bots (``bots``: one for all three seats, or one per seat; any
:class:`oddtrick.Bot` instance, Bot subclass or function of a view, as ``play_local``
takes them; random by default) are shown the game through the SDK's own seat machinery,
as at a referee's table (:mod:`oddtrick.env._seats`). The observation is the seat's
array of the four-seat environment, the legal actions are ``info["action_mask"]`` and
:meth:`WhistGymEnv.action_masks` (sb3-contrib's MaskablePPO calls it), and the reward
of a step is the learner's side's points of every deal the step ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from numpy.typing import NDArray
except ImportError as missing:
    raise ImportError(f'oddtrick.env needs {missing.name}: pip install "oddtrick[env]"') from missing

from oddtrick._bot import Bot
from oddtrick.bots.random_bot import RandomBot
from oddtrick.env._actions import action_count, action_of
from oddtrick.env._episode import Episode, Stepped, draw_seed, episode_config, reward
from oddtrick.env._observation import SIZE, action_mask, highs, observe
from oddtrick.env._render import table_text
from oddtrick.env._seats import BotSeats
from oddtrick.rules import GameConfig, GameState, IllegalAction, Seat

LEARNER = "learner"
"""The learner's name, as the bots are told it."""


class WhistGymEnv(gymnasium.Env[NDArray[np.float32], np.int64]):
    """Classic Whist or Contract Whist at one seat, ``deals`` deals an episode.

    ``rules`` and ``zero_sum`` are :class:`~oddtrick.env.aec.WhistAECEnv`'s. An action the
    rules refuse changes nothing: the step returns the same observation, a reward of
    ``illegal_reward`` and the rules' reason in ``info["illegal_action"]`` (a masked agent
    never makes one). The bots are told ``time_left_ms`` per decision, as a table's
    deadline (nothing enforces it here).
    """

    # Gymnasium reads it from the class (gymnasium.make), but types it an instance attribute.
    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        game: str = "classic",
        deals: int = 1,
        *,
        seat: Seat = Seat.SOUTH,
        bots: object = RandomBot,
        rules: Mapping[str, Any] | None = None,
        zero_sum: bool = False,
        illegal_reward: float = 0.0,
        time_left_ms: int = 5000,
        render_mode: str | None = None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode is None or 'ansi', not {render_mode!r}")
        if isinstance(time_left_ms, bool) or not isinstance(time_left_ms, int) or time_left_ms < 1:
            raise ValueError(
                f"time_left_ms is a whole number of milliseconds, 1 or more, not {time_left_ms!r}"
            )
        if not isinstance(seat, Seat):
            raise TypeError(f"seat is a Seat (e.g. Seat.SOUTH, or Seat.parse('S')), not {seat!r}")
        self.config: GameConfig = episode_config(game, deals, rules)
        self.deals = deals
        self.seat = seat
        self.zero_sum = zero_sum
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self._seats = BotSeats(_bots_by_seat(bots, seat), time_left_ms)
        self.players = {**self._seats.names, seat: LEARNER}
        self.observation_space = spaces.Box(0.0, highs(deals), (SIZE,), np.float32)
        self._count = action_count(self.config.game)
        self.action_space = spaces.Discrete(self._count)
        self._episode: Episode | None = None

    @property
    def game_state(self) -> GameState:
        """The rules' state of the episode, every hand in it: for a harness or a test,
        never the learner's input."""
        return self._current().state

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[NDArray[np.float32], dict[str, Any]]:
        """Deal a new episode (the same cards, and the same bots' randomness, for the same
        ``seed``) and play the bots up to the learner's first turn. ``options`` unused."""
        super().reset(seed=seed)
        episode = self._episode = Episode(self.config, draw_seed(self.np_random))
        bot_seeds = {seat: int(self.np_random.integers(0, 2**63)) for seat in Seat}
        self._seats.start(episode.state, self.players, bot_seeds)
        self._others()  # the learner acts in every deal before it ends: nothing to score yet
        return self._observation(), self._info()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        episode = self._current()
        if episode.over:
            raise RuntimeError("the episode is over: call reset() to deal a new one")
        chosen = action_of(action, self.config.game)
        try:
            stepped = episode.play(chosen, self.seat)
        except IllegalAction as refused:
            return self._observation(), self.illegal_reward, False, False, self._info(str(refused))
        gained = self._told(stepped) + self._others()
        if episode.over:
            self._seats.finish()
        return self._observation(), gained, episode.over, False, self._info()

    def action_masks(self) -> NDArray[np.bool_]:
        """The legal actions now, as sb3-contrib's MaskablePPO asks for them."""
        return self._mask().astype(bool)

    def render(self) -> str | None:
        """The table as a spectator sees it (``render_mode="ansi"``), else nothing."""
        if self.render_mode != "ansi" or self._episode is None:
            return None
        return table_text(self._episode.state.view(None))

    # ------------------------------------------------------------------ inside

    def _others(self) -> float:
        """Play the bots until the learner is to act or the episode is over; the learner's
        reward for the deals they ended."""
        episode = self._current()
        gained = 0.0
        while not episode.over and (seat := episode.state.to_act) is not self.seat:
            assert seat is not None
            gained += self._told(episode.play(self._seats.act(seat), seat))
        return gained

    def _told(self, stepped: Stepped) -> float:
        """Tell the bots what one action did; the learner's reward for it."""
        self._seats.tell(stepped.events)
        return 0.0 if stepped.points is None else reward(stepped.points, self.seat, self.zero_sum)

    def _observation(self) -> NDArray[np.float32]:
        return observe(self._current().state.view(self.seat), self.deals)

    def _mask(self) -> NDArray[np.int8]:
        return action_mask(self._current().state.view(self.seat).legal_actions, self._count)

    def _info(self, refused: str | None = None) -> dict[str, Any]:
        episode = self._current()
        info: dict[str, Any] = {"action_mask": self._mask()}
        if refused is not None:
            info["illegal_action"] = refused
        if episode.over:
            totals, side = episode.state.totals, self.seat.side
            info["seed"] = episode.state.seed
            info["scores"] = (totals[side], totals[1 - side])
        return info

    def _current(self) -> Episode:
        if self._episode is None:
            raise RuntimeError("no episode yet: call reset() first")
        return self._episode


def _bots_by_seat(bots: object, learner: Seat) -> dict[Seat, object]:
    """Each other seat's bot: ``bots`` for all three, or a mapping naming each of them."""
    others = [seat for seat in Seat if seat is not learner]
    if not isinstance(bots, Mapping):
        chosen: dict[Seat, object] = dict.fromkeys(others, bots)
    elif set(bots) != set(others):
        named = ", ".join(seat.name.title() for seat in others)
        raise ValueError(
            f"bots must give one bot for each of {named} (the learner sits {learner.name.title()})"
        )
    else:
        chosen = {seat: bots[seat] for seat in others}
    instances = [bot for bot in chosen.values() if isinstance(bot, Bot)]
    if len({id(bot) for bot in instances}) < len(instances):
        raise ValueError(
            "one bot instance plays one seat (it keeps its seat's memory): give a Bot subclass "
            f"(a fresh bot is made for each seat) or a mapping of one instance per seat, not {bots!r}"
        )
    return chosen


GYM_ID = "oddtrick/Whist-v0"
"""The environment's id in Gymnasium's registry: ``gymnasium.make("oddtrick/Whist-v0",
game="contract")`` once :mod:`oddtrick.env` is imported, or
``gymnasium.make("oddtrick.env:oddtrick/Whist-v0")``, which imports it."""

if GYM_ID not in gymnasium.registry:
    gymnasium.register(id=GYM_ID, entry_point="oddtrick.env.gym:WhistGymEnv")
