"""The learning environments (oddtrick.env) against their libraries' own checkers and the rules.

PettingZoo's ``api_test`` and ``seed_test`` and Gymnasium's ``check_env`` judge the API;
the rules engine judges the rest: every mask is the rules' legal actions, every reward
the rules' score of the same deal replayed from its seed, every observation blind to
the cards its seat cannot know (checked as a cheat would look for them, and by swapping
them), every seeded reset the same deal.
"""

from __future__ import annotations

import doctest
import importlib.util
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import oddtrick.env.aec
import oddtrick.env.gym
from oddtrick import Bot, BotView
from oddtrick.bots.heuristic_bot import HeuristicBot
from oddtrick.bots.random_bot import RandomBot
from oddtrick.env import (
    ACTIONS,
    AGENTS,
    IllegalActionNumber,
    WhistAECEnv,
    WhistGymEnv,
    agent_of,
    seat_of,
    segment,
)
from oddtrick.env._observation import observe
from oddtrick.rules import (
    Card,
    Deal,
    GameResult,
    GameState,
    HandEnded,
    HandResult,
    MatchResult,
    Phase,
    Seat,
    replay,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "learning" / "random_episodes.py"

CONFIGS: dict[str, dict[str, Any]] = {
    "classic": {"game": "classic"},
    "classic-cut-honours": {"game": "classic", "rules": {"trump_selection": "cut", "honours": True}},
    "classic-rotation": {
        "game": "classic",
        "rules": {"trump_selection": "fixed_rotation", "no_trump_every_fifth": True},
    },
    "contract": {"game": "contract"},
    "contract-doubling": {"game": "contract", "rules": {"doubling": True}},
}

PETTINGZOO_DICT_WARNINGS = {
    # PettingZoo's checker exempts its own card and board games by name from these two:
    # their observations are the same dict of an array and an action mask as ours.
    "Observation is not a NumPy array",
    "Observation space for each agent probably should be gymnasium.spaces.box or gymnasium.spaces.discrete",
}


def play_randomly(
    env: WhistAECEnv, seed: int, check: Callable[[WhistAECEnv, str, dict[str, Any]], None] | None = None
) -> tuple[list[tuple[str, int, dict[str, float]]], dict[str, dict[str, Any]]]:
    """One episode of masked random actions: each step's agent, action and rewards, and
    the info each agent's episode ended with."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps: list[tuple[str, int, dict[str, float]]] = []
    final: dict[str, dict[str, Any]] = {}
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            final[agent] = info
            env.step(None)
            continue
        if check is not None:
            check(env, agent, observation)
        number = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        env.step(number)
        steps.append((agent, number, dict(env.rewards)))
    return steps, final


# ---------------------------------------------------------------- the libraries' checkers


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_pettingzoo_api_test_passes(game: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(WhistAECEnv(game, deals=2), num_cycles=60)
    assert {str(warning.message) for warning in caught} <= PETTINGZOO_DICT_WARNINGS


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_pettingzoo_seed_test_passes(game: str) -> None:
    seed_test(lambda: WhistAECEnv(game, deals=2), num_cycles=60)


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_gymnasium_check_env_passes(game: str) -> None:
    """Made through Gymnasium's registry, so the checker also renders and closes it
    as made; any warning of the checker fails the test (pytest's warnings are errors)."""
    env = gymnasium.make("oddtrick/Whist-v0", game=game, deals=2, bots=HeuristicBot)
    check_env(env.unwrapped)


# ---------------------------------------------------------------- masks and rewards


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_mask_is_the_rules_legal_actions(name: str) -> None:
    env = WhistAECEnv(deals=2, **CONFIGS[name])
    count = int(env.action_space(AGENTS[0]).n)

    def check(env: WhistAECEnv, agent: str, observation: dict[str, Any]) -> None:
        state, seat = env.game_state, seat_of(agent)
        legal = [int(state.is_legal(ACTIONS[number], seat)) for number in range(count)]
        assert observation["action_mask"].tolist() == legal
        for other in AGENTS:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), f"{other} may act on {agent}'s turn"

    steps = sum(len(play_randomly(env, seed, check)[0]) for seed in range(8))
    assert steps >= 8 * 2 * 52


@pytest.mark.parametrize("zero_sum", [False, True])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rewards_are_the_rules_score_of_the_same_deals(name: str, zero_sum: bool) -> None:
    env = WhistAECEnv(deals=3, zero_sum=zero_sum, **CONFIGS[name])
    for seed in range(3):
        steps, final = play_randomly(env, seed)
        state = GameState(env.config, final["player_0"]["seed"])  # dealt again by the rules, from the seed
        for agent, number, rewards in steps:
            if state.phase is Phase.HAND_OVER:
                state.start_next_hand()
            ended = [
                event.result
                for event in state.step(ACTIONS[number], seat_of(agent))
                if isinstance(event, HandEnded)
            ]
            expected = dict.fromkeys(AGENTS, 0.0)
            if ended:
                points = [ended[0].points[side] + ended[0].honours[side] for side in (0, 1)]
                for other in AGENTS:
                    ours, theirs = points[seat_of(other).side], points[1 - seat_of(other).side]
                    expected[other] = float(ours - theirs if zero_sum else ours)
            assert rewards == expected
        assert state.phase is Phase.MATCH_OVER
        assert len(state.hand_results) == 3
        for agent in AGENTS:
            side = seat_of(agent).side
            assert final[agent] == {
                "seed": state.seed,
                "scores": (state.totals[side], state.totals[1 - side]),
            }


def test_a_deal_ends_with_every_agent_rewarded_at_once() -> None:
    """The step that plays the last card rewards all four agents (not only the one
    that played it); the other steps reward nobody."""
    env = WhistAECEnv("classic", deals=2)
    steps, _ = play_randomly(env, 5)
    rewarded = [index for index, (_, _, rewards) in enumerate(steps) if any(rewards.values())]
    assert rewarded == [51, 103]
    for index in rewarded:
        rewards = steps[index][2]
        assert rewards["player_0"] == rewards["player_2"]
        assert rewards["player_1"] == rewards["player_3"]
        assert (rewards["player_0"] == 0) != (rewards["player_1"] == 0)  # one side scores odd tricks


# ---------------------------------------------------------------- hidden information


def named_cards(array: np.ndarray) -> set[Card]:
    """Every card the card-valued parts of an observation name (hand, played, trick, turned)."""
    named = set()
    for name in ("hand", "played", "trick", "turned"):
        part = array[segment(name).slice]
        named.update(Card.from_index(int(index) % 52) for index in np.flatnonzero(part))
    return named


def cards_hidden_from(state: GameState, seat: Seat) -> set[Card]:
    """What ``seat`` cannot know now: the other seats' unplayed cards, but the turned card
    (seen by all, in the dealer's hand until played)."""
    hidden = {card for other in Seat if other is not seat for card in state.hand_of(other)}
    hidden.discard(state.turned_card)  # type: ignore[arg-type]
    return hidden


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_no_observation_names_a_card_its_seat_cannot_know(name: str) -> None:
    """A cheat's reading: every card named anywhere in a seat's observation, at every
    step and for every seat, is its own, played, or the turned card; never one that
    another seat still holds unseen."""
    env = WhistAECEnv(deals=2, **CONFIGS[name])
    looked = 0

    def check(env: WhistAECEnv, agent: str, observation: dict[str, Any]) -> None:
        nonlocal looked
        state = env.game_state
        for other in AGENTS:
            array = env.observe(other)["observation"]
            seat = seat_of(other)
            assert not named_cards(array) & cards_hidden_from(state, seat), f"{other} sees a hidden card"
            hand = {Card.from_index(int(i)) for i in np.flatnonzero(array[segment("hand").slice])}
            assert hand == set(state.hand_of(seat))
            looked += 1

    for seed in range(4):
        play_randomly(env, seed, check)
    assert looked >= 4 * 2 * 52 * 4


def swapped(deal: Deal, first: tuple[Seat, Card], second: tuple[Seat, Card]) -> Deal:
    hands = {seat: list(deal[seat]) for seat in Seat}
    (a, x), (b, y) = first, second
    hands[a].remove(x)
    hands[b].remove(y)
    hands[a].append(y)
    hands[b].append(x)
    return Deal(hands)


def swap_for(state: GameState, observer: Seat, rng: np.random.Generator) -> tuple[Deal, set[Seat]] | None:
    """The deal with two unplayed cards of one suit exchanged between two other seats
    (the play so far stays legal: each hand keeps its suits' lengths), and those two."""
    others = [seat for seat in Seat if seat is not observer]
    rng.shuffle(others)
    a, b = others[0], others[1]
    for x in state.hand_of(a):
        for y in state.hand_of(b):
            if x.suit is y.suit and state.turned_card not in (x, y):
                return swapped(state.deal, (a, x), (b, y)), {a, b}
    return None


@pytest.mark.parametrize("name", ["classic", "classic-cut-honours", "contract-doubling"])
def test_observations_do_not_change_when_hidden_cards_are_swapped(name: str) -> None:
    """Two deals that differ only in cards another seat holds unseen give a seat the
    same observation and mask at every point of the play; the seats holding the swapped
    cards do see the change (so the comparison can fail)."""
    env = WhistAECEnv(deals=1, **CONFIGS[name])
    rng = np.random.default_rng(1)
    compared = 0
    for seed in range(6):
        play_randomly(env, seed)
        full = env.game_state.history
        for cut in range(0, len(full) - 1, 5):
            original = replay(env.config, env.game_state.seed, full[:cut])
            observer = original.to_act
            assert observer is not None
            found = swap_for(original, observer, rng)
            if found is None:
                continue
            deal, holders = found
            twin = GameState.from_deal(
                env.config,
                deal,
                dealer=original.dealer,
                turned_card=original.turned_card,
                cut_card=original.cut_card,
                actions=[action for _, action in full[:cut]],
            )
            assert twin.history == original.history
            for seat in Seat:
                mine, theirs = observe(original.view(seat), 1), observe(twin.view(seat), 1)
                if seat in holders:
                    assert not np.array_equal(mine, theirs)
                else:
                    assert np.array_equal(mine, theirs), f"{seat} tells the deals apart after {cut} actions"
                    assert original.view(seat).legal_actions == twin.view(seat).legal_actions
            compared += 1
    assert compared >= 20


def test_the_environment_observes_through_the_seat_view() -> None:
    """The environment's observation is :func:`observe` of the rules' view of that seat
    (what the swap test compares), for every agent."""
    env = WhistAECEnv("contract", deals=1)
    env.reset(seed=2)
    for agent in AGENTS:
        expected = observe(env.game_state.view(seat_of(agent)), 1)
        assert np.array_equal(env.observe(agent)["observation"], expected)


# ---------------------------------------------------------------- seeds


def first_observations(env: WhistAECEnv) -> list[np.ndarray]:
    return [env.observe(agent)["observation"] for agent in AGENTS]


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_a_seeded_reset_deals_the_same_cards(game: str) -> None:
    env, other = WhistAECEnv(game), WhistAECEnv(game)
    env.reset(seed=7)
    dealt, seen = env.game_state.deal, first_observations(env)
    play_randomly(env, 3)  # the environment has moved on
    env.reset(seed=7)
    other.reset(seed=7)
    for again in (env, other):
        assert again.game_state.deal == dealt
        assert all(map(np.array_equal, first_observations(again), seen))
    other.reset(seed=8)
    assert other.game_state.deal != dealt
    env.reset(seed=7)
    other.reset(seed=7)
    env.reset()
    other.reset()  # unseeded resets after the same seed deal alike too
    assert env.game_state.deal == other.game_state.deal != dealt


# ---------------------------------------------------------------- refusals


def test_stepping_outside_an_episode_says_to_reset() -> None:
    for env in (WhistAECEnv(), WhistGymEnv()):
        with pytest.raises(RuntimeError, match=r"no episode yet: call reset\(\) first"):
            env.step(0)
    gym = WhistGymEnv()
    play_gym(gym, 0)
    with pytest.raises(RuntimeError, match=r"the episode is over: call reset\(\)"):
        gym.step(0)


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    env = WhistAECEnv("classic")
    env.reset(seed=4)
    agent = env.agent_selection
    held = env.game_state.hand_of(seat_of(agent))
    illegal = next(card.index for card in ACTIONS[:52] if card not in held)
    before = env.game_state.history
    with pytest.raises(IllegalActionNumber, match=r"does not hold .*legal now: "):
        env.step(illegal)
    assert env.game_state.history == before
    assert env.agent_selection == agent
    with pytest.raises(ValueError, match="outside classic whist's actions, 0 to 51"):
        env.step(52)
    with pytest.raises(TypeError, match="an action is a whole number from 0 to 51"):
        env.step(1.0)
    assert env.game_state.history == before


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        ({"game": "bridge"}, ValueError, "game must be 'classic' or 'contract', not 'bridge'"),
        ({"deals": 0}, ValueError, "format 'deals' needs a number of deals from 1"),
        ({"rules": {"target": 7}}, ValueError, "rules takes the house rules .* not target"),
        ({"game": "contract", "rules": {"honours": True}}, ValueError, "honours are scored only in classic"),
        ({"render_mode": "human"}, ValueError, "render_mode is None or 'ansi'"),
    ],
)
def test_bad_arguments_are_refused_with_what_to_give(
    arguments: dict[str, Any], error: type, message: str
) -> None:
    for make in (WhistAECEnv, WhistGymEnv):
        with pytest.raises(error, match=message):
            make(**arguments)


