"""How well the env's step kernel uses the cores, and what borrowed views (``engine/borrow.py``) save.

    python benchmarks/bench_scaling.py              # Double Solitaire, 4096 games
    python benchmarks/bench_scaling.py --game SH1-C4 --games 16384
    python benchmarks/bench_scaling.py --threads 1,2,4,8,16 --dtypes float32,uint8

Times ``envs.kernels.step_rows`` refreshing every game (move generation, mask and observation,
no move played, so every call does the same work) three ways, in one run:

* ``serial``: ``step_rows_serial``, one thread: the reference;
* ``parallel``: ``step_rows`` as the envs call it, every part on borrowed views;
* ``counted``: a parallel loop written here that hands the state object itself to the same
  per-game kernels, as the envs did before ``borrow.py``: every call and every field read then
  counts a reference with an atomic instruction, on words that all threads share.

Each figure is the best of ``--repeats`` rounds (a busy machine only ever makes a round slower).
Reported: µs per game and the speed-up over ``serial``; with 2 cores, 2.0 is perfect scaling.

Then a table by ``--threads`` (numba's thread count, the step cut into as many parts; 1: the
serial kernel) and observation dtype (the envs' ``obs_dtype``: float32, or uint8 counts, a
quarter of the bytes written): µs and million games a second, and the speed-up over float32 on
one thread, measured in the same run.
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import gymnasium as gym
import numba as nb
import numpy as np

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym.engine.threads import num_threads
from solitaire_gym.envs import kernels
from solitaire_gym.envs.observation import OBS_DTYPES
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


def _ints(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"threads are whole numbers >= 1: {text!r}")
    return values


def _dtypes(text: str) -> list[str]:
    values = text.split(",")
    if not values or any(v not in OBS_DTYPES for v in values):
        raise argparse.ArgumentTypeError(f"dtypes are among {', '.join(OBS_DTYPES)}: {text!r}")
    return values


def _env(game: str, n: int, dtype: str):
    env_id, kwargs = GAMES[game]
    env = gym.make_vec(env_id, num_envs=n, copy=False, obs_dtype=dtype, **kwargs)
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
    return env, core, common


def _best(f, calls: int, repeats: int, n: int) -> float:
    f()  # compile or load from the cache
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            f()
        best = min(best, (time.perf_counter() - start) / calls / n)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="DS1-D1N")
    parser.add_argument("--games", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=20, help="kernel calls per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds; the best is reported")
    parser.add_argument("--threads", type=_ints, default=None,
                        help="thread counts of the table, e.g. 1,2,4,8,16 (default: 1 and all)")  # fmt: skip
    parser.add_argument("--dtypes", type=_dtypes, default=list(OBS_DTYPES),
                        help=f"observation dtypes (default {','.join(OBS_DTYPES)})")  # fmt: skip
    args = parser.parse_args(argv)
    most = nb.config.NUMBA_NUM_THREADS
    threads = args.threads or sorted({1, most})
    if max(threads) > most:
        parser.error(f"--threads: this machine runs at most {most} numba threads")
    n = args.games
    # 1. Borrowed views against counted references (float32, all threads).
    env, core, common = _env(args.game, n, "float32")
    ways = {
        "serial": lambda: kernels.step_rows_serial(core.state, *common),
        "parallel": lambda: kernels.step_rows(core.state, *common, num_threads()),
        "counted": lambda: _counted(core.state, *common),
    }
    best = {name: _best(f, args.calls, args.repeats, n) for name, f in ways.items()}
    print(f"{args.game}, {n} games, {num_threads()} threads: mask + observation refresh")
    for name, t in best.items():
        print(f"  {name:<11} {t * 1e6:7.3f} µs/game   x{best['serial'] / t:5.2f} vs serial")
    env.close()
    # 2. Threads and observation dtype; the reference: float32 on one thread (serial kernel).
    rows = []
    for dtype in args.dtypes:
        env, core, common = _env(args.game, n, dtype)
        for t in threads:
            nb.set_num_threads(t)
            if t == 1:
                f = partial(kernels.step_rows_serial, core.state, *common)
            else:
                f = partial(kernels.step_rows, core.state, *common, t)
            rows.append((dtype, t, _best(f, args.calls, args.repeats, n)))
        nb.set_num_threads(most)
        env.close()
    ref = next((s for d, t, s in rows if (d, t) == ("float32", 1)), rows[0][2])
    print()
    print(f"{args.game}, {n} games: mask + observation refresh by threads and observation dtype")
    print(f"  {'dtype':<8} {'threads':>7} {'µs/game':>8} {'M games/s':>10} {'vs float32, 1':>14}")
    for dtype, t, sec in rows:
        print(f"  {dtype:<8} {t:>7} {sec * 1e6:8.3f} {1e-6 / sec:10.2f} {ref / sec:14.2f}")


if __name__ == "__main__":
    main()
