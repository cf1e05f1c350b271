"""The observation: the player's information state as a fixed-size float32 vector.

Two blocks, for ``N`` = 52 · copies cards (104 in Double Solitaire):

**Card block** ``(N, 20)``, row ``face · copies + k`` for the ``k``-th copy of card face
``face = suit · 13 + rank`` (suits ♠ ♥ ♦ ♣, ranks A … K). Copies of one face are ordered by where
they lie (columns t1 … t10, foundations, waste, stock, cells), unseen copies last.

======  ==============================================================
column  meaning
======  ==============================================================
0–9     lies in column t1 … t10
10      lies on a foundation
11      lies in the waste
12      lies in the stock, and the player has seen it there (a card drawn before and turned
        back with the waste, or put back by an undo)
13–16   lies in free cell c1 … c4
17      **unseen**: the player has never seen this copy (face down, or in the stock before its
        first draw). Nothing else in the row is set.
18      cards lying above it in its column, waste or stock, / 32
19      it is face down (seen before, turned back by an undo)
======  ==============================================================

**Pile block** (36 values): column lengths / 32 (10), face-down counts / 32 (10), foundation
heights / 13 (8; unused piles 0), stock size / N, unseen stock cards / N, waste size / N,
free cell empty and in play (4), empty columns / 10.

An observation never reveals a card the player has not seen: two positions that differ only in
where the unseen cards lie give the same vector (tested).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.bits import bit, pop_lowest
from solitaire_gym.engine.rules import pile_suit
from solitaire_gym.engine.variants import G_CARDS, G_CELLS, G_COLS, G_DECKS, G_PILES

CARD_FEATURES = 20
PILE_FEATURES = 36
F_FOUND = 10
F_WASTE = 11
F_STOCK = 12
F_CELL = 13
F_UNSEEN = 17
F_DEPTH = 18
F_DOWN = 19
DEPTH_SCALE = 32.0
ALL_FACES = np.uint64((1 << 52) - 1)


def obs_size(n_cards: int) -> int:
    return n_cards * CARD_FEATURES + PILE_FEATURES


@nb.njit(cache=True, inline="always")
def _row(seen0: np.uint64, seen1: np.uint64, decks: int, face: int):
    """Feature offset of the next copy of ``face``, and the updated masks of faces seen once and
    twice (bit masks rather than a count array: no allocation per observation)."""
    f = bit(face)
    again = (seen0 >> np.uint64(face)) & np.uint64(1)  # 1 when a copy was met before: no branch
    r = (face * decks + np.int64(again)) * CARD_FEATURES
    return r, seen0 | f, seen1 | (f & (np.uint64(0) - again))


@nb.njit(cache=True)
def observe(s, b: int, cfg: np.ndarray, out: np.ndarray) -> None:
    """Write row ``b``'s observation into ``out`` (1-D float32 of ``obs_size``)."""
    # The state's arrays are read through locals: after every store into ``out`` the compiler
    # would otherwise reload each array's address from the state object (~15% of the time).
    tab = s.tab
    tab_len = s.tab_len
    tab_down = s.tab_down
    tab_unknown = s.tab_unknown
    found = s.found
    waste = s.waste
    stock = s.stock
    cells = s.cells
    out[:] = 0.0
    decks = cfg[G_DECKS]
    n = cfg[G_CARDS]
    seen0 = np.uint64(0)
    seen1 = np.uint64(0)
    # Loop bounds and the face-down count are read once: the compiler cannot tell that the
    # stores into ``out`` leave the state alone, so it would read them again after each store.
    for c in range(cfg[G_COLS]):
        h = np.int64(tab_len[b, c])
        down = np.int64(tab_down[b, c])
        for i in range(np.int64(tab_unknown[b, c]), h):
            r, seen0, seen1 = _row(seen0, seen1, decks, tab[b, c, i])
            out[r + c] = 1.0
            out[r + F_DEPTH] = (h - 1 - i) / DEPTH_SCALE
            out[r + F_DOWN] = i < down  # no branch: which cards are down is random
    for p in range(cfg[G_PILES]):
        first = pile_suit(cfg, p) * 13
        for face in range(first, first + np.int64(found[b, p])):
            r, seen0, seen1 = _row(seen0, seen1, decks, face)
            out[r + F_FOUND] = 1.0
    w = s.waste_len[b]
    for i in range(w):
        r, seen0, seen1 = _row(seen0, seen1, decks, waste[b, i])
        out[r + F_WASTE] = 1.0
        out[r + F_DEPTH] = (w - 1 - i) / DEPTH_SCALE
    sl = s.stock_len[b]
    for i in range(s.stock_unknown[b], sl):
        r, seen0, seen1 = _row(seen0, seen1, decks, stock[b, i])
        out[r + F_STOCK] = 1.0
        out[r + F_DEPTH] = (sl - 1 - i) / DEPTH_SCALE
    for k in range(cfg[G_CELLS]):
        if cells[b, k] >= 0:
            r, seen0, seen1 = _row(seen0, seen1, decks, cells[b, k])
            out[r + F_CELL + k] = 1.0
    # Only the unseen copies are written (the rest are 0 already): their faces are the bits not
    # set in the masks of faces seen once and twice, taken lowest first.
    unseen = ~seen0 & ALL_FACES
    while unseen:
        face, unseen = pop_lowest(unseen)
        out[face * decks * CARD_FEATURES + F_UNSEEN] = 1.0
    unseen = ~seen1 & ALL_FACES if decks == 2 else np.uint64(0)
    while unseen:
        face, unseen = pop_lowest(unseen)
        out[(face * 2 + 1) * CARD_FEATURES + F_UNSEEN] = 1.0
    # Pile block, without a branch or a division.
    base = n * CARD_FEATURES
    empty = 0
    for c in range(cfg[G_COLS]):
        out[base + c] = tab_len[b, c] * (1.0 / DEPTH_SCALE)
        out[base + 10 + c] = tab_down[b, c] * (1.0 / DEPTH_SCALE)
        empty += tab_len[b, c] == 0
    for p in range(cfg[G_PILES]):
        out[base + 20 + p] = found[b, p] * (1.0 / 13.0)
    per_card = 1.0 / n
    out[base + 28] = sl * per_card
    out[base + 29] = s.stock_unknown[b] * per_card
    out[base + 30] = w * per_card
    for k in range(cfg[G_CELLS]):
        out[base + 31 + k] = cells[b, k] < 0
    out[base + 35] = empty * 0.1
