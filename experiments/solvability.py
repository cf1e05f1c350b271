"""Solvability study: how many deals of each game and option the solver wins, proves lost, or
leaves undecided within a per-variant time budget.

    python experiments/solvability.py                       # 1000 deals of every variant
    python experiments/solvability.py --deals 200 --variants SH1-C4 SH1-C2
    python experiments/solvability.py --table-only          # rebuild the table from the results
    python experiments/solvability.py --variants SH1-C4 --deals 100000 --ray   # on Ray

Deals come from the evaluation split (deal numbers 1 … N, see ``solitaire_gym.envs.core``).
Results go to ``experiments/results/solvability/<variant>.jsonl`` (one JSON line per deal,
resumable: run the same command again after an interruption) and the Markdown table to
``experiments/results/solvability/table.md``.

Solitaire Réfléchi and Double Solitaire are solved thoughtfully (every card known): their
figures are upper bounds on what a player who cannot see the hidden cards can win. Seahaven
Towers hides nothing: its figures are exact, up to the undecided deals.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import sys
from pathlib import Path

from solitaire_gym.distributed import add_ray_argument
from solitaire_gym.envs.core import EVAL_SPLIT_END
from solitaire_gym.solver import VERDICTS
from solitaire_gym.solver.batch import parse_variant, read_results, solve_many

RESULTS = Path(__file__).parent / "results" / "solvability"

DEALS = 1000  # deals 1 … DEALS of each variant, unless --deals says otherwise
# (variant, seconds per deal)
VARIANTS = [
    ("SH1-C4", 1.0),
    ("SH1-C2", 1.0),
    ("SH1-C1", 1.0),
    ("TF1-D1N", 10.0),
    ("TF1-D3N", 10.0),
    ("DS1-D1N", 30.0),
    ("DS1-D3N", 30.0),
    ("DS1-D1V", 30.0),
    ("DS1-D3V", 30.0),
]


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def percentile(xs: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q / 100 * len(s)) - 1))]


def prefix(done: dict[int, dict], n_deals: int) -> list[dict]:
    """The records of deals 1 … k, the longest run of deals from 1 that are all in ``done`` (up
    to ``n_deals``). A run that was stopped (Ray finishes ranges out of order) is counted up to
    its first gap: the deals still in flight are the slow ones, and leaving them out would bias
    the figures towards easy deals."""
    recs = []
    for d in range(1, n_deals + 1):
        if d not in done:
            break
        recs.append(done[d])
    return recs


def _secs(x: float) -> str:
    return f"{1000 * x:.2f} ms" if x < 0.1 else f"{x:.2f} s"


def table(rows: list[tuple[str, float, list[dict]]], n_deals: int) -> str:
    short = any(len(recs) < n_deals for _, _, recs in rows)
    lines = [
        f"Deals 1 … {n_deals} of the evaluation split"
        + (" (fewer where the deals column says so: deals 1 … that many)" if short else "")
        + "; Réfléchi and Double Solitaire solved thoughtfully (all cards known: an upper bound on winnability). Solvable fraction = "
        "solvable / deals, with its 95% Wilson interval; the unknown deals could go either way "
        "(at most: the fraction if every one of them were solvable). Time per deal: percentiles "
        "(nearest rank) and the longest.",
        "",
        "| variant | budget | deals | solvable | unsolvable | unknown | solvable fraction "
        "(95% CI) | at most | time p50 | p95 | p99 | max |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for tag, budget, recs in rows:
        n = len(recs)
        k = {v: sum(r["verdict"] == v for r in recs) for v in VERDICTS}
        lo, hi = wilson(k["solvable"], n)
        times = [r["seconds"] for r in recs]
        frac = f"{k['solvable'] / n:.3f} ({lo:.3f}–{hi:.3f})" if n else "–"
        most = f"{(k['solvable'] + k['unknown']) / n:.3f}" if n else "–"
        ts = [_secs(percentile(times, q)) for q in (50, 95, 99)] if times else ["–"] * 3
        longest = _secs(max(times)) if times else "–"
        name = parse_variant(tag).name
        lines.append(
            f"| {tag} ({name}) | {budget:g} s | {n} | {k['solvable']} | {k['unsolvable']} | "
            f"{k['unknown']} | {frac} | {most} | {' | '.join(ts)} | {longest} |"
        )
    return "\n".join(lines) + "\n"


def write_verdicts(path: Path, recs: list[dict]) -> None:
    """deal, verdict, nodes, seconds of each record, gzipped CSV (the per-deal JSON lines, with
    their solutions, are too large to commit for big studies)."""
    with gzip.open(path, "wt", encoding="ascii", newline="") as f:
        f.write("deal,verdict,nodes,seconds\n")
        for r in recs:
            f.write(f"{r['deal']},{r['verdict']},{r['nodes']},{r['seconds']:.6f}\n")


def read_verdicts(path: Path) -> dict[int, dict]:
    """The records of a ``write_verdicts`` file, by deal (deal, verdict, nodes, seconds only): what
    the table needs, for a study whose per-deal JSON lines were not kept."""
    with gzip.open(path, "rt", encoding="ascii", newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for r in rows:
        deal = int(r["deal"])
        out[deal] = {"deal": deal, "verdict": r["verdict"], "nodes": int(r["nodes"]),
                     "seconds": float(r["seconds"])}  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=DEALS, help="deals 1 … N of each variant")
    ap.add_argument(
        "--variants", nargs="+", default=[v for v, _ in VARIANTS], help="e.g. SH1-C4 TF1-D3N"
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="processes (default: all); with --ray and no address, the CPUs of the local Ray",
    )
    add_ray_argument(ap)
    ap.add_argument("--chunk", type=int, default=None, help="with --ray: deals per task")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument(
        "--budget-scale", type=float, default=1.0, help="multiply every time budget by this"
    )
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="what the budget counts: elapsed time, or each process's CPU time (reproducible on a "
        "busy machine)",
    )
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument(
        "--table-only",
        action="store_true",
        help="only rebuild the table, from the results files there are",
    )
    ap.add_argument(
        "--verdicts-gz",
        action="store_true",
        help="also write <variant>-verdicts.csv.gz (deal, verdict, nodes, seconds)",
    )
    args = ap.parse_args(argv)
    if not 1 <= args.deals < EVAL_SPLIT_END:
        ap.error(f"--deals must be 1 … {EVAL_SPLIT_END - 1} (the evaluation split)")
    if args.jobs is not None and args.jobs < 1:
        ap.error(f"--jobs must be 1 or more, not {args.jobs}")
    if args.chunk is not None and (args.chunk < 1 or args.ray is None):
        ap.error("--chunk is a number of deals (1 or more) per Ray task, with --ray")
    budgets = dict(VARIANTS)
    unknown = [v for v in args.variants if v not in budgets]
    if unknown:
        ap.error(f"unknown variant {unknown[0]!r}: choose from {', '.join(budgets)}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    deals = range(1, args.deals + 1)
    rows = []
    for tag in args.variants:
        variant = parse_variant(tag)
        budget = budgets[tag] * args.budget_scale
        path = args.out_dir / f"{tag}.jsonl"
        gz = args.out_dir / f"{tag}-verdicts.csv.gz"
        if args.table_only and not path.exists():
            if gz.exists():  # a large study keeps only its verdict list
                rows.append((tag, budget, prefix(read_verdicts(gz), args.deals)))
                continue
            print(f"{tag}: no results file {path}, left out of the table", file=sys.stderr)
            continue
        if not args.table_only:
            print(f"{tag}: {budget:g} s per deal -> {path}", file=sys.stderr)
            for _ in solve_many(
                variant,
                deals,
                max_seconds=budget,
                jobs=args.jobs,
                out=path,
                ray=args.ray,
                chunk=args.chunk,
                progress=not args.quiet,
                clock=args.clock,
            ):
                pass
        recs = prefix(read_results(path, variant), args.deals)
        rows.append((tag, budget, recs))
        if args.verdicts_gz:
            write_verdicts(gz, recs)
    text = table(rows, args.deals)
    (args.out_dir / "table.md").write_text(text, encoding="utf-8")
    print(text)
    summary = {
        tag: {v: sum(r["verdict"] == v for r in recs) for v in VERDICTS} for tag, _, recs in rows
    }
    (args.out_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
