"""What the deals a study left undecided have in common: each one searched four ways.

    python benchmarks/unknown_deals.py experiments/results/solvability/TF1-D1N.jsonl
    python benchmarks/unknown_deals.py --codes TF1-D1N-AAAAACC TF1-D3N-AAAAAAB --seconds 30
    python benchmarks/unknown_deals.py TF1-D1N.jsonl --ways "one run" "no take-back"

For every deal (the "unknown" records of a study's results file, or ``--codes``):

* ``full``: the solver as shipped (restarts, side runs);
* ``one run``: a single run, no restarts and no side runs (everything it enters stays in the
  visited set, so a proof of loss is not restarted: the size of the proof, when it ends);
* ``no split``: a single run that never splits a built sequence between columns (a side run's
  flag): it can win or end "incomplete", never prove a loss; its node count when it ends is the
  size of the game without those moves, against which the other two show what splits cost;
* ``no take-back``: the same without taking a card back from a foundation (the other side-run
  flag): the size of the game without take-backs, so a bound on what any reduction of
  take-backs could save.

``--ways`` picks some of them (default: all four).

Each line: verdict, nodes, the nodes proven lost, the most cards ever on the foundations, and the
seconds (``--clock``, CPU time by default, so that a busy machine does not shrink the budget).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from solitaire_gym import SolitaireError, parse_code
from solitaire_gym.solver import solve, warm_up
from solitaire_gym.solver.layout import FL_NO_SPLIT, FL_NO_TAKEBACK

WAYS = (
    ("full", 0, True),
    ("one run", 0, False),
    ("no split", FL_NO_SPLIT, False),
    ("no take-back", FL_NO_TAKEBACK, False),
)


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
    ap.add_argument("--ways", nargs="+", choices=[w[0] for w in WAYS], default=None,
                    help="the ways to search each deal (default: all)")  # fmt: skip
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        ap.error("--seconds must be more than 0")
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be at least 1")
    codes = list(args.codes)
    if args.results is not None:
        if not args.results.is_file():
            ap.error(f"no results file {args.results}")
        codes += unknown_codes(args.results)
    if not codes:
        ap.error("no deals: give a results file with unknown deals, or --codes")
    codes = codes[: args.limit]
    for code in codes:
        try:
            parse_code(code)
        except SolitaireError as e:
            ap.error(str(e))
    warm_up()
    print(
        f"{'deal':<18} {'way':<12} {'verdict':<11} {'nodes':>10} {'lost':>10} {'home':>4} "
        f"{'seconds':>8}"
    )
    for code in codes:
        for name, flags, restarts in [w for w in WAYS if args.ways is None or w[0] in args.ways]:
            r = solve(
                code, max_seconds=args.seconds, clock=args.clock, _flags=flags, _restarts=restarts
            )
            verdict = r.reason if r.reason == "incomplete" else r.verdict
            print(
                f"{code:<18} {name:<12} {verdict:<11} {r.nodes:>10} {r.stats['proven_lost']:>10} "
                f"{r.stats['most_home']:>4} {r.seconds:>8.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
