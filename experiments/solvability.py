"""Solvability study: how many deals of each game and option the solver wins, proves lost, or
leaves undecided within a per-variant time budget.

    python experiments/solvability.py                       # 1000 deals of every variant
    python experiments/solvability.py --deals 200 --variants SH1-C4 SH1-C2
    python experiments/solvability.py --table-only          # rebuild the table from the results

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
import json
import math
import os
import statistics
import sys
from pathlib import Path

from solitaire_gym.envs.core import EVAL_SPLIT_END
from solitaire_gym.solver.batch import parse_variant, read_results, solve_many

RESULTS = Path(__file__).parent / "results" / "solvability"

# (variant, seconds per deal)
VARIANTS = [
    ("SH1-C4", 1.0),
    ("SH1-C2", 1.0),
    ("SH1-C1", 1.0),
    ("TF1-D1N", 10.0),
    ("TF1-D3N", 10.0),
    ("DS1-D1N", 30.0),
    ("DS1-D3N", 30.0),
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


def table(rows: list[tuple[str, float, list[dict]]], n_deals: int) -> str:
    lines = [
        f"Deals 1 … {n_deals} of the evaluation split; Réfléchi and Double Solitaire solved "
        "thoughtfully (all cards known: an upper bound on winnability). Solvable fraction = "
        "solvable / deals, with its 95% Wilson interval; the unknown deals could go either way.",
        "",
        "| variant | budget | deals | solvable | unsolvable | unknown | solvable fraction "
        "(95% CI) | median time | p95 time |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tag, budget, recs in rows:
        n = len(recs)
        k = {v: sum(r["verdict"] == v for r in recs) for v in ("solvable", "unsolvable", "unknown")}
        lo, hi = wilson(k["solvable"], n)
        times = [r["seconds"] for r in recs]
        frac = f"{k['solvable'] / n:.3f} ({lo:.3f}–{hi:.3f})" if n else "–"
        med = f"{statistics.median(times):.3f} s" if times else "–"
        p95 = f"{percentile(times, 95):.3f} s" if times else "–"
        name = parse_variant(tag).name
        lines.append(
            f"| {tag} ({name}) | {budget:g} s | {n} | {k['solvable']} | {k['unsolvable']} | "
            f"{k['unknown']} | {frac} | {med} | {p95} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=1000, help="deals 1 … N of each variant")
    ap.add_argument(
        "--variants", nargs="+", default=[v for v, _ in VARIANTS], help="e.g. SH1-C4 TF1-D3N"
    )
    ap.add_argument("--jobs", type=int, default=os.cpu_count(), help="processes (default: all)")
    ap.add_argument(
        "--budget-scale", type=float, default=1.0, help="multiply every time budget by this"
    )
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    ap.add_argument("--table-only", action="store_true", help="only rebuild the table")
    args = ap.parse_args(argv)
    if not 1 <= args.deals < EVAL_SPLIT_END:
        ap.error(f"--deals must be 1 … {EVAL_SPLIT_END - 1} (the evaluation split)")
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
        if not args.table_only:
            print(f"{tag}: {budget:g} s per deal -> {path}", file=sys.stderr)
            for _ in solve_many(variant, deals, max_seconds=budget, jobs=args.jobs, out=path):
                pass
        done = read_results(path, variant)
        recs = [done[d] for d in deals if d in done]
        rows.append((tag, budget, recs))
    text = table(rows, args.deals)
    (args.out_dir / "table.md").write_text(text, encoding="utf-8")
    print(text)
    summary = {
        tag: {
            v: sum(r["verdict"] == v for r in recs) for v in ("solvable", "unsolvable", "unknown")
        }
        for tag, _, recs in rows
    }
    (args.out_dir / "summary.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
