"""Solver benchmark: the fraction of deals decided (solvable or unsolvable) within a time budget,
one core per deal, and the search speed.

    python benchmarks/bench_solver.py              # deals 1 … 1000 of each variant
    python benchmarks/bench_solver.py --deals 100  # shorter

Targets: Seahaven Towers (4 cells) 99% within 1 s; Solitaire Réfléchi draw 1 and draw 3, 99.5%
within 10 s; Double Solitaire with Vegas scoring (one pass through the stock), draw 1 and draw 3,
99% within 30 s; Double Solitaire with Normal scoring: reported, 30 s. Réfléchi and Double
Solitaire are solved thoughtfully (every card known).

Per variant: the verdicts, the search time per deal (median, 90th and 99th percentiles, the
slowest), the summed search time of the whole run (the "solver time" of a study) and the search
speed in nodes per second (summed over the deals: nodes do not depend on the machine's load,
seconds do).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

from solitaire_gym.solver.batch import parse_variant, solve_many

# (variant, seconds per deal, target fraction decided or None)
CASES = [
    ("SH1-C4", 1.0, 0.99),
    ("TF1-D1N", 10.0, 0.995),
    ("TF1-D3N", 10.0, 0.995),
    ("DS1-D1N", 30.0, None),
    ("DS1-D3N", 30.0, None),
    ("DS1-D1V", 30.0, 0.99),
    ("DS1-D3V", 30.0, 0.99),
]


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile of a sorted list."""
    return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=1000, help="deals 1 … N of each variant")
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes, one per core")
    ap.add_argument("--variants", nargs="+", default=[c[0] for c in CASES])
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what the budget counts: elapsed time, or each process's CPU time (busy machine)",
    )
    args = ap.parse_args(argv)
    cases = [c for c in CASES if c[0] in args.variants]
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"{args.jobs} jobs, deals 1 … {args.deals}, {args.clock} clock"
    )
    print(
        f"{'variant':9} {'budget':>6} {'decided':>8} {'target':>6} {'solv':>5} {'unsolv':>6} "
        f"{'unk':>4} {'p50':>7} {'p90':>7} {'p99':>7} {'max':>7} {'sum':>8} {'nodes/s':>9}  wall"
    )
    failed = False
    for tag, budget, target in cases:
        variant = parse_variant(tag)
        t0 = time.perf_counter()
        recs = list(
            solve_many(
                variant,
                range(1, args.deals + 1),
                max_seconds=budget,
                jobs=args.jobs,
                progress=False,
                clock=args.clock,
            )
        )
        wall = time.perf_counter() - t0
        n = len(recs)
        count = {
            v: sum(r["verdict"] == v for r in recs) for v in ("solvable", "unsolvable", "unknown")
        }
        decided = (count["solvable"] + count["unsolvable"]) / n
        times = sorted(r["seconds"] for r in recs)
        nps = sum(r["nodes"] for r in recs) / max(1e-9, sum(times))
        ok = "" if target is None else ("pass" if decided >= target else "FAIL")
        failed |= ok == "FAIL"
        tgt = "-" if target is None else f"{target:.1%}"
        pct = " ".join(f"{percentile(times, q):6.2f}s" for q in (50, 90, 99, 100))
        print(
            f"{tag:9} {budget:5g}s {decided:8.1%} {tgt:>6} {count['solvable']:5} "
            f"{count['unsolvable']:6} {count['unknown']:4} {pct} {sum(times):7.1f}s "
            f"{nps:9.0f}  {wall:.0f}s {ok}",
            flush=True,
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
