"""torch's CPU threads beside the env kernels: a network-driven player and MaskablePPO, each with
torch's own default threads and with the package's (``SHARED_CORE_THREADS``).

    python benchmarks/bench_torch_threads.py                   # both cases, both workloads
    python benchmarks/bench_torch_threads.py --deals 20 --steps 1024

Workloads: ``play``, the committed SH1-C4 policy network (``learned``) plays ``--deals``
evaluation deals through ``agents.play.play_deals``; ``ppo``, the MaskablePPO snippet of
docs/training.md (Réfléchi draw 1, 16 envs) learns for ``--steps`` env steps. Cases: ``torch``,
torch left at its default threads (``play_deals(torch_threads=None)``,
``SB3VecEnv(torch_threads=None)``); ``package``, what the package does by default (both lower
torch to ``SHARED_CORE_THREADS``). Each case runs in a fresh process with ``OMP_WAIT_POLICY``
unset, as in a user's script; the kernels are loaded before the clock starts. Reported: torch's
threads while it ran, wall and CPU seconds of the process, and env steps a second for ``ppo``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout


def run_play(deals: int, package: bool) -> dict:
    import torch

    from agents.play import VARIANTS, eval_deals, play_deals
    from agents.policy import learned_agent

    game, options = VARIANTS["SH1-C4"]
    agent = learned_agent("SH1-C4")
    threads = {} if package else {"torch_threads": None}
    play_deals(agent, game, options, eval_deals(2), **threads)  # kernels loaded
    seen = []
    t, cpu = time.perf_counter(), time.process_time()
    res = play_deals(agent, game, options, eval_deals(deals), progress=lambda n: seen.append(
        torch.get_num_threads()), **threads)  # fmt: skip
    return {"threads": max(seen), "won": sum(r.won for r in res),
            "wall_s": round(time.perf_counter() - t, 2),
            "cpu_s": round(time.process_time() - cpu, 2)}  # fmt: skip


def run_ppo(steps: int, package: bool) -> dict:
    import torch
    from sb3_contrib import MaskablePPO

    from solitaire_gym.envs.sb3 import SB3VecEnv

    threads = {} if package else {"torch_threads": None}
    venv = SB3VecEnv("solitaire_reflechi", num_envs=16, draw=1, reward_mode="fair", seed=0,
                     **threads)  # fmt: skip
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=128, n_epochs=1, seed=0)
    model.learn(total_timesteps=256)  # kernels loaded
    t, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps, reset_num_timesteps=False)
    wall = time.perf_counter() - t
    return {"threads": torch.get_num_threads(), "wall_s": round(wall, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "env_steps_per_s": round(steps / wall)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2048)
    ap.add_argument("--workloads", default="play,ppo")
    ap.add_argument("--one", nargs=2, metavar=("WORKLOAD", "CASE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        workload, case = args.one
        package = case == "package"
        out = run_play(args.deals, package) if workload == "play" else run_ppo(args.steps, package)
        print(json.dumps(out))
        return 0
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    for workload in args.workloads.split(","):
        for case in ("torch", "package"):
            cmd = [sys.executable, __file__, "--one", workload, case, "--deals", str(args.deals),
                   "--steps", str(args.steps)]  # fmt: skip
            load = os.getloadavg()[0]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{workload:4} {case:8} {json.dumps(row)}  load {load:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
