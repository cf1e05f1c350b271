"""Train a policy network by imitating the solver-backed teacher (behaviour cloning + DAgger).

    python experiments/imitate.py configs/imitate_seahaven_c4.yaml            # runs/<name>/
    python experiments/imitate.py configs/imitate_seahaven_c4.yaml --out DIR

Resumable: the same command continues where it stopped. ``--device`` (default ``auto``: CUDA
when torch sees it, else the CPU) is where the networks train; the teacher's games run on the
CPU. Outputs: ``data/round*/`` (teacher
shards), ``round*.npz`` (the network after each round), ``best.npz`` (most validation wins),
``train.csv`` (loss, accuracy, validation wins per epoch), ``timing.json``. See
``agents/imitation.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see experiments/demo.py; before torch

from agents.config import ConfigError
from agents.imitation import ImitationRun, load_imitation_config
from agents.torch_setup import DeviceError, add_device_argument


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("config")
    ap.add_argument("--out", default=None, help="run folder (default runs/<name>)")
    add_device_argument(ap)
    args = ap.parse_args(argv)
    try:
        cfg = load_imitation_config(args.config)
        run = ImitationRun(cfg, Path(args.out or Path("runs") / cfg.name), device=args.device)
    except (ConfigError, DeviceError) as e:
        print(f"imitate: {e}", file=sys.stderr)
        return 2
    print(f"{cfg.name}: training on {run.device}", flush=True)
    t0 = time.perf_counter()
    best = run.run()
    print(f"best checkpoint {best} ({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