def test_without_the_extra_the_import_says_what_to_install() -> None:
    code = "import sys; sys.modules['pettingzoo'] = None; import oddtrick.env"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert 'oddtrick.env needs pettingzoo: pip install "oddtrick[env]"' in result.stderr


# ---------------------------------------------------------------- the Gymnasium seat


def play_gym(env: WhistGymEnv, seed: int) -> tuple[list[tuple[np.ndarray, float]], float, dict[str, Any]]:
    """One episode of masked random actions: each step's observation and reward, their
    total, and the last info; checks every mask against the rules on the way."""
    observation, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trajectory, total, over = [], 0.0, False
    while not over:
        state = env.game_state
        legal = [int(state.is_legal(action, env.seat)) for action in ACTIONS[: env.action_space.n]]
        assert info["action_mask"].tolist() == legal == env.action_masks().astype(int).tolist()
        observation, reward, over, truncated, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        assert not truncated
        trajectory.append((observation, reward))
        total += reward
    return trajectory, total, info


@pytest.mark.parametrize("name", ["classic", "contract-doubling"])
def test_the_gym_seat_is_rewarded_its_side_score_and_masked_by_the_rules(name: str) -> None:
    env = WhistGymEnv(deals=3, seat=Seat.EAST, bots=HeuristicBot, **CONFIGS[name])
    for seed in range(3):
        _, total, info = play_gym(env, seed)
        again = replay(env.config, info["seed"], env.game_state.history)
        assert again.phase is Phase.MATCH_OVER
        assert total == again.totals[Seat.EAST.side] == info["scores"][0]
        assert info["scores"] == (again.totals[1], again.totals[0])


