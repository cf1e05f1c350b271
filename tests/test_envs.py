"""Conformance of every registered env and option combination, plus the env-specific behaviour."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numba
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import solitaire_gym
from solitaire_gym import Game, GameCodeError, IllegalMoveError
from solitaire_gym.engine.variants import Variant
from solitaire_gym.envs import ENV_IDS, EVAL_SPLIT_END, SolitaireVectorEnv
from solitaire_gym.envs.sampling import random_legal_actions
from solitaire_gym.envs.wrappers import RLlibMaskWrapper

DS, TF, SH = ENV_IDS

# Every id with every app option.
COMBOS = [
    (DS, {"draw": 1, "scoring": "normal"}),
    (DS, {"draw": 1, "scoring": "vegas"}),
    (DS, {"draw": 3, "scoring": "normal"}),
    (DS, {"draw": 3, "scoring": "vegas"}),
    (TF, {"draw": 1}),
    (TF, {"draw": 3}),
    (SH, {"cells": 4}),
    (SH, {"cells": 2}),
    (SH, {"cells": 1}),
]
EXTRA = [
    (SH, {"action_mode": "tap"}),
    (DS, {"action_mode": "tap", "draw": 3}),
    (TF, {"undo": True, "reward_mode": "fair"}),
    (SH, {"undo": True, "action_mode": "tap", "reward_mode": "win"}),
    (DS, {"obs_dtype": "uint8", "draw": 3}),
    (SH, {"obs_dtype": "uint8", "cells": 2}),
]


def ids(c):
    return f"{c[0].split('/')[1]}-{'-'.join(f'{k}={v}' for k, v in c[1].items())}"


def random_play(env, steps, seed):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    trace = [obs]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
        trace.append((obs, r, term, trunc, info["score"], info["moves"]))
        if term or trunc:
            obs, info = env.reset()
    return trace


@pytest.mark.parametrize("combo", COMBOS + EXTRA, ids=ids)
def test_check_env(combo):
    env = gym.make(combo[0], **combo[1])
    check_env(env.unwrapped, skip_render_check=False)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].any()
    assert info["code"].startswith(solitaire_gym.Game.from_code(info["code"]).variant.tag)


@pytest.mark.parametrize("combo", COMBOS + EXTRA, ids=ids)
def test_determinism_masks_and_pickle(combo):
    a = gym.make(combo[0], **combo[1])
    b = gym.make(combo[0], **combo[1])
    ta, tb = random_play(a, 60, 11), random_play(b, 60, 11)
    for x, y in zip(ta[1:], tb[1:], strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert x[1:] == y[1:]
    clone = pickle.loads(pickle.dumps(a))
    m = a.unwrapped.action_masks()
    np.testing.assert_array_equal(m, clone.unwrapped.action_masks())
    act = int(np.flatnonzero(m)[0])
    o1 = a.step(act)
    o2 = clone.step(act)
    np.testing.assert_array_equal(o1[0], o2[0])
    assert o1[1:4] == o2[1:4]


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_mask_matches_game_legal_moves(combo):
    env = gym.make(combo[0], **combo[1]).unwrapped
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=5)
    game = Game.from_code(info["code"])
    for _ in range(80):
        mask = info["action_mask"]
        names = sorted(env.action_to_move(int(a)) for a in np.flatnonzero(mask))
        assert names == sorted(game.legal_moves())
        if not mask.any():
            break
        a = int(rng.choice(np.flatnonzero(mask)))
        game.play(env.action_to_move(a))
        assert env.move_to_action(env.action_to_move(a)) == a
        obs, r, term, trunc, info = env.step(a)
        assert info["score"] == game.score and info["moves"] == game.moves
        assert term == (game.won or game.stuck)
        if term:
            break


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
def test_vector_env_equals_single_envs(combo):
    n, steps = 6, 150
    vec = gym.make_vec(combo[0], num_envs=n, max_episode_steps=40, **combo[1])
    assert isinstance(vec.unwrapped if hasattr(vec, "unwrapped") else vec, SolitaireVectorEnv)
    singles = [gym.make(combo[0], max_episode_steps=40, **combo[1]) for _ in range(n)]
    obs, info = vec.reset(seed=2)
    for i, env in enumerate(singles):
        o, inf = env.reset(options={"deal": int(info["deal"][i])})
        np.testing.assert_array_equal(o, obs[i])
        np.testing.assert_array_equal(inf["action_mask"], info["action_mask"][i])
    rng = np.random.default_rng(2)
    done = np.zeros(n, bool)
    for _ in range(steps):
        acts = np.array(
            [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in info["action_mask"]]
        )
        obs, rew, term, trunc, info = vec.step(acts)
        for i, env in enumerate(singles):
            if done[i]:  # next-step autoreset: the vector env dealt a new game
                o, inf = env.reset(options={"deal": int(info["deal"][i])})
                r, te, tr = 0.0, False, False
            else:
                o, r, te, tr, inf = env.step(int(acts[i]))
            np.testing.assert_array_equal(o, obs[i])
            np.testing.assert_array_equal(inf["action_mask"], info["action_mask"][i])
            assert (r, te, tr) == (rew[i], term[i], trunc[i])
            assert inf["score"] == info["score"][i]
        done = term | trunc


def test_vector_env_metadata_and_errors():
    from gymnasium.vector import AutoresetMode

    vec = gym.make_vec(SH, num_envs=3)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert vec.max_episode_steps == 500
    obs, info = vec.reset(seed=0, options={"code": ["SH1-C4-AAAAAJ2"] * 3})
    assert list(info["code"]) == ["SH1-C4-AAAAAJ2"] * 3
    with pytest.raises(ValueError, match="outside the action space"):
        vec.step(np.array([0, 0, 5000]))
    with pytest.raises(GameCodeError, match="this env plays SH1-C4"):
        vec.reset(options={"code": ["SH1-C2-AAAAAJ2"] * 3})
    assert vec.unwrapped.bytes_per_game > 0


def test_no_leak_of_unseen_cards():
    """Two positions that differ only in where the unseen cards lie give the same observation."""
    env = gym.make(DS).unwrapped
    g = Game.from_code("DS1-D1N-AAAAAAB")
    d = g.to_dict()
    e = g.to_dict()
    # Swap a face-down card of t9 with the last card of the stock (never seen yet).
    down = e["tableau"][8][0]
    e["tableau"][8][0] = e["stock"][-1] + "*"
    e["stock"][-1] = down[:-1]
    # and two face-down cards of different columns.
    e["tableau"][5][1], e["tableau"][6][2] = e["tableau"][6][2], e["tableau"][5][1]
    assert d != e
    o1, _ = env.reset(options={"state": d})
    o2, _ = env.reset(options={"state": e})
    np.testing.assert_array_equal(o1, o2)
    # A card the player sees changes the observation.
    e2 = g.to_dict()
    e2["tableau"][0], e2["tableau"][1][-1] = [e2["tableau"][1][-1]], e2["tableau"][0][0]
    o3, _ = env.reset(options={"state": e2})
    assert not np.array_equal(o1, o3)


def test_seen_stock_cards_stay_known_after_turn_over():
    env = gym.make(TF).unwrapped
    obs0, info = env.reset(options={"code": "TF1-D1N-AAAAAAB"})
    draw = env.move_to_action("draw")
    for _ in range(24):
        obs, *_ = env.step(draw)
    obs, *_ = env.step(env.move_to_action("recycle"))
    lay = env.obs_layout
    cards = obs[: lay.lengths].reshape(-1, lay.width)
    assert cards[:, lay.unseen].sum() == 0  # everything has been seen
    assert cards[:, lay.stock].sum() == 24
    cards0 = obs0[: lay.lengths].reshape(-1, lay.width)
    assert cards0[:, lay.unseen].sum() == 24


def test_illegal_action_changes_nothing_and_names_rule():
    env = gym.make(SH, illegal_penalty=0.5).unwrapped
    obs, info = env.reset(options={"code": "SH1-C4-AAAAAJ2"})
    before = env.to_dict()
    a = env.move_to_action("t3>t5")
    obs2, r, term, trunc, info2 = env.step(a)
    assert info2["illegal_move"] == "a card goes on a card of the same suit and one rank higher"
    assert r == -0.5 and not term
    assert env.to_dict() == before
    np.testing.assert_array_equal(obs, obs2)
    strict = gym.make(SH, illegal_action="raise").unwrapped
    strict.reset(options={"code": "SH1-C4-AAAAAJ2"})
    with pytest.raises(IllegalMoveError, match="same suit"):
        strict.step(a)
    assert strict.to_dict() == before
    with pytest.raises(ValueError, match="outside the action space"):
        env.step(1278)
    with pytest.raises(ValueError):
        env.step(-1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"cells": 3}, "4, 2 or 1"),
        ({"draw": 3}, "no stock"),
        ({"reward_mode": "points"}, "reward_mode"),
        ({"action_mode": "drag"}, "action_mode"),
        ({"illegal_penalty": -1}, "illegal_penalty"),
        ({"split": "test"}, "split"),
        ({"obs_dtype": "float16"}, "obs_dtype"),
        ({"obs_dtype": np.uint8}, "obs_dtype"),
    ],
)
def test_bad_options_are_refused_at_construction(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(SH, **kwargs)


def test_bad_klondike_options():
    with pytest.raises(GameCodeError, match="only Normal"):
        gym.make(TF, scoring="vegas")
    with pytest.raises(GameCodeError, match="no free cells"):
        gym.make(DS, cells=2)
    with pytest.raises(GameCodeError, match="1 or 3"):
        gym.make(DS, draw=2)


def _farm_position():
    """Seahaven position where A♠ can go up and come back down again: the app's loophole."""
    g = Game.from_code("SH1-C4-AAAAAJ2")
    d = g.to_dict()
    # Move A♠ (bottom of t7) on top of t1 by rebuilding the columns.
    cards = [c for col in d["tableau"] for c in col]
    cards.remove("AS")
    cols = [cards[i * 5 : i * 5 + 5] for i in range(10)]
    cols[0].append("AS")
    d["tableau"] = cols
    return d


