"""Hop classes (Solitaire Réfléchi): the positions linked by hops, searched as one node.

With one deck a card fits on two cards only, the two of the next rank in the other colour
(*twins*). A *hop* moves an ordered group from the card it fits on to that card's twin, on top of
another column; it splits a built sequence, and a hop back undoes it at once. So the positions
linked by hops (a *hop class*) win or lose together, and the search takes a whole class as one
node: entered at its least member (each group on the lower-numbered twin, ``canonical``), keyed
by that member, and expanded with every member's moves but the hops (``gen_node``). A class is a
cube: each *site* (a group that can hop) has two choices independent of the others
(``hop_class`` finds classes breadth first; the tests check the two agree), so a member is a set
of sites to hop. Besides the node's own moves, only the members one hop away contribute, and only
the moves onto the card the hop uncovered or sending it home: any other move of any member has a
counterpart from a member with one hop fewer that reaches the same class (the cases are in
``gen_node``; with draw 1 a waste card going home is kept too where the cards the hops uncover may
follow it). The moves that reach a class by a hop are not generated at all. A class with more than
``HOP_SITES`` sites is searched position by position. In the draw-1 proofs that the splits made
large this takes a third as many positions or fewer (``TF1-D1N-AAAAACC``: 2.2 million instead of
7.7 million, in one run).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import K_FT, K_TF, K_TT, K_WT, decode, enc_tt
from solitaire_gym.engine.cards import suit_of
from solitaire_gym.engine.rules import fits_on
from solitaire_gym.engine.variants import G_COLS, L_WF
from solitaire_gym.solver.inline import apply_inline, check_move_inline, undo_inline, undo_to
from solitaire_gym.solver.keys import position_key
from solitaire_gym.solver.layout import (
    MEMBER_SHIFT,
    MOVE_BITS,
    MOVE_MASK,
    R_NONE,
    SCRATCH,
    TAPS_MASK,
)
from solitaire_gym.solver.moves import gen_moves, lazy_waste, sort_moves, splits
from solitaire_gym.solver.safe_moves import autoplay

HOP_MAX = 16  # members that ``hop_class`` (the tests' reference) enumerates at most
HOP_SITES = 4  # classes with more hop sites (2 ** sites members) are searched position by position
HOP_ITERS = 3  # rounds of (go to the least member, automatic moves) after a move, at most
HS_RECS = SCRATCH + 192  # a hop scratch: hs_views, then the records of a member's hops
HS_SIZE = HS_RECS + 64


@nb.njit(cache=True)
def hops(s, cfg: np.ndarray, out: np.ndarray) -> int:
    """Row 0's *hops*, written to ``out``; returns how many. A hop is a legal split: the ordered
    group on a card ``p`` (face up, the group's first card fits on it) moves to another card it
    fits on, which lies on top of another column. A hop can always be taken back at once (the
    group fits on ``p``, now on top, and is as ordered as before), so the positions linked by
    hops win or lose together. Candidates come from ``fits_on``; ``check_move`` decides."""
    cols = cfg[G_COLS]
    k = 0
    for src in range(cols):
        h = np.int64(s.tab_len[0, src])
        for n in range(1, h):
            rest = h - n
            if n > 1 and not fits_on(
                cfg, np.int64(s.tab[0, src, rest + 1]), np.int64(s.tab[0, src, rest])
            ):
                break  # the top n cards are no longer one ordered group
            if not splits(s, cfg, src, n):
                break  # nor are the top n + 1
            base = np.int64(s.tab[0, src, rest])
            for dst in range(cols):
                hd = np.int64(s.tab_len[0, dst])
                if dst == src or hd == 0 or not fits_on(cfg, base, np.int64(s.tab[0, dst, hd - 1])):
                    continue
                a = enc_tt(cfg, src, dst, n)
                if check_move_inline(s, 0, cfg, a) == 0:
                    out[k] = a
                    k += 1
    return k


@nb.njit(cache=True)
def _to_member(
    s,
    cfg: np.ndarray,
    hpar: np.ndarray,
    hact: np.ndarray,
    i: int,
    path: np.ndarray,
    recs: np.ndarray,
    top: int,
) -> int:
    """Play the hops from member 0 of the class to member ``i``; records to ``recs[top ..]``.
    Returns the new top."""
    d = 0
    q = i
    while q > 0:
        path[d] = hact[q]
        d += 1
        q = hpar[q]
    for t in range(d - 1, -1, -1):
        recs[top] = apply_inline(s, 0, cfg, path[t])
        top += 1
    return top


@nb.njit(cache=True)
def hop_class(
    s,
    cfg: np.ndarray,
    Z: np.ndarray,
    flags: int,
    hk1: np.ndarray,
    hk2: np.ndarray,
    hpar: np.ndarray,
    hact: np.ndarray,
    hbuf: np.ndarray,
    path: np.ndarray,
    hrec: np.ndarray,
) -> int:
    """Row 0's *hop class*: the positions reachable from it by hops alone (``hops``), found
    breadth first, member 0 being row 0; the reference that the tests check the search's view of
    a class against (a cube of ``2 ** sites`` members, ``canonical``, ``gen_node``), which does
    not call it. Member ``i``: its keys ``hk1/hk2[i]`` and the member it was reached from
    ``hpar[i]`` by the hop ``hact[i]``. Returns the number of members, or ``HOP_MAX + 1`` if
    there are more (the search takes a class of more than ``HOP_SITES`` sites position by
    position: each member its own node, hops ordinary moves). Row 0 is left as it was."""
    h1, h2 = position_key(s, cfg, Z, R_NONE, -1, flags)
    hk1[0] = h1
    hk2[0] = h2
    hpar[0] = -1
    hact[0] = -1
    size = 1
    i = 0
    while i < size:
        top = _to_member(s, cfg, hpar, hact, i, path, hrec, 0)
        nh = hops(s, cfg, hbuf)
        for q in range(nh):
            r = apply_inline(s, 0, cfg, hbuf[q])
            g1, g2 = position_key(s, cfg, Z, R_NONE, -1, flags)
            undo_inline(s, 0, cfg, r)
            new = True
            for t in range(size):
                if hk1[t] == g1 and hk2[t] == g2:
                    new = False
                    break
            if not new:
                continue
            if size > HOP_MAX - 1:
                undo_to(s, cfg, hrec, top, 0)
                return HOP_MAX + 1
            hk1[size] = g1
            hk2[size] = g2
            hpar[size] = i
            hact[size] = hbuf[q]
            size += 1
        undo_to(s, cfg, hrec, top, 0)
        i += 1
    return size


@nb.njit(cache=True)
def _hop_scratch(cfg: np.ndarray):
    """Scratch for ``hop_class``: keys, parents and hops of up to ``HOP_MAX`` members; the hops
    of one position; a path and its records."""
    hk1 = np.zeros(HOP_MAX, np.uint64)
    hk2 = np.zeros(HOP_MAX, np.uint64)
    hpar = np.zeros(HOP_MAX, np.int64)
    hact = np.zeros(HOP_MAX, np.int64)
    hbuf = np.zeros(SCRATCH, np.int64)
    path = np.zeros(HOP_MAX, np.int64)
    hrec = np.zeros(HOP_MAX, np.int64)
    return hk1, hk2, hpar, hact, hbuf, path, hrec


@nb.njit(cache=True)
def sites(
    s,
    cfg: np.ndarray,
    hbuf: np.ndarray,
    base: np.ndarray,
    parent: np.ndarray,
    target: np.ndarray,
) -> int:
    """Row 0's hop *sites*, one per hop (``hops``, kept in ``hbuf``): the group's first card
    ``base``, the card it lies on ``parent``, and the card on top of another column it can hop to
    ``target``. Returns how many."""
    nh = hops(s, cfg, hbuf)
    for q in range(nh):
        _kind, src, dst, n = decode(cfg, np.int64(hbuf[q]))
        rest = np.int64(s.tab_len[0, src]) - n
        base[q] = s.tab[0, src, rest]
        parent[q] = s.tab[0, src, rest - 1]
        target[q] = s.tab[0, dst, s.tab_len[0, dst] - 1]
    return nh


@nb.njit(cache=True)
def _hop(s, cfg: np.ndarray, base: int, target: int) -> int:
    """The legal move of the group that starts at card ``base`` onto card ``target``, on top of
    a column; -1 if there is none."""
    cols = cfg[G_COLS]
    src = -1
    at = -1
    dst = -1
    for c in range(cols):
        h = np.int64(s.tab_len[0, c])
        if h > 0 and s.tab[0, c, h - 1] == target:
            dst = c
        for i in range(h):
            if s.tab[0, c, i] == base:
                src = c
                at = i
    if src < 0 or dst < 0 or src == dst:
        return -1
    a = enc_tt(cfg, src, dst, np.int64(s.tab_len[0, src]) - at)
    return a if check_move_inline(s, 0, cfg, a) == 0 else -1


@nb.njit(cache=True)
def to_sites(
    s,
    cfg: np.ndarray,
    sub: int,
    base: np.ndarray,
    target: np.ndarray,
    recs: np.ndarray,
    top: int,
) -> int:
    """Play the hops of the sites in the bit set ``sub``, in order; records to ``recs[top ..]``.
    Returns the new top, or -1 - (the records played) if one of them is not legal (then the
    sites were not independent: a solver bug, see ``hop_class``)."""
    q = 0
    while sub >> q:
        if (sub >> q) & 1:
            a = _hop(s, cfg, np.int64(base[q]), np.int64(target[q]))
            if a < 0:
                return -1 - top
            recs[top] = apply_inline(s, 0, cfg, a)
            top += 1
        q += 1
    return top


@nb.njit(cache=True)
def canonical(s, cfg: np.ndarray, recs: np.ndarray, top: int, flags: int, hs: np.ndarray) -> int:
    """Bring row 0 to its hop class's *least* member: every site's group on the lower-numbered
    of the two cards it fits on. (The sites are independent, ``hop_class``: the class holds
    every choice of twin for every site, and this one choice is the same from any member.) Then
    the safe automatic moves, and again if they played (``HOP_ITERS`` rounds at most; where the
    rounds run out the node is simply keyed as the position it is). Records to ``recs[top ..]``;
    returns the new top, or -1 - top when a hop was not legal (a bug). A class with more than
    ``HOP_SITES`` sites is left as it is: its members are nodes of their own."""
    hbuf, base, parent, target = hs_views(hs)
    for _ in range(HOP_ITERS):
        k = sites(s, cfg, hbuf, base, parent, target)
        if k == 0 or k > HOP_SITES:
            return top
        sub = 0
        for q in range(k):
            if target[q] < parent[q]:
                sub |= 1 << q
        if sub == 0:
            return top
        top = to_sites(s, cfg, sub, base, target, recs, top)
        if top < 0:
            return top
        after = autoplay(s, cfg, recs, top, flags)
        if after == top:
            return top
        top = after
    return top


@nb.njit(cache=True, inline="always")
def hs_views(hs: np.ndarray):
    """The sites' arrays in a hop scratch (``sites``): hops, bases, parents, targets."""
    return (
        hs[0:SCRATCH],
        hs[SCRATCH : SCRATCH + 64],
        hs[SCRATCH + 64 : SCRATCH + 128],
        hs[SCRATCH + 128 : SCRATCH + 192],
    )


@nb.njit(cache=True)
def gen_node(
    s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, classes, hs
) -> int:
    """A node's moves (``gen_moves``); with ``classes`` on and no restriction, those of its
    whole hop class. A member is reached from the node by hopping the sites in a set ``H``
    (``sites``; a site: a group ``g`` on a card ``p``, and ``p``'s twin ``p'`` on top of
    another column); ``H`` marks its moves (``MEMBER_SHIFT``). The node itself contributes all
    its moves but hops. Every other member's move has a counterpart from a member with one hop
    fewer that reaches the same class, unless, for each site ``q`` in ``H``, it puts something
    on ``p_q`` (which the hop uncovered) or sends ``p_q`` home. For a site ``q`` that a move does
    not so use, the counterpart in ``H - {q}`` (where ``g_q`` lies on ``p_q``, not ``p_q'``) is:

    * the same move, if it moves neither ``g_q`` (or a part of it) nor ``p_q``; a move onto the
      last card of ``g_q`` included. The children differ by the hop of ``g_q`` (with whatever
      came on it);
    * ``g_q``, or an upper part of it, moved or sent home from ``p_q`` instead of ``p_q'``
      (what stays, a lower part of ``g_q``, then lies on ``p_q``: again one hop apart);
    * a group ending at ``p_q`` moved with ``g_q`` on it, and a group running from below
      ``p_q'`` through ``g_q`` moved without ``g_q``. Then ``g_q`` hops to the other twin.

    One move puts something on one card or sends one card home, so no move qualifies for two
    sites: only the members of one hop ``{q}`` add moves, those onto ``p_q`` (on top of the
    column the hop took ``g_q`` from) and ``p_q`` home. A waste move is followed by a
    restricted node (``lazy_waste``), a position rather than a class, which the argument must
    look into:

    * after a card ``W`` goes to a column, only moves onto ``W`` are tried, and the children of
      a move and of its counterpart offer the same ones, by the same three cases;
    * after a card goes home from the waste, only foundation moves of its suit are tried, and
      each ``p_q`` in ``H`` may be the next of that suit, with no counterpart. So a member ``H``
      contributes the foundation moves from the waste of a suit when every card its hops
      uncover is of that suit. They need not be generated there: whether a waste card can go
      home does not depend on the tableau."""
    if not classes or rkind != R_NONE:
        return gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e)
    hbuf, base, parent, target = hs_views(hs)
    k = sites(s, cfg, hbuf, base, parent, target)
    if k == 0 or k > HOP_SITES:
        return gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e)
    hrec = hs[HS_RECS:]
    n = gen_moves(s, cfg, acts, out, start, sc, rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, True, -1)
    n0 = n
    for q in range(k):
        _kind, pcol, _dst, _n = decode(cfg, np.int64(hbuf[q]))  # p_q stays on top there
        top = to_sites(s, cfg, 1 << q, base, target, hrec, 0)
        if top < 0:
            undo_to(s, cfg, hrec, -1 - top, 0)
            return -1
        c = gen_moves(
            s, cfg, acts, out, start + n, sc[n:], rkind, rcol, ctl, wkc, wkj, wk_s, wk_e, True,
            1 << pcol,
        )  # fmt: skip
        undo_to(s, cfg, hrec, top, 0)
        kept = 0
        for i in range(c):
            m = out[start + n + i]
            kind, src, dst, _n = decode(cfg, np.int64(m & MOVE_MASK))
            if kind == K_TF:
                ok = src == pcol
            else:
                ok = (kind == K_TT or kind == K_WT or kind == K_FT) and dst == pcol
            if ok:
                out[start + n + kept] = m | ((1 << q) << MEMBER_SHIFT)
                sc[n + kept] = sc[n + i]
                kept += 1
        n += kept
    if lazy_waste(cfg):
        wf = cfg[L_WF]
        for sub in range(1, 1 << k):
            su = -1  # the suit of every card the hops of sub uncover; -2: not one suit
            for q in range(k):
                if (sub >> q) & 1:
                    x = suit_of(np.int64(parent[q]))
                    su = x if su == -1 or su == x else -2
            if su < 0:
                continue
            for i in range(n0):
                m = np.int64(out[start + i])
                if (m & MOVE_MASK) != wf:
                    continue
                taps = (m >> MOVE_BITS) & TAPS_MASK
                for w in range(wk_s, wk_e):
                    if wkj[w] == taps and suit_of(np.int64(wkc[w])) == su:
                        out[start + n] = m | (sub << MEMBER_SHIFT)
                        sc[n] = sc[i]
                        n += 1
                        break
    sort_moves(out, start, sc, n)  # the whole (each member's moves came sorted)
    return n