def test_a_seeded_gym_reset_replays_the_bots_too() -> None:
    """Random bots are reseeded from the episode's seed: the same learner actions give
    the same episode, action for action."""
    first, second = WhistGymEnv("contract", deals=2), WhistGymEnv("contract", deals=2)
    one, _, _ = play_gym(first, 9)
    two, _, _ = play_gym(second, 9)
    assert first.game_state.history == second.game_state.history
    assert all(np.array_equal(a, b) and r == s for (a, r), (b, s) in zip(one, two, strict=True))
    play_gym(second, 10)
    assert first.game_state.history != second.game_state.history


def test_an_illegal_gym_action_is_refused_and_changes_nothing() -> None:
    env = WhistGymEnv("classic", illegal_reward=-1.0)
    observation, _ = env.reset(seed=1)
    history = env.game_state.history
    held = env.game_state.hand_of(env.seat)
    illegal = next(card.index for card in ACTIONS[:52] if card not in held)
    again, reward, over, truncated, refused = env.step(illegal)
    assert np.array_equal(again, observation)
    assert (reward, over, truncated) == (-1.0, False, False)
    assert "does not hold" in refused["illegal_action"]
    assert env.game_state.history == history


def test_the_gym_seat_refuses_a_bad_seat_or_time() -> None:
    with pytest.raises(TypeError, match=r"seat is a Seat \(e.g. Seat.SOUTH"):
        WhistGymEnv(seat="S")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="time_left_ms is a whole number of milliseconds, 1 or more, not 0"):
        WhistGymEnv(time_left_ms=0)


