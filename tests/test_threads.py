"""engine/threads.py: how the package starts numba's threads (each case in a fresh process, since
numba picks its threading layer once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

PROBE = """
import json, os
import numpy as np
import gymnasium as gym
import solitaire_gym
from solitaire_gym.engine import threads
from solitaire_gym.envs import core
env = gym.make_vec("solitaire_gym/SeahavenTowers-v0", num_envs=core.parallel_min())
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
