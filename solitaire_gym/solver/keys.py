"""The visited set: a canonical 128-bit key for each position, in an open-addressing table.

**Keys are canonical**: columns as a multiset (the rules treat them alike), free cells as a set, a
suit's two foundation piles as a pair, the stock and waste as one sequence in drawing order with
the split point between them reduced to its class (draw 1 and unlimited turn-overs: every split
reaches every other, and a node's macros play every waste card of its class, so the split is not
part of the key; draw 3: the splits 0, 3, 6 … and the end form one cycle, the others stand for
themselves; Vegas: the split itself). So two positions with one key win or lose together, and the
search may take one for the other (``loop.py``: a node is entered at most once per run). Two
64-bit Zobrist keys (128 bits) make a false "seen" vanishingly unlikely (about 10^-20 for a
billion positions).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CELLS,
    G_COLS,
    G_DRAW,
    G_GAME,
    G_VEGAS,
    L_STOCK,
    MAX_HEIGHT,
)
from solitaire_gym.solver.layout import FL_EXACT, FL_NO_MACRO, R_FOUND, R_ONTO, SEQ

# ---- Zobrist table layout (two rows, one per key) ----------------------------------------------
Z_COL = 0  # (card, height, face down): 52 * MAX_HEIGHT * 2
Z_FOUND = Z_COL + 52 * MAX_HEIGHT * 2  # Double: (suit, low pile, high pile); else (pile, height)
Z_CELL = Z_FOUND + 4 * 14 * 14  # card in a free cell
Z_SEQ = Z_CELL + 52  # (card, index in the stock + waste sequence)
Z_SPLIT = Z_SEQ + 52 * SEQ  # split point class: 0 … 104, SEQ = "any / the recurrent cycle"
Z_REST = Z_SPLIT + SEQ + 1  # restricted nodes: R_ONTO (+ column), R_FOUND + suit
Z_SIZE = Z_REST + 8

_M1 = np.uint64(0xFF51AFD7ED558CCD)
_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_K2 = np.uint64(0x9E3779B97F4A7C15)
_S33 = np.uint64(33)


def zobrist_table(seed: int = 0x5EA7A1E) -> np.ndarray:
    """The random keys (fixed seed: a position's key is the same in every run)."""
    rng = np.random.default_rng(seed)
    return rng.integers(
        0, np.iinfo(np.uint64).max, size=(2, Z_SIZE), dtype=np.uint64, endpoint=True
    )


@nb.njit(cache=True, inline="always")
def _fmix(x):
    x ^= x >> _S33
    x *= _M1
    x ^= x >> _S33
    x *= _M2
    x ^= x >> _S33
    return x


@nb.njit(cache=True)
def position_key(
    s, cfg: np.ndarray, Z: np.ndarray, rkind: int, rcol: int, flags: int
) -> tuple[np.uint64, np.uint64]:
    """The canonical 128-bit key of row 0 (see the module docstring); never (0, *). A
    restricted node (``rkind`` > 0, about column ``rcol``) is keyed apart from the same position
    unrestricted, by the restriction and the content of the column it names. The split of the
    stock is reduced to its class only when stock taps come as macros (a node then plays every
    waste card of its class); ``FL_EXACT`` keys exact positions."""
    exact = (flags & FL_EXACT) != 0
    exact_split = exact or (flags & FL_NO_MACRO) != 0
    h1 = np.uint64(0)
    h2 = np.uint64(0)
    for c in range(cfg[G_COLS]):
        n = np.int64(s.tab_len[0, c])
        if n == 0:
            continue
        down = np.int64(s.tab_down[0, c])
        x1 = np.uint64(0)
        x2 = np.uint64(0)
        for i in range(n):
            idx = Z_COL + (np.int64(s.tab[0, c, i]) * MAX_HEIGHT + i) * 2 + (1 if i < down else 0)
            x1 ^= Z[0, idx]
            x2 ^= Z[1, idx]
        if exact:
            x1 ^= np.uint64(c + 1) * _M1
            x2 ^= np.uint64(c + 1) * _M2
        h1 += _fmix(x1)  # a sum: the columns are a multiset
        h2 += _fmix(x2 ^ _K2)
        if c == rcol and rkind == R_ONTO:
            h1 ^= _fmix(x1 ^ Z[0, Z_REST + rkind])
            h2 ^= _fmix(x2 ^ Z[1, Z_REST + rkind])
    if cfg[G_GAME] == DOUBLE:
        for su in range(4):
            a = np.int64(s.found[0, 2 * su])
            b = np.int64(s.found[0, 2 * su + 1])
            lo = a if exact else min(a, b)
            hi = b if exact else max(a, b)
            idx = Z_FOUND + (su * 14 + lo) * 14 + hi
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    else:
        for p in range(4):
            idx = Z_FOUND + p * 14 + np.int64(s.found[0, p])
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    for k in range(cfg[G_CELLS]):
        card = np.int64(s.cells[0, k])
        if card >= 0:
            idx = Z_SEQ + card * SEQ + SEQ - 1 - k if exact else Z_CELL + card
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
    if rkind == R_FOUND:
        h1 ^= Z[0, Z_REST + 4 + rcol]
        h2 ^= Z[1, Z_REST + 4 + rcol]
    if cfg[L_STOCK]:
        wl = np.int64(s.waste_len[0])
        sl = np.int64(s.stock_len[0])
        for i in range(wl):
            idx = Z_SEQ + np.int64(s.waste[0, i]) * SEQ + i
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
        for i in range(sl):  # stock[sl-1] is drawn first: sequence index wl
            idx = Z_SEQ + np.int64(s.stock[0, i]) * SEQ + wl + sl - 1 - i
            h1 ^= Z[0, idx]
            h2 ^= Z[1, idx]
        if cfg[G_VEGAS] or exact_split:
            split = wl
        elif cfg[G_DRAW] == 1 or wl % 3 == 0 or sl == 0:
            split = SEQ
        else:
            split = wl
        h1 ^= Z[0, Z_SPLIT + split]
        h2 ^= Z[1, Z_SPLIT + split]
    h1 = _fmix(h1)
    h2 = _fmix(h2 + _K2)
    if h1 == 0:
        h1 = np.uint64(1)
    return h1, h2


# Visited set. Each entry: two keys and ``info``: DEAD (proven lost, for good: the moves of a
# node do not depend on the order they are tried in), or ``run << IDX_BITS | index`` for a node
# entered in run ``run`` (Tarjan's index there); an entry of an earlier run that was not proven
# lost is stale and counts as unseen.
DEAD = -1
IDX_BITS = 40
IDX_MASK = (1 << IDX_BITS) - 1
CLOSED = IDX_MASK  # "index" of a node of this run whose component closed without a proof
TT_NEW = 0
TT_DEAD = 1
TT_OPEN = 2


@nb.njit(cache=True)
def tt_enter(
    t1: np.ndarray, t2: np.ndarray, ti: np.ndarray, h1: np.uint64, h2: np.uint64, info: int
) -> tuple[int, int]:
    """Look the key up. Unseen (or stale): store ``info``, return (TT_NEW, 1 if a slot was
    taken, else 0). Proven lost: (TT_DEAD, 0). Entered in this run: (TT_OPEN, its index)."""
    m = t1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    run = info >> IDX_BITS
    while True:
        k = t1[i]
        if k == 0:
            t1[i] = h1
            t2[i] = h2
            ti[i] = info
            return TT_NEW, 1
        if k == h1 and t2[i] == h2:
            v = ti[i]
            if v == DEAD:
                return TT_DEAD, 0
            if (v >> IDX_BITS) == run:
                return TT_OPEN, v & IDX_MASK
            ti[i] = info
            return TT_NEW, 0
        i = (i + 1) & m


@nb.njit(cache=True)
def tt_kill(
    t1: np.ndarray, t2: np.ndarray, ti: np.ndarray, h1: np.uint64, h2: np.uint64, v: int = DEAD
) -> None:
    """Mark a stored key proven lost (or store ``v`` for it)."""
    m = t1.shape[0] - 1
    i = np.int64(h1 & np.uint64(m))
    while True:
        if t1[i] == h1 and t2[i] == h2:
            ti[i] = v
            return
        i = (i + 1) & m


@nb.njit(cache=True)
def tt_rehash(
    o1: np.ndarray,
    o2: np.ndarray,
    oi: np.ndarray,
    n1: np.ndarray,
    n2: np.ndarray,
    ni: np.ndarray,
    run: int,
) -> int:
    """Copy the live entries (proven lost, or of run ``run``) into the new table; return how
    many (stale entries are dropped)."""
    count = 0
    for i in range(o1.shape[0]):
        v = oi[i]
        if o1[i] != 0 and (v == DEAD or (v >> IDX_BITS) == run):
            tt_enter(n1, n2, ni, o1[i], o2[i], v)
            count += 1
    return count
