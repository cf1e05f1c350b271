"""Commit a trained policy: copy a run's ``best.npz`` to ``agents/checkpoints/<variant>.npz``
with the record the tests check: the deals of evaluation deals 0 … 19 it wins, played
deterministically, and the foundation cards and steps each of those games ends with.

    python experiments/publish_policy.py runs/imitate_seahaven_c4/best.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agents.play import VARIANTS, eval_deals, play_deals
from agents.policy import CHECKPOINT_DIR, load_policy, read_policy_meta, save_policy
from solitaire_gym.engine.threads import SHARED_CORE_THREADS, set_torch_threads

CHECK_DEALS = 20


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--out-dir", default=str(CHECKPOINT_DIR))
    ap.add_argument("--trained-by", default=None,
                    help="the commands that made it, when more than the one it records")  # fmt: skip
    args = ap.parse_args(argv)
    set_torch_threads(SHARED_CORE_THREADS)
    meta = read_policy_meta(args.checkpoint)
    variant = meta["variant"]
    game, options = VARIANTS[variant]
    agent = load_policy(args.checkpoint, game=game, options=options)
    deals = eval_deals(CHECK_DEALS)
    results = play_deals(agent, game, options, deals)
    won = [r.deal for r in results if r.won]
    # the cards each game ends with on the foundations and its length too: a policy that wins
    # none of the deals is still checked move for move, near enough
    meta["check"] = {"first": 0, "count": CHECK_DEALS, "won": won,
                     "foundation": [r.foundation for r in results],
                     "steps": [r.steps for r in results]}  # fmt: skip
    meta["source"] = str(args.checkpoint)
    if args.trained_by:
        meta["trained_by"] = args.trained_by
    out = Path(args.out_dir) / f"{variant}.npz"
    save_policy(out, agent.net, meta)
    print(f"{out}: wins {len(won)} of evaluation deals 0 … {CHECK_DEALS - 1}; "
          f"{out.stat().st_size / 1e6:.1f} MB")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
