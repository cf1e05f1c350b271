"""Train PPO with RLlib (new API stack, action masking) from a config:

    python experiments/train_rllib.py configs/rllib_seahaven_c4.yaml
    python experiments/train_rllib.py configs/rllib_seahaven_c4.yaml --ray auto   # a cluster

The same outputs as ``experiments/train.py``, in ``--out`` (default ``runs/<config name>``):
checkpoints (RLlib checkpoint folders), TensorBoard logs (``tensorboard --logdir runs``), periodic
validation on the validation deals (``eval.csv``), training-episode statistics (``train.csv``)
and where the time went (``timing.json``). Run the same command again to continue from the latest
checkpoint; ``--restart`` starts over. See ``agents/rllib_training.py``.
"""

from __future__ import annotations

import os

# numba's and torch's OpenMP threads spin-wait between calls by default; when the env kernels and
# the policy take turns in one process on few cores, that spinning starves the other side.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse
import json
import sys
from pathlib import Path

from agents.config import ConfigError, load_config, with_overrides
from solitaire_gym.distributed import LOCAL, add_ray_argument, check_address
from solitaire_gym.errors import SolitaireError


def warm_here(cfg) -> None:
    """Compile (or load) here, once, the env's kernels that every env runner of a local Ray calls,
    so that the runners only load them from numba's cache instead of each compiling them at the
    same time (issue 43): the env that a runner builds (``agents.rllib_training.make_env``: the
    native vector env of ``num_envs`` games, or one game with ``rllib.vectorize: sync``), reset
    and stepped twice with random legal moves."""
    import numpy as np

    from agents.rllib_training import env_config, make_env
    from solitaire_gym.envs.sampling import random_legal_actions

    config = env_config(cfg)
    vector = cfg.rllib["vectorize"] == "native"
    if vector:
        config["num_envs"] = cfg.num_envs
    env = make_env(config)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(2):
        masks = obs["action_mask"] if vector else obs["action_mask"][None]
        actions = random_legal_actions(masks, rng)
        obs, *_ = env.step(actions if vector else int(actions[0]))
    env.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a YAML config with algorithm: rllib_ppo (configs/)")
    parser.add_argument("--out", help="run folder (default: runs/<config name>)")
    parser.add_argument("--timesteps", type=int, help="override total_timesteps")
    parser.add_argument("--seed", type=int, help="override seed")
    parser.add_argument("--restart", action="store_true", help="delete the run folder first")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_ray_argument(parser)
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
        cfg = with_overrides(cfg, total_timesteps=args.timesteps, seed=args.seed)
        from agents.rllib_training import RLlibRun

        out = Path(args.out) if args.out else Path("runs") / cfg.name
        if check_address(args.ray) == LOCAL and cfg.rllib["num_env_runners"] > 0:
            warm_here(cfg)  # before the runners start: one compile, not one per runner
        run = RLlibRun(cfg, out, progress=not args.no_progress)
        final = run.train(restart=args.restart, address=args.ray)
    except (ConfigError, SolitaireError) as e:
        print(f"train_rllib.py: {e}", file=sys.stderr)
        return 2
    print(f"checkpoint: {final}")
    print(json.dumps(run.timing_report(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
