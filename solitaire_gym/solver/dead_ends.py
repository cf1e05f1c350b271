"""Dead ends: positions proven lost without search, because some cards can never move.

In Solitaire Réfléchi a new position is tested before it is expanded: when some column bottoms
provably can never be taken apart (``dead_end``: the cards they could move onto stay buried, and
the foundation of the top card lacks a lower card of its suit that lies frozen too), no play wins
from it and it is marked proven lost at once. Many deals are lost at the root that way, and many
lost subtrees are cut short. The root gets the strong form of the test (a card in the stock, the
waste or on a foundation reaches a column only onto a card it fits on, so it stays out of reach
when those do): it costs more, and decides a few more deals at the root only.

In Double Solitaire with Vegas scoring (``dead_end_double``) the same argument covers both copies
of each card, face-down cards, and the waste, which the single pass makes a pile that is only ever
taken from the top and never built on: a waste card with nowhere to go holds every card under it.
New positions are tested there too, after a stock macro as well (its taps add to the waste for
good); then the rest of the single pass is played in a relaxed game (``single_pass.py``).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.cards import KING, rank_of, suit_of
from solitaire_gym.engine.rules import fits_on
from solitaire_gym.engine.variants import DOUBLE, G_COLS, G_GAME, G_VEGAS, REFLECHI
from solitaire_gym.solver.layout import FL_NO_PASS
from solitaire_gym.solver.single_pass import single_pass_lost


@nb.njit(cache=True, inline="always")
def _held(loc: np.ndarray, fh: np.ndarray, c: int, i: int, card: int, bound: bool) -> bool:
    """Does ``card`` stay where it is until ``c[0 .. i]`` changes: in ``c[0 .. i]``, or under a
    frozen card of another column (``bound``: under any card of another column)?"""
    lc = loc[card]
    if lc < 0:
        return False
    d = lc >> 6
    if d == c:
        return (lc & 63) <= i
    return bound or (lc & 63) + 1 < fh[d]


@nb.njit(cache=True)
def _unreachable(
    cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, i: int, t: int, bound: bool
) -> bool:
    """The strong test's view of a card ``t`` that a card of ``c[0 .. i]`` fits on: can ``t``
    never be the top card of a column other than ``c`` before ``c[0 .. i]`` changes? On a
    column: if it is held (``_held``). In the stock, the waste or on a foundation: if it is not a
    King and every card it fits on is held (it can come to a column only onto one of those; onto
    ``c[i]`` itself it is no use to ``c[0 .. i]``, and it leaves ``c`` only onto a card it fits
    on)."""
    if loc[t] >= 0:
        return _held(loc, fh, c, i, t, bound)
    if rank_of(t) == KING:
        return False
    for p_su in range(4):
        p = p_su * 13 + rank_of(t) + 1
        if not fits_on(cfg, t, p):
            continue
        if not _held(loc, fh, c, i, p, bound):
            return False
    return True


@nb.njit(cache=True)
def _stays(
    s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, lo: int, i: int, strong: bool
) -> bool:
    """Can the cards ``c[0 .. i]`` never change, given that the bottom ``fh[d]`` cards of every
    column ``d`` never change (see ``dead_end``)? ``c[lo .. i]`` is the ordered group ending at
    height ``i``."""
    for q in range(lo, i + 1):
        b = np.int64(s.tab[0, c, q])
        rb = rank_of(b)
        if rb == KING:  # a King may go to an empty column
            return False
        for t_su in range(4):  # the cards it could go onto must stay covered
            t = t_su * 13 + rb + 1
            if not fits_on(cfg, b, t):
                continue
            if strong:
                if not _unreachable(cfg, loc, fh, c, i, t, False):
                    return False
                continue
            lt = loc[t]
            if lt < 0:  # stock, waste or foundation: may come within reach
                return False
            d = lt >> 6
            if d == c:
                if (lt & 63) > i:  # above: it leaves the column first, and may take the card
                    return False
            elif (lt & 63) + 1 >= fh[d]:
                return False
        if q == i:  # the top card: its foundation must lack a lower card of its suit for good
            su = suit_of(b)
            held = False
            for rz in range(rb):
                lz = loc[su * 13 + rz]
                if lz >= 0:
                    d = lz >> 6
                    if (d == c and (lz & 63) < i) or (d != c and (lz & 63) < fh[d]):
                        held = True
                        break
            if not held:
                return False
    return True


@nb.njit(cache=True)
def _quick_height(s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, strong: bool) -> int:
    """``dead_end``'s quick bound for column ``c``: the highest prefix whose group could pass at
    all (no King, nothing it fits on in the stock, the waste, a foundation or above it, a lower
    card of the top card's suit somewhere under it or in another column); 0 if none. An upper
    bound on the height of ``c`` in any set of frozen prefixes (it reads no other column's)."""
    n = np.int64(s.tab_len[0, c])
    h = 0
    run_ok = False
    for i in range(n):
        b = np.int64(s.tab[0, c, i])
        pinned = rank_of(b) != KING
        if pinned:
            for t_su in range(4):
                t = t_su * 13 + rank_of(b) + 1
                if fits_on(cfg, b, t):
                    if strong:
                        if not _unreachable(cfg, loc, fh, c, i, t, True):
                            pinned = False
                            break
                        continue
                    lt = loc[t]
                    if lt < 0 or (lt >> 6 == c and (lt & 63) > i):
                        pinned = False
                        break
        if i == 0 or not fits_on(cfg, b, np.int64(s.tab[0, c, i - 1])):
            run_ok = pinned
        else:
            run_ok = run_ok and pinned
        if run_ok:
            su = suit_of(b)
            for rz in range(rank_of(b)):
                lz = loc[su * 13 + rz]
                if lz >= 0 and not (lz >> 6 == c and (lz & 63) > i):
                    h = i + 1
                    break
    return h


@nb.njit(cache=True)
def dead_end(
    s, cfg: np.ndarray, loc: np.ndarray, strong: bool = False, flags: int = 0, gained: int = -1
) -> bool:
    """Solitaire Réfléchi: is row 0 provably lost because some column bottoms can never be taken
    apart? ``loc``: scratch of ``TMP_SIZE`` entries. (Double Solitaire with Vegas scoring:
    ``dead_end_double``, then ``single_pass_lost`` unless ``flags`` has ``FL_NO_PASS``.)

    Say the bottom ``fh[c]`` cards of each column ``c`` are *frozen*, and test that assumption
    prefix by prefix. The cards ``c[0 .. i]`` stay where they are until a move takes some
    ``c[q]`` off with everything on it, and ``q`` lies in the ordered group ``c[L .. i]`` that
    ends at height ``i`` (a group starting lower is not ordered). That move is impossible if, for
    every such ``q``: ``c[q]`` is not a King (an empty column would take it; Réfléchi has no
    free cells); every card it fits on (``fits_on``) is in ``c[0 .. i]`` (it stays there) or lies
    under a frozen card of another column (never uncovered; a card above ``c[i]``, in the stock,
    the waste or on a foundation may come within reach); and, for the top ``q = i``, a lower card
    of its own suit lies under it in ``c`` or is frozen elsewhere (its foundation pile cannot
    reach it). Each column keeps its highest prefix that passes (the shorter ones cannot change
    either), or none, and the test is repeated until nothing changes. The prefixes left frozen
    justify each other: the earliest change to any of them would need an earlier change to one
    of them. So a frozen card never moves, never reaches its foundation, and no play wins. This
    concludes something about the position only: no move is left out of a position that can
    still be won. (Checked against every position along the 1777 solutions of the solvability
    study, and by the reference search on random positions, see the tests.)

    ``strong``: a card ``t`` that ``c[q]`` fits on and that lies in the stock, the waste or on a
    foundation does not count as within reach when it is not a King and every card ``t`` fits on
    is held as above (``_unreachable``): ``t`` comes to a column only onto one of those (or onto
    ``c[i]`` itself, above ``c[q]``, and it leaves ``c`` again only onto one of those). Costlier;
    the search uses it at the root, where it decides some deals the plain test leaves open.

    ``gained`` (Réfléchi, plain test only): a bit mask of the columns that gained cards since a
    position that the plain test found no dead end in, all the other columns being what they were
    or shorter (cards gone to other columns or home), the other cards anywhere. A set of frozen
    prefixes in none of the ``gained`` columns would have been one there too: where a card is
    counts only as in a frozen prefix, or above or under one, and those did not change. So only
    a set with a gained column can be new: if no gained column passes the quick bound, the answer
    is no, without bounding the other columns. (The search passes the columns its move built on;
    the tests compare this with the whole test along random games.)"""
    if cfg[G_GAME] == DOUBLE:
        if dead_end_double(s, cfg, loc):
            return True
        return not (flags & FL_NO_PASS) and single_pass_lost(s, cfg, loc)
    if cfg[G_GAME] != REFLECHI:
        return False
    cols = cfg[G_COLS]
    fh = loc[52 : 52 + cols]
    for k in range(52):
        loc[k] = -1
    for c in range(cols):
        n = np.int64(s.tab_len[0, c])
        for i in range(n):
            loc[np.int64(s.tab[0, c, i])] = c * 64 + i
    # First the quick bound of each column (``_quick_height``). Most positions stop here.
    if strong:
        gained = -1
    fh[:] = 0
    for c in range(cols):
        if (gained >> c) & 1:
            fh[c] = _quick_height(s, cfg, loc, fh, c, strong)
    if fh.max() == 0:
        return False
    for c in range(cols):
        if not (gained >> c) & 1:
            fh[c] = _quick_height(s, cfg, loc, fh, c, strong)
    changed = True
    while changed:
        changed = False
        for c in range(cols):
            h = fh[c]
            for i in range(h - 1, -2, -1):  # the highest prefix that stays, if any
                if i < 0:
                    fh[c] = 0
                    break
                lo = i
                while lo > 0 and fits_on(
                    cfg, np.int64(s.tab[0, c, lo]), np.int64(s.tab[0, c, lo - 1])
                ):
                    lo -= 1
                if _stays(s, cfg, loc, fh, c, lo, i, strong):
                    fh[c] = i + 1
                    break
            if fh[c] != h:
                changed = True
    return fh.max() > 0


# ---- dead ends in Double Solitaire with Vegas scoring --------------------------------------------
#
# The same argument as ``dead_end``, for two copies of every card, face-down cards and the waste of
# a single pass. A *place* is a column or, with Vegas scoring, the waste (pseudo-column ``cols``):
# the waste is only ever taken from the top and is never built on, so its bottom cards stay until
# every card above them has left. Locations: ``place << 7 | height``.


@nb.njit(cache=True, inline="always")
def _ds_card(s, cols: int, d: int, q: int) -> int:
    if d == cols:
        return np.int64(s.waste[0, q])
    return np.int64(s.tab[0, d, q])


@nb.njit(cache=True, inline="always")
def _ds_kept(at: int, fh: np.ndarray, cols: int, c: int, i: int, covered: bool) -> bool:
    """Does the copy at location ``at`` stay where it is until ``c[0 .. i]`` changes? In
    ``c[0 .. i]`` (strictly under ``c[i]`` unless ``covered``), in the frozen part of the waste,
    or in the frozen part of another column (``covered``: under a frozen card, so that it never
    becomes a column top)."""
    if at < 0:
        return False
    d = at >> 7
    p = at & 127
    if d == c:
        return p <= i if covered else p < i
    if d == cols:
        return p < fh[d]
    return p + 1 < fh[d] if covered else p < fh[d]


@nb.njit(cache=True, inline="always")
def _ds_held(
    loc: np.ndarray, fh: np.ndarray, cols: int, c: int, i: int, card: int, covered: bool
) -> bool:
    """Both copies of ``card`` stay (``_ds_kept``); a copy in the stock or on a foundation never
    counts as held."""
    return _ds_kept(loc[card], fh, cols, c, i, covered) and _ds_kept(
        loc[52 + card], fh, cols, c, i, covered
    )


@nb.njit(cache=True)
def _ds_stays(s, cfg: np.ndarray, loc: np.ndarray, fh: np.ndarray, c: int, i: int) -> bool:
    """Can the cards ``c[0 .. i]`` of place ``c`` never change, given the frozen heights ``fh``?
    Only the cards of the group that ends at ``c[i]`` can leave first: ``c[i]`` alone in the waste
    or when face down, else the face-up ordered group under it. None of them may have a card to
    go onto (a King: an empty column), and ``c[i]`` none of its foundations."""
    cols = cfg[G_COLS]
    lo = i
    if c < cols and i >= s.tab_down[0, c]:
        down = np.int64(s.tab_down[0, c])
        while lo > down and fits_on(cfg, np.int64(s.tab[0, c, lo]), np.int64(s.tab[0, c, lo - 1])):
            lo -= 1
    for q in range(lo, i + 1):
        b = _ds_card(s, cols, c, q)
        rb = rank_of(b)
        if rb == KING:
            return False
        for t_su in range(4):
            t = t_su * 13 + rb + 1
            if fits_on(cfg, b, t) and not _ds_held(loc, fh, cols, c, i, t, True):
                return False
    b = _ds_card(s, cols, c, i)
    su = suit_of(b)
    held = False
    for rz in range(rank_of(b)):  # a lower card of its suit that never goes up: neither copy
        if _ds_held(loc, fh, cols, c, i, su * 13 + rz, False):
            held = True
            break
    return held


@nb.njit(cache=True)
def dead_end_double(s, cfg: np.ndarray, loc: np.ndarray) -> bool:
    """Double Solitaire with Vegas scoring: is row 0 provably lost because some cards can never
    move? ``loc``: scratch (at least 104 + columns + 1 entries).

    ``dead_end``'s argument, place by place (the columns, and the waste, which the single pass
    makes a pile that is only ever taken from the top and never built on): say the bottom
    ``fh[d]`` cards of every place are frozen, and keep the highest prefix of each place whose
    group (``_ds_stays``) cannot leave given the others; repeat until nothing changes, starting
    from every card frozen (so the result is the largest set of frozen prefixes that justify each
    other). A card counts as a place to go only if it can become a column top: both copies of it
    must lie under a frozen card of another column, in the frozen waste, or in ``c[0 .. i]``; for
    the foundation, both copies of a lower card of the suit must be frozen (no pile ever reaches
    it). Any frozen card then never reaches its foundation: no play wins."""
    if cfg[G_GAME] != DOUBLE or not cfg[G_VEGAS]:
        return False
    cols = cfg[G_COLS]
    fh = loc[104 : 104 + cols + 1]
    for k in range(104):
        loc[k] = -1
    any_cand = False
    for d in range(cols + 1):
        n = np.int64(s.waste_len[0]) if d == cols else np.int64(s.tab_len[0, d])
        fh[d] = n
        for q in range(n):
            card = _ds_card(s, cols, d, q)
            slot = card if loc[card] < 0 else 52 + card
            loc[slot] = (d << 7) | q
    # Quick bound: the top card of a frozen prefix is no King and has both copies of each card
    # it fits on on the board or in the waste. Most positions have no such card.
    for d in range(cols + 1):
        for q in range(np.int64(fh[d])):
            b = _ds_card(s, cols, d, q)
            rb = rank_of(b)
            if rb == KING:
                continue
            ok = True
            for t_su in range(4):
                t = t_su * 13 + rb + 1
                if fits_on(cfg, b, t) and (loc[t] < 0 or loc[52 + t] < 0):
                    ok = False
                    break
            if ok:
                any_cand = True
                break
        if any_cand:
            break
    if not any_cand:
        return False
    changed = True
    while changed:
        changed = False
        for d in range(cols + 1):
            h = np.int64(fh[d])
            nh = 0
            for i in range(h - 1, -1, -1):
                if _ds_stays(s, cfg, loc, fh, d, i):
                    nh = i + 1
                    break
            if nh != h:
                fh[d] = nh
                changed = True
    return fh.max() > 0