def test_the_gym_bots_must_be_bots_for_the_three_other_seats() -> None:
    with pytest.raises(ValueError, match=r"one bot for each of East, South, West \(the learner sits North"):
        WhistGymEnv(seat=Seat.NORTH, bots={Seat.EAST: RandomBot})
    with pytest.raises(TypeError, match="not a bot: 5"):
        WhistGymEnv(bots=5)
    with pytest.raises(ValueError, match="one bot instance plays one seat"):
        WhistGymEnv(bots=RandomBot())
    shared = HeuristicBot()
    with pytest.raises(ValueError, match="one bot instance plays one seat"):
        WhistGymEnv(bots={Seat.NORTH: shared, Seat.EAST: shared, Seat.WEST: RandomBot})


class Witness(Bot):
    """A bot that checks, at each decision, that its view is the rules' view of its seat
    (what the referee's table would show it), and keeps what its hooks were told."""

    name = "witness"

    def __init__(self) -> None:
        self.env: WhistGymEnv | None = None
        self.decisions = 0
        self.results: list[HandResult | MatchResult | GameResult] = []
        self.seed: str | None = None

    def decide(self, view: BotView) -> Any:
        assert view.seat is not None
        assert self.env is not None
        truth = self.env.game_state.view(view.seat)
        for field in ("hand", "legal_actions", "auction", "contract", "tricks", "current_trick", "trumps"):
            assert getattr(view, field) == getattr(truth, field), field
        assert (view.turned_card, view.tricks_won, view.totals) == (
            truth.turned_card,
            truth.tricks_won,
            truth.totals,
        )
        assert view.players[self.env.seat] == "learner"
        assert view.time_left_ms == 5000
        self.decisions += 1
        return view.legal_actions[-1]

    choose_call = decide
    choose_card = decide

    def on_hand_end(self, view: BotView, result: HandResult) -> None:
        self.results.append(result)

    def on_match_end(self, view: BotView, result: MatchResult) -> None:
        self.results.append(result)
        self.seed = view.seed


