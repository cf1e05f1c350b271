"""Shortening a solution: shortcuts to positions the solution reaches later.

The search returns the first win it finds, with the detours of its move order in it. ``shorten``
cuts them out on exact positions (``FL_EXACT`` keys), and its result is replayed and checked by
the caller like any solution: nothing here bears on a verdict.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.movegen import legal_actions
from solitaire_gym.engine.play import apply, undo_record
from solitaire_gym.solver.keys import position_key
from solitaire_gym.solver.layout import FL_EXACT, R_NONE


@nb.njit(cache=True)
def _map_put(mk1, mk2, mv, h1, h2, v) -> None:
    m = mk1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while mk1[i] != 0 and not (mk1[i] == h1 and mk2[i] == h2):
        i = (i + 1) & m
    mk1[i] = h1
    mk2[i] = h2
    mv[i] = v


@nb.njit(cache=True)
def _map_get(mk1, mk2, mv, h1, h2) -> int:
    m = mk1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while mk1[i] != 0:
        if mk1[i] == h1 and mk2[i] == h2:
            return mv[i]
        i = (i + 1) & m
    return -1


@nb.njit(cache=True)
def shorten(s, cfg: np.ndarray, Z: np.ndarray, path: np.ndarray, acts: np.ndarray, out: np.ndarray):
    """Shorten the solution ``path`` (action ids) from row 0's position: wherever one legal move
    reaches a position that the solution reaches later (exact positions), take it and skip the
    detour. Writes the new solution to ``out`` and returns its length; row 0 ends won. The
    result is replayed and checked by the caller like any solution."""
    n = path.shape[0]
    size = 1
    while size < 2 * (n + 1):
        size *= 2
    mk1 = np.zeros(size, np.uint64)
    mk2 = np.zeros(size, np.uint64)
    mv = np.zeros(size, np.int64)
    recs = np.zeros(n + 1, np.int64)
    h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
    _map_put(mk1, mk2, mv, h1, h2, 0)
    for i in range(n):
        recs[i] = apply(s, 0, cfg, path[i])
        h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
        _map_put(mk1, mk2, mv, h1, h2, i + 1)  # the last visit wins: loops are cut
    for i in range(n - 1, -1, -1):
        undo_record(s, 0, cfg, recs[i])
    i = 0
    k = 0
    while i < n:
        h1, h2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
        i = max(i, _map_get(mk1, mk2, mv, h1, h2))
        if i >= n:
            break
        best = path[i]
        best_j = i + 1
        n_legal = legal_actions(s, 0, cfg, acts)
        for q in range(n_legal):
            rec = apply(s, 0, cfg, acts[q])
            g1, g2 = position_key(s, cfg, Z, R_NONE, -1, FL_EXACT)
            j = _map_get(mk1, mk2, mv, g1, g2)
            undo_record(s, 0, cfg, rec)
            if j > best_j:
                best_j = j
                best = acts[q]
        apply(s, 0, cfg, best)
        out[k] = best
        k += 1
        i = best_j
    return k
