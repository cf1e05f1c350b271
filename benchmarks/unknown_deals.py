"""What the deals a study left undecided have in common: each one searched three ways.

    python benchmarks/unknown_deals.py experiments/results/solvability/TF1-D1N.jsonl
    python benchmarks/unknown_deals.py --codes TF1-D1N-AAAAACC TF1-D3N-AAAAAAB --seconds 30

For every deal (the "unknown" records of a study's results file, or ``--codes``):

* ``full``: the solver as shipped (restarts, side runs);
* ``one run``: a single run, no restarts and no side runs (everything it enters stays in the
  visited set, so a proof of loss is not restarted: the size of the proof, when it ends);
* ``no split``: a single run that never splits a built sequence between columns (a side run's
  flag): it can win or end "incomplete", never prove a loss; its node count when it ends is the
  size of the game without those moves, against which the other two show what splits cost.

Each line: verdict, nodes, the nodes proven lost, the most cards ever on the foundations, and the
seconds (``--clock``, CPU time by default, so that a busy machine does not shrink the budget).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from solitaire_gym.solver import kernels as K
from solitaire_gym.solver import solve, warm_up

WAYS = (("full", 0, True), ("one run", 0, False), ("no split", K.FL_NO_SPLIT, False))


def unknown_codes(path: Path) -> list[str]:
    """The codes of the records of a results file whose verdict is "unknown"."""
    codes = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec.get("verdict") == "unknown":
                    codes.append(rec["code"])
    return codes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="?", type=Path, help="a study's results file (.jsonl)")
    ap.add_argument("--codes", nargs="+", default=[], help="deal codes instead of a file")
    ap.add_argument("--seconds", type=float, default=10.0, help="budget of each search")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    ap.add_argument("--limit", type=int, default=None, help="at most this many deals")
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        ap.error("--seconds must be more than 0")
    codes = list(args.codes)
    if args.results is not None:
        if not args.results.is_file():
            ap.error(f"no results file {args.results}")
        codes += unknown_codes(args.results)
    if not codes:
        ap.error("no deals: give a results file with unknown deals, or --codes")
    codes = codes[: args.limit]
    warm_up()
    print(
        f"{'deal':<18} {'way':<9} {'verdict':<11} {'nodes':>10} {'lost':>10} {'home':>4} "
        f"{'seconds':>8}"
    )
    for code in codes:
        for name, flags, restarts in WAYS:
            r = solve(
                code, max_seconds=args.seconds, clock=args.clock, _flags=flags, _restarts=restarts
            )
            verdict = r.reason if r.reason == "incomplete" else r.verdict
            print(
                f"{code:<18} {name:<9} {verdict:<11} {r.nodes:>10} {r.stats['proven_lost']:>10} "
                f"{r.stats['most_home']:>4} {r.seconds:>8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
