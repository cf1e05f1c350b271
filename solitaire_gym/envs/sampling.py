"""Uniform random legal actions for a whole batch of masks, in compiled code (for random agents
and benchmarks: a numpy pass over ``(n, N)`` random numbers would cost more than the env step).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.state import part_rows
from solitaire_gym.engine.threads import num_threads, use_parallel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, inline="always")
def _mix(z: np.uint64) -> np.uint64:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


# Fewest rows drawn on all cores (``threads.use_parallel``); below, waking the threads costs more
# than the draws (~0.1 µs a row): measured on 2 cores, parallel pays from ~1000 rows with omp and
# ~1500 with workqueue. None: by the threading layer.
PARALLEL_MIN_ROWS: int | None = None


# Mask bytes counted at once while looking for the chosen legal action: one cache line. Measured
# per row on one core (SH1-C4 / DS1-D1N masks): 32 bytes 217 / 135 ns, 64 bytes 124 / 95 ns,
# 128 bytes 127 / 103 ns.
BLOCK = 64


@nb.njit(cache=True, inline="always")
def _sample_row(masks: np.ndarray, seed: np.uint64, out: np.ndarray, b: int) -> None:
    # masks[b, a], not a row view: taking a view touches the array's reference count, a word
    # every thread would share.
    width = masks.shape[1]
    n = 0
    for a in range(width):
        n += masks[b, a] != 0  # no branch: the compiler vectorises this count
    if n == 0:
        out[b] = 0
        return
    k = np.int64(_mix(seed + _GOLDEN * np.uint64(b + 1)) % np.uint64(n))
    start = 0  # skip whole blocks before the k-th legal action (masks are mostly zeros)
    while start + BLOCK <= width:
        c = 0
        for a in range(start, start + BLOCK):
            c += masks[b, a] != 0
        if k < c:
            break
        k -= c
        start += BLOCK
    for a in range(start, width):
        if masks[b, a]:
            if k == 0:
                out[b] = a
                return
            k -= 1


@nb.njit(cache=True, parallel=True)
def _sample(masks: np.ndarray, seed: np.uint64, out: np.ndarray, parts: int) -> None:
    n = masks.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        for b in range(lo, hi):
            _sample_row(masks, seed, out, b)


@nb.njit(cache=True)
def _sample_serial(masks: np.ndarray, seed: np.uint64, out: np.ndarray) -> None:
    for b in range(masks.shape[0]):
        _sample_row(masks, seed, out, b)


def random_legal_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``masks`` (``(n, N)``, non-zero = legal);
    0 for a row with none. Reproducible: the draw depends only on ``rng``'s state."""
    masks = np.asarray(masks)
    if masks.ndim != 2:
        raise ValueError(f"masks must be a 2-D (games, actions) array, not shape {masks.shape}")
    out = np.zeros(masks.shape[0], np.int64)
    seed = np.uint64(rng.integers(0, 2**63))
    if use_parallel(masks.shape[0], threaded=1024, workqueue=2048, fixed=PARALLEL_MIN_ROWS):
        _sample(masks, seed, out, num_threads())
    else:
        _sample_serial(masks, seed, out)
    return out
