"""Where an env step's time goes, per game and per part, on fixed mid-game positions.

    python benchmarks/bench_step_parts.py                       # DS1-D1N, TF1-D1N, SH1-C4
    python benchmarks/bench_step_parts.py --steps 30 300 1000   # positions after that many moves

For each game, 1024 games are played with random legal moves for ``--steps`` moves, then the
same positions are timed again and again (restored before every round) through the parts of a
step, one thread each: the legal-action mask (move generation), the observation, the move itself
and drawing a random legal action from the masks (``random_legal_actions``). The best of
``--repeats`` rounds is reported in µs per game. The cost of move generation grows as a game goes
on (more cards face up, more moves), so the figures depend on ``--steps``; a benchmark that reuses
a handful of positions would also let the branch predictor learn them, which is why every round
covers 1024 different games.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numba as nb
import numpy as np

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym.engine.borrow import borrow, fields, hold, view
from solitaire_gym.engine.state import put_rows, take_rows
from solitaire_gym.envs.kernels import env_mask, step_row
from solitaire_gym.envs.observation import observe
from solitaire_gym.envs.sampling import random_legal_actions

GAMES = {
    "DS1-D1N": ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1}),
    "TF1-D1N": ("solitaire_gym/SolitaireReflechi-v0", {"draw": 1}),
    "SH1-C4": ("solitaire_gym/SeahavenTowers-v0", {"cells": 4}),
}


# The loops work on borrowed views, as the env's step kernel does (``engine/borrow.py``).
@nb.njit
def _masks(state, cfg, mode, n_base, masks):
    owner = borrow(state)
    s = fields(owner)
    for b in range(masks.shape[0]):
        env_mask(s, b, view(cfg), mode, n_base, False, masks[b])
    hold(owner)


@nb.njit
def _observations(state, cfg, obs):
    owner = borrow(state)
    s = fields(owner)
    for b in range(obs.shape[0]):
        observe(s, b, view(cfg), obs[b])
    hold(owner)


@nb.njit
def _moves(state, cfg, mode, n_base, act):
    owner = borrow(state)
    s = fields(owner)
    for b in range(act.shape[0]):
        if act[b] >= 0:
            step_row(s, b, view(cfg), mode, n_base, 0, 0.0, 0.0, act[b])
    hold(owner)


def parts(tag: str, steps: int, games: int, repeats: int) -> dict[str, float]:
    env_id, kwargs = GAMES[tag]
    env = gym.make_vec(env_id, num_envs=games, copy=False, **kwargs)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(steps):
        obs, *_, info = env.step(random_legal_actions(info["action_mask"], rng))
    core = env.unwrapped._core
    s, cfg = core.state, core.cfg
    snapshot = take_rows(s, slice(None))
    act = random_legal_actions(core.masks, rng)
    act[core.counts == 0] = -1
    masks = np.empty_like(core.masks)
    out = np.empty_like(core.obs)
    work = {
        "mask": lambda: _masks(s, cfg, core.mode, core.n_base, masks),
        "observation": lambda: _observations(s, cfg, out),
        "move": lambda: _moves(s, cfg, core.mode, core.n_base, act),
        "random action": lambda: random_legal_actions(core.masks, rng),
    }
    best = {}
    for name, f in work.items():
        put_rows(s, slice(None), snapshot)
        f()  # compile
        t_best = float("inf")
        for _ in range(repeats):
            put_rows(s, slice(None), snapshot)
            start = time.perf_counter()
            f()
            t_best = min(t_best, time.perf_counter() - start)
        best[name] = t_best / games * 1e6
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=sorted(GAMES), dest="tags")
    parser.add_argument("--steps", type=int, nargs="+", default=[30, 300])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    nb.set_num_threads(1)
    print(f"µs per game, one thread, best of {args.repeats} rounds over {args.batch} games")
    print(
        f"{'game':<9} {'moves':>6} {'mask':>7} {'observation':>12} {'move':>7} {'random action':>14}"
    )
    for tag in args.tags:
        for steps in args.steps:
            t = parts(tag, steps, args.batch, args.repeats)
            print(
                f"{tag:<9} {steps:>6} {t['mask']:>7.3f} {t['observation']:>12.3f} "
                f"{t['move']:>7.3f} {t['random action']:>14.3f}"
            )


if __name__ == "__main__":
    main()
