"""The engine's kernels as the solver plays them: compiled into its loops, on borrowed views.

The search works on views that own nothing (``engine/borrow.py``): counting references to the
state and the arrays, atomically, at every call and field read was about half of its time. So the
engine's own kernels (``play.apply``, ``play.undo_record``, ``rules.check_move``,
``rules.is_won``) are compiled into the solver's loops instead of called: a call passes the state
struct, whose reference count each call takes up and puts down atomically. The code is the
engine's own: only the way it is called differs.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.play import apply, undo_record
from solitaire_gym.engine.rules import check_move, is_won

apply_inline = nb.njit(inline="always")(apply.py_func)
undo_inline = nb.njit(inline="always")(undo_record.py_func)
check_move_inline = nb.njit(inline="always")(check_move.py_func)
is_won_inline = nb.njit(inline="always")(is_won.py_func)


@nb.njit(cache=True)
def undo_to(s, cfg: np.ndarray, recs: np.ndarray, top: int, r0: int) -> None:
    """Take back the records ``recs[r0 .. top-1]``, last first."""
    for r in range(top - 1, r0 - 1, -1):
        undo_inline(s, 0, cfg, recs[r])
