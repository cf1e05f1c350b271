"""One compile for a pool (issue 43): a pool of worker processes has its parent compile (or load)
the kernels before it starts the workers, which then only load them from numba's disk cache.

Compiles are counted with numba's ``numba:compile`` event, which fires when a kernel compiles and
not when it loads from the cache; a cache that starts empty makes the first use a compile."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from solitaire_gym.distributed import run_deals

ROOT = Path(__file__).resolve().parents[1]

KERNEL = """
import os

import numba as nb
from numba.core import event

COMPILED = []  # the kernels compiled in this process


class _Count(event.Listener):
    def on_start(self, ev):
        COMPILED.append(ev.data["dispatcher"].py_func.__name__)

    def on_end(self, ev):
        pass


event.register("numba:compile", _Count())


@nb.njit(cache=True)
def twice(x):
    return 2 * x


def init():
    twice(1)


def work(part):
    return [(d, int(twice(d)), os.getpid(), list(COMPILED)) for d in part]
"""


def test_a_process_pool_compiles_in_its_parent_and_the_workers_load(tmp_path, monkeypatch):
    """``run_deals`` on 2 processes, with a kernel whose cache (beside its module, in a new
    folder) starts empty: the parent compiles it once, and no worker compiles anything."""
    name = f"pool_kernel_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))  # spawned workers get this process's sys.path
    module = importlib.import_module(name)
    try:
        records = list(run_deals(module.work, range(8), init=module.init, jobs=2))
        assert module.COMPILED == ["twice"]  # here, before the workers started
    finally:
        sys.modules.pop(name, None)
    assert sorted((d, v) for d, v, _, _ in records) == [(d, 2 * d) for d in range(8)]
    workers = {pid: compiled for _, _, pid, compiled in records}
    assert os.getpid() not in workers
    assert workers and all(compiled == [] for compiled in workers.values()), workers


SOLVE_COLD = """
import json
import os
import sys
from pathlib import Path

from numba.core import event

from solitaire_gym.solver import batch

CACHE = Path(os.environ["NUMBA_CACHE_DIR"])
compiled = []


class _Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass


def cache_files():
    return {str(p): p.stat().st_mtime_ns for p in CACHE.rglob("*") if p.suffix in (".nbi", ".nbc")}


if __name__ == "__main__":
    event.register("numba:compile", _Count())
    at_spawn = {}
    init = batch._init_worker

    def parent_init():  # what solve_many's pool runs here; the workers run the original
        init()
        at_spawn.update(cache_files())

    # pickled by name, so the workers' initializer is still batch._init_worker
    parent_init.__module__, parent_init.__qualname__ = init.__module__, init.__qualname__
    batch._init_worker = parent_init
    records = list(batch.solve_many(batch.parse_variant("SH1-C4"), range(1, 5), max_seconds=None,
                                    max_nodes=2000, jobs=2, progress=False))
    json.dump({"compiled": compiled, "deals": sorted(r["deal"] for r in records),
               "at_spawn": at_spawn, "after": cache_files()}, sys.stdout)
"""


SOLVER_TASK = """
import sys

from numba.core.registry import CPUDispatcher

from solitaire_gym.solver import batch


def kernels():
    return {id(v): len(v.signatures) for m in list(sys.modules.values())
            for v in vars(m).values() if isinstance(v, CPUDispatcher)}


batch._init_worker()
before = kernels()
for tag in ("SH1-C4", "SH1-C1", "TF1-D1N", "TF1-D3N", "DS1-D1N", "DS1-D3V"):
    batch.solve_deals([1, 2, 3], tag, None, 3000)  # solved, proven lost and out of budget
