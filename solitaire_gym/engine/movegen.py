"""Legal moves: every action that ``rules.check_move`` accepts, found without trying them all.

For a move between columns only one run length can work: the lowest card of the run must be one
rank below the target's top (or a King, for an empty column), and a run that may move is in
sequence, so ``n`` follows from the two top cards. Candidates are screened with the rules' own
predicates and each survivor is decided by ``rules.check_parts``; the test suite checks the result
against trying every action id with ``check_move``.
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
from solitaire_gym.engine.bits import bit, pop_lowest
from solitaire_gym.engine.cards import KING, N_FACES, rank_of
from solitaire_gym.engine.rules import (
    EMPTY_TOP,
    check_parts,
    first_empty_cell,
    fits_on,
    foundation_for,
    is_won,
    pile_suit,
    wants,
)
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

KINGS = np.uint64(sum(1 << c for c in range(N_FACES) if rank_of.py_func(c) == KING))


@nb.njit(cache=True, inline="always")
def _check(s, b: int, cfg: np.ndarray, kind: int, src: int, dst: int, n: int) -> bool:
    # Callers pass np.int64(...) for every number: a constant (K_TT, 0, 1) would otherwise reach
    # check_parts as a literal type, and numba would compile it once per combination of
    # constants (ten times here, most of the package's cold start) for no measurable speed.
    return check_parts(s, b, cfg, kind, src, dst, n) == 0


@nb.njit(cache=True, inline="always")
def _emit(out: np.ndarray, k: int, a: int, as_mask: bool) -> int:
    if as_mask:
        out[a] = 1
    else:
        out[k] = a
    return k + 1


@nb.njit(cache=True, inline="always")
def _lands(wanted: np.uint64, empty_col: bool, card: int) -> bool:
    """Screen: might ``card`` go onto some column? (A column top takes it, or it is a King and a
    column is empty.)"""
    return bool((wanted >> np.uint64(card)) & np.uint64(1)) or (empty_col and rank_of(card) == KING)


@nb.njit(cache=True, inline="always")
def _takers(cfg: np.ndarray, tops: np.uint64, cols: int, cards: np.uint64) -> np.uint64:
    """The columns (bit ``dst``) whose top wants one of ``cards`` (a mask of card ids), or that
    are empty when one of them is a King: worked out for all columns without a branch (which
    columns qualify is as good as random, and a mispredicted branch costs more than this)."""
    king = (cards & KINGS) != 0
    found = np.uint64(0)
    for dst in range(cols):
        top = np.int64((tops >> np.uint64(6 * dst)) & np.uint64(63))
        ok = ((wants(cfg, top) & cards) != 0) | ((top == EMPTY_TOP) & king)
        found |= np.uint64(ok) << np.uint64(dst)
    return found


@nb.njit(cache=True)
def _enumerate(s, b: int, cfg: np.ndarray, out: np.ndarray, as_mask: bool) -> int:
    """Legal actions in action-id order. Candidates are screened with the rules' own predicates
    (``fits_on``, ``foundation_for`` …) and each survivor is decided by ``check_parts``."""
    if is_won(s, b, cfg):
        return 0
    cols = cfg[G_COLS]
    cells = cfg[L_CELLS]
    k = 0
    if cfg[L_STOCK]:
        for i in range(2):
            if _check(
                s,
                b,
                cfg,
                np.int64(K_DRAW if i == 0 else K_RECYCLE),
                np.int64(0),
                np.int64(0),
                np.int64(1),
            ):
                k = _emit(out, k, cfg[L_DRAW] + i, as_mask)
    # First the cards some column top would take (bit c: card id c fits on a top), so that a
    # card that no column takes costs no loop over the columns (runs, waste, cells, foundations).
    tab = s.tab
    tab_len = s.tab_len
    wanted = np.uint64(0)
    empty_col = False
    tops = np.uint64(0)  # 6 bits per column: its top card, EMPTY_TOP when empty
    lanes = np.uint64(0)  # 4 bits per column: 1 + the rank of its top card, 0 when empty
    for dst in range(cols):
        hd = tab_len[b, dst]
        top = np.int64(tab[b, dst, max(hd - 1, 0)])
        top += (EMPTY_TOP - top) * (hd == 0)  # no branch: which columns are empty is random
        empty_col |= hd == 0
        wanted |= wants(cfg, top)
        tops |= np.uint64(top) << np.uint64(6 * dst)
        lanes |= np.uint64((rank_of(top) + 1) * (hd > 0)) << np.uint64(4 * dst)
    for src in range(cols):
        h = tab_len[b, src]
        if h == 0:
            continue
        movable = min(h - s.tab_down[b, src], MAX_RUN)  # face up
        # The cards of the run in sequence from the top (as far as ``movable``), as a mask: a
        # column takes a run from here if its top wants one of them (or it is empty and one is a
        # King); the run length then follows from the two top ranks.
        run = bit(tab[b, src, h - 1])
        seq = 1
        while seq < movable and fits_on(cfg, tab[b, src, h - seq], tab[b, src, h - seq - 1]):
            run |= bit(tab[b, src, h - seq - 1])
            seq += 1
        king = (run & KINGS) != 0
        if not ((run & wanted) or (empty_col and king)):
            continue
        top_rank = rank_of(tab[b, src, h - 1])
        cand = _takers(cfg, tops, cols, run) & ~bit(src)
        while cand:  # the candidate columns, lowest first
            dst, cand = pop_lowest(cand)
            lane = np.int64((lanes >> np.uint64(4 * dst)) & np.uint64(15))
            n = KING - top_rank + 1 if lane == 0 else lane - 1 - top_rank
            if _check(s, b, cfg, np.int64(K_TT), np.int64(src), np.int64(dst), np.int64(n)):
                k = _emit(out, k, enc_tt(cfg, src, dst, n), as_mask)
    for src in range(cols):
        h = tab_len[b, src]
        if (
            h > 0
            and foundation_for(s, b, cfg, tab[b, src, h - 1]) >= 0
            and _check(s, b, cfg, np.int64(K_TF), np.int64(src), np.int64(0), np.int64(1))
        ):
            k = _emit(out, k, cfg[L_TF] + src, as_mask)
    if cfg[L_STOCK] and s.waste_len[b] > 0:
        card = s.waste[b, s.waste_len[b] - 1]
        cand = (
            _takers(cfg, tops, cols, bit(card)) if _lands(wanted, empty_col, card) else np.uint64(0)
        )
        while cand:
            dst, cand = pop_lowest(cand)
            if _check(s, b, cfg, np.int64(K_WT), np.int64(0), np.int64(dst), np.int64(1)):
                k = _emit(out, k, cfg[L_WT] + dst, as_mask)
        if foundation_for(s, b, cfg, card) >= 0 and _check(
            s, b, cfg, np.int64(K_WF), np.int64(0), np.int64(0), np.int64(1)
        ):
            k = _emit(out, k, cfg[L_WF], as_mask)
    if cells:
        if first_empty_cell(s, b, cfg) >= 0:
            for src in range(cols):
                if s.tab_len[b, src] > 0 and _check(
                    s, b, cfg, np.int64(K_TC), np.int64(src), np.int64(0), np.int64(1)
                ):
                    k = _emit(out, k, cfg[L_TC] + src, as_mask)
        for c in range(cells):
            card = s.cells[b, c]
            if card < 0 or not _lands(wanted, empty_col, card):
                continue
            cand = _takers(cfg, tops, cols, bit(card))
            while cand:
                dst, cand = pop_lowest(cand)
                if _check(s, b, cfg, np.int64(K_CT), np.int64(c), np.int64(dst), np.int64(1)):
                    k = _emit(out, k, enc_ct(cfg, c, dst), as_mask)
        for c in range(cells):
            card = s.cells[b, c]
            if (
                card >= 0
                and foundation_for(s, b, cfg, card) >= 0
                and _check(s, b, cfg, np.int64(K_CF), np.int64(c), np.int64(0), np.int64(1))
            ):
                k = _emit(out, k, cfg[L_CF] + c, as_mask)
    for p in range(cfg[G_PILES]):
        if s.found[b, p] == 0:
            continue
        card = pile_suit(cfg, p) * 13 + s.found[b, p] - 1
        if not _lands(wanted, empty_col, card):
            continue
        cand = _takers(cfg, tops, cols, bit(card))
        while cand:
            dst, cand = pop_lowest(cand)
            if _check(s, b, cfg, np.int64(K_FT), np.int64(p), np.int64(dst), np.int64(1)):
                k = _emit(out, k, enc_ft(cfg, p, dst), as_mask)
    if cells and first_empty_cell(s, b, cfg) >= 0:
        for p in range(cfg[G_PILES]):
            if s.found[b, p] > 0 and _check(
                s, b, cfg, np.int64(K_FC), np.int64(p), np.int64(0), np.int64(1)
            ):
                k = _emit(out, k, cfg[L_FC] + p, as_mask)
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
