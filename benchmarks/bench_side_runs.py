"""Side-run mixes of the Réfléchi solver, compared deal by deal on a study's harder deals.

    python benchmarks/bench_side_runs.py experiments/results/solvability/TF1-D3N.jsonl
    python benchmarks/bench_side_runs.py TF1-D3N.jsonl --mixes tb10 both10 tb+both10 tb+both20
    python benchmarks/bench_side_runs.py TF1-D3N.jsonl --mixes shipped tb10 --unknown-only
    python benchmarks/bench_side_runs.py TF1-D1N.jsonl --mixes shipped none --out d1.jsonl

A side run (``search._SIDE_RUNS``) searches without some moves (``layout.FL_NO_TAKEBACK``,
``FL_NO_SPLIT``) for a share of the nodes: it finds a win without those moves sooner, and costs a
proof of loss its share. A mix is the flag sets taken in turn and the share (``MIXES``; the first
of ``--mixes`` is the reference, ``shipped`` is the solver as it is). Side runs start after the
first run (``search._RESTART_UNIT`` nodes), so the mixes differ only on deals that took more: those
deals of the results file (all of them with ``--unknown-only``: only its undecided ones). Each
deal is solved with each mix in turn, with the same budget (``--seconds`` of ``--clock``, CPU time
by default, so that a busy machine changes the speed less than the verdicts). Each line: the deal,
then verdict and seconds per mix; at the end, per mix: deals won, proven lost and undecided, the
deals it decides that the reference does not and the reverse, and the seconds summed over the
deals every mix decided. ``--out`` appends one JSON line per deal and skips the deals already
there (a stopped run resumes).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from solitaire_gym.engine.variants import REFLECHI
from solitaire_gym.errors import SolitaireError
from solitaire_gym.solver import search, solve, warm_up
from solitaire_gym.solver.batch import parse_code
from solitaire_gym.solver.layout import FL_NO_SPLIT, FL_NO_TAKEBACK

TB, SPLIT = FL_NO_TAKEBACK, FL_NO_SPLIT
# name: (flag sets taken in turn, share of the nodes); "shipped" is read from search._SIDE_RUNS
MIXES: dict[str, tuple[tuple[int, ...], float]] = {
    "none": ((), 0.0),
    "tb10": ((TB,), 0.1),
    "both05": ((SPLIT | TB,), 0.05),
    "both10": ((SPLIT | TB,), 0.1),
    "both20": ((SPLIT | TB,), 0.2),
    "tb+split10": ((TB, SPLIT), 0.1),
    "tb+split20": ((TB, SPLIT), 0.2),
    "tb+both10": ((TB, SPLIT | TB), 0.1),
    "tb+both20": ((TB, SPLIT | TB), 0.2),
    "split50": ((SPLIT, SPLIT | TB), 0.5),
    "split+both30": ((SPLIT, SPLIT | TB), 0.3),
    "both50": ((SPLIT | TB,), 0.5),
}


def pick(path: Path, unknown_only: bool) -> list[str]:
    """The deals of a results file on which side runs can change the search."""
    codes = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                if rec["verdict"] == "unknown" or (
                    not unknown_only and rec["nodes"] > search._RESTART_UNIT
                ):
                    codes.append(rec["code"])
    return codes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="*", type=Path, help="study results files (.jsonl)")
    ap.add_argument("--codes", nargs="+", default=[], help="Réfléchi deal codes (besides)")
    ap.add_argument("--mixes", nargs="+", default=["shipped", "tb10"])
    ap.add_argument("--unknown-only", action="store_true", help="only the undecided deals")
    ap.add_argument("--seconds", type=float, default=10.0, help="budget of each search")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="cpu")
    ap.add_argument("--limit", type=int, default=None, help="at most this many deals")
    ap.add_argument("--out", type=Path, default=None, help="append JSON lines here (resumable)")
    args = ap.parse_args(argv)
    names = list(dict.fromkeys(args.mixes))
    for name in names:
        if name != "shipped" and name not in MIXES:
            ap.error(f"unknown mix {name!r}: choose from shipped, {', '.join(MIXES)}")
    if args.seconds <= 0:
        ap.error("--seconds must be more than 0")
    if args.limit is not None and args.limit < 1:
        ap.error("--limit must be 1 or more")
    codes = list(args.codes)
    for path in args.results:
        if not path.is_file():
            ap.error(f"no results file {path}")
        codes += pick(path, args.unknown_only)
    codes = codes[: args.limit]
    draws = set()
    for code in codes:
        try:
            variant, _ = parse_code(code)
        except SolitaireError as e:  # the package's own error names the fault
            ap.error(str(e))
        if variant.game != REFLECHI:
            ap.error(f"{code}: side runs are a Réfléchi setting")
        draws.add(variant.draw)
    if not codes:
        ap.error("no deals: give a results file or --codes")

    done: dict[str, dict] = {}
    if args.out is not None and args.out.exists():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                done[rec["code"]] = rec
    shipped = dict(search._SIDE_RUNS)
    warm_up()
    print(f"{'deal':<18} " + " ".join(f"{n:>22}" for n in names))
    rows = []
    try:
        for code in codes:
            if code in done and all(n in done[code] for n in names):
                rows.append(done[code])
                continue
            variant, _ = parse_code(code)
            rec: dict = {"code": code}
            for name in names:
                mix = shipped[(REFLECHI, variant.draw)] if name == "shipped" else MIXES[name]
                search._SIDE_RUNS[(REFLECHI, variant.draw)] = mix
                r = solve(code, max_seconds=args.seconds, clock=args.clock)
                rec[name] = [r.verdict, r.nodes, round(r.seconds, 4)]
            search._SIDE_RUNS.update(shipped)
            rows.append(rec)
            cells = " ".join(f"{rec[n][0]:>12} {rec[n][2]:>8.2f} s" for n in names)
            print(f"{code:<18} {cells}", flush=True)
            if args.out is not None:
                with open(args.out, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
    finally:
        search._SIDE_RUNS.update(shipped)

    ref = names[0]
    every = [r for r in rows if all(r[n][0] != "unknown" for n in names)]
    print(
        f"\n{len(rows)} deals (draw {', '.join(map(str, sorted(draws)))}), {args.seconds:g} s of "
        f"{args.clock} time each; reference: {ref}"
    )
    print(
        f"{'mix':<12} {'won':>5} {'lost':>5} {'unknown':>8} {'gained':>7} {'lost vs ref':>12} "
        f"{'s (all decided)':>16}"
    )
    for n in names:
        won = sum(r[n][0] == "solvable" for r in rows)
        lost = sum(r[n][0] == "unsolvable" for r in rows)
        gained = sum(r[n][0] != "unknown" and r[ref][0] == "unknown" for r in rows)
        dropped = sum(r[n][0] == "unknown" and r[ref][0] != "unknown" for r in rows)
        secs = sum(r[n][2] for r in every)
        print(
            f"{n:<12} {won:>5} {lost:>5} {len(rows) - won - lost:>8} {gained:>7} {dropped:>12} "
            f"{secs:>16.1f}"
        )
        for r in rows:  # exact verdicts: two mixes never disagree on a decided deal
            if "unknown" not in (r[n][0], r[ref][0]) and r[n][0] != r[ref][0]:
                print(f"  {r['code']}: {n} says {r[n][0]}, {ref} {r[ref][0]}: a solver bug")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
