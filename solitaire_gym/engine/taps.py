"""Tap and double tap: the move the app makes when the player taps a top card.

A tap or double tap acts on the top card of a column, the waste or a free cell and always moves
that one card. Tap: its foundation move if legal. Double tap: the foundation; else the column with
the most cards that accepts it (ties: lowest number; an empty column only for a King, after every
occupied one); else, in Seahaven Towers and for a card not already in a cell, the first empty
free cell. Returns the action id, or -1 when the tap finds nothing.

``where`` is ``0 … cols-1`` for a column, ``WHERE_WASTE`` for the waste, ``WHERE_CELL + k`` for cell k.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import enc_ct, enc_tt
from solitaire_gym.engine.rules import check_move
from solitaire_gym.engine.variants import G_COLS, L_CELLS, L_CF, L_TC, L_TF, L_WF, L_WT

WHERE_WASTE = 16
WHERE_CELL = 20


@nb.njit(cache=True)
def _foundation_action(cfg: np.ndarray, where: int) -> int:
    if where == WHERE_WASTE:
        return cfg[L_WF]
    if where >= WHERE_CELL:
        return cfg[L_CF] + where - WHERE_CELL
    return cfg[L_TF] + where


@nb.njit(cache=True)
def _column_action(cfg: np.ndarray, where: int, dst: int) -> int:
    if where == WHERE_WASTE:
        return cfg[L_WT] + dst
    if where >= WHERE_CELL:
        return enc_ct(cfg, where - WHERE_CELL, dst)
    return enc_tt(cfg, where, dst, 1)


@nb.njit(cache=True)
def tap(s, b: int, cfg: np.ndarray, where: int) -> int:
    a = _foundation_action(cfg, where)
    return a if check_move(s, b, cfg, a) == 0 else -1


@nb.njit(cache=True)
def double_tap(s, b: int, cfg: np.ndarray, where: int) -> int:
    a = tap(s, b, cfg, where)
    if a >= 0:
        return a
    best = -1
    best_len = -1
    for dst in range(cfg[G_COLS]):
        if dst == where:
            continue
        h = s.tab_len[b, dst]
        if h > best_len:
            cand = _column_action(cfg, where, dst)
            if check_move(s, b, cfg, cand) == 0:
                best = cand
                best_len = h
    if best >= 0:
        return best
    if cfg[L_CELLS] and where < WHERE_WASTE:
        a = cfg[L_TC] + where
        if check_move(s, b, cfg, a) == 0:
            return a
    return -1
