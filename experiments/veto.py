"""How much of a policy's loss is losing moves: the policy alone against the policy with the
solver's veto, on the same validation deals.

    python experiments/veto.py SH1-C4 learned --deals 200
    python experiments/veto.py TF1-D1N runs/imitate/best.npz --deals 200 --skip 200 --json out.json

The policy (``learned``, ``greedy`` or a policy checkpoint) plays validation deals (evaluation split from
``2^19``, never the final evaluation deals ``0 …``) deterministically, then plays them again
with the solver's veto (``agents/veto.py``): at every move, its best-scoring move after which
the solver still finds a win (with the whole position: in Réfléchi and Double Solitaire the
hidden cards too). A game the veto wins and the policy alone loses was lost by moves that give
the win away; a game lost even with the veto was lost by choices between safe moves that make
no progress. Greedy with the veto is the teacher that taught the policies
(``agents/teacher.py``, ``on_repeat="greedy"``). The veto calls the solver at every move: a
diagnostic, never a way to play.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # see experiments/demo.py

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from agents.named import make_agent
from agents.play import VALIDATION_START, VARIANTS, eval_deals, play_deals
from agents.stats import wilson_interval
from agents.teacher import DEFAULT_MAX_NODES
from agents.veto import SolverVetoAgent


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant", choices=sorted(VARIANTS))
    p.add_argument(
        "policy", help="learned, greedy (with the veto: the teacher), or a policy checkpoint (.npz)"
    )
    p.add_argument("--deals", type=int, default=200, help="validation deals (default 200)")
    p.add_argument("--skip", type=int, default=0, help="skip the first N validation deals")
    p.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES,
                   help="solver nodes per tried move (the teacher's default)")  # fmt: skip
    p.add_argument("--samples", type=int, default=0, metavar="K",
                   help="Réfléchi: judge moves under K random orders of the unseen stock, "
                   "not the real one (agents/veto.py)")  # fmt: skip
    p.add_argument(
        "--decide",
        type=int,
        default=0,
        metavar="NODES",
        help="also decide each deal the veto lost, from the deal, with NODES nodes",
    )
    p.add_argument("--json", help="write the per-deal rows here")
    args = p.parse_args(argv)
    if not 1 <= args.deals <= 100_000 or not 0 <= args.skip <= 100_000:
        p.error("--deals must lie in 1 … 100000 and --skip in 0 … 100000")
    if not 1 <= args.max_nodes <= 10**9:
        p.error("--max-nodes must lie in 1 … 10^9")
    if not 0 <= args.decide <= 10**9:
        p.error("--decide must lie in 0 … 10^9")
    if not 0 <= args.samples <= 1000:
        p.error("--samples must lie in 0 … 1000")
    if args.samples and not args.variant.startswith("TF1"):
        p.error("--samples needs Solitaire Réfléchi (TF1-…): elsewhere other cards are hidden too")
    if args.policy not in ("learned", "greedy") and not args.policy.endswith(".npz"):
        p.error(f"policy must be learned, greedy or a policy checkpoint (.npz), not "
                f"{args.policy!r}")  # fmt: skip
    from agents.policy import CheckpointError

    try:
        alone = make_agent(args.policy, args.variant)
        vetoed = SolverVetoAgent(make_agent(args.policy, args.variant), max_nodes=args.max_nodes,
                                 samples=args.samples)  # fmt: skip
    except (ValueError, CheckpointError) as e:
        p.error(str(e))
    game, options = VARIANTS[args.variant]
    deals = eval_deals(args.skip + args.deals, VALIDATION_START)[args.skip :]
    n = len(deals)
    t0 = time.perf_counter()
    plain = play_deals(alone, game, options, deals, batch_size=1000)
    t1 = time.perf_counter()
    with_veto = play_deals(vetoed, game, options, deals, batch_size=8,
                           progress=lambda k: print(f"\r{k}/{n} games with the veto", end="",
                                                    file=sys.stderr, flush=True))  # fmt: skip
    t2 = time.perf_counter()
    print(f"\n{args.variant}, {args.policy}, validation deals 2^19+{args.skip} … (+{n}):")
    veto_name = f"+ veto @{args.samples}" if args.samples else "policy + veto"
    for name, res, secs in (("policy", plain, t1 - t0), (veto_name, with_veto, t2 - t1)):
        won = sum(r.won for r in res)
        lo, hi = wilson_interval(won, n)
        ends = Counter(r.end for r in res if not r.won)
        print(f"  {name:<14} won {won:>5} of {n} ({won / n:.1%}, {lo:.1%}–{hi:.1%}); "
              f"lost: {', '.join(f'{c} {e}' for e, c in sorted(ends.items())) or 'none'}; "
              f"{secs:.0f} s")  # fmt: skip
    both = Counter((a.won, b.won) for a, b in zip(plain, with_veto, strict=True))
    print(
        f"  won by both {both[True, True]}, by the veto only {both[False, True]}, by the "
        f"policy only {both[True, False]}, by neither {both[False, False]}; the veto replaced "
        f"{vetoed.vetoed} of {vetoed.moves} moves ({vetoed.vetoed / max(vetoed.moves, 1):.1%})"
    )
    verdicts = {}
    if args.decide:
        from agents.teacher import prove
        from solitaire_gym import Game

        for r in with_veto:
            if not r.won:
                verdicts[r.code] = prove(Game.from_code(r.code), args.decide)[0]
        counts = Counter(verdicts.values())
        print(
            f"  the {len(verdicts)} deals lost with the veto, decided from the deal "
            f"({args.decide} nodes): "
            + ", ".join(f"{counts[k]} {k}" for k in ("solvable", "unsolvable", "unknown"))
        )
    if args.json:
        rows = [{"deal": int(d), "code": a.code, "won": a.won, "won_with_veto": b.won,
                 "end_with_veto": b.end, "foundation": a.foundation,
                 "foundation_with_veto": b.foundation, "deal_verdict": verdicts.get(b.code)}
                for d, a, b in zip(deals, plain, with_veto, strict=True)]  # fmt: skip
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
