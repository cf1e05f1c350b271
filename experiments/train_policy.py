"""Train a policy network on teacher-data shards (one training, no data generation).

    python experiments/train_policy.py SH1-C4 --data 'data/SH1-C4/r*/*.npz' --arch cards \\
        --hidden 96 --epochs 6 --out runs/sh_cards96.npz

The pieces of ``experiments/imitate.py`` one at a time, for DAgger rounds run by hand: make
shards with ``experiments/teacher_data.py`` (``--student`` the last network), train on all of
them here, repeat. The best epoch by wins on ``--val-deals`` validation deals (evaluation split
from 2^19) is saved. ``--device`` (default ``auto``: CUDA when torch sees it) is where it trains.
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see experiments/demo.py; before torch

from agents.config import ConfigError
from agents.dataset import ShardError, load_shards
from agents.imitation import (
    best_play,
    check_imitation_config,
    fit,
    teacher_wins_only,
    validator,
)
from agents.memory import tried_counts
from agents.play import VARIANTS
from agents.policy import build_net, game_spec, save_policy
from agents.teacher import teacher_orders
from agents.torch_setup import DeviceError, add_device_argument, resolve_device
from solitaire_gym.engine.threads import set_torch_threads


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variant")
    ap.add_argument("--data", required=True, help="comma-separated globs of shards")
    ap.add_argument("--out", required=True, help="the checkpoint to write (.npz)")
    ap.add_argument("--arch", default="cards")
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--layers", type=int, default=1,
                    help="mlp: hidden layers; cards: layers of the action MLP (default 1)")  # fmt: skip
    ap.add_argument("--heads", default="policy", help="policy or factored (agents/networks/)")
    ap.add_argument(
        "--lookup",
        action="store_true",
        help="cards network: also embed the card each action moves and its target",
    )
    ap.add_argument(
        "--piles",
        action="store_true",
        help="cards network: also give each place its own pile-block values (column length, "
        "face-down count, ...)",
    )
    ap.add_argument(
        "--moves",
        action="store_true",
        help="cards network: also embed per action the cards it moves, goes on and uncovers, "
        "and the face-up cards its column keeps",
    )
    ap.add_argument(
        "--memory",
        action="store_true",
        help="cards network: also see how often its game played each action from this "
        "position (agents/memory.py)",
    )
    ap.add_argument("--memory-mode", default="count",
                    help="what the memory shows: count or relative (agents/memory.py)")  # fmt: skip
    ap.add_argument("--rank-weight", type=float, default=1.0)
    ap.add_argument("--safe-weight", type=float, default=1.0)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--unsafe-weight", type=float, default=0.1)
    ap.add_argument("--teacher-wins-only", action="store_true")
    ap.add_argument("--val-deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--torch-threads", type=int, default=1)
    add_device_argument(ap)
    args = ap.parse_args(argv)
    import torch

    arch = {
        "kind": args.arch,
        "hidden": args.hidden,
        "layers": args.layers,
        "heads": args.heads,
        "lookup": args.lookup,
        "piles": args.piles,
        "moves": args.moves,
        "memory": args.memory,
        "memory_mode": args.memory_mode,
    }
    try:  # the same checks as a config of experiments/imitate.py
        check_imitation_config({
            "name": "train_policy", "variant": args.variant, "seed": args.seed,
            "torch_threads": args.torch_threads, "arch": arch,
            "train": {"epochs": args.epochs, "batch_size": args.batch_size,
                      "learning_rate": args.lr, "unsafe_weight": args.unsafe_weight,
                      "rank_weight": args.rank_weight, "safe_weight": args.safe_weight},
            "validation": {"deals": args.val_deals},
        })  # fmt: skip
        device = resolve_device(args.device)
        paths = sorted(p for g in args.data.split(",") for p in glob.glob(g))
        data = load_shards(paths, variant=args.variant)
    except (ConfigError, ShardError, DeviceError) as e:
        print(f"train_policy: {e}", file=sys.stderr)
        return 2
    set_torch_threads(args.torch_threads)
    game, options = VARIANTS[args.variant]
    if args.heads == "factored":
        data["gorder"] = teacher_orders(data, game, options)
    if args.memory:
        data["tried"] = tried_counts(data["obs"], data["masks"], data["played"], data["episode"],
                                     args.memory_mode)  # fmt: skip
    if args.teacher_wins_only:
        data = teacher_wins_only(data)
    print(f"{len(paths)} shards, {len(data['labels'])} positions", flush=True)
    torch.manual_seed(args.seed)
    net = build_net(arch, game_spec(game, options))
    meta = {"game": game, "options": options, "variant": args.variant, "arch": arch,
            "trained_by": "python experiments/train_policy.py " + shlex.join(argv)}  # fmt: skip
    t0 = time.perf_counter()
    best, history = fit(net, data, epochs=args.epochs, batch_size=args.batch_size,
                        learning_rate=args.lr, unsafe_weight=args.unsafe_weight,
                        rank_weight=args.rank_weight, safe_weight=args.safe_weight,
                        seed=args.seed, validate=validator(game, options, meta, args.val_deals),
                        log=lambda r: print(r, f"{time.perf_counter() - t0:.0f} s", flush=True),
                        device=device)  # fmt: skip
    meta.update(val_wins=best, val_deals=args.val_deals, positions=len(data["labels"]),
                history=history, play=best_play(history))  # fmt: skip
    save_policy(args.out, net, meta)
    print(f"{args.out}: best validation wins {best} of {args.val_deals}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