@pytest.mark.parametrize("game", ["classic", "contract"])
def test_the_gym_bots_see_what_a_referee_shows_them(game: str) -> None:
    witness = Witness()
    env = WhistGymEnv(
        game, deals=2, bots={Seat.WEST: witness, Seat.NORTH: HeuristicBot(), Seat.EAST: RandomBot}
    )
    witness.env = env
    play_gym(env, 3)
    assert witness.decisions >= 2 * 13
    assert [type(result).__name__ for result in witness.results] == [
        "HandResult",
        "HandResult",
        "MatchResult",
    ]
    assert witness.seed == env.game_state.seed  # revealed at the match's end, as a referee does
    assert env.players == {
        Seat.NORTH: "heuristic",
        Seat.EAST: "random",
        Seat.SOUTH: "learner",
        Seat.WEST: "witness",
    }


# ---------------------------------------------------------------- rendering and the example


def test_render_shows_the_table_as_a_spectator_sees_it() -> None:
    env = WhistAECEnv("classic", render_mode="ansi")
    env.reset(seed=3)
    text = env.render()
    assert text is not None
    assert text.startswith("deal 1, dealt by North, ")
    assert f"turned: {env.game_state.turned_card}" in text
    assert "to act: East" in text
    shown = set(re.findall(r"\b[2-9TJQKA][CDHS]\b", text))
    assert shown == {str(env.game_state.turned_card)}  # no hand is shown
    assert WhistAECEnv("classic").render() is None


def test_the_example_prints_its_rate() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--episodes", "5", "--game", "contract", "--deals", "2"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    line = (
        r"5 episodes of contract whist \(2 deals each, aec\): "
        r"(\d+) steps in [\d.]+ s, [\d.]+ episodes/s, \d+ steps/s \([\d.]+ episodes per CPU second\)"
    )
    found = re.fullmatch(line, result.stdout.strip())
    assert found is not None, result.stdout
    assert int(found.group(1)) >= 5 * 2 * 52


def run_example(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, str, str]:
    """The example's ``main`` run in this process (its imports are already loaded here):
    its exit status, standard output and standard error."""
    spec = importlib.util.spec_from_file_location("random_episodes", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.main(list(arguments))
        status = 0
    except SystemExit as exit:
        status = int(exit.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_example_runs_the_gym_seat_and_says_how(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_example(capsys, "--help")
    assert status == 0
    assert "--episodes" in out
    assert "episodes/s" in out
    status, out, _ = run_example(capsys, "--episodes", "3", "--env", "gym", "--bots", "heuristic")
    assert status == 0
    assert re.fullmatch(
        r"3 episodes of classic whist \(1 deal each, gym, against heuristic bots\): "
        r"39 steps in .* CPU second\)",
        out.strip(),
    ), out
    status, _, err = run_example(capsys, "--episodes", "0")
    assert status == 2
    assert "--episodes must be at least 1, not 0" in err


@pytest.mark.parametrize("module", [oddtrick.env.aec, oddtrick.env.gym])
def test_the_modules_examples_hold(module: Any) -> None:
    assert doctest.testmod(module).failed == 0


def test_agents_and_seats_translate() -> None:
    assert [seat_of(agent) for agent in AGENTS] == list(Seat)
    assert [agent_of(seat) for seat in Seat] == list(AGENTS)
    with pytest.raises(ValueError, match="no agent 'north': the agents are player_0"):
        seat_of("north")
