"""engine/threads.py: how the package starts numba's threads (each case in a fresh process, since
numba picks its threading layer once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

import solitaire_gym  # noqa: F401  (registers the ids)

PROBE = """
import json, os
import numpy as np
import gymnasium as gym
import solitaire_gym
from solitaire_gym.engine import threads
env = gym.make_vec("solitaire_gym/SeahavenTowers-v0", num_envs=640)
env.reset(seed=0)
print(json.dumps({
    "parallel": bool(env.unwrapped._core.parallel),
    "layer": threads.layer(),
    "policy": os.environ.get("OMP_WAIT_POLICY"),
    "maps": any("libgomp" in line for line in open("/proc/self/maps")),
}))
"""


def probe(**env_vars: str) -> tuple[dict, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")
    }
    env.update(env_vars)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def test_the_first_launch_leaves_the_environment_as_it_was():
    r, err = probe(OMP_DISPLAY_ENV="TRUE")  # GNU OpenMP prints its settings as it starts
    assert r["parallel"]
    assert r["policy"] is None  # set only while the OpenMP runtime read it
    if r["maps"]:  # an OpenMP runtime is installed: numba's default order takes it
        assert r["layer"] == "omp"
        assert "OMP_WAIT_POLICY = 'PASSIVE'" in err


def test_a_wait_policy_the_user_set_is_kept():
    r, err = probe(OMP_WAIT_POLICY="ACTIVE", OMP_DISPLAY_ENV="TRUE")
    assert r["policy"] == "ACTIVE"
    if r["maps"]:
        assert "OMP_WAIT_POLICY = 'ACTIVE'" in err


@pytest.mark.parametrize("layer", ["workqueue", "omp"])
def test_the_user_chooses_the_layer(layer):
    r, _ = probe(NUMBA_THREADING_LAYER=layer)
    assert r["layer"] == layer
    assert r["parallel"]


def _batched_work(_: int = 0) -> list[np.ndarray]:
    """Every batched kernel (vector env, sampler, Batch) on enough games to run in parallel."""
    from solitaire_gym.engine.batch import Batch
    from solitaire_gym.engine.variants import parse_code
    from solitaire_gym.envs.sampling import random_legal_actions

    env = gym.make_vec("solitaire_gym/DoubleSolitaire-v0", num_envs=2100)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=3)
    for _ in range(3):
        obs, _, _, _, info = env.step(random_legal_actions(info["action_mask"], rng))
    batch = Batch(parse_code("SH1-C4-AAAAAAB")[0], 300, undo_depth=8)
    batch.deal(np.arange(300))
    masks = batch.masks().copy()
    batch.step(random_legal_actions(masks, rng))
    done = batch.undo(np.arange(300))
    return [obs, info["action_mask"], masks, batch.masks().copy(), done]


def test_a_process_forked_after_the_threads_started_runs_on_one_thread():
    """GNU OpenMP cannot run in a forked child (numba would terminate it at the first parallel
    launch): there the batched kernels run on one thread and give the same results."""
    import multiprocessing as mp

    here = _batched_work()  # starts the threads in this process
    with mp.get_context("fork").Pool(1) as pool:
        there = pool.apply_async(_batched_work, (0,)).get(timeout=240)
    for a, b in zip(here, there, strict=True):
        np.testing.assert_array_equal(a, b)


def _single_env_warnings(_: int = 0) -> int:
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("solitaire_gym/SeahavenTowers-v0")
        obs, info = env.reset(seed=0)
        env.step(int(np.flatnonzero(info["action_mask"])[0]))
    return sum(issubclass(w.category, RuntimeWarning) for w in caught)


def test_single_envs_need_no_threads_and_do_not_warn_in_forked_children():
    """A single env starts no threads, so a process that only uses single envs (an
    ``AsyncVectorEnv`` worker, say) is never slowed down or warned, forked or not."""
    code = (
        "import gymnasium as gym, numba, solitaire_gym\n"
        "env = gym.make('solitaire_gym/DoubleSolitaire-v0'); env.reset(seed=0)\n"
        "try:\n    print(numba.threading_layer())\nexcept ValueError:\n    print('none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "none"
    import multiprocessing as mp

    _batched_work()  # the threads have started here
    with mp.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_single_env_warnings, (0,)).get(timeout=240) == 0
