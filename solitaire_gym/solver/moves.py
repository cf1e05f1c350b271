"""A node's moves: the legal moves less a few provably useless ones, stock macros, and an order.

**Stock macros.** A node's moves are its legal moves with a few provably useless ones left out
(below), plus *stock macros*: "tap the stock ``j`` times, then play the waste card" (``j`` = 0 …
one full cycle of the stock), which stand for the taps and waste moves. Taps commute with every move
that does not touch the waste, so any solution can be reordered to tap only just before a waste
card is played; a macro reaches every waste top that way, and no position is entered by tapping
alone. The waste tops of one cycle (the node's *walk*, ``stock_walk``) are found by tapping with
the engine and undoing the taps; children that leave the stock and waste alone share their
parent's walk. Moves come from ``movegen.legal_actions`` and, for the waste cards of the walk, from
the predicates ``rules.check_parts`` uses (``foundation_for`` and ``check_onto_column``): nothing
here decides a rule.

**Left out**: (1) a move into an empty column other than the first empty one (columns are
interchangeable), (2) moving a whole column into an empty column (the same position), (3) in
Seahaven Towers, taking a card back from a foundation (its foundation move is then legal and
safe, so the automatic play, ``safe_moves.py``, puts it straight back), (4) with draw 1 and
unlimited turn-overs, after a card is played from the waste to a column, any move but one onto
that card, and after a card (not a King) is played from the waste to its foundation, any move but
a foundation move of its suit (``lazy_waste``). The side runs' flags (``FL_NO_TAKEBACK``,
``FL_NO_SPLIT``) leave out more, and say so (``C_SKIPPED``, see ``loop.py``).
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
    decode,
)
from solitaire_gym.engine.movegen import legal_actions
from solitaire_gym.engine.rules import check_onto_column, check_parts, fits_on, foundation_for
from solitaire_gym.engine.variants import (
    DOUBLE,
    G_COLS,
    G_DRAW,
    G_GAME,
    G_VEGAS,
    L_DRAW,
    L_STOCK,
    L_WF,
    L_WT,
    SEAHAVEN,
)
from solitaire_gym.solver.inline import apply_inline, undo_to
from solitaire_gym.solver.layout import (
    C_FLAGS,
    C_JITTER,
    C_RNG,
    C_SKIPPED,
    FL_NO_AUTO,
    FL_NO_MACRO,
    FL_NO_PRUNE,
    FL_NO_SPLIT,
    FL_NO_TAKEBACK,
    MOVE_BITS,
    R_NONE,
    R_ONTO,
)


@nb.njit(cache=True, inline="always")
def _score(s, cfg: np.ndarray, kind: int, src: int, dst: int, n: int, j: int) -> int:
    """Move ordering: higher first. Foundations, then moves that uncover a new card or free a
    cell, then the rest; take-backs last."""
    game = cfg[G_GAME]
    if kind == K_TF or kind == K_CF:
        return 1000
    if kind == K_DRAW or kind == K_RECYCLE:
        return 200
    if kind == K_WF:
        return 990 - j
    if kind == K_FT or kind == K_FC:
        return -500
    if kind == K_WT:
        return 450 - j
    if kind == K_CT:
        return 600 if s.tab_len[0, dst] > 0 else 560
    h = np.int64(s.tab_len[0, src])
    rest = h - n
    if kind == K_TC:
        sc = 100
        if rest > 0:
            below = np.int64(s.tab[0, src, rest - 1])
            if foundation_for(s, 0, cfg, below) >= 0:
                sc += 700
        else:
            sc += 50
        return sc
    # K_TT
    sc = 300
    if rest == 0:
        sc += 100
    else:
        below = np.int64(s.tab[0, src, rest - 1])
        bottom = np.int64(s.tab[0, src, rest])
        if game == DOUBLE and rest <= s.tab_down[0, src]:
            sc += 400 + 10 * rest  # turns a face-down card over (deep columns first)
        elif fits_on(cfg, bottom, below) and rest > s.tab_down[0, src]:
            sc -= 250  # splits a built sequence
        else:
            sc += 250 + 10 * rest  # uncovers a card that could not move before
        if foundation_for(s, 0, cfg, below) >= 0:
            sc += 300
    if s.tab_len[0, dst] == 0:
        sc += 50
    return sc


@nb.njit(cache=True)
def stock_walk(
    s, cfg: np.ndarray, tmp: np.ndarray, seen: np.ndarray, wkc: np.ndarray, wkj: np.ndarray, w: int
) -> int:
    """Tap the stock through one whole cycle with the engine (then undo every tap), writing each
    waste top met and the taps it took to ``wkc/wkj[w ..]``; return the end. A node's walk
    depends only on the stock and waste, so children that did not touch them share it."""
    seen[:] = 0
    n_taps = 0
    while True:
        wl = s.waste_len[0]
        seen[wl] = 1
        if wl > 0:
            wkc[w] = s.waste[0, wl - 1]
            wkj[w] = n_taps
            w += 1
        if check_parts(s, 0, cfg, K_DRAW, 0, 0, 1) == 0:
            tap = cfg[L_DRAW]
        elif check_parts(s, 0, cfg, K_RECYCLE, 0, 0, 1) == 0:
            tap = cfg[L_DRAW] + 1
        else:
            break
        tmp[n_taps] = apply_inline(s, 0, cfg, tap)
        n_taps += 1
        if seen[s.waste_len[0]]:
            break
    undo_to(s, cfg, tmp, n_taps, 0)
    return w


@nb.njit(cache=True)
def gen_moves(
    s,
    cfg: np.ndarray,
    acts: np.ndarray,
    out: np.ndarray,
    start: int,
    sc: np.ndarray,
    rkind: int,
    rcol: int,
    ctl: np.ndarray,
    wkc: np.ndarray,
    wkj: np.ndarray,
    wk_s: int,
    wk_e: int,
    no_hops: bool = False,
    only: int = -1,
) -> int:
    """Write row 0's moves, best first, to ``out[start ..]``; return how many. ``rkind`` > 0:
    only the moves that a restricted node allows (``R_*``). ``wkc/wkj[wk_s .. wk_e-1]``: the
    node's stock walk. ``no_hops``: leave out the splits (the moves inside a hop class, see
    ``hop_class``); ``only`` (a bit mask of columns, -1: all): leave out the moves that touch
    none of those columns (a waste card going home touches none and is kept)."""
    game = cfg[G_GAME]
    cols = cfg[G_COLS]
    first_empty = -1
    for c in range(cols):
        if s.tab_len[0, c] == 0:
            first_empty = c
            break
    flags = ctl[C_FLAGS]
    macro = cfg[L_STOCK] != 0 and not (flags & FL_NO_MACRO)
    prune = not (flags & FL_NO_PRUNE)
    n_legal = legal_actions(s, 0, cfg, acts)
    k = 0
    for i in range(n_legal):
        a = acts[i]
        kind, src, dst, n = decode(cfg, a)
        if macro and (kind == K_DRAW or kind == K_RECYCLE or kind == K_WT or kind == K_WF):
            continue  # the stock macros below play these
        if rkind != R_NONE and not _allowed(s, rkind, rcol, kind, src, dst, -1):
            continue
        if (flags & FL_NO_TAKEBACK) and kind == K_FT:
            ctl[C_SKIPPED] = 1
            continue
        if kind == K_TT and (no_hops or (flags & FL_NO_SPLIT)) and splits(s, cfg, src, n):
            if not no_hops:
                ctl[C_SKIPPED] = 1
            continue
        if only != -1 and not (_columns_of(kind, src, dst) & only):
            continue
        if not prune:
            pass
        elif game == SEAHAVEN and (kind == K_FT or kind == K_FC):
            if not (flags & FL_NO_AUTO):
                continue  # automatic play would put the card straight back
        elif (kind == K_TT or kind == K_CT or kind == K_FT) and s.tab_len[0, dst] == 0:
            if dst != first_empty:
                continue
            if kind == K_TT and n == s.tab_len[0, src]:
                continue
        out[start + k] = a
        sc[k] = _score(s, cfg, kind, src, dst, n, 0)
        k += 1
    if macro:
        # The waste cards reachable by tapping (the node's walk, see stock_walk); each is decided
        # as rules.check_parts decides a waste move, on the card that would be on top.
        wf = cfg[L_WF]
        wt = cfg[L_WT]
        for w in range(wk_s, wk_e):
            card = np.int64(wkc[w])
            taps = np.int64(wkj[w])
            if (rkind == R_NONE or _allowed(s, rkind, rcol, K_WF, 0, 0, card)) and foundation_for(
                s, 0, cfg, card
            ) >= 0:
                out[start + k] = wf | (taps << MOVE_BITS)
                sc[k] = _score(s, cfg, K_WF, 0, 0, 1, taps)
                k += 1
            for d in range(cols):
                if only != -1 and not (only >> d) & 1:
                    continue
                if prune and s.tab_len[0, d] == 0 and d != first_empty:
                    continue
                if rkind != R_NONE and not _allowed(s, rkind, rcol, K_WT, 0, d, card):
                    continue
                if check_onto_column(s, 0, cfg, card, d) == 0:
                    out[start + k] = (wt + d) | (taps << MOVE_BITS)
                    sc[k] = _score(s, cfg, K_WT, 0, d, 1, taps)
                    k += 1
    jit = ctl[C_JITTER]
    if jit > 0:
        x = ctl[C_RNG]
        for i in range(k):
            x ^= (x << 13) & 0x7FFFFFFFFFFFFFFF
            x ^= x >> 7
            x ^= (x << 17) & 0x7FFFFFFFFFFFFFFF
            sc[i] += x % jit
        ctl[C_RNG] = x
    sort_moves(out, start, sc, k)
    return k


@nb.njit(cache=True, inline="always")
def sort_moves(out: np.ndarray, start: int, sc: np.ndarray, k: int) -> None:
    """Sort ``out[start .. start+k-1]`` by their scores ``sc[0 .. k-1]``, best first, stable
    (insertion sort: a node has a few dozen moves)."""
    for i in range(1, k):
        m = out[start + i]
        v = sc[i]
        q = i - 1
        while q >= 0 and sc[q] < v:
            out[start + q + 1] = out[start + q]
            sc[q + 1] = sc[q]
            q -= 1
        out[start + q + 1] = m
        sc[q + 1] = v


@nb.njit(cache=True, inline="always")
def splits(s, cfg: np.ndarray, src: int, n: int) -> bool:
    """Would moving the top ``n`` cards of column ``src`` split a built sequence (take a card off
    one that it fits on, face up)?"""
    rest = np.int64(s.tab_len[0, src]) - n
    return rest > s.tab_down[0, src] and fits_on(
        cfg, np.int64(s.tab[0, src, rest]), np.int64(s.tab[0, src, rest - 1])
    )


@nb.njit(cache=True, inline="always")
def _columns_of(kind: int, src: int, dst: int) -> int:
    """The columns a move takes from or puts on, as a bit mask."""
    if kind == K_TT:
        return (1 << src) | (1 << dst)
    if kind == K_TF or kind == K_TC:
        return 1 << src
    if kind == K_WT or kind == K_FT or kind == K_CT:
        return 1 << dst
    return 0


@nb.njit(cache=True, inline="always")
def _allowed(s, rkind: int, rcol: int, kind: int, src: int, dst: int, card: int) -> bool:
    """May a restricted node (``R_*``) try this move? ``card``: the waste card of a macro."""
    if rkind == R_ONTO:  # only a move onto the card just played
        return (kind == K_TT or kind == K_WT or kind == K_FT) and dst == rcol
    # R_FOUND: only a card of that suit to a foundation
    if kind == K_TF:
        return s.tab[0, src, s.tab_len[0, src] - 1] // 13 == rcol
    return kind == K_WF and card // 13 == rcol


@nb.njit(cache=True)
def lazy_waste(cfg: np.ndarray) -> bool:
    """Draw 1 with unlimited turn-overs: every stock and waste card can be brought to the top of
    the waste at any time, so a card need be played from the waste to a column only just before
    a card is put on it. Any solution can be reordered so: a card played there that nothing ever
    covers can stay in the stock until it goes to its foundation, and one that is covered later
    can wait until then (the moves in between do not touch it, and whatever was put on the card
    it lies on may wait too; taking the last move back first, each such move slides forward to
    just before the move that covers it, without disturbing the later ones). The node after such
    a move therefore tries only the moves onto that card; it is keyed apart from the same position
    unrestricted. When automatic moves followed, the restriction is dropped (the reordering
    argument would have to see through them).

    The same holds for a card played from the waste to its foundation (but a King): it need go
    there only just before the next card of its suit follows it (from the stock it could be
    taken straight to a column as well as from the foundation). The node after it tries only
    foundation moves of that suit (of any rank: in Double Solitaire the other pile may take one
    without it, so this keeps a superset of what the reordering needs)."""
    return cfg[L_STOCK] != 0 and cfg[G_DRAW] == 1 and cfg[G_VEGAS] == 0