@pytest.mark.parametrize("mode,per_cycle", [("app", 10.0), ("fair", -5.0)])
def test_reward_modes_and_the_farming_loophole(mode, per_cycle):
    """The apps pay for a card placed on a foundation and take nothing back when it comes off:
    cycling A♠ between foundation and cell farms points under "app", and gains nothing under
    "fair" (where it loses)."""
    env = gym.make(SH, reward_mode=mode).unwrapped
    env.reset(options={"state": _farm_position()})
    take_back = env.move_to_action("f1>c")
    assert env.step(env.move_to_action("t1>f"))[1] == 10.0
    # fair: the take-back costs the 10 points and entering the free cell the 5 it would earn back
    assert env.step(take_back)[1] == (0.0 if mode == "app" else -15.0)
    total = 0.0
    for _ in range(5):
        cell = env.to_dict()["cells"].index("AS") + 1
        total += env.step(env.move_to_action(f"c{cell}>f"))[1]
        total += env.step(take_back)[1]
    assert total == 5 * per_cycle
    assert env.to_dict()["score"] == 10 + 50  # the app's own score keeps growing either way


def test_win_reward_and_termination():
    g = Game.from_code("SH1-C1-AAAAAAD")
    env = gym.make(SH, cells=1, reward_mode="win").unwrapped
    env.reset(options={"code": "SH1-C1-AAAAAAD"})
    # The vectors' playout: three moves to the end (stuck: no legal move).
    rewards, terms = [], []
    for m in ("t1>t5", "t5>f", "t5>f"):
        g.play(m)
        _, r, term, _, info = env.step(env.move_to_action(m))
        rewards.append(r)
        terms.append((term, info["stuck"]))
    assert rewards == [0.0, 0.0, 0.0]
    assert terms[-1] == (True, True) and g.stuck


