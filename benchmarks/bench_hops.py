"""What hop classes give the Réfléchi search: the same deals solved with them (a hop class is one
node, ``hops.gen_node``) and without (every split an ordinary move), each with a CPU-time
budget as in the solvability study. Draw 1, as shipped against ``FL_NO_HOPS``. Draw 3 three ways:
classes in every run (``FL_HOPS_DRAW3``), as shipped (classes only in the runs of the Luby
sequence that start after ``search._CLASSES_AFTER`` nodes; with ``--one-run`` that is the search
without classes, so it is left out), and never (``FL_NO_HOPS``).

    python benchmarks/bench_hops.py                    # the default deals, 10 s each
    python benchmarks/bench_hops.py --seconds 30 --deals 25 964
    python benchmarks/bench_hops.py --one-run          # proofs in one run (no restarts)
    python benchmarks/bench_hops.py --variant TF1-D3N  # draw 3
    python benchmarks/bench_hops.py --variant TF1-D3N --classes-after 65536  # switch earlier

The default deals are deals of the study (numbers as in ``experiments/results/solvability``).
Draw 1: six proven lost (418 only since hop classes), six wins whose time changed the most either
way with hop classes, and six that the study left undecided before hop classes (deal 66 is
``TF1-D1N-AAAAACC``). Draw 3, from a trial of the whole study with classes: five deals the study
leaves undecided that classes decide (3 won, 2 proven lost), five wins of the study that classes
do not find within 10 s, and two deals neither decides. The two searches of a deal
run one after the other, so that they share the machine's load; the times are CPU seconds.
Prints each deal's verdict, positions and seconds each way, how many deals each way decided,
and the total time of each way with its ratio to the time without classes. A deal proven lost
one way and won the other would be a solver bug: the benchmark then stops with an error.
"""

from __future__ import annotations

import argparse
import time

from solitaire_gym.engine.variants import MAX_DEAL, REFLECHI
from solitaire_gym.solver import search, solve
from solitaire_gym.solver.batch import parse_variant
from solitaire_gym.solver.layout import FL_HOPS_DRAW3, FL_NO_HOPS

PROOFS = [964, 25, 343, 705, 804, 418]
WINS = [749, 859, 860, 805, 382, 199]
UNDECIDED = [66, 167, 198, 270, 284, 385]
DRAW3 = [127, 361, 371, 929, 999, 248, 337, 540, 706, 957, 1, 66]
MODES = {  # variant: (its default deals, {way: flags}), the way without classes last
    "TF1-D1N": (PROOFS + WINS + UNDECIDED, {"hop classes": 0, "no hop classes": FL_NO_HOPS}),
    "TF1-D3N": (
        DRAW3,
        {"hop classes": FL_HOPS_DRAW3, "as shipped": 0, "no hop classes": FL_NO_HOPS},
    ),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", choices=sorted(MODES), default="TF1-D1N")
    ap.add_argument("--deals", nargs="+", type=int, help="deal numbers (default: see above)")
    ap.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per search")
    ap.add_argument("--one-run", action="store_true", help="no restarts (and no side runs)")
    ap.add_argument(
        "--classes-after",
        type=int,
        help="draw 3: the node count after which the search as shipped takes classes "
        f"(default {search._CLASSES_AFTER[(REFLECHI, 3)]})",
    )
    args = ap.parse_args(argv)
    if not args.seconds > 0:
        ap.error("--seconds must be more than 0")
    if args.classes_after is not None:
        if args.variant != "TF1-D3N" or args.classes_after < 1:
            ap.error("--classes-after is a number of nodes (1 or more), with --variant TF1-D3N")
        search._CLASSES_AFTER[(REFLECHI, 3)] = args.classes_after
    default, modes = MODES[args.variant]
    deals = args.deals or default
    if any(not 0 <= d <= MAX_DEAL for d in deals):
        ap.error(f"deal numbers are 0 … {MAX_DEAL}")
    if args.one_run:
        modes = {m: f for m, f in modes.items() if m != "as shipped"}
    variant = parse_variant(args.variant)
    solve(variant.code(deals[0]), max_nodes=1000)  # compile
    total = dict.fromkeys(modes, 0.0)
    decided = dict.fromkeys(modes, 0)
    print(
        f"{args.variant}, {args.seconds:g} CPU s per search" + (", one run" if args.one_run else "")
    )
    print(f"{'deal':>6}" + "".join(f"{m:>36}" for m in modes))
    for d in deals:
        code = variant.code(d)
        row = f"{d:>6}"
        got = {}
        for mode, flags in modes.items():
            t = time.process_time()
            r = solve(code, max_seconds=args.seconds, clock="cpu", _flags=flags,
                      _restarts=not args.one_run)  # fmt: skip
            sec = time.process_time() - t
            total[mode] += sec
            decided[mode] += r.verdict != "unknown"
            got[mode] = r.verdict
            row += f"{r.verdict:>12} {r.nodes:>12,} {sec:>8.2f} s"
        print(row, flush=True)
        if {"solvable", "unsolvable"} <= set(got.values()):
            raise SystemExit(f"{code}: won one way and proven lost the other: a solver bug")
    for m in modes:
        print(f"{m}: {decided[m]} of {len(deals)} decided, {total[m]:.1f} CPU s in all")
    base = total["no hop classes"]
    for m in modes:
        if m != "no hop classes":
            print(f"time {m} / no hop classes: {total[m] / base:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
