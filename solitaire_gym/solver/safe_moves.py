"""Safe automatic moves: foundation moves played without branching.

After every move, foundation moves that provably cannot turn a winnable position into a lost one
are played without branching (they are still moves of the solution):

* Seahaven Towers: any legal foundation move (building is by suit, so the only card that could
  ever lie on the card is the one below it in its suit, already on the foundation);
* Solitaire Réfléchi: a card of rank ``r`` from a column, or from the waste with draw 1, when both
  opposite-colour foundations hold rank ``r−1`` and the other same-colour foundation ``r−2``.
  Every card that could ever be built on it, directly or in a chain, is then on a foundation, so a
  solution that uses the card on the board can be replayed without it; that holds even with
  take-backs from the foundations. Not from the waste with draw 3: removing a waste card shifts
  the groups of three for the rest of the game;
* Double Solitaire: the same with both copies (all four opposite-colour piles at ``r−1`` or more,
  both piles of the other same-colour suit at ``r−2``, and the card's own suit's other pile
  already past ``r``, i.e. the second copy); any Ace.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import K_CF, K_TF, K_WF
from solitaire_gym.engine.rules import check_parts, foundation_for
from solitaire_gym.engine.variants import (
    G_CELLS,
    G_COLS,
    G_DRAW,
    G_GAME,
    L_CF,
    L_STOCK,
    L_TF,
    L_WF,
    REFLECHI,
    SEAHAVEN,
)
from solitaire_gym.solver.inline import apply_inline, is_won_inline
from solitaire_gym.solver.layout import FL_NO_AUTO


@nb.njit(cache=True, inline="always")
def _safe(s, cfg: np.ndarray, card: int) -> bool:
    """May ``card`` (whose foundation move is legal) be played there without branching?
    See the module docstring for why each condition suffices."""
    game = cfg[G_GAME]
    if game == SEAHAVEN:
        return True
    r = card % 13  # 0 = Ace
    su = card // 13
    red = su == 1 or su == 2
    if game == REFLECHI:
        for p in range(4):
            if p == su:
                continue
            need = r if (p == 1 or p == 2) != red else r - 1
            if s.found[0, p] < need:
                return False
        return True
    if r == 0:
        return True
    for p in range(8):
        ps = p // 2
        if ps == su:
            continue
        need = r if (ps == 1 or ps == 2) != red else r - 1
        if s.found[0, p] < need:
            return False
    return max(s.found[0, 2 * su], s.found[0, 2 * su + 1]) >= r + 1


@nb.njit(cache=True, inline="always")
def find_safe(s, cfg: np.ndarray) -> int:
    """A safe automatic foundation move of row 0 (action id), or -1."""
    for c in range(cfg[G_COLS]):
        h = s.tab_len[0, c]
        if h == 0:
            continue
        card = np.int64(s.tab[0, c, h - 1])
        if (
            foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_TF, c, 0, 1) == 0
        ):
            return cfg[L_TF] + c
    for k in range(cfg[G_CELLS]):
        card = np.int64(s.cells[0, k])
        if (
            card >= 0
            and foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_CF, k, 0, 1) == 0
        ):
            return cfg[L_CF] + k
    if cfg[L_STOCK] and cfg[G_DRAW] == 1 and s.waste_len[0] > 0:
        card = np.int64(s.waste[0, s.waste_len[0] - 1])
        if (
            foundation_for(s, 0, cfg, card) >= 0
            and _safe(s, cfg, card)
            and check_parts(s, 0, cfg, K_WF, 0, 0, 1) == 0
        ):
            return cfg[L_WF]
    return -1


@nb.njit(cache=True)
def autoplay(s, cfg: np.ndarray, recs: np.ndarray, top: int, flags: int) -> int:
    """Play safe foundation moves until none is left; their records go to ``recs[top ..]``.
    Returns the new top."""
    while not (flags & FL_NO_AUTO) and not is_won_inline(s, 0, cfg):
        a = find_safe(s, cfg)
        if a < 0:
            break
        recs[top] = apply_inline(s, 0, cfg, a)
        top += 1
    return top
