"""The engine's state: a struct of arrays with a leading batch dimension ``B``.

One :class:`State` holds ``B`` games of one variant. A single game is a batch of one. Every kernel
takes the whole ``State`` (a numba StructRef of arrays) and a row ``b``.

Index layout of one row::

    tab[b, c, 0 .. tab_len[b, c]-1]   column c from bottom (0) to top; the lowest tab_down[b, c]
                                      cards are face down (Double Solitaire only)
    stock[b, 0 .. stock_len[b]-1]     the top, the next card drawn, is stock[b, stock_len[b]-1]
    waste[b, 0 .. waste_len[b]-1]     the top, the one card that plays, is waste[b, waste_len[b]-1]
    found[b, p]                       cards on foundation pile p (its top is rank found-1 of the
                                      pile's suit: pile p holds suit p//2 in Double Solitaire, p else)
    cells[b, k]                       card in free cell k, or EMPTY
    hist[b, (hist_top[b] - i) % H]    undo record of the i-th last action, i < hist_len[b]

A card the player has seen stays known: a face-down card turned over and turned back by an undo,
a stock card drawn and put back by an undo or a turn-over. Face-down cards never move and the stock
is only drawn from the top, so "never seen" is a count at the bottom of each pile: the minimum the
pile's face-down count (stock length) has reached.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba.core import types
from numba.experimental import structref

from solitaire_gym.engine.variants import MAX_CELLS, MAX_HEIGHT

MOVES_MAX = 2**31 - 1  # the largest int32: the move counter stays there rather than wrapping around

FIELDS = (
    "tab",  # (B, 10, MAX_HEIGHT) int8  card id or EMPTY
    "tab_len",  # (B, 10) int8  cards in each column
    "tab_down",  # (B, 10) int8  face-down cards at the bottom of each column
    "stock",  # (B, n_cards) int8  card id; top at stock_len-1
    "stock_len",  # (B,) int16
    "waste",  # (B, n_cards) int8  card id; top at waste_len-1
    "waste_len",  # (B,) int16
    "found",  # (B, 8) int8  cards on each foundation pile
    "cells",  # (B, 4) int8  card id or EMPTY
    "score",  # (B,) int32  the app's score (Vegas: dollars); stops at 2^31 - 1, never wraps
    "moves",  # (B,) int32  the app's move counter (never goes down; stops at MOVES_MAX)
    "hist",  # (B, H) int64  undo records (ring buffer), H = undo depth (may be 0)
    "hist_len",  # (B,) int32  undoable records
    "hist_top",  # (B,) int32  ring index of the next record
    # What the player has seen (the information state; never rolled back by undo):
    "tab_unknown",  # (B, 10) int8  bottom cards of each column never seen (<= tab_down)
    "stock_unknown",  # (B,) int16  bottom cards of the stock never seen (<= stock_len)
)


@structref.register
class StateType(types.StructRef):
    """numba type of :class:`State`: one reference-counted object holding the arrays, so passing
    a state to a kernel costs one reference count, not one per array."""

    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class State(structref.StructRefProxy):
    """The batch's arrays (``FIELDS``), usable from Python (``s.tab``) and inside kernels alike."""

    def __new__(cls, *arrays: np.ndarray) -> State:
        if len(arrays) != len(FIELDS):
            raise TypeError(f"State takes {len(FIELDS)} arrays ({', '.join(FIELDS)})")
        self = structref.StructRefProxy.__new__(cls, *arrays)
        self.__dict__["_arrays"] = tuple(arrays)
        return self

    def arrays(self) -> tuple[np.ndarray, ...]:
        try:
            return self.__dict__["_arrays"]
        except KeyError:  # a state made inside compiled code
            self.__dict__["_arrays"] = arrays = _arrays(self)
            return arrays

    def __iter__(self):
        return iter(self.arrays())

    def __reduce__(self):
        return (State, self.arrays())


def _field(i: int) -> property:
    return property(lambda self: self.arrays()[i], doc=FIELDS[i])


for _i, _name in enumerate(FIELDS):
    setattr(State, _name, _field(_i))
structref.define_proxy(State, StateType, list(FIELDS))


@nb.njit(cache=True)
def _arrays(s):
    return (
        s.tab,
        s.tab_len,
        s.tab_down,
        s.stock,
        s.stock_len,
        s.waste,
        s.waste_len,
        s.found,
        s.cells,
        s.score,
        s.moves,
        s.hist,
        s.hist_len,
        s.hist_top,
        s.tab_unknown,
        s.stock_unknown,
    )


@nb.njit(cache=True, inline="always")
def part_rows(n: int, parts: int, t: int) -> tuple[int, int]:
    """Rows ``lo … hi-1`` of part ``t`` of ``parts`` over ``n`` rows (contiguous, even sizes)."""
    return t * n // parts, (t + 1) * n // parts


def allocate(batch: int, n_cards: int, undo_depth: int = 0) -> State:
    """Empty state for ``batch`` games with ``n_cards`` cards each (fill it with a deal)."""
    if batch < 1:
        raise ValueError(f"batch size must be at least 1, not {batch}")
    if undo_depth < 0:
        raise ValueError(f"undo depth must be 0 or more, not {undo_depth}")
    arrays = dict(
        tab=np.full((batch, 10, MAX_HEIGHT), -1, np.int8),
        tab_len=np.zeros((batch, 10), np.int8),
        tab_down=np.zeros((batch, 10), np.int8),
        stock=np.full((batch, n_cards), -1, np.int8),
        stock_len=np.zeros(batch, np.int16),
        waste=np.full((batch, n_cards), -1, np.int8),
        waste_len=np.zeros(batch, np.int16),
        found=np.zeros((batch, 8), np.int8),
        cells=np.full((batch, MAX_CELLS), -1, np.int8),
        score=np.zeros(batch, np.int32),
        moves=np.zeros(batch, np.int32),
        hist=np.zeros((batch, undo_depth), np.int64),
        hist_len=np.zeros(batch, np.int32),
        hist_top=np.zeros(batch, np.int32),
        tab_unknown=np.zeros((batch, 10), np.int8),
        stock_unknown=np.zeros(batch, np.int16),
    )
    return State(*(arrays[name] for name in FIELDS))


def copy_state(s: State) -> State:
    return State(*(a.copy() for a in s.arrays()))


def take_rows(s: State, rows) -> State:
    """A new state holding copies of the given rows (a slice or index array)."""
    return State(*(a[rows].copy() for a in s.arrays()))


def put_rows(dst: State, rows, src: State) -> None:
    """Write ``src``'s rows into ``dst`` at ``rows`` (same variant and undo depth)."""
    for d, s in zip(dst.arrays(), src.arrays(), strict=True):
        d[rows] = s


def nbytes_per_game(s: State) -> int:
    return sum(a.nbytes for a in s.arrays()) // s.score.shape[0]
