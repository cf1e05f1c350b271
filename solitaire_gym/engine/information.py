"""What the player has not seen, and deals consistent with what it has seen (determinizations).

The engine's state records the player's knowledge (``engine/state.py``): the lowest
``tab_unknown[b, c]`` cards of column ``c`` and the lowest ``stock_unknown[b]`` cards of the stock
have never been seen. Everything else (the cards' places, the counts of unseen cards per pile, the
set of unseen cards, since every other card is visible) is the player's information.

:func:`redeal_unseen` deals the unseen cards of some games anew into the unseen places: the
cards are first sorted, then placed in an order drawn from the caller's generator. The result
depends only on what the player has seen and on the generator, never on where the unseen cards
really lay: a search that simulates on such copies is blind to the hidden cards. With no
generator the cards go back sorted (one canonical position per information state). Seahaven
Towers hides nothing; its games are left as they are.

:func:`copy_rows` copies games between two batches of the same variant.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.batch import checked_rows
from solitaire_gym.engine.state import FIELDS, State
from solitaire_gym.errors import ArgumentError

HISTORY = ("hist", "hist_len", "hist_top")  # the undo record: copied only between equal depths


@nb.njit(cache=True)
def _redeal(s, rows, keys):
    buf = np.empty(s.stock.shape[1], np.int8)
    for i in range(rows.size):
        b = rows[i]
        n = 0
        for c in range(s.tab_len.shape[1]):
            for k in range(s.tab_unknown[b, c]):
                buf[n] = s.tab[b, c, k]
                n += 1
        for k in range(s.stock_unknown[b]):
            buf[n] = s.stock[b, k]
            n += 1
        if n < 2:
            continue
        cards = np.sort(buf[:n])
        order = np.argsort(keys[i, :n], kind="mergesort")
        j = 0
        for c in range(s.tab_len.shape[1]):
            for k in range(s.tab_unknown[b, c]):
                s.tab[b, c, k] = cards[order[j]]
                j += 1
        for k in range(s.stock_unknown[b]):
            s.stock[b, k] = cards[order[j]]
            j += 1


def _checked_rows(state: State, rows) -> np.ndarray:
    return checked_rows(rows, state.score.shape[0])


def unseen_counts(state: State, rows) -> np.ndarray:
    """How many cards each game of ``rows`` has never seen (``(len(rows),)`` int64)."""
    rows = _checked_rows(state, rows)
    return state.tab_unknown[rows].sum(axis=1, dtype=np.int64) + state.stock_unknown[rows]


def redeal_unseen(state: State, rows, rng: np.random.Generator | None = None) -> None:
    """Deal the unseen cards of each game of ``rows`` anew into its unseen places (module
    docstring): in an order drawn from ``rng``, or sorted when ``rng`` is None. Rows may
    repeat only if the caller wants the same game dealt twice."""
    rows = _checked_rows(state, rows)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise ArgumentError(f"rng must be a numpy Generator or None, not {type(rng).__name__}")
    n_cards = state.stock.shape[1]
    if rng is None:
        keys = np.zeros((rows.size, n_cards), np.float64)
    else:
        keys = rng.random((rows.size, n_cards))
    _redeal(state, rows, keys)


def copy_rows(dst: State, dst_rows, src: State, src_rows) -> None:
    """Copy games ``src_rows`` of ``src`` into rows ``dst_rows`` of ``dst`` (same variant). The
    undo history is copied only when both batches keep the same depth of it; otherwise the copies
    start with none."""
    dst_rows = _checked_rows(dst, dst_rows)
    src_rows = _checked_rows(src, src_rows)
    if dst_rows.size != src_rows.size:
        raise ArgumentError(f"{src_rows.size} source rows for {dst_rows.size} target rows")
    if dst.stock.shape[1] != src.stock.shape[1]:
        raise ArgumentError("copy_rows: the two batches hold games with different card counts")
    same_history = dst.hist.shape[1] == src.hist.shape[1]
    for name, d, s in zip(FIELDS, dst.arrays(), src.arrays(), strict=True):
        if name in HISTORY and not same_history:
            d[dst_rows] = 0
        else:
            d[dst_rows] = s[src_rows]
