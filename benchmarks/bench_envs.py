"""Env steps per second, observation and mask included, random legal actions, against
OpenSpiel's ``solitaire`` measured in the same run (issue "Gymnasium environments").

    python benchmarks/bench_envs.py            # every variant, vector env at 256/1024/4096
    python benchmarks/bench_envs.py --quick    # shorter timings, one option per game

Reported: steps/s of the single env (``gym.make``), of the vector env (``gym.make_vec``) at each
size, with its default ``copy=True`` (fresh observation, reward and mask arrays every step) and
with ``copy=False`` (the env's own buffers), of OpenSpiel (new state, ``observation_tensor()``,
``legal_actions()``, ``apply_action()``, chance nodes sampled; chance outcomes are not counted as
steps), the ratios to OpenSpiel, and the vector env's memory per game. OpenSpiel is measured before
and after the envs and the mean is the reference, so a machine that gets busier halfway shows up
as two different figures. The random legal actions are drawn in compiled code
(``random_legal_actions``) and their time counts in the env's. Needs ``pip install open_spiel``.
"""

from __future__ import annotations

import argparse
import os
import random
import time

import gymnasium as gym
import numba
import numpy as np

import solitaire_gym  # noqa: F401  (registers the ids)
from solitaire_gym.envs.sampling import random_legal_actions

VARIANTS = [
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1, "scoring": "normal"}, "DS1-D1N"),
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 3, "scoring": "normal"}, "DS1-D3N"),
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 1, "scoring": "vegas"}, "DS1-D1V"),
    ("solitaire_gym/DoubleSolitaire-v0", {"draw": 3, "scoring": "vegas"}, "DS1-D3V"),
    ("solitaire_gym/SolitaireReflechi-v0", {"draw": 1}, "TF1-D1N"),
    ("solitaire_gym/SolitaireReflechi-v0", {"draw": 3}, "TF1-D3N"),
    ("solitaire_gym/SeahavenTowers-v0", {"cells": 4}, "SH1-C4"),
    ("solitaire_gym/SeahavenTowers-v0", {"cells": 2}, "SH1-C2"),
    ("solitaire_gym/SeahavenTowers-v0", {"cells": 1}, "SH1-C1"),
]


def openspiel_rate(seconds: float) -> float:
    """OpenSpiel's steps/s. The harness is kept light so that it does not slow OpenSpiel down:
    Python's ``random`` picks the chance outcomes (by their probabilities) and the actions;
    ``numpy``'s ``choice(p=...)`` took 15% of the time on its own and made OpenSpiel look 14%
    slower than it is."""
    import pyspiel

    game = pyspiel.load_game("solitaire")
    rnd = random.Random(0)
    state = game.new_initial_state()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        if state.is_terminal():
            state = game.new_initial_state()
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rnd.choices(outcomes, weights=probs)[0])
            continue
        state.observation_tensor()
        legal = state.legal_actions()
        state.apply_action(legal[rnd.randrange(len(legal))])
        steps += 1
    return steps / (time.perf_counter() - start)


def single_rate(env_id: str, kwargs: dict, seconds: float) -> float:
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        steps += 1
        if term or trunc:
            obs, info = env.reset()
    return steps / (time.perf_counter() - start)


def vector_rate(
    env_id: str, kwargs: dict, n: int, seconds: float, copy: bool = True
) -> tuple[float, int]:
    env = gym.make_vec(env_id, num_envs=n, copy=copy, **kwargs)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    for _ in range(3):  # warm up
        obs, r, term, trunc, info = env.step(random_legal_actions(info["action_mask"], rng))
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, r, term, trunc, info = env.step(random_legal_actions(info["action_mask"], rng))
        steps += n
    return steps / (time.perf_counter() - start), env.unwrapped.bytes_per_game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 s per figure, 3 variants")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[256, 1024, 4096])
    args = parser.parse_args()
    seconds = args.seconds or (1.0 if args.quick else 3.0)
    variants = [VARIANTS[0], VARIANTS[4], VARIANTS[6]] if args.quick else VARIANTS
    for env_id, kwargs, _ in variants:  # compile (or load from cache) before timing
        vector_rate(env_id, kwargs, 8, 0.05)
        single_rate(env_id, kwargs, 0.05)
    before = openspiel_rate(seconds)
    rows = []
    for env_id, kwargs, tag in variants:
        single = single_rate(env_id, kwargs, seconds)
        vec, mem = {}, 0
        for copy in (True, False):
            for n in args.sizes:
                vec[copy, n], mem = vector_rate(env_id, kwargs, n, seconds, copy)
        rows.append((tag, single, vec, mem))
        print(f"  measured {tag}", flush=True)
    after = openspiel_rate(seconds)
    ref = (before + after) / 2
    print(
        f"\nOpenSpiel solitaire (reference): {before:,.0f} steps/s before, {after:,.0f} after; "
        f"mean {ref:,.0f}\n"
    )
    for copy in (True, False):
        print(f"vector env with copy={copy}" + (" (the default)" if copy else ""))
        head = f"{'variant':<9} {'single':>9} {'x':>6}"
        for n in args.sizes:
            head += f" {'vec ' + str(n):>11} {'x':>6}"
        print(head + f" {'bytes/game':>11}")
        for tag, single, vec, mem in rows:
            line = f"{tag:<9} {single:>9,.0f} {single / ref:>6.2f}"
            for n in args.sizes:
                line += f" {vec[copy, n]:>11,.0f} {vec[copy, n] / ref:>6.1f}"
            print(line + f" {mem:>11,}")
        print()
    print("x: ratio to OpenSpiel's mean steps/s in this run. Targets: vector >= 30, single >= 1.")
    print(
        f"numba threading layer: {numba.threading_layer()}, OMP_WAIT_POLICY="
        f"{os.environ.get('OMP_WAIT_POLICY', 'PASSIVE (set by solitaire_gym)')} (set "
        "NUMBA_THREADING_LAYER and OMP_WAIT_POLICY to compare; benchmarks/bench_launch.py times "
        "one launch of each)"
    )


if __name__ == "__main__":
    main()
