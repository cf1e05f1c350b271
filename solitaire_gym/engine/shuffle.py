"""Dealing: SplitMix64, Fisher–Yates by rejection, and the layout of each game
(docs/rules.md, "Dealing").

The card order depends only on the game and the deal number, never on the options. All arithmetic
is on ``uint64`` so that it wraps modulo 2^64 exactly as the specification says.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.variants import (
    DOUBLE,
    G_CARDS,
    G_CELLS,
    G_COLS,
    G_GAME,
    G_VEGAS,
    SEAHAVEN,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
VEGAS_START = -104


@nb.njit(cache=True)
def splitmix64_next(state: np.ndarray) -> np.uint64:
    """Advance ``state`` (a 1-element uint64 array) and return the next output."""
    s = state[0] + _GOLDEN
    state[0] = s
    z = s
    z = (z ^ (z >> np.uint64(30))) * _MUL1
    z = (z ^ (z >> np.uint64(27))) * _MUL2
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def shuffled_deck(n: int, deal: np.uint64) -> np.ndarray:
    """Deck indices ``0 … n-1`` (copy * 52 + suit * 13 + rank) after the Fisher–Yates shuffle."""
    deck = np.arange(n).astype(np.int16)
    state = np.empty(1, np.uint64)
    state[0] = deal
    for i in range(n - 1, 0, -1):
        b = np.uint64(i + 1)
        t = (np.uint64(0) - b) % b  # (2^64 - b) mod b
        r = splitmix64_next(state)
        while r < t:
            r = splitmix64_next(state)
        j = np.int64(r % b)
        tmp = deck[i]
        deck[i] = deck[j]
        deck[j] = tmp
    return deck


@nb.njit(cache=True)
def deal_into(s, b: int, cfg: np.ndarray, deal: np.uint64) -> None:
    """Lay out deal number ``deal`` in row ``b``: a fresh game, score and counter reset."""
    n = cfg[G_CARDS]
    cols = cfg[G_COLS]
    d = shuffled_deck(n, deal)
    s.tab[b, :, :] = -1
    s.tab_len[b, :] = 0
    s.tab_down[b, :] = 0
    s.tab_unknown[b, :] = 0
    s.stock_unknown[b] = 0
    s.stock[b, :] = -1
    s.waste[b, :] = -1
    s.stock_len[b] = 0
    s.waste_len[b] = 0
    s.found[b, :] = 0
    s.cells[b, :] = -1
    s.moves[b] = 0
    s.hist_len[b] = 0
    s.hist_top[b] = 0
    s.score[b] = VEGAS_START if cfg[G_VEGAS] else 0
    k = 0
    if cfg[G_GAME] == SEAHAVEN:
        for row in range(5):
            for c in range(10):
                s.tab[b, c, row] = d[k] % 52
                k += 1
        for c in range(10):
            s.tab_len[b, c] = 5
        s.cells[b, 0] = d[50] % 52
        if cfg[G_CELLS] >= 2:
            s.cells[b, 1] = d[51] % 52
        else:
            s.tab[b, 1, 5] = d[51] % 52
            s.tab_len[b, 1] = 6
        return
    for row in range(cols):
        for c in range(row, cols):
            s.tab[b, c, row] = d[k] % 52
            k += 1
    for c in range(cols):
        s.tab_len[b, c] = c + 1
        s.tab_down[b, c] = c if cfg[G_GAME] == DOUBLE else 0
        s.tab_unknown[b, c] = s.tab_down[b, c]
    rest = n - k
    for i in range(rest):
        s.stock[b, rest - 1 - i] = d[k + i] % 52
    s.stock_len[b] = rest
    s.stock_unknown[b] = rest