def test_tap_mode_and_undo_action():
    env = gym.make(DS, action_mode="tap", undo=True).unwrapped
    obs, info = env.reset(options={"code": "DS1-D1N-AAAAAAB"})
    assert env.action_space.n == 12
    assert env.action_to_move(0) == "tap stock" and env.action_to_move(11) == "undo"
    assert info["action_mask"][11] == 0  # nothing to undo yet
    obs, r, *_, info = env.step(0)  # draw
    assert info["moves"] == 1 and info["action_mask"][11] == 1
    g = Game.from_code("DS1-D1N-AAAAAAB")
    g.play("draw")
    legal_taps = [env.action_to_move(int(a)) for a in np.flatnonzero(info["action_mask"][1:11]) + 1]
    expected = [
        f"double tap {p}"
        for p in ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "w"]
        if g.double_tap(p)
    ]
    assert legal_taps == expected
    obs, r, *_, info = env.step(11)  # undo
    assert info["moves"] == 1 and env.to_dict()["waste"] == []


def test_reset_options_and_splits():
    env = gym.make(SH).unwrapped
    _, info = env.reset(seed=1)
    deal = solitaire_gym.parse_code(info["code"])[1]
    assert deal >= EVAL_SPLIT_END
    ev = gym.make(SH, split="eval").unwrapped
    _, info = ev.reset(seed=1)
    assert solitaire_gym.parse_code(info["code"])[1] < EVAL_SPLIT_END
    _, info = env.reset(options={"deal": 314})
    assert info["code"] == "SH1-C4-AAAAAJ2"
    with pytest.raises(ValueError, match="conflict"):
        env.reset(options={"deal": 1, "code": "SH1-C4-AAAAAAB"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"seed": 1})
    with pytest.raises(GameCodeError):
        env.reset(options={"code": "TF1-D1N-AAAAAAB"})


