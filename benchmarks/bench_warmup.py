"""A cold ``solitaire-gym warmup`` in one process against two (``--jobs 1`` and ``--jobs 2``): the
wall time of the whole command, with numba's cache empty.

    python benchmarks/bench_warmup.py             # each case once, one process first
    python benchmarks/bench_warmup.py --runs 2    # alternating, medians

Each run is the command line as the Makefile's setup runs it, in a new process whose
``NUMBA_CACHE_DIR`` is a new empty directory (the package's own cache is not touched), so every
kernel compiles. One process is the reference, measured in the same run: the ratio holds on a
busy machine, the wall times do not, so the load average is printed before and after. CPU time
is that of the command and its children (the second process included). With two processes, the
solver part (about three quarters of the work) compiles beside the others: on two cores the wall
time can fall by at most the others' share.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(jobs: int, cache: str) -> tuple[float, float]:
    """(wall s, CPU s) of one cold ``solitaire-gym warmup --jobs <jobs>``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    cli = [sys.executable, "-m", "solitaire_gym.cli", "warmup", "--jobs", str(jobs)]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cli, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if proc.returncode != 0:
        raise SystemExit(f"warmup --jobs {jobs} failed:\n{proc.stderr}")
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="cold runs of each case (default 1)")
    args = parser.parse_args(argv)
    if not 1 <= args.runs <= 20:
        parser.error("--runs must be in 1 … 20")
    print(f"cold warmup: Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for jobs in times:
                cache = os.path.join(tmp, f"jobs{jobs}-{run}")
                os.mkdir(cache)
                wall, cpu = measure(jobs, cache)
                times[jobs].append((wall, cpu))
                print(
                    f"  run {run}: --jobs {jobs}: {wall:6.1f} s wall, {cpu:6.1f} s CPU", flush=True
                )
    print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    print(f"{'processes':>9} {'wall s':>8} {'CPU s':>8} {'wall / one process':>19}")
    ref = statistics.median(w for w, _ in times[1])
    for jobs, rs in times.items():
        wall = statistics.median(w for w, _ in rs)
        cpu = statistics.median(c for _, c in rs)
        print(f"{jobs:>9} {wall:8.1f} {cpu:8.1f} {wall / ref:19.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
