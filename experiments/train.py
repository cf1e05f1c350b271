"""Train MaskablePPO from a config:  python experiments/train.py configs/seahaven_c4.yaml

Writes into ``--out`` (default ``runs/<config name>``): checkpoints (``best.zip`` and the last;
``checkpoint.keep`` in the config keeps more; ``best.npz``, the best policy as weights only,
which loads without ``trusted=True``), TensorBoard logs (``tensorboard --logdir runs``),
periodic validation (``eval.csv``, also printed as it is made), training-episode statistics
(``train.csv``) and where the time went (``timing.json``). At the end it prints the last
validation, the best checkpoint and its ``best.npz``, and the last checkpoint. ``--device`` (default ``auto``: CUDA when torch
sees it, else the CPU) is where the network trains. Run the same command again to continue from
the latest checkpoint; ``--restart`` starts over. See ``agents/training.py``.
"""

from __future__ import annotations

import os

# numba's and torch's OpenMP threads spin-wait between calls by default; when the env kernels and
# the policy take turns in one process on few cores, that spinning starves the other side (10x
# slower evaluation measured on 2 cores). Set before numba or torch start their threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
from pathlib import Path

from agents.config import ConfigError, load_config, with_overrides
from agents.torch_setup import DeviceError, add_device_argument
from agents.training import TrainRun


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a YAML config (configs/*.yaml)")
    parser.add_argument("--out", help="run folder (default: runs/<config name>)")
    parser.add_argument("--timesteps", type=int, help="override total_timesteps")
    parser.add_argument("--seed", type=int, help="override seed (the env's deals and torch's)")
    parser.add_argument("--restart", action="store_true", help="delete the run folder first")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_device_argument(parser)
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
        cfg = with_overrides(cfg, total_timesteps=args.timesteps, seed=args.seed)
        if cfg.algorithm != "maskable_ppo":
            raise ConfigError(
                f"{cfg.path}: algorithm {cfg.algorithm} is trained by experiments/train_rllib.py"
            )
        out = Path(args.out) if args.out else Path("runs") / cfg.name
        run = TrainRun(cfg, out, progress=not args.no_progress, device=args.device)
        print(f"{cfg.name}: training on {run.device}", flush=True)
        run.train(restart=args.restart)
    except (ConfigError, DeviceError) as e:
        print(f"train.py: {e}", file=sys.stderr)
        return 2
    print(json.dumps(run.timing_report(), indent=2))
    print(run.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
