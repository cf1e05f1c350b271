"""What one parallel launch costs with each numba threading layer, on idle and on busy cores.

    python benchmarks/bench_launch.py                 # omp (spinning and passive), workqueue;
                                                      # 0 and all cores busy
    python benchmarks/bench_launch.py --busy 0 1 2    # also with one core busy

Every env step of the vector env (and every ``random_legal_actions`` call on 1024 games or more)
is one parallel launch, so its fixed cost counts once per step whatever the number of games.
numba picks a threading layer once per process (``omp`` where GNU OpenMP is installed, unless
``NUMBA_THREADING_LAYER`` says otherwise), and ``solitaire_gym`` starts OpenMP's threads with
``OMP_WAIT_POLICY=PASSIVE`` (``engine/threads.py``): the case ``omp-passive`` here; ``omp`` is
OpenMP's own default (spinning). This script measures each case in a fresh process
(``--layer`` runs one measurement, as the parent does for each case) on a small fixed kernel
(one part per thread, ~20k additions each), ``--calls`` launches in a row, while ``--busy``
processes of this script spin on the CPU. Reported: mean, median and 99th percentile µs per
launch; the work itself is the same in every case, so the differences are the launch.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np


def measure(calls: int) -> dict[str, float]:
    import numba as nb

    @nb.njit(parallel=True)
    def work(x: np.ndarray, parts: int) -> None:
        for t in nb.prange(parts):
            s = 0.0
            for i in range(20000):
                s += i * 1e-9
            x[t] += s

    parts = nb.get_num_threads()
    x = np.zeros(parts)
    work(x, parts)  # compile, start the threads
    times = np.empty(calls)
    for k in range(calls):
        start = time.perf_counter()
        work(x, parts)
        times[k] = time.perf_counter() - start
    times *= 1e6
    return {
        "mean": float(times.mean()),
        "median": float(np.median(times)),
        "p99": float(np.percentile(times, 99)),
        "layer": nb.threading_layer(),
    }


def spin() -> None:
    while True:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", nargs="+", default=["omp", "omp-passive", "workqueue"])
    parser.add_argument("--busy", type=int, nargs="+", default=None, help="busy processes")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--layer", help=argparse.SUPPRESS)  # child: measure this layer
    parser.add_argument("--spin", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.spin:
        spin()
    if args.layer:
        r = measure(args.calls)
        print(f"{r['layer']} {r['mean']:.1f} {r['median']:.1f} {r['p99']:.1f}")
        return
    cores = os.cpu_count() or 1
    busy_counts = args.busy if args.busy is not None else [0, cores]
    print(f"{cores} cores; µs per parallel launch of a fixed kernel ({args.calls} launches)")
    print(f"{'layer':<12} {'busy':>4} {'mean':>9} {'median':>9} {'p99':>9}")
    for busy in busy_counts:
        spinners = [subprocess.Popen([sys.executable, __file__, "--spin"]) for _ in range(busy)]
        try:
            time.sleep(0.3)
            for layer in args.layers:
                env = dict(os.environ, NUMBA_THREADING_LAYER=layer.split("-")[0])
                env.pop("OMP_WAIT_POLICY", None)
                if layer.endswith("-passive"):
                    env["OMP_WAIT_POLICY"] = "PASSIVE"
                out = subprocess.run(
                    [sys.executable, __file__, "--layer", layer, "--calls", str(args.calls)],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout.split()
                mean, median, p99 = map(float, out[1:])
                print(f"{layer:<12} {busy:>4} {mean:>9.1f} {median:>9.1f} {p99:>9.1f}")
        finally:
            for p in spinners:
                p.kill()
                p.wait()
    print(
        "busy: processes spinning on the CPU meanwhile. The vector env launches once per step "
        "(plus once per random_legal_actions call on 1024+ games; 2048+ with workqueue)."
    )


if __name__ == "__main__":
    main()
