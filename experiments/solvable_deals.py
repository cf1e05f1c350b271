"""Build the shipped lists of solvable training deals (the envs' ``deals="solvable"``).

    python experiments/solvable_deals.py                    # every variant, the budgets below
    python experiments/solvable_deals.py --variants SH1-C4 --tried 8000 --jobs 2

For each variant, deals ``2^20 … 2^20 + tried − 1`` (the first of the training split) are solved
with a time budget per deal; the solvable ones go to ``solitaire_gym/data/solvable/<TAG>.npy``
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

from solitaire_gym.envs.deal_lists import TAGS, TRAIN_START, build_solvable
from solitaire_gym.solver.batch import parse_variant

# variant -> (deals tried, seconds per deal). Enough tries for a few thousand solvable deals where
# the solver is fast (Seahaven, Double Solitaire), fewer where it is slow (Réfléchi); Seahaven with
# 2 and 1 cells has few solvable deals (16% and 3%), so more are tried.
BUDGETS = {
    "DS1-D1N": (3000, 10.0),
    "DS1-D1V": (3000, 10.0),
    "DS1-D3N": (3000, 10.0),
    "DS1-D3V": (3000, 10.0),
    "TF1-D1N": (2000, 5.0),
    "TF1-D3N": (2000, 5.0),
    "SH1-C4": (4000, 1.0),
    "SH1-C2": (12000, 1.0),
    "SH1-C1": (40000, 1.0),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", nargs="+", default=list(TAGS), help="e.g. SH1-C4 TF1-D3N")
    ap.add_argument("--tried", type=int, help="deals tried per variant (default: per variant)")
    ap.add_argument("--max-seconds", type=float, help="budget per deal (default: per variant)")
    ap.add_argument("--first", type=int, default=TRAIN_START, help="first deal number tried")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes (default: all)")
    ap.add_argument("--work", type=Path, default=Path("runs/solvable_deals"))
    ap.add_argument("--data", type=Path, help="where the lists go (default: the package's)")
    args = ap.parse_args(argv)
    unknown = [v for v in args.variants if v not in BUDGETS]
    if unknown:
        ap.error(f"unknown variant {unknown[0]!r}: choose from {', '.join(TAGS)}")
    for name in ("tried", "max_seconds", "jobs"):
        value = getattr(args, name)
        if value is not None and value <= 0:
            ap.error(f"--{name.replace('_', '-')} must be positive, not {value}")
    if args.first < TRAIN_START:
        ap.error(f"--first must be {TRAIN_START} or more (the training split)")
    for tag in args.variants:
        tried, seconds = BUDGETS[tag]
        tried = args.tried or tried
        seconds = args.max_seconds or seconds
        command = "python experiments/solvable_deals.py " + shlex.join(
            ["--variants", tag, "--tried", str(tried), "--max-seconds", f"{seconds:g}"]
            + ([] if args.first == TRAIN_START else ["--first", str(args.first)])
        )
        print(f"{tag}: deals {args.first} … {args.first + tried - 1}, {seconds:g} s each",
              file=sys.stderr)  # fmt: skip
        s = build_solvable(
            parse_variant(tag),
            tried,
            max_seconds=seconds,
            first=args.first,
            jobs=args.jobs,
            work=args.work,
            data=args.data,
            command=command,
        )
        print(
            f"{tag}: {s['solvable']} solvable, {s['unsolvable']} unsolvable, "
            f"{s['unknown']} unknown of {s['tried']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
