"""RLlib's env runner on the package's native vector env against one Python env per game.

    python benchmarks/bench_rllib_sampling.py --num-envs 64 --steps 20000

Builds the PPO of ``configs/rllib_seahaven_c4.yaml`` (masked RLModule; ``--num-envs`` games per
runner, sampling in this process) twice: ``rllib.vectorize: native`` (RLlib's
``vector_entry_point``: the games stepped in one compiled call) and ``sync`` (gymnasium's
``SyncVectorEnv`` of single envs), and times ``env_runner.sample`` (env steps, policy inference,
connectors), alternately, ``--rounds`` times each. Prints env steps/s of both and the ratio.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from agents.config import check_config, load_config
from agents.rllib_training import build_config, register
from solitaire_gym.distributed import connect

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default=str(ROOT / "configs" / "rllib_seahaven_c4.yaml"))
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=20_000, help="env steps per timing")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    connect("local")
    register()
    base = load_config(args.config).raw
    algos = {}
    for mode in ("native", "sync"):
        raw = dict(base, num_envs=args.num_envs, rllib=dict(base["rllib"], vectorize=mode,
                                                            num_env_runners=0))  # fmt: skip
        raw["ppo"] = dict(raw["ppo"], batch_size=min(raw["ppo"]["batch_size"], args.num_envs))
        algos[mode] = build_config(check_config(raw)).build_algo()
        algos[mode].env_runner.sample(num_timesteps=args.num_envs * 4)  # warm up
    rates: dict[str, list[float]] = {m: [] for m in algos}
    for _ in range(args.rounds):
        for mode, algo in algos.items():
            t = time.perf_counter()
            eps = algo.env_runner.sample(num_timesteps=args.steps)
            dt = time.perf_counter() - t
            rates[mode].append(sum(len(e) for e in eps) / dt)
    print(f"{base['game']} {base['options']}: {args.num_envs} games per env runner, "
          f"{args.steps} steps per timing; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    for mode, rs in rates.items():
        print(f"{mode:>6}: {', '.join(f'{r:,.0f}' for r in rs)} env steps/s "
              f"(median {statistics.median(rs):,.0f})")  # fmt: skip
    ratio = statistics.median(rates["native"]) / statistics.median(rates["sync"])
    print(f"native / sync: {ratio:.2f}x")
    for algo in algos.values():
        algo.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
