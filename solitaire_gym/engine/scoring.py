"""The apps' scoring tables (docs/rules.md, each game's "Scoring"), and the score's text.

============================================  ======  =======  ==========  ========
action                                        DS Nrm  DS Vgs   Réfléchi    Seahaven
============================================  ======  =======  ==========  ========
card to a foundation (column, waste, cell)    +10     +5 $     +10         +10
card from the waste to a column               +5      0        +5          —
face-down card turned over (beside the move)  +5      0        (never)     —
waste turned back into the stock             −100    (never)  −100        —
card from a free cell to a column             —       —        —           +5
anything else (column to column, take-backs)  0       0        0           0
============================================  ======  =======  ==========  ========

Floor at 0 except in Vegas, which starts at −104 $ and has no floor. The score is kept in an
``int32`` (``state.py``); it stops at :data:`SCORE_MAX` instead of wrapping around, which only a
position played for hundreds of millions of moves could reach.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import K_CF, K_CT, K_RECYCLE, K_TF, K_WF, K_WT
from solitaire_gym.engine.variants import G_VEGAS

TO_FOUNDATION = 10
TO_FOUNDATION_VEGAS = 5
WASTE_TO_COLUMN = 5
CELL_TO_COLUMN = 5
FLIP = 5
RECYCLE = -100
SCORE_MAX = 2**31 - 1  # the largest int32: the score stays there rather than wrapping around


@nb.njit(cache=True)
def score_delta(cfg: np.ndarray, kind: int, flipped: bool) -> int:
    """Points (dollars in Vegas) that an action of ``kind`` earns before the floor."""
    vegas = cfg[G_VEGAS] != 0
    if kind == K_TF or kind == K_WF or kind == K_CF:
        d = TO_FOUNDATION_VEGAS if vegas else TO_FOUNDATION
    elif vegas:
        return 0
    elif kind == K_WT:
        d = WASTE_TO_COLUMN
    elif kind == K_CT:
        d = CELL_TO_COLUMN
    elif kind == K_RECYCLE:
        d = RECYCLE
    else:
        d = 0
    if flipped and not vegas:
        d += FLIP
    return d


@nb.njit(cache=True)
def new_score(cfg: np.ndarray, score: int, delta: int) -> int:
    s = np.int64(score) + delta
    if cfg[G_VEGAS] == 0 and s < 0:
        return 0
    if s > SCORE_MAX:
        return SCORE_MAX
    return s


def score_text(score: int, vegas: bool) -> str:
    """The app's display: ``1220``; Vegas ``$416``, ``$0``, ``-$104``."""
    if not vegas:
        return str(score)
    return f"-${-score}" if score < 0 else f"${score}"
