"""Build the shipped lists of solvable training deals (the envs' ``deals="solvable"``).

    python experiments/solvable_deals.py                    # every variant, the budgets below
    python experiments/solvable_deals.py --variants SH1-C4 --tried 8000 --jobs 2

For each variant, deals ``2^20 … 2^20 + tried − 1`` (the first of the training split) are solved
with a budget of positions per deal (not seconds: the same command gives the same lists on any
machine, however busy; the solver searches about 400,000–600,000 positions a second on one core); the solvable ones go to ``solitaire_gym/data/solvable/<TAG>.npy``
and the counts of each verdict to ``solitaire_gym/data/solvable/index.json`` (see
``solitaire_gym.envs.deal_lists``). The solver's records are kept in ``--work`` (default
``runs/solvable_deals/``, not committed): run the same command again after an interruption and
the deals already solved are skipped.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from solitaire_gym.envs.deal_lists import TAGS, TRAIN_START
from solitaire_gym.solver.batch import parse_variant
from solitaire_gym.solver.solvable import build_solvable

# variant -> (deals tried, positions per deal). About 1500–3000 solvable deals where the solver is
# fast (Seahaven with 4 cells, Double Solitaire), fewer where it is slow (Réfléchi, where an
# undecided deal costs the whole budget); Seahaven with 2 and 1 cells has few solvable deals (16%
# and 3%), so more are tried. A larger --tried extends a list (the deals already solved are kept). On the evaluation split's first 1000 deals (experiments/results/
# solvability) the solvable deals needed at most 0.2 M positions (Seahaven, 4 cells), 0.5 M
# (Double Solitaire) and 3 M (Réfléchi; 99% within 1 M).
BUDGETS = {
    "DS1-D1N": (1500, 2_000_000),
    "DS1-D1V": (1500, 2_000_000),
    "DS1-D3N": (1500, 2_000_000),
    "DS1-D3V": (1500, 2_000_000),
    "TF1-D1N": (300, 2_000_000),
    "TF1-D3N": (300, 2_000_000),
    "SH1-C4": (3000, 500_000),
    "SH1-C2": (6000, 500_000),
    "SH1-C1": (16000, 500_000),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", default=list(TAGS), help="e.g. SH1-C4 TF1-D3N")
    ap.add_argument("--tried", type=int, help="deals tried per variant (default: per variant)")
    ap.add_argument("--max-nodes", type=int, help="positions per deal (default: per variant)")
    ap.add_argument("--first", type=int, default=TRAIN_START, help="first deal number tried")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes (default: all)")
    ap.add_argument("--work", type=Path, default=Path("runs/solvable_deals"))
    ap.add_argument("--data", type=Path, help="where the lists go (default: the package's)")
    ap.add_argument(
        "--collect",
        action="store_true",
        help="solve nothing: write the lists from the records in --work (an interrupted run)",
    )
    args = ap.parse_args(argv)
    unknown = [v for v in args.variants if v not in BUDGETS]
    if unknown:
        ap.error(f"unknown variant {unknown[0]!r}: choose from {', '.join(TAGS)}")
    for name in ("tried", "max_nodes", "jobs"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            ap.error(f"--{name.replace('_', '-')} must be positive, not {value}")
    if args.first < TRAIN_START:
        ap.error(f"--first must be {TRAIN_START} or more (the training split)")
    for tag in args.variants:
        tried, nodes = BUDGETS[tag]
        tried = args.tried or tried
        nodes = args.max_nodes or nodes

        def command(n: int, tag: str = tag, nodes: int = nodes) -> str:
            return "python experiments/solvable_deals.py " + shlex.join(
                ["--variants", tag, "--tried", str(n), "--max-nodes", str(nodes)]
                + ([] if args.first == TRAIN_START else ["--first", str(args.first)])
            )

        print(f"{tag}: deals {args.first} … {args.first + tried - 1}, {nodes} positions each",
              file=sys.stderr)  # fmt: skip
        kw = dict(max_nodes=nodes, first=args.first, jobs=args.jobs, work=args.work,
                  data=args.data)  # fmt: skip
        s = build_solvable(
            parse_variant(tag), tried, command=command(tried), solve=not args.collect, **kw
        )
        if s["tried"] != tried:  # collected from an interrupted run: say what it holds
            s = build_solvable(
                parse_variant(tag), s["tried"], command=command(s["tried"]), solve=False, **kw
            )
        print(
            f"{tag}: {s['solvable']} solvable, {s['unsolvable']} unsolvable, "
            f"{s['unknown']} unknown of {s['tried']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
