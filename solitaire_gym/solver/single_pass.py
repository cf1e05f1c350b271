"""The Vegas bound: what the rest of the stock allows at most (Double Solitaire, Vegas scoring).

With Vegas scoring the stock is dealt once. ``dead_end`` (``dead_ends.py``) plays the rest of that
single pass in a relaxed game that can do everything the real one can and more
(``single_pass_lost``): if even that game ends the stock with a card off the foundations, no play
wins and the position is lost. It looks at the order of the cards still to come, which the
frozen-prefix tests, looking at the cards in view, do not.

The relaxed game is played forward to the end of the stock. Each card is in one of: a column (in
its original order, gone from the top only), the waste (a pile taken from the top only), the
stock (drawn in order, ``draw`` at a time), *placed* (anywhere on the board, never in the way) or
home. Relaxed: a card leaves its column or the waste when it can go home, or when some copy of a
card it fits on has ever been face up, placed or home (capacity, cover and the card's place are
ignored; a King needs only that some column has ever been empty); a placed card goes home
whenever its foundation takes it. Every such step only adds possibilities, so playing them all
before each draw gives the most any play can reach: if even that leaves a card off the
foundations when the stock is spent, no play wins.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.cards import KING, rank_of
from solitaire_gym.engine.rules import fits_on
from solitaire_gym.engine.variants import DOUBLE, G_COLS, G_DRAW, G_GAME, G_PILES, G_VEGAS
from solitaire_gym.solver.layout import W_AVAIL, W_FREE, W_HOME, W_PTR, W_REV, W_WASTE


@nb.njit(cache=True, inline="always")
def _home_takes(home: np.ndarray, card: int) -> bool:
    """Does some foundation pile take ``card``? (Two piles per suit, each built up from the Ace:
    as many piles end just under ``card`` as there are copies of the card below it home beyond
    the copies of ``card`` itself.)"""
    r = rank_of(card)
    if r == 0:
        return home[card] < 2
    return home[card - 1] > home[card]


@nb.njit(cache=True, inline="always")
def _some_place(cfg: np.ndarray, avail: np.ndarray, card: int, empty_ever: bool) -> bool:
    r = rank_of(card)
    if r == KING:
        return empty_ever
    for su in range(4):
        t = su * 13 + r + 1
        if avail[t] > 0 and fits_on(cfg, card, t):
            return True
    return False


@nb.njit(cache=True, inline="always")
def _leave(
    cfg: np.ndarray,
    home: np.ndarray,
    avail: np.ndarray,
    free: np.ndarray,
    card: int,
    empty_ever: bool,
) -> int:
    """A card on top of its column or of the waste, in the relaxed game: 1 if it goes home, 0 if
    it is placed on the board, -1 if it stays."""
    if _home_takes(home, card):
        home[card] += 1
        return 1
    if _some_place(cfg, avail, card, empty_ever):
        free[card] += 1
        return 0
    return -1


@nb.njit(cache=True)
def single_pass_lost(s, cfg: np.ndarray, w: np.ndarray) -> bool:
    """Double Solitaire with Vegas scoring: does row 0 leave a card off the foundations even in
    the relaxed game (module docstring), however the rest of the stock is played? ``w``: scratch of
    ``TMP_SIZE`` entries (uses ``W_HOME`` onwards)."""
    if cfg[G_GAME] != DOUBLE or not cfg[G_VEGAS]:
        return False
    cols = cfg[G_COLS]
    home = w[W_HOME : W_HOME + 52]
    avail = w[W_AVAIL : W_AVAIL + 52]
    free = w[W_FREE : W_FREE + 52]
    ptr = w[W_PTR : W_PTR + cols]
    rev = w[W_REV : W_REV + cols]
    wst = w[W_WASTE : W_WASTE + 104]
    for k in range(52):
        home[k] = 0
        avail[k] = 0
        free[k] = 0
    total = 0
    for p in range(cfg[G_PILES]):
        su = p // 2
        for r in range(np.int64(s.found[0, p])):
            home[su * 13 + r] += 1
            avail[su * 13 + r] += 1
            total += 1
    empty_ever = False
    for c in range(cols):
        n = np.int64(s.tab_len[0, c])
        ptr[c] = n
        rev[c] = np.int64(s.tab_down[0, c])
        if n == 0:
            empty_ever = True
        for q in range(rev[c], n):
            avail[np.int64(s.tab[0, c, q])] += 1
    wl = np.int64(s.waste_len[0])
    for q in range(wl):
        wst[q] = s.waste[0, q]
    si = np.int64(s.stock_len[0])
    draw = cfg[G_DRAW]
    while True:
        changed = True
        while changed:
            changed = False
            for card in range(52):
                while free[card] > 0 and _home_takes(home, card):
                    free[card] -= 1
                    home[card] += 1
                    total += 1
                    changed = True
            for c in range(cols):
                while ptr[c] > 0:
                    q = ptr[c] - 1
                    card = np.int64(s.tab[0, c, q])
                    if q < rev[c]:  # turned over
                        rev[c] = q
                        avail[card] += 1
                        changed = True
                    went = _leave(cfg, home, avail, free, card, empty_ever)
                    if went < 0:
                        break
                    total += went
                    ptr[c] = q
                    changed = True
                if ptr[c] == 0 and not empty_ever:
                    empty_ever = True
                    changed = True
            while wl > 0:
                card = wst[wl - 1]
                went = _leave(cfg, home, avail, free, card, empty_ever)
                if went < 0:
                    break
                total += went
                avail[card] += 1
                wl -= 1
                changed = True
        if total == 104:
            return False
        if si == 0:
            return True
        for _ in range(draw):
            if si > 0:
                si -= 1
                wst[wl] = s.stock[0, si]
                wl += 1
