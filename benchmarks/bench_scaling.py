"""How well the env's step kernel uses the cores: per-thread state objects against one shared one.

    python benchmarks/bench_scaling.py              # Double Solitaire, 4096 games
    python benchmarks/bench_scaling.py --game SH1-C4 --games 16384

Times ``envs.kernels.step_rows`` refreshing every game (move generation, mask and observation,
no move played, so every call does the same work) three ways, in one run:

* ``serial``: ``step_rows_serial``, one thread: the reference;
* ``shared``: the parallel kernel with the same state object in every part, which is what a
  kernel that hands one state to all its threads does;
* ``per-thread``: the parallel kernel as the envs call it, with ``state.thread_states``.

Each figure is the best of ``--repeats`` rounds (a busy machine only ever makes a round slower).
Reported: µs per game and the speed-up over ``serial``; with 2 cores, 2.0 is perfect scaling.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numba as nb
import numpy as np

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym.engine.state import split_rows, thread_states
from solitaire_gym.envs import kernels
from solitaire_gym.envs.sampling import random_legal_actions

GAMES = {
    "DS1-D1N": ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1}),
    "TF1-D1N": ("solitaire_gym/SolitaireReflechi-v0", {"draw": 1}),
    "SH1-C4": ("solitaire_gym/SeahavenTowers-v0", {"cells": 4}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="DS1-D1N")
    parser.add_argument("--games", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=20, help="kernel calls per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds; the best is reported")
    args = parser.parse_args()
    env_id, kwargs = GAMES[args.game]
    n = args.games
    env = gym.make_vec(env_id, num_envs=n, copy=False, **kwargs)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(50):  # mid-game positions
        obs, *_, info = env.step(random_legal_actions(info["action_mask"], rng))
    core = env.unwrapped._core
    views = thread_states(core.state)
    act = np.full(n, kernels.ROW_REFRESH, np.int64)

    def call(kernel, s, split):
        masks = split_rows(core.masks, len(views)) if split else core.masks
        out = split_rows(core.obs, len(views)) if split else core.obs
        kernel(
            s, core.cfg, core.mode, core.n_base, False, core.reward_mode, 0.0, act,
            core._new_deals, core.rewards, core.reasons, core.engine_act,
            masks, core.counts, core.won, out,
        )  # fmt: skip

    ways = {
        "serial": lambda: call(kernels.step_rows_serial, core.state, False),
        "shared": lambda: call(kernels.step_rows, (core.state,) * len(views), True),
        "per-thread": lambda: call(kernels.step_rows, views, True),
    }
    best = dict.fromkeys(ways, float("inf"))
    for f in ways.values():
        f()  # compile or load from the cache
    for _ in range(args.repeats):
        for name, f in ways.items():
            start = time.perf_counter()
            for _ in range(args.calls):
                f()
            best[name] = min(best[name], (time.perf_counter() - start) / args.calls / n)
    print(f"{args.game}, {n} games, {nb.get_num_threads()} threads: mask + observation refresh")
    for name, t in best.items():
        print(f"  {name:<11} {t * 1e6:7.3f} µs/game   x{best['serial'] / t:5.2f} vs serial")


if __name__ == "__main__":
    main()
