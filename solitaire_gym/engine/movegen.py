"""Legal moves: every action that ``rules.check_move`` accepts, found without trying them all.

For a move between columns only one run length can work: the lowest card of the run must be one
rank below the target's top (or a King, for an empty column), and a run that may move is in
sequence, so ``n`` follows from the two top cards. Each candidate is then decided by
``check_move``; the test suite checks this against trying every action id.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import enc_ct, enc_ft, enc_tt
from solitaire_gym.engine.cards import KING, rank_of
from solitaire_gym.engine.rules import check_move, is_won
from solitaire_gym.engine.variants import (
    G_COLS,
    G_PILES,
    L_CELLS,
    L_CF,
    L_DRAW,
    L_FC,
    L_STOCK,
    L_TC,
    L_TF,
    L_WF,
    L_WT,
    MAX_RUN,
)


@nb.njit(cache=True, inline="always")
def _add(s, b, cfg, a, out, k, as_mask):
    if check_move(s, b, cfg, a) == 0:
        if as_mask:
            out[a] = 1
        else:
            out[k] = a
        return k + 1
    return k


@nb.njit(cache=True)
def _enumerate(s, b: int, cfg: np.ndarray, out: np.ndarray, as_mask: bool) -> int:
    k = 0
    if is_won(s, b, cfg):
        return 0
    cols = cfg[G_COLS]
    if cfg[L_STOCK]:
        k = _add(s, b, cfg, cfg[L_DRAW], out, k, as_mask)
        k = _add(s, b, cfg, cfg[L_DRAW] + 1, out, k, as_mask)
    for src in range(cols):
        h = s.tab_len[b, src]
        if h == 0:
            continue
        top_rank = rank_of(s.tab[b, src, h - 1])
        for dst in range(cols):
            if dst == src:
                continue
            hd = s.tab_len[b, dst]
            if hd == 0:
                n = KING - top_rank + 1
            else:
                n = rank_of(s.tab[b, dst, hd - 1]) - top_rank
            if 1 <= n <= h and n <= MAX_RUN:
                k = _add(s, b, cfg, enc_tt(cfg, src, dst, n), out, k, as_mask)
    for src in range(cols):
        k = _add(s, b, cfg, cfg[L_TF] + src, out, k, as_mask)
    if cfg[L_STOCK]:
        for dst in range(cols):
            k = _add(s, b, cfg, cfg[L_WT] + dst, out, k, as_mask)
        k = _add(s, b, cfg, cfg[L_WF], out, k, as_mask)
    cells = cfg[L_CELLS]
    if cells:
        for src in range(cols):
            k = _add(s, b, cfg, cfg[L_TC] + src, out, k, as_mask)
        for c in range(cells):
            for dst in range(cols):
                k = _add(s, b, cfg, enc_ct(cfg, c, dst), out, k, as_mask)
        for c in range(cells):
            k = _add(s, b, cfg, cfg[L_CF] + c, out, k, as_mask)
    for p in range(cfg[G_PILES]):
        if s.found[b, p] == 0:
            continue
        for dst in range(cols):
            k = _add(s, b, cfg, enc_ft(cfg, p, dst), out, k, as_mask)
    if cells:
        for p in range(cfg[G_PILES]):
            k = _add(s, b, cfg, cfg[L_FC] + p, out, k, as_mask)
    return k


@nb.njit(cache=True)
def legal_actions(s, b: int, cfg: np.ndarray, out: np.ndarray) -> int:
    """Write the legal action ids of row ``b`` into ``out`` (ascending); return how many."""
    return _enumerate(s, b, cfg, out, False)


@nb.njit(cache=True)
def legal_mask(s, b: int, cfg: np.ndarray, mask: np.ndarray) -> int:
    """Set ``mask`` (one row of ``cfg[L_N]``, integer dtype) to 1 at the legal actions of row
    ``b`` and 0 elsewhere; return how many are legal."""
    mask[:] = 0
    return _enumerate(s, b, cfg, mask, True)
