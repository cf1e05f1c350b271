"""Engine benchmark: random legal moves per second in a Batch, cold start, memory per game.

    python benchmarks/bench_engine.py            # every variant, 3 s each, batch of 1024
    python benchmarks/bench_engine.py --quick    # 0.5 s each, one cold-start run

(a) Throughput. For each of the 9 variants, a :class:`~solitaire_gym.engine.batch.Batch` of 1024
games plays random legal moves: each iteration computes the masks (``Batch.masks``), picks one
legal action per row uniformly (a small compiled helper below), deals a new game into rows that
are won or have no legal move, and steps (``Batch.step``). All of that is timed together, after a
warm-up; moves/s counts the actions played. The phase columns split that time.

(b) Cold start. A fresh interpreter imports the package, makes a game and lists its legal moves;
the time it prints is measured inside the process (the interpreter's own start-up is in the
"process" column). "warm": numba's cache already filled (a first run fills it). "cold": numba's
cache pointed at an empty directory (``NUMBA_CACHE_DIR``), so every kernel compiles.

(c) Memory. ``Batch.bytes_per_game``: the State arrays per game, without an undo history (as the
throughput runs use) and with the app's undo depth; the int8 action mask the Batch keeps per game
comes on top.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numba as nb
import numpy as np

from solitaire_gym.engine.batch import Batch
from solitaire_gym.engine.variants import MAX_DEAL, parse_code

TAGS = [
    "DS1-D1N",
    "DS1-D1V",
    "DS1-D3N",
    "DS1-D3V",
    "TF1-D1N",
    "TF1-D3N",
    "SH1-C4",
    "SH1-C2",
    "SH1-C1",
]

COLD_START = (
    "import time; t=time.perf_counter(); import solitaire_gym; "
    "g=solitaire_gym.Game.from_code('SH1-C4-AAAAAAB'); g.legal_moves(); "
    "print(time.perf_counter()-t)"
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(parallel=True)
def choose(masks, counts, won, rng, actions, redeal) -> int:
    """Per row: a uniformly random legal action (``rng[b]`` is the row's SplitMix64 state), or -1
    and ``redeal[b] = 1`` where the game is won or has no legal move. Returns how many rows are
    to be dealt again."""
    n_redeal = 0
    for b in nb.prange(masks.shape[0]):
        n = counts[b]
        if won[b] or n == 0:
            actions[b] = -1
            redeal[b] = 1
            n_redeal += 1
            continue
        redeal[b] = 0
        z = rng[b] + _GOLDEN
        rng[b] = z
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        k = np.int64(z % np.uint64(n))
        row = masks[b]
        for a in range(row.shape[0]):
            if row[a]:
                if k == 0:
                    actions[b] = a
                    break
                k -= 1
    return n_redeal


class RandomPlay:
    """A Batch playing random legal moves, dealing again where a game ends."""

    def __init__(self, tag: str, size: int, seed: int = 0) -> None:
        self.variant = parse_code(f"{tag}-AAAAAAA")[0]
        self.size = size
        self.batch = Batch(self.variant, size)
        self.next_deal = 0
        self.batch.deal(self._deals(size))
        self.rng = np.random.default_rng(seed).integers(0, 2**63, size).astype(np.uint64)
        self.actions = np.full(size, -1, np.int64)
        self.redeal = np.zeros(size, np.int8)
        self.phase = np.zeros(4, np.float64)  # masks, choose, deal, step (seconds)
        self.moves = 0
        self.games = 0
        self.won = 0
        self.legal = 0

    def _deals(self, n: int) -> np.ndarray:
        deals = (self.next_deal + np.arange(n)) % (MAX_DEAL + 1)
        self.next_deal += n
        return deals

    def iterate(self) -> None:
        t0 = time.perf_counter()
        masks = self.batch.masks()
        t1 = time.perf_counter()
        counts, won = self.batch.legal_counts, self.batch.won
        n_redeal = choose(masks, counts, won, self.rng, self.actions, self.redeal)
        t2 = time.perf_counter()
        if n_redeal:
            rows = np.flatnonzero(self.redeal)
            self.won += int(won[rows].sum())
            self.batch.deal(self._deals(rows.size), rows)
        t3 = time.perf_counter()
        reasons = self.batch.step(self.actions)
        t4 = time.perf_counter()
        self.phase += (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        self.moves += self.size - n_redeal
        self.games += n_redeal
        self.legal += int(counts.sum())

        if reasons.max() > 0:
            raise AssertionError(f"a legal action was refused: reasons {np.unique(reasons)}")

    def reset_counters(self) -> None:
        self.phase[:] = 0
        self.moves = self.games = self.won = self.legal = 0


def throughput(tag: str, size: int, seconds: float) -> dict:
    play = RandomPlay(tag, size)
    for _ in range(20):  # warm-up: compile or load the kernels, leave the fresh deals
        play.iterate()
    play.reset_counters()
    iterations = 0
    start = time.perf_counter()
    while True:
        play.iterate()
        iterations += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and iterations >= 10:
            break
    return {
        "tag": tag,
        "moves_per_s": play.moves / elapsed,
        "us_per_iter": elapsed / iterations * 1e6,
        "legal": play.legal / (iterations * size),
        "games": play.games,
        "won": play.won,
        "phase": play.phase / play.phase.sum(),
        "moves": play.moves,
        "seconds": elapsed,
    }


def cold_start(runs: int, fresh_cache: bool) -> tuple[list[float], list[float]]:
    """In-process seconds and whole-process seconds of ``runs`` fresh interpreters."""
    inside, outside = [], []
    for _ in range(runs):
        env = dict(os.environ)
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            if fresh_cache:
                env["NUMBA_CACHE_DIR"] = cache
            t = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", COLD_START],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            outside.append(time.perf_counter() - t)
        inside.append(float(out.stdout.strip().splitlines()[-1]))
    return inside, outside


def fmt_times(xs: list[float]) -> str:
    if len(xs) == 1:
        return f"{xs[0]:.2f}"
    return f"{statistics.median(xs):.2f} (min {min(xs):.2f}, max {max(xs):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.5 s per variant, fewer runs")
    parser.add_argument("--seconds", type=float, default=None, help="timed seconds per variant")
    parser.add_argument("--batch", type=int, default=1024, help="games per Batch")
    parser.add_argument("--variants", nargs="+", default=TAGS, choices=TAGS, metavar="TAG")
    parser.add_argument("--no-cold", action="store_true", help="skip the cold-start runs")
    parser.add_argument("--threads", type=int, default=None, help="numba threads (default: all)")
    parser.add_argument(
        "--threading-layer",
        choices=["default", "omp", "workqueue", "tbb"],
        default=None,
        help="numba threading layer (as NUMBA_THREADING_LAYER; under CPU contention omp's "
        "spin-waiting can cost several times the work)",
    )
    args = parser.parse_args()
    if args.threading_layer:
        nb.config.THREADING_LAYER = args.threading_layer  # before the first parallel launch
    if args.threads:
        nb.set_num_threads(args.threads)
    seconds = args.seconds or (0.5 if args.quick else 3.0)
    warm_runs, cold_runs = (2, 1) if args.quick else (5, 2)

    print(
        f"solitaire_gym engine benchmark: Python {platform.python_version()}, numba "
        f"{nb.__version__}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
        f"{nb.get_num_threads()} numba threads"
    )
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average before the run: {load} (other work on the machine skews the figures)")
    print(f"batch {args.batch}, {seconds:g} s timed per variant after a warm-up\n")

    print("(a) random legal moves in a Batch (masks + choice + deals + step, timed together)")
    head = (
        f"{'variant':<9} {'moves/s':>12} {'us/iter':>9} {'legal':>6} {'games':>7} {'won':>4}"
        f"   {'masks':>5} {'choose':>6} {'deal':>5} {'step':>5}"
    )
    print(head)
    print("-" * len(head))
    results = []
    for tag in args.variants:
        r = throughput(tag, args.batch, seconds)
        results.append(r)
        m, c, d, s = (100 * r["phase"]).tolist()
        print(
            f"{tag:<9} {r['moves_per_s']:>12,.0f} {r['us_per_iter']:>9,.0f} {r['legal']:>6.1f} "
            f"{r['games']:>7,} {r['won']:>4}   {m:>4.0f}% {c:>5.0f}% {d:>4.0f}% {s:>4.0f}%",
            flush=True,
        )
    print(
        "moves/s: actions played per second; us/iter: one masks+choose+deal+step pass over the "
        "batch;\nlegal: mean legal actions per row; games: games dealt again (won or no legal "
        "move); won: of those, won;\nphase columns: share of the timed loop. numba threading "
        f"layer: {nb.threading_layer()}.\n"
    )

    print("(b) cold start: import solitaire_gym, Game.from_code('SH1-C4-AAAAAAB'), legal_moves()")
    if args.no_cold:
        print("skipped (--no-cold)\n")
    else:
        cold_start(1, fresh_cache=False)  # fill numba's own cache if it is not yet
        warm_in, warm_out = cold_start(warm_runs, fresh_cache=False)
        cold_in, cold_out = cold_start(cold_runs, fresh_cache=True)
        print(f"{'numba cache':<22} {'runs':>4}  {'in process (s)':<32} {'process (s)':<32}")
        print(f"{'warm':<22} {warm_runs:>4}  {fmt_times(warm_in):<32} {fmt_times(warm_out):<32}")
        print(
            f"{'cold (empty cache dir)':<22} {cold_runs:>4}  {fmt_times(cold_in):<32} "
            f"{fmt_times(cold_out):<32}"
        )
        print("median (min, max) over the runs; 'process' includes the interpreter's start-up.\n")

    print("(c) memory per game (Batch.bytes_per_game)")
    print(f"{'variant':<9} {'state':>8} {'+ undo history':>15} {'undo depth':>11} {'mask':>6}")
    for tag in args.variants:
        variant = parse_code(f"{tag}-AAAAAAA")[0]
        plain = Batch(variant, args.batch)
        undo = Batch(variant, args.batch, undo_depth=variant.undo_depth)
        print(
            f"{tag:<9} {plain.bytes_per_game:>8,} {undo.bytes_per_game:>15,} "
            f"{variant.undo_depth:>11} {plain.n_actions:>6,}"
        )
    print(
        "bytes per game: state without undo history (the throughput runs), with the app's undo "
        "history;\nmask: the int8 action mask the Batch keeps per game, on top of the state."
    )


if __name__ == "__main__":
    main()
