"""What the dead-end test costs the Réfléchi search: the same node-bounded searches with the test
as shipped (only the columns a move built on, ``dead_ends.dead_end``'s ``gained``), with the whole
test at every node (``FL_WHOLE_DEADEND``, the reference) and without it (``FL_NO_DEADEND``).

    python benchmarks/bench_dead_end.py                 # the default deals, 600,000 nodes each
    python benchmarks/bench_dead_end.py --nodes 200000 --rounds 1

The three searches of a deal run one after the other, round after round, so that they share the
machine's load; the times are CPU seconds of this process. The shipped and the whole test search
the same positions (the benchmark stops if their nodes or verdicts differ); without the test the
search may differ where a dead end is met. Prints nodes per CPU second per deal and over all
deals, and each ratio to the whole test.
"""

from __future__ import annotations

import argparse
import sys
import time

from solitaire_gym.solver import solve
from solitaire_gym.solver.layout import FL_NO_DEADEND, FL_WHOLE_DEADEND

# Undecided in the solvability study (large searches without a dead end), and two deals whose
# searches meet many dead ends.
DEALS = [
    "TF1-D1N-AAAAACC",
    "TF1-D1N-AAAAAEL",
    "TF1-D3N-AAAAAHF",
    "TF1-D3N-AAAAA5B",
    "TF1-D1N-AAAAANY",
    "TF1-D3N-AAAAA6T",
]
MODES = {"shipped": 0, "whole test": FL_WHOLE_DEADEND, "no test": FL_NO_DEADEND}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", nargs="+", default=DEALS, help="Réfléchi deal codes")
    ap.add_argument("--nodes", type=int, default=600_000, help="node bound per search")
    ap.add_argument("--rounds", type=int, default=2, help="rounds (the first warms up)")
    args = ap.parse_args(argv)
    if args.nodes < 1 or args.rounds < 1:
        ap.error("--nodes and --rounds must be at least 1")
    for code in args.deals:
        if not code.startswith("TF1-"):
            ap.error(f"{code}: not a Solitaire Réfléchi deal (TF1-…)")
    solve(args.deals[0], max_nodes=1000)  # compile
    seconds = {(code, m): 0.0 for code in args.deals for m in MODES}
    nodes: dict[tuple[str, str], int] = {}
    verdicts: dict[tuple[str, str], str] = {}
    for _ in range(args.rounds):
        for code in args.deals:
            for mode, flags in MODES.items():
                t = time.process_time()
                r = solve(code, max_nodes=args.nodes, max_seconds=3600, clock="cpu", _flags=flags)
                seconds[code, mode] += time.process_time() - t
                nodes[code, mode] = r.nodes
                verdicts[code, mode] = r.verdict
            a, b = (code, "shipped"), (code, "whole test")
            if (nodes[a], verdicts[a]) != (nodes[b], verdicts[b]):
                print(f"{code}: the shipped test searched differently from the whole test",
                      file=sys.stderr)  # fmt: skip
                return 1
    print(f"node bound {args.nodes:,}, {args.rounds} rounds, nodes per CPU second:")
    print(f"{'deal':<18}" + "".join(f"{m:>14}" for m in MODES))
    total = {m: [0, 0.0] for m in MODES}
    for code in args.deals:
        row = ""
        for m in MODES:
            n = nodes[code, m] * args.rounds
            total[m][0] += n
            total[m][1] += seconds[code, m]
            row += f"{n / seconds[code, m]:>14,.0f}"
        print(f"{code:<18}{row}")
    rate = {m: n / s for m, (n, s) in total.items()}
    print(f"{'all':<18}" + "".join(f"{rate[m]:>14,.0f}" for m in MODES))
    ref = rate["whole test"]
    print("against the whole test: " + ", ".join(f"{m} x{rate[m] / ref:.2f}" for m in MODES))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
