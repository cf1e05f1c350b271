"""What the envs promise beyond the Gymnasium contract (``test_envs.py``): the action mask
through ``gym.make``'s wrappers, the step limit of an env built directly or by ``gym.make``,
options by name (an unknown one refused, listing them), the same ``info`` keys in every env, and
the reward of a refused step."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import solitaire_gym
from solitaire_gym import SolitaireEnv, SolitaireVectorEnv
from solitaire_gym.envs import ENV_IDS
from solitaire_gym.envs.core import option_names

DS, TF, SH = ENV_IDS

CODE = "SH1-C4-AAAAAJ2"

# ---- action masks through gym.make's wrappers ----------------------------------------------------


def test_action_masks_through_wrappers():
    env = gym.make(SH)
    _, info = env.reset(seed=0)
    assert isinstance(env, gym.Wrapper)  # TimeLimit: methods do not pass through
    assert not hasattr(env, "action_masks")
    # The documented routes (SolitaireEnv's docstring, "Legal Actions Mask").
    via_attr = env.get_wrapper_attr("action_masks")()
    via_unwrapped = env.unwrapped.action_masks()
    assert np.array_equal(via_attr, info["action_mask"])
    assert np.array_equal(via_unwrapped, info["action_mask"])
    assert "get_wrapper_attr" in SolitaireEnv.__doc__ and "unwrapped" in SolitaireEnv.__doc__


# ---- step limit of a SolitaireEnv built directly -------------------------------------------------


def _legal(info) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def test_direct_env_has_the_game_step_limit():
    assert SolitaireEnv("seahaven_towers").max_episode_steps == 500
    assert SolitaireEnv("double_solitaire").max_episode_steps == 2000
    env = SolitaireEnv("double_solitaire", max_episode_steps=3)
    _, info = env.reset(options={"deal": 7})
    ends = []
    for _ in range(3):
        _, _, term, trunc, info = env.step(_legal(info))
        ends.append((term, trunc))
    assert ends == [(False, False), (False, False), (False, True)]
    env.reset(options={"deal": 7})  # a reset starts the count again
    _, _, term, trunc, _ = env.step(0)
    assert not trunc


def test_no_limit_and_bad_limits():
    env = SolitaireEnv("double_solitaire", max_episode_steps=None)
    assert env.max_episode_steps is None
    _, info = env.reset(options={"deal": 7})
    for _ in range(5):
        _, _, _, trunc, info = env.step(_legal(info))
        assert not trunc
    for bad in (0, -3, 2.5, "many", True):
        with pytest.raises(ValueError, match="max_episode_steps"):
            SolitaireEnv(max_episode_steps=bad)


def test_gym_make_limit_is_timelimit_alone():
    # The registered env has no limit of its own: TimeLimit's, whatever it is, is the only one.
    env = gym.make(SH, max_episode_steps=700)
    assert env.unwrapped.max_episode_steps is None
    assert env.spec.max_episode_steps == 700
    short = gym.make(SH, max_episode_steps=2)
    _, info = short.reset(options={"code": CODE})
    _, _, _, trunc1, info = short.step(_legal(info))
    _, _, _, trunc2, _ = short.step(_legal(info))
    assert (trunc1, trunc2) == (False, True)
    vec = gym.make_vec(SH, num_envs=2)
    assert vec.max_episode_steps == 500


# ---- unknown options -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: SolitaireEnv("seahaven_towers", **kw),
        lambda **kw: SolitaireVectorEnv(2, "seahaven_towers", **kw),
        lambda **kw: gym.make(SH, **kw),
    ],
    ids=["SolitaireEnv", "SolitaireVectorEnv", "gym.make"],
)
def test_unknown_option_lists_the_options(make):
    with pytest.raises(TypeError) as err:
        make(foo=1)
    text = str(err.value)
    assert "unknown env option 'foo'" in text
    for name in ("reward_mode", "action_mode", "undo", "cells", "max_episode_steps"):
        assert name in text
    with pytest.raises(TypeError, match="did you mean 'reward_mode'"):
        make(reward_mod="fair")


def test_option_names_come_from_the_signature():
    names = option_names()
    assert names[0] == "game" and "split" in names and "render_mode" in names


# ---- info keys -----------------------------------------------------------------------------------


def _keys(info) -> set[str]:
    return {k for k in info if not k.startswith("_")}


def test_info_keys_agree_across_envs():
    single = gym.make(SH)
    native = gym.make_vec(SH, num_envs=2, vectorization_mode="vector_entry_point")
    sync = gym.make_vec(SH, num_envs=2, vectorization_mode="sync")
    _, i1 = single.reset(seed=1)
    _, i2 = native.reset(seed=1)
    _, i3 = sync.reset(seed=1)
    assert _keys(i1) == _keys(i2) == _keys(i3)
    assert {"code", "deal", "score", "score_text", "moves", "action_mask", "won", "stuck"} <= _keys(
        i1
    )
    assert isinstance(i1["deal"], int) and i2["score_text"].dtype == object
    assert solitaire_gym.Variant.from_names("seahaven_towers").code(i1["deal"]) == i1["code"]
    # A refused action adds 'illegal_move', marked for the refusing games only, in every env.
    refused = np.array([int(np.flatnonzero(m == 0)[0]) for m in i2["action_mask"]])
    _, _, _, _, i1 = single.step(int(np.flatnonzero(i1["action_mask"] == 0)[0]))
    legal = _legal({"action_mask": i2["action_mask"][1]})
    _, r2, _, _, i2 = native.step(np.array([refused[0], legal]))
    _, r3, _, _, i3 = sync.step(
        np.array([int(np.flatnonzero(i3["action_mask"][0] == 0)[0]), _legal(
            {"action_mask": i3["action_mask"][1]}
        )])
    )  # fmt: skip
    assert _keys(i1) == _keys(i2) == _keys(i3)
    assert "illegal_move" in i1
    assert list(i2["_illegal_move"]) == list(i3["_illegal_move"]) == [True, False]
    assert i2["illegal_move"][1] is None and i3["illegal_move"][1] is None
    # ... and a step where every action is legal has no 'illegal_move' anywhere.
    _, _, _, _, i2 = native.step(np.array([_legal({"action_mask": m}) for m in i2["action_mask"]]))
    assert "illegal_move" not in i2


def test_score_text_in_vector_env_vegas():
    env = SolitaireVectorEnv(3, "double_solitaire", scoring="vegas")
    _, info = env.reset(seed=0)
    assert list(info["score_text"]) == ["-$104"] * 3
    env.step(np.array([_legal({"action_mask": m}) for m in info["action_mask"]]))
    _, _, _, _, info = env.step(np.array([_legal({"action_mask": m}) for m in env.action_masks()]))
    for s, t in zip(info["score"], info["score_text"], strict=True):
        assert t == solitaire_gym.engine.scoring.score_text(int(s), True)


def test_reset_forgets_a_refusal():
    env = SolitaireVectorEnv(2, "seahaven_towers")
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(
        np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]])
    )
    assert "illegal_move" in info
    _, info = env.reset(seed=1)
    assert "illegal_move" not in info


# ---- refused step: reward +0.0 -------------------------------------------------------------------


def test_refused_step_pays_positive_zero():
    env = gym.make(SH)
    _, info = env.reset(seed=0)
    _, r, _, _, info = env.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert "illegal_move" in info
    assert r == 0.0 and math.copysign(1.0, r) == 1.0
    vec = SolitaireVectorEnv(2, "seahaven_towers", illegal_penalty=0.5)
    _, info = vec.reset(seed=0)
    _, rv, *_ = vec.step(np.array([int(np.flatnonzero(m == 0)[0]) for m in info["action_mask"]]))
    assert list(rv) == [-0.5, -0.5]
