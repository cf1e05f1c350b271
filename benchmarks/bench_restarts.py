"""The solver's restart schedule: restarts to the end (as shipped) against a last run, in which the
run after ``--final-after`` nodes (``search._FINAL_AFTER``, off as shipped) is never cut.

    python benchmarks/bench_restarts.py experiments/results/solvability/TF1-D1N.jsonl
    python benchmarks/bench_restarts.py TF1-D3N.jsonl --sample 100 --seconds 10
    python benchmarks/bench_restarts.py --codes TF1-D1N-AAAAACC --final-after 262144 \
        --schedules luby "last run" "last+side"

Schedules (``--schedules``, the first is the reference): ``luby``, restarts to the end, the solver
as shipped; ``last run``, a last run after ``--final-after`` nodes; ``last+side``, the same with
the uncut side run that ``search._LAST_SIDE_RUN`` puts before it (Réfléchi draw 1; elsewhere the
same as ``last run``). They are the same search until the first restart after ``--final-after``
nodes, so they can only differ on a deal that the study left undecided or decided with at least
that many nodes: those are the deals taken from a results file. ``--sample N`` adds the first N
deals that the file has won in fewer nodes, on which all must give the same verdict in the same
number of nodes (a check of that claim). Each deal is solved with each schedule, one after the
other, with the same budget (``--seconds`` of ``--clock``, CPU time by default). Each line: the deal, then verdict, nodes and seconds per
schedule; at the end, per schedule: deals decided, won and proven lost, total nodes and seconds.
``--out`` appends one JSON line per deal (and skips the deals already there, so that a stopped
run can be resumed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from solitaire_gym.solver import search, solve, warm_up

SCHEDULES = ("luby", "last run", "last+side")


def pick(path: Path, threshold: int, sample: int) -> list[str]:
    """The deals of a results file on which the schedules can differ, then ``sample`` more."""
    chosen, rest = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec["verdict"] == "unknown" or rec["nodes"] >= threshold:
                    chosen.append(rec["code"])
                elif rec["verdict"] == "solvable" and len(rest) < sample:
                    rest.append(rec["code"])
    return chosen + rest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*", type=Path, help="study results files (.jsonl)")
    ap.add_argument("--codes", nargs="+", default=[], help="deal codes (besides the files')")
    ap.add_argument("--sample", type=int, default=0, help="won deals per file, to check")
    ap.add_argument("--seconds", type=float, default=10.0, help="budget of each search")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    ap.add_argument("--final-after", type=int, default=1 << 19, help="nodes before the last run")
    ap.add_argument(
        "--schedules",
        nargs="+",
        choices=SCHEDULES,
        default=["luby", "last+side"],
        help="to compare",
    )
    ap.add_argument("--out", type=Path, default=None, help="append a JSON line per deal here")
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        ap.error("--seconds must be more than 0")
    if args.final_after < 1:
        ap.error("--final-after must be 1 or more")
    codes = list(args.codes)
    for path in args.results:
        if not path.is_file():
            ap.error(f"no results file {path}")
        codes += pick(path, args.final_after, args.sample)
    if not codes:
        ap.error("no deals: give a results file or --codes")
    done = {}
    if args.out is not None and args.out.is_file():
        with open(args.out, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    rec = json.loads(line)
                    done[rec["code"]] = rec
    last_side = dict(search._LAST_SIDE_RUN)
    settings = {
        "luby": (None, {}),
        "last run": (args.final_after, {}),
        "last+side": (args.final_after, last_side),
    }
    schedules = [(name, settings[name]) for name in args.schedules]
    warm_up()
    print(
        f"final after {args.final_after} nodes; budget {args.seconds} s ({args.clock}); "
        f"{len(codes)} deals"
    )
    print(f"{'deal':<18} " + " ".join(f"{n:>11} {'nodes':>9} {'s':>6}" for n, _ in schedules))
    totals = {
        n: {"decided": 0, "won": 0, "lost": 0, "nodes": 0, "seconds": 0.0} for n, _ in schedules
    }
    for code in codes:
        rec = done.get(code)
        if rec is None or any(name not in rec for name, _ in schedules):
            rec = {"code": code, "final_after": args.final_after, "seconds": args.seconds}
            for name, (final_after, side) in schedules:
                search._FINAL_AFTER = final_after
                search._LAST_SIDE_RUN = side
                r = solve(code, max_seconds=args.seconds, clock=args.clock)
                rec[name] = {
                    "verdict": r.verdict,
                    "nodes": r.nodes,
                    "seconds": r.seconds,
                    "last_run_from": r.stats["last_run_from"],
                    "proven_lost": r.stats["proven_lost"],
                }
            if args.out is not None:
                with open(args.out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
        cells = []
        for name, _ in schedules:
            x = rec[name]
            t = totals[name]
            t["decided"] += x["verdict"] != "unknown"
            t["won"] += x["verdict"] == "solvable"
            t["lost"] += x["verdict"] == "unsolvable"
            t["nodes"] += x["nodes"]
            t["seconds"] += x["seconds"]
            cells.append(f"{x['verdict']:>11} {x['nodes']:>9} {x['seconds']:>6.2f}")
        print(f"{code:<18} " + " ".join(cells), flush=True)
    for name, t in totals.items():
        print(
            f"{name:<9} decided {t['decided']}/{len(codes)} (won {t['won']}, lost {t['lost']}), "
            f"{t['nodes']} nodes, {t['seconds']:.1f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