def test_render_ansi():
    env = gym.make(DS, render_mode="ansi")
    env.reset(options={"code": "DS1-D1N-AAAAAAB"})
    text = env.render()
    assert "DS1-D1N-AAAAAAB" in text and "##" in text and "J♣" in text


# check_env on the wrapper is the point here; Gymnasium warns that it is not the unwrapped env.
@pytest.mark.filterwarnings("ignore:.*different from the unwrapped version")
def test_rllib_wrapper():
    env = RLlibMaskWrapper(gym.make(SH))
    check_env(env)
    obs, info = env.reset(seed=0)
    np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])


def test_dead_deals_are_skipped_when_drawn():
    """Some Seahaven deals with 2 cells have no legal move at all; a drawn deal never does."""
    from solitaire_gym import Game

    assert Game.from_code("SH1-C2-K2BKZG6").stuck  # dead on arrival
    vec = gym.make_vec(SH, num_envs=64, cells=2)
    obs, info = vec.reset(seed=0)
    for _ in range(300):
        assert info["action_mask"].any(axis=1)[~(info["won"] | info["stuck"])].all()
        acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in info["action_mask"]])
        obs, r, term, trunc, info = vec.step(acts)
    env = gym.make(SH, cells=2)
    for seed in range(40):
        _, info = env.reset(seed=seed)
        assert info["action_mask"].any()


@pytest.mark.parametrize("mode,per_cycle", [("app", 5.0), ("fair", 0.0)])
def test_free_cell_cycle_gains_nothing_under_fair(mode, per_cycle):
    """Seahaven pays +5 for a card from a free cell to a column: t→c→t farms it under "app"."""
    env = gym.make(SH, reward_mode=mode).unwrapped
    env.reset(options={"code": "SH1-C4-AAAAAJ2"})
    assert env.step(env.move_to_action("t1>t7"))[1] == 0.0  # 6♦ onto 7♦
    total = 0.0
    for _ in range(4):
        total += env.step(env.move_to_action("t7>c"))[1]
        cell = env.to_dict()["cells"].index("6D") + 1
        total += env.step(env.move_to_action(f"c{cell}>t7"))[1]
    assert total == 4 * per_cycle


