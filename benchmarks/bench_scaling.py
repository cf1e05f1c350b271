"""How well the env's step kernel uses the cores, and what borrowed views (``engine/borrow.py``) save.

    python benchmarks/bench_scaling.py              # Double Solitaire, 4096 games
    python benchmarks/bench_scaling.py --game SH1-C4 --games 16384

Times ``envs.kernels.step_rows`` refreshing every game (move generation, mask and observation,
no move played, so every call does the same work) three ways, in one run:

* ``serial``: ``step_rows_serial``, one thread: the reference;
* ``parallel``: ``step_rows`` as the envs call it, every part on borrowed views;
* ``counted``: a parallel loop written here that hands the state object itself to the same
  per-game kernels, as the envs did before ``borrow.py``: every call and every field read then
  counts a reference with an atomic instruction, on words that all threads share.

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
from solitaire_gym.engine.threads import num_threads
from solitaire_gym.envs import kernels
from solitaire_gym.envs.sampling import random_legal_actions

GAMES = {
    "DS1-D1N": ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1}),
    "TF1-D1N": ("solitaire_gym/SolitaireReflechi-v0", {"draw": 1}),
    "SH1-C4": ("solitaire_gym/SeahavenTowers-v0", {"cells": 4}),
}


@nb.njit(parallel=True)
def _counted(
    s, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
    rewards, reasons, engine_act, masks, counts, won, obs,
):  # fmt: skip
    for b in nb.prange(act.shape[0]):
        kernels._step_one(
            s, b, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
            rewards, reasons, engine_act, masks, counts, won, obs,
        )  # fmt: skip


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
    act = np.full(n, kernels.ROW_REFRESH, np.int64)
    common = (
        core.cfg, core.mode, core.n_base, False, core.reward_mode, 0.0, 0.0, act, core._new_deals,
        core.rewards, core.reasons, core.engine_act, core.masks, core.counts, core.won, core.obs,
    )  # fmt: skip
    ways = {
        "serial": lambda: kernels.step_rows_serial(core.state, *common),
        "parallel": lambda: kernels.step_rows(core.state, *common, num_threads()),
        "counted": lambda: _counted(core.state, *common),
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
    print(f"{args.game}, {n} games, {num_threads()} threads: mask + observation refresh")
    for name, t in best.items():
        print(f"  {name:<11} {t * 1e6:7.3f} µs/game   x{best['serial'] / t:5.2f} vs serial")


if __name__ == "__main__":
    main()
