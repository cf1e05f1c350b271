"""Legal moves: every action that ``rules.check_move`` accepts, found without trying them all.

For a move between columns only one run length can work: the lowest card of the run must be one
rank below the target's top (or a King, for an empty column), and a run that may move is in
sequence, so ``n`` follows from the two top cards. Each candidate is then decided by
``check_move``; the test suite checks this against trying every action id.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import (
    K_CF,
    K_CT,
    K_DRAW,
    K_FC,
    K_FT,
    K_RECYCLE,
    K_TC,
    K_TF,
    K_TT,
    K_WF,
    K_WT,
    enc_ct,
    enc_ft,
    enc_tt,
)
from solitaire_gym.engine.cards import KING, rank_of
from solitaire_gym.engine.rules import check_parts, is_won
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


@nb.njit(cache=True)
def _enumerate(s, b: int, cfg: np.ndarray, out: np.ndarray, as_mask: bool) -> int:
    """Walk the candidate moves in action-id order; ``check_parts`` (inlined once) decides each."""
    if is_won(s, b, cfg):
        return 0
    cols = cfg[G_COLS]
    cells = cfg[L_CELLS]
    piles = cfg[G_PILES]
    stock = cfg[L_STOCK]
    # Candidate blocks, as in the action layout: draw/recycle, t->t, t->f, w->t, w->f, t->c,
    # c->t, c->f, f->t, f->c. ``ends`` are the cumulative candidate counts.
    e0 = 2 * stock
    e1 = e0 + cols * cols
    e2 = e1 + cols
    e3 = e2 + cols * stock
    e4 = e3 + stock
    e5 = e4 + (cols if cells else 0)
    e6 = e5 + cells * cols
    e7 = e6 + cells
    e8 = e7 + piles * cols
    e9 = e8 + (piles if cells else 0)
    k = 0
    # Row/column counters of the two-dimensional blocks, advanced without division.
    pa = 0
    pb = -1
    for i in range(e9):
        n = 1
        src = 0
        dst = 0
        if i == e0 or i == e5 or i == e7:
            pa = 0
            pb = -1
        if (e0 <= i < e1) or (e5 <= i < e6) or (e7 <= i < e8):
            pb += 1
            if pb == cols:
                pb = 0
                pa += 1
        if i < e0:
            kind = K_DRAW if i == 0 else K_RECYCLE
            a = cfg[L_DRAW] + i
        elif i < e1:
            src = pa
            dst = pb
            h = s.tab_len[b, src]
            if dst == src or h == 0:
                continue
            top_rank = rank_of(s.tab[b, src, h - 1])
            hd = s.tab_len[b, dst]
            if hd == 0:
                n = KING - top_rank + 1
            else:
                n = rank_of(s.tab[b, dst, hd - 1]) - top_rank
            if n < 1 or n > h or n > MAX_RUN:
                continue
            kind = K_TT
            a = enc_tt(cfg, src, dst, n)
        elif i < e2:
            kind = K_TF
            src = i - e1
            a = cfg[L_TF] + src
        elif i < e3:
            kind = K_WT
            dst = i - e2
            a = cfg[L_WT] + dst
        elif i < e4:
            kind = K_WF
            a = cfg[L_WF]
        elif i < e5:
            kind = K_TC
            src = i - e4
            a = cfg[L_TC] + src
        elif i < e6:
            kind = K_CT
            src = pa
            dst = pb
            a = enc_ct(cfg, src, dst)
        elif i < e7:
            kind = K_CF
            src = i - e6
            a = cfg[L_CF] + src
        elif i < e8:
            kind = K_FT
            src = pa
            dst = pb
            a = enc_ft(cfg, src, dst)
        else:
            kind = K_FC
            src = i - e8
            a = cfg[L_FC] + src
        if check_parts(s, b, cfg, kind, src, dst, n) == 0:
            if as_mask:
                out[a] = 1
            else:
                out[k] = a
            k += 1
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