@pytest.mark.parametrize(
    "env_id,kwargs", [(DS, {"draw": 3}), (TF, {"draw": 1}), (SH, {"cells": 4})], ids=str
)
def test_parallel_step_equals_serial_step(env_id, kwargs, monkeypatch):
    """Batches of PARALLEL_MIN games or more are stepped by the prange kernels, each part of the
    rows on borrowed views of the state and arrays; they must give exactly what the one-thread
    kernels give."""
    from solitaire_gym.envs import core

    n = 6 * 32 + 5  # parts of unequal size
    monkeypatch.setattr(core, "PARALLEL_MIN", 1)
    par = gym.make_vec(env_id, num_envs=n, max_episode_steps=60, **kwargs)
    monkeypatch.setattr(core, "PARALLEL_MIN", 10**9)
    ser = gym.make_vec(env_id, num_envs=n, max_episode_steps=60, **kwargs)
    assert par.unwrapped._core.parallel and not ser.unwrapped._core.parallel
    (op, ip), (os_, is_) = par.reset(seed=5), ser.reset(seed=5)
    rng = np.random.default_rng(5)
    for _ in range(150):
        np.testing.assert_array_equal(op, os_)
        np.testing.assert_array_equal(ip["action_mask"], is_["action_mask"])
        assert list(ip["code"]) == list(is_["code"])
        acts = random_legal_actions(ip["action_mask"], rng)
        op, rp, tp, trp, ip = par.step(acts)
        os_, rs, ts, trs, is_ = ser.step(acts)
        np.testing.assert_array_equal(rp, rs)
        np.testing.assert_array_equal(tp, ts)
        np.testing.assert_array_equal(trp, trs)


def test_vector_env_copy_false_returns_its_buffers():
    """copy=False hands out the env's own buffers (overwritten by the next step); the values are
    those of the default copy=True."""
    with pytest.raises(ValueError, match="copy must be True or False"):
        gym.make_vec(TF, num_envs=4, copy="no")
    a = gym.make_vec(TF, num_envs=4, copy=False)
    b = gym.make_vec(TF, num_envs=4)
    (oa, ia), (ob, _) = a.reset(seed=3), b.reset(seed=3)
    np.testing.assert_array_equal(oa, ob)
    acts = random_legal_actions(ia["action_mask"], np.random.default_rng(0))
    oa2, ra, *_, ia2 = a.step(acts)
    ob2, rb, *_, ib2 = b.step(acts)
    assert np.shares_memory(oa, oa2) and not np.shares_memory(ob, ob2)
    np.testing.assert_array_equal(oa2, ob2)
    np.testing.assert_array_equal(ra, rb)
    np.testing.assert_array_equal(ia2["action_mask"], ib2["action_mask"])


def test_codes_of_many_deals_match_one_by_one():
    from solitaire_gym.engine.variants import MAX_DEAL, parse_code

    variant = parse_code("DS1-D3V-AAAAAAA")[0]
    deals = np.array([0, 1, 31, 32, 123456789, MAX_DEAL])
    assert list(variant.codes(deals)) == [variant.code(int(d)) for d in deals]
    with pytest.raises(GameCodeError, match="outside"):
        variant.codes(np.array([MAX_DEAL + 1]))
    with pytest.raises(GameCodeError, match="integers"):
        variant.codes(np.array([1.5]))


