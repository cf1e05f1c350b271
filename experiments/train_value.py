"""Train a value network on solver labels of the positions of teacher or expert shards.

    python experiments/train_value.py SH1-C4 --shards runs/exit_sh/data/round0 --out runs/value/SH1-C4

Stages, each skipped when its output exists (the same command resumes): ``labels.npz`` (the
solver's verdicts on a ``--share`` of the shards' positions, ``agents.search.value.
label_positions``), then ``value.npz`` (the network; one game in ten held out, its accuracy and
Brier score in the record and printed). Copy ``value.npz`` to ``agents/checkpoints/value/
<variant>.npz`` to ship it. See ``agents/search/value.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from agents.dataset import ShardError, load_shards
from agents.play import VARIANTS
from agents.policy import CheckpointError
from agents.search.value import build_value_net, label_positions, save_value, train_value
from agents.torch_setup import DeviceError, add_device_argument, resolve_device
from solitaire_gym.engine.threads import set_torch_threads
from solitaire_gym.files import atomic_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("variant", choices=list(VARIANTS))
    ap.add_argument("--shards", required=True, help="folder of teacher or expert shards")
    ap.add_argument("--out", required=True, help="run folder")
    ap.add_argument("--share", type=float, default=0.25, help="share of positions labelled")
    ap.add_argument("--max-nodes", type=int, default=20_000, help="solver nodes per position")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    add_device_argument(ap)
    args = ap.parse_args(argv)
    import torch

    set_torch_threads(2)  # the solver's jobs are done by then: torch has the cores
    try:
        device = resolve_device(args.device)
    except DeviceError as e:
        print(f"train_value: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    game, options = VARIANTS[args.variant]
    labels_path = out / "labels.npz"
    try:
        if not labels_path.exists():
            paths = sorted(Path(args.shards).glob("*.npz"))
            data = load_shards(paths, variant=args.variant)
            lab = label_positions(args.variant, data, share=args.share, max_nodes=args.max_nodes,
                                  seed=args.seed, jobs=args.jobs)  # fmt: skip
            with atomic_path(labels_path) as tmp:
                np.savez_compressed(tmp, **{k: np.asarray(v) for k, v in lab.items()})
        with np.load(labels_path, allow_pickle=False) as z:
            obs, won, episode = z["obs"], z["won"], z["episode"]
            undecided = int(z["undecided"])
    except (ShardError, CheckpointError, ValueError, OSError) as e:
        print(f"train_value: {e}", file=sys.stderr)
        return 2
    held = episode % 10 == 0
    print(f"{len(won)} positions labelled ({won.mean():.1%} winnable), {undecided} undecided; "
          f"{int(held.sum())} held out")  # fmt: skip
    torch.manual_seed(args.seed)
    arch = {"hidden": args.hidden, "layers": args.layers}
    net = build_value_net(arch, obs.shape[1])
    train_value(net, obs[~held], won[~held], epochs=args.epochs, seed=args.seed, device=device,
                log=lambda r: print(f"epoch {r['epoch']}: loss {r['loss']:.4f} "
                                    f"accuracy {r['accuracy']:.3f}", flush=True))  # fmt: skip
    with torch.no_grad():
        p = torch.sigmoid(net(torch.from_numpy(obs[held]).to(device))).cpu().numpy()
    acc = float(((p > 0.5) == won[held]).mean())
    brier = float(((p - won[held]) ** 2).mean())
    print(f"held out: accuracy {acc:.3f}, Brier {brier:.4f} (constant {won[held].mean():.3f}: "
          f"Brier {float(won[held].var()):.4f})")  # fmt: skip
    meta = {
        "variant": args.variant,
        "game": game,
        "options": options,
        "arch": arch,
        "obs_dim": int(obs.shape[1]),
        "positions": len(won),
        "held_out": {
            "positions": int(held.sum()),
            "accuracy": round(acc, 4),
            "brier": round(brier, 4),
        },
        "trained_by": "python experiments/train_value.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
    }
    save_value(out / "value.npz", net, meta)
    print(json.dumps(meta["held_out"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
