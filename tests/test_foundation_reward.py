"""``reward_mode="foundation"`` in every env: along random play (moves, take-backs and undos) the
rewards add up to the cards on the foundations (plus the win bonus once won), counted from the
positions of a :class:`Game` that plays the same moves; a certified solution earns every card and
the bonus. And ``info["foundation_cards"]`` agrees with that count."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from solitaire_gym import Game
from solitaire_gym.engine.cards import parse_card
from solitaire_gym.engine.variants import DOUBLE, SEAHAVEN, Variant
from solitaire_gym.envs import SolitaireVectorEnv
from solitaire_gym.envs.deal_lists import TAGS
from solitaire_gym.envs.solitaire_env import SolitaireEnv
from solitaire_gym.solver.batch import parse_variant

BONUS = 2.5


def env_args(tag: str) -> tuple[str, dict]:
    """The env's ``game`` and options of a variant tag such as ``DS1-D3V``."""
    v: Variant = parse_variant(tag)
    game = v.name.lower().replace(" ", "_").replace("é", "e")
    if v.game == SEAHAVEN:
        return game, {"cells": v.cells}
    opts = {"draw": v.draw}
    if v.game == DOUBLE:
        opts["scoring"] = "vegas" if v.vegas else "normal"
    return game, opts


def game_cards(game: Game) -> int:
    """Cards on the foundations, counted from the position's foundation tops."""
    return sum(parse_card(top) % 13 + 1 for top in game.to_dict()["foundations"] if top)


def replay(game: Game, move: str) -> None:
    if move == "undo":
        game.undo()
    else:
        game.play(move)


def pick(rng: np.random.Generator, mask: np.ndarray, undo_id: int | None) -> int:
    """A random legal action; the undo (when offered) one time in eight."""
    legal = np.flatnonzero(mask)
    if undo_id is not None and mask[undo_id] and rng.random() < 0.125:
        return undo_id
    return int(rng.choice(legal))


@pytest.mark.parametrize("tag", TAGS)
def test_single_env_random_play_adds_up_to_the_foundation_cards(tag):
    game_name, opts = env_args(tag)
    env = SolitaireEnv(game_name, reward_mode="foundation", win_bonus=BONUS, undo=True, **opts)
    rng = np.random.default_rng(13)
    undo_id = env.action_space.n - 1
    took_back = False
    for episode in range(3):
        obs, info = env.reset(seed=episode)
        game = Game.from_code(info["code"])
        total = 0.0
        assert info["foundation_cards"] == game_cards(game) == 0
        for _ in range(150):
            a = pick(rng, info["action_mask"], undo_id)
            obs, r, terminated, _, info = env.step(a)
            took_back |= r < 0
            replay(game, env.action_to_move(a))
            total += r
            cards = game_cards(game)
            assert info["foundation_cards"] == cards
            assert total == pytest.approx(cards + BONUS * game.won)
            if terminated:
                break
    assert took_back  # some step lost a card: take-backs and undos are counted


WON = json.loads((Path(__file__).parent / "data" / "won_games.json").read_text())
"""A certified solution per variant (the solver's, from experiments/results/solvability; no
Vegas game there: Vegas changes the points and the recycles, not the foundations)."""


@pytest.mark.parametrize("tag", sorted(WON))
def test_a_won_game_earns_every_card_and_the_bonus(tag):
    variant = parse_variant(tag)
    game_name, opts = env_args(tag)
    env = SolitaireEnv(game_name, reward_mode="foundation", win_bonus=BONUS, **opts)
    _, info = env.reset(options={"code": WON[tag]["code"]})
    total = 0.0
    for move in WON[tag]["solution"]:
        _, r, terminated, _, info = env.step(env.move_to_action(move))
        total += r
    assert terminated and info["won"]
    assert info["foundation_cards"] == variant.n_cards
    assert total == pytest.approx(variant.n_cards + BONUS)


@pytest.mark.parametrize("tag", ["DS1-D3V", "TF1-D1N", "SH1-C2"])
def test_vector_env_returns_add_up_to_the_foundation_cards(tag):
    game_name, opts = env_args(tag)
    n = 6
    env = SolitaireVectorEnv(
        n, game_name, reward_mode="foundation", win_bonus=BONUS, undo=True,
        max_episode_steps=40, **opts,
    )  # fmt: skip
    rng = np.random.default_rng(3)
    _, info = env.reset(seed=3)
    games = [Game.from_code(c) for c in info["code"]]
    totals = np.zeros(n)
    ended = np.zeros(n, bool)
    undo_id = env.single_action_space.n - 1
    episodes = 0
    for _ in range(120):
        acts = np.array([pick(rng, m, undo_id) for m in info["action_mask"]])
        moves = [env.action_to_move(int(a)) for a in acts]
        _, rewards, terminated, truncated, info = env.step(acts)
        for i in range(n):
            if ended[i]:  # this step dealt the next game (reward 0)
                assert rewards[i] == 0
                games[i] = Game.from_code(info["code"][i])
                totals[i] = 0.0
                continue
            replay(games[i], moves[i])
            totals[i] += rewards[i]
            cards = game_cards(games[i])
            assert info["foundation_cards"][i] == cards
            assert totals[i] == pytest.approx(cards + BONUS * games[i].won)
        ended = terminated | truncated
        episodes += int(ended.sum())
    assert episodes >= n


@pytest.mark.parametrize("tag", ["DS1-D1N", "TF1-D3N", "SH1-C4"])
def test_sb3_episode_returns_add_up_to_the_foundation_cards(tag):
    from solitaire_gym.envs.sb3 import SB3VecEnv

    game_name, opts = env_args(tag)
    n = 6
    env = SB3VecEnv(
        game_name, num_envs=n, max_episode_steps=40, seed=5, reward_mode="foundation",
        win_bonus=BONUS, **opts,
    )  # fmt: skip
    env.reset()
    games = [Game.from_code(c["code"]) for c in env.reset_infos]
    rng = np.random.default_rng(5)
    totals = np.zeros(n)
    episodes = 0
    for _ in range(100):
        acts = np.array([pick(rng, m, None) for m in env.action_masks()])
        moves = [env.action_to_move(int(a)) for a in acts]
        _, rewards, dones, infos = env.step(acts)
        for i in range(n):
            replay(games[i], moves[i])
            totals[i] += rewards[i]
            if dones[i]:
                cards = game_cards(games[i])
                assert infos[i]["foundation_cards"] == cards
                assert infos[i]["episode"]["r"] == pytest.approx(totals[i])
                assert totals[i] == pytest.approx(cards + BONUS * games[i].won)
                games[i] = Game.from_code(env.codes[i])
                totals[i] = 0.0
                episodes += 1
    assert episodes >= n


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"reward_mode": "foundation", "win_bonus": -1}, "win_bonus"),
        ({"reward_mode": "foundation", "win_bonus": float("nan")}, "win_bonus"),
        ({"reward_mode": "foundation", "win_bonus": True}, "win_bonus"),
        ({"reward_mode": "foundation", "win_bonus": "10"}, "win_bonus"),
        ({"reward_mode": "app", "win_bonus": 10}, "reward_mode='foundation' only"),
        ({"deals": "easy"}, "deals"),
        ({"deals": "solvable", "split": "eval"}, "training deals"),
    ],
)
def test_bad_reward_and_deal_options_are_refused(kwargs, words):
    with pytest.raises(ValueError, match=words):
        SolitaireEnv("seahaven_towers", **kwargs)