def _reference_observation(d: dict, stock_seen: bool) -> np.ndarray:
    """The observation of position ``d`` (``to_dict`` form) written from the documentation of
    ``envs/observation.py`` alone, for a game played without undo: face-down cards are unseen,
    and the stock is unseen until the waste has been turned over once (``stock_seen``)."""
    from solitaire_gym.envs.observation import DEPTH_SCALE

    ranks, suits = "A23456789TJQK", "SHDC"

    def cid(name):
        return suits.index(name[1]) * 13 + ranks.index(name[0])

    game = d["code"][:3]
    decks = 2 if game == "DS1" else 1
    n = 52 * decks
    cols = len(d["tableau"])
    cells = 4 if game == "SH1" else 0  # Seahaven: 4 cell columns whatever the number in play
    # The card row's columns as the docstring lists them: columns, foundation, waste and stock
    # (DS, TF), cells (SH), unseen (DS, TF), depth, down (DS).
    names = [f"t{c}" for c in range(cols)] + ["found"]
    names += ["waste", "stock"] if game != "SH1" else []
    names += [f"c{k}" for k in range(cells)]
    names += ["unseen"] if game != "SH1" else []
    names += ["depth"] + (["down"] if game == "DS1" else [])
    f = {name: i for i, name in enumerate(names)}
    width = len(names)
    piles = (
        ["len"] * cols
        + (["down"] * cols if game == "DS1" else [])
        + ["found"] * len(d["foundations"])
    )
    piles += ["stock", "stock_unseen", "waste"] if game != "SH1" else []
    piles += ["cell"] * cells + ["empty"]
    out = np.zeros(n * width + len(piles), np.float32)
    copies = [0] * 52

    def place(name, features):
        face = cid(name)
        row = (face * decks + copies[face]) * width
        copies[face] += 1
        for key, v in features.items():
            out[row + f[key]] = v

    for c, col in enumerate(d["tableau"]):
        for i, card in enumerate(col):
            if not card.endswith("*"):
                place(card, {f"t{c}": 1.0, "depth": (len(col) - 1 - i) / DEPTH_SCALE})
    found = d["foundations"]
    for top in found:
        if top:
            for r in range(ranks.index(top[0]) + 1):
                place(ranks[r] + top[1], {"found": 1.0})
    waste, stock = d.get("waste", []), d.get("stock", [])
    for i, card in enumerate(waste):
        place(card, {"waste": 1.0, "depth": (len(waste) - 1 - i) / DEPTH_SCALE})
    if stock_seen:  # to_dict lists the stock in drawing order: the bottom card last
        for i, card in enumerate(stock[::-1]):
            place(card, {"stock": 1.0, "depth": (len(stock) - 1 - i) / DEPTH_SCALE})
    for k, card in enumerate(d.get("cells", [])):
        if card:
            place(card, {f"c{k}": 1.0})
    for face in range(52):
        for k in range(copies[face], decks):
            out[(face * decks + k) * width + f["unseen"]] = 1.0
    at = n * width
    for col in d["tableau"]:
        out[at] = len(col) / DEPTH_SCALE
        at += 1
    if game == "DS1":
        for col in d["tableau"]:
            out[at] = sum(card.endswith("*") for card in col) / DEPTH_SCALE
            at += 1
    for top in found:
        out[at] = (ranks.index(top[0]) + 1 if top else 0) / 13.0
        at += 1
    if game != "SH1":
        out[at : at + 3] = [len(stock) / n, (0 if stock_seen else len(stock)) / n, len(waste) / n]
        at += 3
    in_play = d.get("cells", [])
    for k in range(cells):  # empty and in play
        out[at] = 1.0 if k < len(in_play) and not in_play[k] else 0.0
        at += 1
    out[at] = sum(not col for col in d["tableau"]) / 10.0
    assert at + 1 == out.size
    return out


@pytest.mark.parametrize(
    "code",
    ["DS1-D3N-AAAAAAC", "DS1-D1V-AAAAAAD", "TF1-D1N-AAAAAAB", "SH1-C2-AAAAAJ2", "SH1-C4-AAAAAJ2"],
)
def test_observation_matches_its_documentation(code):
    """Along random play, the observation equals one rebuilt from the documented layout."""
    opts = code.split("-")[1]
    if code.startswith("SH1"):
        env = gym.make(SH, cells=int(opts[1])).unwrapped
    else:
        scoring = {"N": "normal", "V": "vegas"}[opts[2]]
        kwargs = {"scoring": scoring} if code.startswith("DS1") else {}
        env = gym.make(DS if code.startswith("DS1") else TF, draw=int(opts[1]), **kwargs).unwrapped
    obs, info = env.reset(options={"code": code})
    rng = np.random.default_rng(7)
    recycled = False
    for step in range(300):
        ref = _reference_observation(env.to_dict(), recycled)
        np.testing.assert_allclose(obs, ref, atol=1e-7, err_msg=f"{code} after {step} moves")
        legal = np.flatnonzero(info["action_mask"])
        if legal.size == 0:
            break
        a = int(rng.choice(legal))
        recycled |= env.action_to_move(a) == "recycle"
        obs, _, term, trunc, info = env.step(a)
        if term or trunc:
            break


