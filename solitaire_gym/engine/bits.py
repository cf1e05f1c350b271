"""Sets of small integers (card ids, columns) as bits of one ``uint64``, for compiled code."""

from __future__ import annotations

import numba as nb
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros


@nb.njit(cache=True, inline="always")
def bit(i) -> np.uint64:
    """The set ``{i}``."""
    return np.uint64(1) << np.uint64(i)


@nb.njit(cache=True, inline="always")
def pop_lowest(bits: np.uint64) -> tuple[int, np.uint64]:
    """The lowest member of the non-empty set ``bits``, and the set without it. Walking a set
    with it visits its members in increasing order, with one branch per member (not per
    candidate)."""
    return np.int64(trailing_zeros(bits)), bits & (bits - np.uint64(1))