after = kernels()
print(len([k for k in after if after[k] != before.get(k)]), batch.__file__)
"""


def test_the_solver_pool_init_loads_what_solving_calls():
    """What a worker of ``solve --jobs`` calls beyond its init (which its parent ran first): no
    kernel, whatever the game and verdict. In a new process, as a worker is, so that every kernel
    starts unloaded (the cold run below checks the same with the compiler; this one is cheap)."""
    done = subprocess.run([sys.executable, "-c", SOLVER_TASK], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    new, path = done.stdout.split()
    assert new == "0", f"{new} kernels first called after the init"
    assert path.startswith(str(ROOT)), path  # this checkout


@pytest.mark.manual  # two minutes idle: the whole solver compiles
def test_a_cold_solve_on_two_processes_compiles_once(tmp_path):
    """``solve --jobs 2`` with an empty cache (a new ``NUMBA_CACHE_DIR``): the parent compiles the
    solver before the pool starts, and the workers add or rewrite no cache file (a kernel that
    compiles is saved to the cache at once)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    # -c, run from this checkout: its package, not another one installed
    done = subprocess.run([sys.executable, "-c", SOLVE_COLD], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=3600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["deals"] == [1, 2, 3, 4]
    assert any("search" in name for name in out["compiled"]), out["compiled"]  # cold, here
    assert out["at_spawn"], "the parent wrote no cache file before the pool started"
    assert out["after"] == out["at_spawn"], "a worker compiled"


WORKER = """
import functools
import importlib
import sys

import numpy as np
from numba.core.registry import CPUDispatcher


def kernels():
    return {id(v): len(v.signatures) for m in list(sys.modules.values())
            for v in vars(m).values() if isinstance(v, CPUDispatcher)}


script, player, tag, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# evaluate.py's players are built and warmed in its package's run module
module = importlib.import_module(
    "experiments.evaluation.run" if script == "evaluate" else f"experiments.{script}"
)
if script == "evaluate":  # a task: a batch of games played to the end, traces recorded
    from agents.named import make_agent
    from agents.play import VARIANTS, play_chunk

    game, options = VARIANTS[tag]
    make = functools.partial(make_agent, player, tag, solver_nodes=3000, solver_seconds=None)
    deals = list(range(300))
    module.warm_here(make, game, options, deals)
    before = kernels()
    play_chunk(deals[:n], make, game, options, {"batch_size": module.BATCH, "record": [0, 1]})
else:  # train_rllib: an env runner's env, through episodes that end and start again
    from agents.config import check_config
    from agents.rllib_training import env_config, make_env
    from solitaire_gym.envs.sampling import random_legal_actions

    cfg = check_config({"name": "t", "game": tag, "algorithm": "rllib_ppo",
                        "total_timesteps": 64, "num_envs": n, "max_episode_steps": 20,
                        "ppo": {"batch_size": 1}, "rllib": {"vectorize": player}})
    module.warm_here(cfg)
    before = kernels()
    env = make_env(dict(env_config(cfg), **({"num_envs": n} if player == "native" else {})))
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    for _ in range(50):
        masks = obs["action_mask"] if n > 1 else obs["action_mask"][None]
        actions = random_legal_actions(masks, rng)
        obs, _, terminated, truncated, _ = env.step(actions if n > 1 else int(actions[0]))
        if n == 1 and (terminated or truncated):
            obs, _ = env.reset()
after = kernels()
print(len([k for k in after if after[k] != before.get(k)]))
print(module.__file__, sys.modules["agents"].__file__, sys.modules["solitaire_gym"].__file__)
"""


@pytest.mark.parametrize(
    "case",
    [
        "evaluate random SH1-C4 256",
        "evaluate solver DS1-D1V 3",
        pytest.param("evaluate learned TF1-D3N 8", marks=pytest.mark.slow),  # torch, a network
        "train_rllib native double_solitaire 300",
        "train_rllib sync double_solitaire 1",
    ],
)
def test_the_experiments_warm_here_what_their_workers_call(case):
    """``evaluate.py --ray`` and ``train_rllib.py`` with a local Ray run the workers' calls a
    little here first (their ``warm_here``): the kernels that a worker then calls (an evaluation
    task; an env runner's episodes) are all loaded here already, none new. In a new process, as
    a worker is, so that every kernel starts unloaded."""
    done = subprocess.run([sys.executable, "-c", WORKER, *case.split()], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    new, paths = done.stdout.splitlines()
    assert new == "0", f"{new} kernels first called by the worker"
    assert all(path.startswith(str(ROOT)) for path in paths.split()), paths  # this checkout


TEACHER_TASK = """
import sys
import tempfile

from numba.core.registry import CPUDispatcher

from agents.teacher import teach_chunk, warm_teacher


def kernels():
    return {id(v): len(v.signatures) for m in list(sys.modules.values())
            for v in vars(m).values() if isinstance(v, CPUDispatcher)}


variant, teacher = sys.argv[1:]
warm_teacher(variant, teacher)  # what make_shards runs in its parent
before = kernels()
teach_chunk({"variant": variant, "lo": 0, "hi": 2, "out": tempfile.mkdtemp(), "teacher": teacher,
             "nodes": 64, "max_nodes": 20000})  # a worker's task
after = kernels()
print(len([k for k in after if after[k] != before.get(k)]))
"""


@pytest.mark.parametrize("case", ["SH1-C4 safe-greedy", "DS1-D3N safe-greedy", "TF1-D3N search"])
def test_the_teacher_warms_here_what_its_workers_call(case):
    """``agents.teacher.make_shards`` runs ``warm_teacher`` before its pool starts: a worker's
    task then calls no kernel that is not loaded already. In a new process, as a worker is."""
    done = subprocess.run([sys.executable, "-c", TEACHER_TASK, *case.split()], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-1] == "0", f"{done.stdout.split()[-1]} kernels first called"