def test_vector_env_default_copy_never_writes_returned_arrays():
    """With copy=True nothing handed out is written again: not by later steps, not by a partial
    reset (the step kernel writes into new arrays instead of copying afterwards)."""
    env = gym.make_vec(SH, num_envs=5, max_episode_steps=3, cells=2)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(1)
    kept = []
    for _ in range(12):
        kept.append((obs, obs.copy(), info["action_mask"], info["action_mask"].copy()))
        obs, r, term, trunc, info = env.step(random_legal_actions(info["action_mask"], rng))
        kept.append((r, r.copy(), info["action_mask"], info["action_mask"].copy()))
    obs, info = env.reset(options={"reset_mask": np.array([1, 0, 1, 0, 0], bool)})
    env.step(random_legal_actions(info["action_mask"], rng))
    for a, a0, m, m0 in kept:
        np.testing.assert_array_equal(a, a0)
        np.testing.assert_array_equal(m, m0)


def test_vector_env_reuses_buffers_nobody_holds():
    """copy=True hands out fresh arrays, but one the caller has let go of is written again
    instead of allocating a new one; one still held (even through a view) never is."""
    env = gym.make_vec(TF, num_envs=4)
    copy_free = gym.make_vec(TF, num_envs=4, copy=False)
    obs, info = env.reset(seed=0)
    ref, ref_info = copy_free.reset(seed=0)
    rng = np.random.default_rng(0)
    acts = random_legal_actions(info["action_mask"], rng)
    first, _, _, _, info = env.step(acts)
    copy_free.step(acts)
    address = first.__array_interface__["data"][0]
    view = first[1:]
    held = first.copy()
    del first
    addresses = []
    for _ in range(4):
        acts = random_legal_actions(info["action_mask"], rng)
        obs, _, _, _, info = env.step(acts)
        ref, *_ = copy_free.step(acts)
        np.testing.assert_array_equal(obs, ref)
        addresses.append(obs.__array_interface__["data"][0])
    assert address not in addresses  # the view keeps it alive: never reused
    np.testing.assert_array_equal(view, held[1:])
    assert len(set(addresses)) < len(addresses)  # dropped buffers came back


@pytest.mark.parametrize("rows", [3, 2048 + 3])  # the one-thread and the parallel kernel
def test_random_legal_actions_are_legal_and_uniform(rows):
    """Legal actions spread over several 32-byte blocks, the last block short: every one is drawn
    about equally often, nothing else ever is; a row with no legal action gets 0."""
    width = 1029
    legal = np.array([0, 31, 32, 33, 95, 96, 500, 1024, 1028])
    masks = np.zeros((rows, width), np.int8)
    masks[:-1, legal] = 1
    rng = np.random.default_rng(0)
    draws = np.concatenate([random_legal_actions(masks, rng)[:-1] for _ in range(40)])
    assert np.isin(draws, legal).all()
    counts = np.bincount(draws, minlength=width)[legal]
    expected = draws.size / legal.size
    assert np.abs(counts - expected).max() < 6 * np.sqrt(expected)  # chi-like bound, not flaky
    assert random_legal_actions(masks, rng)[-1] == 0
    with pytest.raises(ValueError, match="2-D"):
        random_legal_actions(masks[0], rng)


def test_borrowed_views_read_and_write_the_state_itself():
    """The kernels work through views that own nothing (engine/borrow.py): they must see the
    state's own memory, so a step through them is a step of the state."""
    from solitaire_gym.engine.borrow import borrow, fields, hold, view
    from solitaire_gym.engine.state import part_rows

    @numba.njit
    def through_views(state, cfg, col):
        owner = borrow(state)
        s = fields(owner)
        c = view(cfg)
        n = s.tab_len[0, col]
        s.tab_len[0, col] = n + 1  # written through the view
        hold(owner)
        return n, c.shape[0]

    env = gym.make_vec(TF, num_envs=2)
    env.reset(seed=0)
    core = env.unwrapped._core
    before = int(core.state.tab_len[0, 3])
    n, width = through_views(core.state, core.cfg, 3)
    assert (n, width) == (before, core.cfg.shape[0])
    assert core.state.tab_len[0, 3] == before + 1
    assert [part_rows(5, 3, t) for t in range(3)] == [(0, 1), (1, 3), (3, 5)]


