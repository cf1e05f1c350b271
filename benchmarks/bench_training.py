"""MaskablePPO training throughput: env steps a second of ``experiments/train.py``'s model and
where its time goes, against the stock setting in the same run.

    python benchmarks/bench_training.py                       # SH1-C4, 65,536 steps a case
    python benchmarks/bench_training.py --variant DS1-D1N --steps 32768 --threads 1,2

Cases, each in a fresh process with the kernels loaded and one warm-up rollout before the clock:

- ``reference``: the stock sb3-contrib ``MlpPolicy`` with the setting the configs had before
  (64 envs, batch 1,024), the reference the ratios are taken against;
- ``stock-4096``: the stock policy with the configs' setting (128 envs, batch 4,096);
- ``lean``: the configs' setting with :class:`agents.masked_policy.LeanMaskablePolicy`, what
  ``experiments/train.py`` trains.

Each case runs at every ``--threads`` count (torch's threads; numba's stay at one). Reported per
case: env steps a second (wall), the process's CPU seconds, the seconds in rollouts (policy
inference, env steps, buffer) and in updates (gradient steps), and the ratio of steps a second
to the reference at the same thread count. The validation games ``experiments/train.py`` plays
every ``eval.every_steps`` are not included (``timing.json`` of a run has them).
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

CASES = {
    "reference": {"policy": "sb3", "num_envs": 64, "batch_size": 1024},
    "stock-4096": {"policy": "sb3", "num_envs": 128, "batch_size": 4096},
    "lean": {"policy": "lean", "num_envs": 128, "batch_size": 4096},
}


def run_case(variant: str, case: str, threads: int, steps: int) -> dict:
    import torch

    from agents.config import check_config, load_config
    from agents.training import build_model, make_train_env
    from experiments.ppo_baselines import CONFIGS

    cfg = load_config(ROOT / CONFIGS[variant])
    c = CASES[case]
    raw = dict(cfg.raw, num_envs=c["num_envs"], torch_threads=threads,
               ppo=dict(cfg.raw["ppo"], policy=c["policy"], batch_size=c["batch_size"]))  # fmt: skip
    cfg = check_config(raw, cfg.path)
    torch.set_num_threads(threads)
    env, _ = make_train_env(cfg)
    model = build_model(cfg, env, None)
    parts = {"rollouts": 0.0, "updates": 0.0}

    def timed(name, fn):
        def wrapper(*a, **k):
            t = time.perf_counter()
            out = fn(*a, **k)
            parts[name] += time.perf_counter() - t
            return out

        return wrapper

    rollout = cfg.ppo["n_steps"] * cfg.num_envs
    model.learn(rollout)  # kernels loaded, one rollout and update
    model.collect_rollouts = timed("rollouts", model.collect_rollouts)
    model.train = timed("updates", model.train)
    n = max(1, round(steps / rollout)) * rollout
    t, cpu = time.perf_counter(), time.process_time()
    model.learn(n, reset_num_timesteps=False)
    wall = time.perf_counter() - t
    return {"case": case, "threads": threads, "steps": n, "steps_per_s": round(n / wall),
            "wall_s": round(wall, 2), "cpu_s": round(time.process_time() - cpu, 2),
            "rollouts_s": round(parts["rollouts"], 2),
            "updates_s": round(parts["updates"], 2)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="SH1-C4")
    ap.add_argument("--steps", type=int, default=65536, help="env steps timed per case")
    ap.add_argument("--threads", default="1,2", help="torch thread counts, e.g. 1,2")
    ap.add_argument("--case", help=argparse.SUPPRESS)  # a child process runs one case
    args = ap.parse_args(argv)
    from experiments.ppo_baselines import CONFIGS

    if args.variant not in CONFIGS:
        ap.error(f"--variant must be one of {', '.join(CONFIGS)}")
    if not 1_000 <= args.steps <= 10_000_000:
        ap.error("--steps must be in 1000 … 10000000")
    try:
        threads = [int(x) for x in args.threads.split(",")]
    except ValueError:
        ap.error(f"--threads must be integers separated by commas, not {args.threads!r}")
    if not threads or not all(1 <= x <= 256 for x in threads):
        ap.error("--threads must be in 1 … 256")
    if args.case:
        case, n = args.case.split(":")
        print(json.dumps(run_case(args.variant, case, int(n), args.steps)))
        return 0
    env = dict(os.environ, NUMBA_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    print(f"MaskablePPO training, {args.variant}, {args.steps:,} env steps a case "
          f"(load average {os.getloadavg()[0]:.2f})")  # fmt: skip
    print(f"{'case':<11} {'threads':>7} {'steps/s':>8} {'× ref':>6} {'wall s':>7} {'CPU s':>7} "
          f"{'rollouts s':>10} {'updates s':>9}")  # fmt: skip
    rows = []
    for n in threads:
        ref = None
        for case in CASES:
            out = subprocess.run(
                [sys.executable, __file__, "--variant", args.variant, "--steps", str(args.steps),
                 "--case", f"{case}:{n}"],
                env=env, cwd=ROOT, capture_output=True, text=True, check=True,
            )  # fmt: skip
            row = json.loads(out.stdout.strip().splitlines()[-1])
            ref = ref or row["steps_per_s"]
            row["ratio"] = round(row["steps_per_s"] / ref, 2)
            rows.append(row)
            print(f"{case:<11} {n:>7} {row['steps_per_s']:>8,} {row['ratio']:>6.2f} "
                  f"{row['wall_s']:>7.1f} {row['cpu_s']:>7.1f} {row['rollouts_s']:>10.1f} "
                  f"{row['updates_s']:>9.1f}", flush=True)  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
