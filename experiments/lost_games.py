"""How a policy's lost games end: still winnable, proven lost, or undecided, and since when stuck.

    python experiments/lost_games.py DS1-D1N learned --deals 1000
    python experiments/lost_games.py DS1-D1N runs/imitate/best.npz --deals 1000 --json lost.json

The policy (``greedy``, ``learned`` or a checkpoint) plays validation deals (evaluation split
from ``2^19``, never the final evaluation deals ``0 …``) deterministically. For every game it
does not win, the solver decides the position the game ended in, with full information (the
stock and the face-down cards included) and ``--max-nodes`` nodes: ``solvable`` means the game
could still have been won from there, so the policy went round in circles (or stopped) in a
winnable position; ``unsolvable`` means an earlier move lost it. It also reports the last move
that put a card on the foundations: a game that makes no progress for most of its steps was
going round in circles.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see experiments/demo.py

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from agents.named import make_agent
from agents.play import VALIDATION_START, VARIANTS, EpisodeResult, eval_deals, play_deals
from solitaire_gym import Game
from solitaire_gym.envs.kernels import foundation_cards


def lost_game(r: EpisodeResult, max_nodes: int) -> dict:
    """What :mod:`lost_games` reports of one lost game ``r`` (played with ``record``)."""
    from agents.teacher import prove

    g = Game.from_code(r.code)
    best, last_growth = foundation_cards(g.state, 0, g.cfg), 0
    for i, move in enumerate(r.trace or ()):
        g.play(move)
        f = foundation_cards(g.state, 0, g.cfg)
        if f > best:
            best, last_growth = f, i + 1
    verdict, _ = prove(g, max_nodes)
    return {"code": r.code, "end": r.end, "steps": r.steps, "foundation": r.foundation,
            "last_growth": last_growth, "end_verdict": verdict}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant", choices=sorted(VARIANTS))
    p.add_argument("policy", help="greedy, learned (agents.named), or a policy checkpoint (.npz)")
    p.add_argument("--deals", type=int, default=1000, help="validation deals (default 1000)")
    p.add_argument("--skip", type=int, default=0, help="skip the first N validation deals")
    p.add_argument("--max-nodes", type=int, default=200_000, help="solver nodes per end position")
    p.add_argument("--json", help="write the per-game rows here")
    args = p.parse_args(argv)
    if not 1 <= args.deals <= 100_000 or not 0 <= args.skip <= 100_000:
        p.error("--deals must lie in 1 … 100000 and --skip in 0 … 100000")
    if not 1 <= args.max_nodes <= 10**9:
        p.error("--max-nodes must lie in 1 … 10^9")
    game, options = VARIANTS[args.variant]
    from agents.policy import CheckpointError

    try:
        agent = make_agent(args.policy, args.variant)
    except (ValueError, CheckpointError) as e:
        p.error(str(e))
    deals = eval_deals(args.skip + args.deals, VALIDATION_START)[args.skip :]
    results = play_deals(agent, game, options, deals, batch_size=1000, record=deals)
    lost = [r for r in results if not r.won]
    rows = []
    for k, r in enumerate(lost, 1):
        rows.append(lost_game(r, args.max_nodes))
        print(f"\r{k}/{len(lost)} lost games decided", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    ends = Counter(r.end for r in lost)
    verdicts = Counter(r["end_verdict"] for r in rows)
    print(f"{args.variant} {args.policy}: won {len(results) - len(lost)} of {len(results)} "
          f"validation deals (2^19+{args.skip} …); lost {len(lost)}: "
          f"{', '.join(f'{n} {k}' for k, n in sorted(ends.items()))}")  # fmt: skip
    print(
        "end position, solver with full information ("
        + f"{args.max_nodes} nodes): "
        + ", ".join(f"{verdicts[k]} {k}" for k in ("solvable", "unsolvable", "unknown"))
    )
    if rows:
        growth = np.array([r["last_growth"] for r in rows])
        steps = np.array([r["steps"] for r in rows])
        q1, med, q3 = np.percentile(growth, [25, 50, 75])
        print(f"last card to a foundation at step {med:.0f} (quartiles {q1:.0f}–{q3:.0f}) of "
              f"{np.median(steps):.0f} steps (median)")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
