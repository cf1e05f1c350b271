"""The overhead of ``--ray`` against ``--jobs`` on the same solvability run, in one process.

    python benchmarks/bench_distributed.py                       # SH1-C4, 3000 deals, 2 CPUs
    python benchmarks/bench_distributed.py --game TF1-D1N --deals 200 --max-nodes 20000

Both paths solve the same deals with the same budget (``solve_many``, no output file), one after
the other, ``--rounds`` times alternately (other load on the machine shifts both alike); deals/s
counts from the call to the last result: for ``--jobs`` that includes starting its processes (as
every ``--jobs`` command does), for ``--ray`` not Ray's start-up, which is timed on its own (once
per command; a cluster is started once for many).
Also: the cost of one Ray task (an empty task, round trip through the scheduler), ``--ray`` with
one deal per task (what ranges of deals save), and whether both paths found the same verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from solitaire_gym.distributed import chunk_size, connect
from solitaire_gym.solver.batch import parse_variant, solve_many
from solitaire_gym.solver.search import warm_up

LAST: list[dict] = []


def _noop(part: list[int]) -> list[int]:
    return part


def driver_write_rate(recs: list[dict], path: Path, repeat: int = 20) -> float:
    """Results a second the driver can append to a file (JSON, one line each, flushed): what
    bounds a cluster's rate, since every result comes back to it."""
    t = time.perf_counter()
    with path.open("w", encoding="utf-8") as f:
        for _ in range(repeat):
            for rec in recs:
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
                f.flush()
    return repeat * len(recs) / (time.perf_counter() - t)


def run(variant, deals, args, **how) -> tuple[float, dict[int, tuple]]:
    global LAST
    t = time.perf_counter()
    recs = LAST = list(
        solve_many(
            variant,
            deals,
            max_seconds=args.max_seconds,
            max_nodes=args.max_nodes,
            progress=False,
            jobs=args.jobs,
            **how,
        )
    )
    dt = time.perf_counter() - t
    return len(recs) / dt, {r["deal"]: (r["verdict"], r["nodes"]) for r in recs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--game", default="SH1-C4")
    ap.add_argument("--deals", type=int, default=3000)
    ap.add_argument("--jobs", type=int, default=2, help="pool processes = local Ray CPUs")
    ap.add_argument("--max-seconds", type=float, default=None)
    ap.add_argument("--max-nodes", type=int, default=100_000, help="reproducible verdicts")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    variant = parse_variant(args.game)
    deals = list(range(1, args.deals + 1))
    warm_up()
    print(f"{variant.tag}: {len(deals)} deals, budget {args.max_nodes} nodes / "
          f"{args.max_seconds} s, {args.jobs} processes; machine load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    t = time.perf_counter()
    ray = connect("local", jobs=args.jobs)
    startup = time.perf_counter() - t
    noop = ray.remote(num_cpus=1)(_noop)
    ray.get([noop.remote([i]) for i in range(20)])  # workers up
    t = time.perf_counter()
    ray.get([noop.remote([i]) for i in range(500)])
    per_task = (time.perf_counter() - t) / 500
    size = chunk_size(len(deals), args.jobs, seconds_per_deal=args.max_seconds)
    # not counted: the first run of each path (Ray's workers load the kernels once; the pool's
    # processes do it in every run, as in every --jobs command, so that stays in its figures)
    run(variant, deals[:100], args)
    run(variant, deals[:100], args, ray="local")
    ways = {
        "--jobs": {},
        "--ray": {"ray": "local"},
        "--ray, 1 deal per task": {"ray": "local", "chunk": 1},
    }
    rates: dict[str, list[float]] = {name: [] for name in ways}
    verdicts = {}
    for _ in range(args.rounds):  # alternately: the machine's other load shifts all alike
        for name, how in ways.items():
            r, verdicts[name] = run(variant, deals, args, **how)
            rates[name].append(r)
    ref = statistics.median(rates["--jobs"])
    print(f"Ray start-up (local, once per command): {startup:.1f} s")
    print(f"one empty Ray task, round trip: {1e3 * per_task:.2f} ms")
    print(f"--ray ranges: {size} deals per task ({-(-len(deals) // size)} tasks)")
    print()
    print("| path | deals/s (each round) | median | vs --jobs |")
    print("|---|---|---|---|")
    for name, rs in rates.items():
        m = statistics.median(rs)
        each = ", ".join(f"{x:.0f}" for x in rs)
        print(f"| {name} | {each} | {m:.0f} | {m / ref:.2f}x |")
    with tempfile.TemporaryDirectory() as d:
        w = driver_write_rate(LAST, Path(d) / "w.jsonl")
    cpu = statistics.median(rates["--jobs"]) / args.jobs  # deals a second per CPU
    print(f"\ndriver: {w:.0f} results/s appended to its file (mean line "
          f"{statistics.mean(len(json.dumps(r)) for r in LAST):.0f} bytes); at {cpu:.0f} deals/s "
          f"per CPU, it keeps up with about {w / cpu:.0f} CPUs of this game")  # fmt: skip
    same = all(v == verdicts["--jobs"] for v in verdicts.values())
    print(f"\nsame verdicts and node counts on every path: {same}")
    ray.shutdown()
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
