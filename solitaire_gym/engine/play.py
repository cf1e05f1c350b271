"""Making moves: apply an action, undo it, and the per-game undo history.

:func:`apply` assumes the action is legal (ask ``rules.check_move`` first) and returns an *undo
record*, an ``int64`` that :func:`undo_record` uses to restore the exact earlier position and
score. A solver keeps these records on its own stack; :func:`play` and :func:`undo` keep them in
the batch's ring buffer (``State.hist``, depth chosen per batch, 0 for none).

The player's knowledge (``tab_unknown``, ``stock_unknown``) only grows: undo leaves it.

Record bits: 0–10 action, 11–17 card count (moves, draws and turn-overs), 18 a card was turned
face up, 19–21 foundation pile, 22–23 free cell, 32–63 the score before the action.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import (
    K_CF,
    K_CT,
    K_DRAW,
    K_FT,
    K_RECYCLE,
    K_TC,
    K_TF,
    K_TT,
    K_WF,
    K_WT,
    decode,
)
from solitaire_gym.engine.rules import first_empty_cell, foundation_for, pile_suit
from solitaire_gym.engine.scoring import new_score, score_delta
from solitaire_gym.engine.state import MOVES_MAX
from solitaire_gym.engine.variants import G_DRAW


@nb.njit(cache=True, inline="always")
def _pop_col(s, b: int, c: int) -> int:
    h = s.tab_len[b, c] - 1
    card = s.tab[b, c, h]
    s.tab[b, c, h] = -1
    s.tab_len[b, c] = h
    return card


@nb.njit(cache=True, inline="always")
def _push_col(s, b: int, c: int, card: int) -> None:
    h = s.tab_len[b, c]
    s.tab[b, c, h] = card
    s.tab_len[b, c] = h + 1


@nb.njit(cache=True, inline="always")
def _pop_waste(s, b: int) -> int:
    h = s.waste_len[b] - 1
    card = s.waste[b, h]
    s.waste[b, h] = -1
    s.waste_len[b] = h
    return card


@nb.njit(cache=True, inline="always")
def _push_waste(s, b: int, card: int) -> None:
    s.waste[b, s.waste_len[b]] = card
    s.waste_len[b] += 1


@nb.njit(cache=True, inline="always")
def _flip(s, b: int, c: int) -> bool:
    """Turn the top card of ``c`` face up if it is face down (the automatic flip)."""
    h = s.tab_len[b, c]
    if h > 0 and s.tab_down[b, c] >= h:
        s.tab_down[b, c] = h - 1
        return True
    return False


@nb.njit(cache=True, inline="always")
def _move_cards(s, b: int, src: int, dst: int, n: int) -> None:
    hs = s.tab_len[b, src] - n
    hd = s.tab_len[b, dst]
    for i in range(n):
        s.tab[b, dst, hd + i] = s.tab[b, src, hs + i]
        s.tab[b, src, hs + i] = -1
    s.tab_len[b, src] = hs
    s.tab_len[b, dst] = hd + n


@nb.njit(cache=True)
def apply(s, b: int, cfg: np.ndarray, a: int) -> np.int64:
    """Play legal action ``a`` in row ``b``; return its undo record."""
    kind, src, dst, n = decode(cfg, a)
    flipped = False
    pile = 0
    cell = 0
    count = n
    if kind == K_DRAW:
        count = min(cfg[G_DRAW], s.stock_len[b])
        for _ in range(count):
            h = s.stock_len[b] - 1
            _push_waste(s, b, s.stock[b, h])
            s.stock[b, h] = -1
            s.stock_len[b] = h
    elif kind == K_RECYCLE:
        count = s.waste_len[b]
        for i in range(count):
            s.stock[b, i] = s.waste[b, count - 1 - i]
            s.waste[b, count - 1 - i] = -1
        s.stock_len[b] = count
        s.waste_len[b] = 0
    elif kind == K_TT:
        _move_cards(s, b, src, dst, n)
        flipped = _flip(s, b, src)
    elif kind == K_TF:
        card = _pop_col(s, b, src)
        pile = foundation_for(s, b, cfg, card)
        s.found[b, pile] += 1
        flipped = _flip(s, b, src)
    elif kind == K_WT:
        _push_col(s, b, dst, _pop_waste(s, b))
    elif kind == K_WF:
        card = _pop_waste(s, b)
        pile = foundation_for(s, b, cfg, card)
        s.found[b, pile] += 1
    elif kind == K_TC:
        cell = first_empty_cell(s, b, cfg)
        s.cells[b, cell] = _pop_col(s, b, src)
        flipped = _flip(s, b, src)
    elif kind == K_CT:
        _push_col(s, b, dst, s.cells[b, src])
        s.cells[b, src] = -1
    elif kind == K_CF:
        pile = foundation_for(s, b, cfg, s.cells[b, src])
        s.found[b, pile] += 1
        s.cells[b, src] = -1
    elif kind == K_FT:
        s.found[b, src] -= 1
        _push_col(s, b, dst, pile_suit(cfg, src) * 13 + s.found[b, src])
    else:  # K_FC
        cell = first_empty_cell(s, b, cfg)
        s.found[b, src] -= 1
        s.cells[b, cell] = pile_suit(cfg, src) * 13 + s.found[b, src]
    if flipped and s.tab_unknown[b, src] > s.tab_down[b, src]:
        s.tab_unknown[b, src] = s.tab_down[b, src]
    if s.stock_unknown[b] > s.stock_len[b]:
        s.stock_unknown[b] = s.stock_len[b]
    prev = s.score[b]
    s.score[b] = new_score(cfg, prev, score_delta(cfg, kind, flipped))
    if s.moves[b] < MOVES_MAX:  # the counter stops at the largest int32 instead of wrapping
        s.moves[b] += 1
    low = (
        np.int64(a)
        | (np.int64(count) << 11)
        | (np.int64(flipped) << 18)
        | (np.int64(pile) << 19)
        | (np.int64(cell) << 22)
    )
    return (np.int64(prev) << 32) | low


@nb.njit(cache=True)
def undo_record(s, b: int, cfg: np.ndarray, rec: np.int64) -> None:
    """Restore the position and score from before the action that returned ``rec``."""
    low = rec & 0xFFFFFFFF
    a = low & 0x7FF
    count = (low >> 11) & 0x7F
    flipped = (low >> 18) & 1
    pile = (low >> 19) & 0x7
    cell = (low >> 22) & 0x3
    kind, src, dst, n = decode(cfg, a)
    if kind == K_DRAW:
        for _ in range(count):
            h = s.stock_len[b]
            s.stock[b, h] = _pop_waste(s, b)
            s.stock_len[b] = h + 1
    elif kind == K_RECYCLE:
        for i in range(count):
            s.waste[b, i] = s.stock[b, count - 1 - i]
            s.stock[b, count - 1 - i] = -1
        s.waste_len[b] = count
        s.stock_len[b] = 0
    else:
        if flipped:
            s.tab_down[b, src] += 1
        if kind == K_TT:
            _move_cards(s, b, dst, src, n)
        elif kind == K_TF:
            s.found[b, pile] -= 1
            _push_col(s, b, src, pile_suit(cfg, pile) * 13 + s.found[b, pile])
        elif kind == K_WT:
            _push_waste(s, b, _pop_col(s, b, dst))
        elif kind == K_WF:
            s.found[b, pile] -= 1
            _push_waste(s, b, pile_suit(cfg, pile) * 13 + s.found[b, pile])
        elif kind == K_TC:
            _push_col(s, b, src, s.cells[b, cell])
            s.cells[b, cell] = -1
        elif kind == K_CT:
            s.cells[b, src] = _pop_col(s, b, dst)
        elif kind == K_CF:
            s.found[b, pile] -= 1
            s.cells[b, src] = pile_suit(cfg, pile) * 13 + s.found[b, pile]
        elif kind == K_FT:
            _pop_col(s, b, dst)
            s.found[b, src] += 1
        else:  # K_FC
            s.cells[b, cell] = -1
            s.found[b, src] += 1
    s.score[b] = np.int32(rec >> 32)


@nb.njit(cache=True)
def play(s, b: int, cfg: np.ndarray, a: int) -> None:
    """Apply legal action ``a`` and keep its record in the batch's undo history."""
    rec = apply(s, b, cfg, a)
    depth = s.hist.shape[1]
    if depth > 0:
        top = s.hist_top[b]
        s.hist[b, top] = rec
        s.hist_top[b] = (top + 1) % depth
        if s.hist_len[b] < depth:
            s.hist_len[b] += 1


@nb.njit(cache=True)
def undo(s, b: int, cfg: np.ndarray) -> bool:
    """Undo the last recorded action of row ``b``; False if there is none. The move counter
    stays as it is."""
    if s.hist_len[b] == 0:
        return False
    depth = s.hist.shape[1]
    top = (s.hist_top[b] - 1 + depth) % depth
    s.hist_top[b] = top
    s.hist_len[b] -= 1
    undo_record(s, b, cfg, s.hist[b, top])
    return True
