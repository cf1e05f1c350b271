"""``evaluate.py``'s command line: its options, checked, and the run they describe
(:func:`experiments.evaluation.run.evaluate`), with the table printed at the end."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.play import VARIANTS
from agents.torch_setup import add_device_argument, resolve_device
from experiments.evaluation.run import BATCH, evaluate
from experiments.evaluation.tables import markdown_table
from solitaire_gym.distributed import add_ray_argument
from solitaire_gym.engine.threads import SHARED_CORE_THREADS, set_torch_threads
from solitaire_gym.errors import ArgumentError, shown

DESCRIPTION = "Policies × games on a fixed set of evaluation-split deals."
"""The first line of ``evaluate.py --help`` (the first line of ``evaluate.py``'s docstring)."""


def build_parser() -> argparse.ArgumentParser:
    """``evaluate.py``'s options."""
    p = argparse.ArgumentParser(description=DESCRIPTION)
    p.add_argument(
        "--policies",
        default="random,greedy,solver",
        help="comma-separated: random, greedy, learned (the committed policy network of each "
        "variant, agents/checkpoints/), ppo (the MaskablePPO baseline of the variant, "
        "agents/checkpoints/ppo/), search (the search player at its shipped budget; "
        "search@N for N nodes per move, search@N-l2 for nested level 2, then -p rollouts played "
        "by the policy network, -d deep rollouts, -b a budget shared over the game, -v valued by "
        "the value network), puct (the tree search with the policy and value networks; "
        "puct@N), solver (default: "
        "random, greedy, solver)",
    )
    p.add_argument(
        "--checkpoint",
        "--ppo",  # its first name, from when it took MaskablePPO zips only
        action="append",
        metavar="[NAME@][TAG=]CHECKPOINT",
        help="a checkpoint to evaluate (repeatable): a MaskablePPO .zip, its weights-only .npz "
        "(checkpoints/best.npz of train.py; played as the zip is) or a policy network .npz "
        "(agents/policy.py, played deterministically); on the variant it was trained on, "
        "or on TAG; shown as NAME (default ppo). --ppo is its older name",
    )
    p.add_argument(
        "--trusted",
        action="store_true",
        help="load the stable-baselines3 zips of --checkpoint: they hold pickled Python objects, and "
        "loading one can run any code its author put in it (SECURITY.md); .npz files (policy "
        "networks, MaskablePPO weights) never need this",
    )
    p.add_argument(
        "--variants", default="all", help=f"comma-separated tags ({', '.join(VARIANTS)}) or 'all'"
    )
    p.add_argument("--deals", type=int, default=1000, help="deals per variant (default 1000)")
    p.add_argument("--first-deal", type=int, default=0, help="first deal number (default 0)")
    p.add_argument(
        "--solver-nodes",
        type=int,
        default=50_000,
        help="the solver's budget per deal, in search nodes (default 50000: reproducible; "
        "about 1 s on a 2-core machine)",
    )
    p.add_argument(
        "--solver-seconds",
        type=float,
        default=10.0,
        help="and in seconds, a safety bound (default 10)",
    )
    p.add_argument(
        "--verdicts",
        help="verdicts.json of an earlier run with the solver (replaces "
        "the verdicts of the --include folders)",
    )
    p.add_argument("--include", action="append", metavar="DIR",
                   help="merge the games of an earlier run's output folder (same deals) into "
                        "the table and plots (repeatable; two folders may not hold games "
                        "of the same variant and policy)")  # fmt: skip
    p.add_argument("--replace", action="append", metavar="DIR",
                   help="an earlier run's output folder whose games (verdicts, trace files) "
                        "take the place of the --include folders' games of the same variant "
                        "and policy, e.g. one variant rerun (repeatable)")  # fmt: skip
    p.add_argument(
        "--deterministic",
        action="store_true",
        help="PPO plays its most likely action (default: samples)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--traces",
        type=int,
        default=0,
        help="write trace files of the first N games of each policy and variant",
    )
    p.add_argument("--runs", nargs="*", help="training run folders, for learning curves")
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--torch-threads", type=int, default=SHARED_CORE_THREADS,
                   help="torch's CPU threads, for the network-driven policies (default "
                   f"{SHARED_CORE_THREADS}: they share the cores with the env kernels)")  # fmt: skip
    add_device_argument(p)
    p.add_argument("--out", default="runs/evaluation", help="output folder")
    add_ray_argument(p)
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="with --ray and no address: the CPUs of the local Ray (default all)",
    )
    p.add_argument(
        "--chunk",
        type=int,
        default=None,
        help=f"with --ray: deals per task (rounded up to a multiple of {BATCH})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar (with --ray)")
    return p  # fmt: skip


def main_result(argv: list[str] | None = None) -> dict:
    """Run the evaluation of ``argv`` (the command line), print its table, return its result."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    if (args.jobs is not None and args.jobs < 1) or (args.chunk is not None and args.chunk < 1):
        parser.error("--jobs and --chunk must be 1 or more")
    if args.ray is None and (args.jobs is not None or args.chunk is not None):
        parser.error("--jobs and --chunk go with --ray")
    if args.deals < 1:
        parser.error("--deals must be 1 or more")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        parser.error(f"--out {shown(args.out, 200)} is a file, not a folder")
    try:
        resolve_device(args.device)  # each process that loads a network resolves it there
        set_torch_threads(args.torch_threads)
    except ArgumentError as e:  # DeviceError is one
        parser.error(str(e))
    result = evaluate(args)
    print()
    print(markdown_table(result))
    return result


def main(argv: list[str] | None = None) -> int:
    """:func:`main_result`, for the command line: its exit status (0)."""
    main_result(argv)
    return 0