def test_batch_takes_strided_arrays():
    """A strided array has no single block of memory to wrap: ``borrow.view`` passes it on as it
    is, so a batch stepped with every other element of a wider array plays those actions."""
    from solitaire_gym.engine.batch import Batch
    from solitaire_gym.engine.borrow import view
    from solitaire_gym.engine.variants import parse_code

    variant = parse_code("SH1-C4-AAAAAAB")[0]
    a, b = Batch(variant, 6), Batch(variant, 6)
    for batch in (a, b):
        batch.deal(np.arange(6))
    act = np.array([np.flatnonzero(row)[-1] for row in a.masks()], np.int64)
    b.masks()
    wide = np.full(12, 10**6, np.int64)  # out of range wherever a wrong element would be read
    wide[::2] = act
    assert (a.step(act) == 0).all() and (b.step(wide[::2]) == 0).all()
    np.testing.assert_array_equal(a.masks(), b.masks())

    @numba.njit
    def total(x):
        return view(x).sum()

    assert total(np.arange(10)) == 45 and total(np.arange(10)[::2]) == 20


# ---- the uint8 observation -----------------------------------------------------------------------


@pytest.mark.parametrize("combo", COMBOS, ids=ids)
# the one-thread and the parallel kernel (its uint8 copy compiles for a minute: not warmed up)
@pytest.mark.parametrize("games", [3, pytest.param(300, marks=pytest.mark.manual)])
def test_uint8_observations_are_the_float32_ones_as_counts(combo, games):
    """``obs_dtype="uint8"``: every value a whole count that fits a byte, and times the env's
    ``obs_scales`` exactly the float32 observation of the same play (so it hides what the float32
    one hides); its space holds it; ``to_float`` gives it back with or without the variant."""
    from solitaire_gym.envs.observation import to_dtype, to_float

    env_id, kw = combo
    game = gym.spec(env_id).kwargs["game"]
    f32 = SolitaireVectorEnv(games, game, **kw)
    u8 = SolitaireVectorEnv(games, game, obs_dtype="uint8", **kw)
    assert u8.single_observation_space.dtype == np.uint8
    cfg = Variant.from_names(game, **{k: v for k, v in kw.items() if k != "obs_dtype"}).cfg
    of, info = f32.reset(seed=5)
    ou, _ = u8.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(40):
        assert ou.dtype == np.uint8 and u8.observation_space.contains(ou)
        assert np.array_equal((ou * u8.obs_scales).astype(np.float32), of)
        assert np.array_equal(to_float(ou), of) and np.array_equal(to_float(ou, cfg), of)
        assert np.array_equal(to_dtype(of, "uint8"), ou) and to_dtype(ou, np.uint8) is ou
        act = random_legal_actions(info["action_mask"], rng)
        of, _, _, _, info = f32.step(act)
        ou, *_ = u8.step(act)
    single = gym.make(env_id, obs_dtype="uint8", **kw)
    obs, _ = single.reset(seed=2)
    assert obs.dtype == np.uint8 and single.observation_space.contains(obs)
    np.testing.assert_array_equal(single.unwrapped.obs_scales, u8.obs_scales)


def test_to_float_refuses_what_is_no_observation():
    from solitaire_gym.envs.observation import to_dtype, to_float
    from solitaire_gym.errors import ArgumentError

    env = SolitaireVectorEnv(2, "seahaven_towers", obs_dtype="uint8")
    obs, _ = env.reset(seed=0)
    assert to_float(obs.astype(np.float32)).dtype == np.float32
    for bad, match in [
        (obs.astype(np.int64), "float32 or uint8 arrays, not int64"),
        (obs[:, :-1], "no game has observations of 850 values"),
        (np.uint8(3), "float32 or uint8 arrays"),
    ]:
        with pytest.raises(ArgumentError, match=match):
            to_float(bad)
    with pytest.raises(ArgumentError, match="851 values; this variant's have 1590"):
        to_float(obs, Variant.from_names("double_solitaire").cfg)
    for dtype in ("float64", np.int8, None, 3):
        with pytest.raises(ArgumentError, match="dtype must be one of float32, uint8"):
            to_dtype(obs, dtype)
