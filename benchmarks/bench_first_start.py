"""First start: a fresh process to the first env step and to the first ``Game(...).legal_moves()``,
with numba's cache empty (cold) and filled (warm).

    python benchmarks/bench_first_start.py                    # cold and warm, 1 run each
    python benchmarks/bench_first_start.py --runs 3
    python benchmarks/bench_first_start.py --compare ../old   # also an older checkout, same run

Each measurement is a new interpreter. "cold": ``NUMBA_CACHE_DIR`` points at a new empty
directory, so every kernel the call needs compiles (the package's own cache is not touched);
"warm": the same directory again, now filled. The child times itself from before
``import solitaire_gym`` (gymnasium included) to the end of the call and reports its CPU time
too: on a machine that other work keeps busy the wall time grows, the CPU time much less, so
both are printed with the load average. ``--compare DIR`` measures a checkout of another version
(the root of its repository) in the same run, alternating with this one, as the reference.

Targets (issue 17, on a 2-core machine): cold start to the first env step <= 30 s, warm <= 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import gymnasium as gym
import solitaire_gym
t_import = time.perf_counter()
what = sys.argv[1]
if what == "env":
    env = gym.make("solitaire_gym/SeahavenTowers-v0")
    obs, info = env.reset(seed=0)
    t_reset = time.perf_counter()
    env.step(int(info["action_mask"].argmax()))
else:
    t_reset = t_import
    solitaire_gym.Game.from_code("SH1-C4-AAAAAJ2").legal_moves()
t_end = time.perf_counter()
print(json.dumps({
    "import": t_import - t0, "reset": t_reset - t_import, "call": t_end - t_reset,
    "total": t_end - t0, "cpu": time.process_time(), "file": solitaire_gym.__file__,
}))
"""

WHAT = {"env": "gym.make + reset + first step", "game": "Game.from_code(...).legal_moves()"}


def measure(tree: Path, what: str, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, what],
        cwd=tree,  # the checkout's package comes first on sys.path
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: the child failed:\n{proc.stderr}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not Path(out["file"]).is_relative_to(tree):
        raise SystemExit(f"{tree}: the child imported {out['file']}, not this checkout")
    out["notice"] = "compiling its numba kernels" in proc.stderr
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="cold and warm runs per case")
    parser.add_argument("--what", nargs="+", default=list(WHAT), choices=list(WHAT))
    parser.add_argument("--compare", type=Path, default=None, help="another checkout (reference)")
    args = parser.parse_args()
    trees = {"this": ROOT}
    if args.compare is not None:
        trees["reference"] = args.compare.resolve()
    print(f"first start: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    rows: dict[tuple[str, str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for what in args.what:
                for name, tree in trees.items():
                    cache = os.path.join(tmp, f"{name}-{what}-{run}")
                    os.mkdir(cache)
                    for state in ("cold", "warm"):
                        r = measure(tree, what, cache)
                        rows.setdefault((name, what, state), []).append(r)
                        print(
                            f"  run {run}: {name:9} {what:4} {state}: {r['total']:6.1f} s wall, "
                            f"{r['cpu']:6.1f} s CPU (import {r['import']:.1f} s)"
                            f"{'; printed the compile notice' if r['notice'] else ''}",
                            flush=True,
                        )
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    print(f"{'version':10} {'to':36} {'cache':6} {'wall s':>8} {'CPU s':>8} {'notice':>7}")
    for (name, what, state), rs in rows.items():
        wall = statistics.median(r["total"] for r in rs)
        cpu = statistics.median(r["cpu"] for r in rs)
        notice = (
            "yes"
            if all(r["notice"] for r in rs)
            else "no"
            if not any(r["notice"] for r in rs)
            else "some"
        )
        print(f"{name:10} {WHAT[what]:36} {state:6} {wall:8.1f} {cpu:8.1f} {notice:>7}")
    print(
        "\nwall: the child's own time from `import solitaire_gym` (medians over --runs); CPU: its "
        "process time. Targets: cold env <= 30 s, warm <= 2 s (2 cores)."
    )


if __name__ == "__main__":
    main()
