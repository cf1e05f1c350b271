"""Compiled loops over many games at once (``prange``: all cores), and :class:`Batch`, their
Python face. The vector env and the benchmarks use these; every rule still lives in the per-game
kernels they call.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.borrow import borrow, fields, hold, view
from solitaire_gym.engine.movegen import legal_mask
from solitaire_gym.engine.play import play, undo
from solitaire_gym.engine.rules import check_move, is_won
from solitaire_gym.engine.shuffle import deal_into
from solitaire_gym.engine.state import State, allocate, nbytes_per_game, part_rows
from solitaire_gym.engine.threads import num_threads, parallel_ok
from solitaire_gym.engine.variants import L_N, MAX_DEAL, Variant
from solitaire_gym.errors import ArgumentError, is_int, is_int_dtype, shown

# Each parallel loop cuts the rows into ``parts`` (``state.part_rows``) and works through each
# part on borrowed views of the state and arrays (``borrow.py``: no reference counting inside).


@nb.njit(cache=True)
def _deal_range(s, cfg, rows, deals, lo, hi):
    for i in range(lo, hi):
        deal_into(s, rows[i], cfg, np.uint64(deals[i]))


@nb.njit(cache=True, parallel=True)
def deal_rows(state, cfg: np.ndarray, rows: np.ndarray, deals: np.ndarray, parts: int) -> None:
    """Deal ``deals[i]`` into row ``rows[i]``."""
    n = rows.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _deal_range(fields(owner), view(cfg), view(rows), view(deals), lo, hi)
        hold(owner)


@nb.njit(cache=True)
def _step_range(s, cfg, act, reasons, lo, hi):
    for b in range(lo, hi):
        a = act[b]
        if a < 0:
            reasons[b] = -1
            continue
        r = check_move(s, b, cfg, a)
        reasons[b] = r
        if r == 0:
            play(s, b, cfg, a)


@nb.njit(cache=True, parallel=True)
def step_rows(state, cfg: np.ndarray, act: np.ndarray, reasons: np.ndarray, parts: int) -> None:
    """Play ``act[b]`` in every row ``b`` where it is legal; ``reasons[b]`` gets
    ``rules.check_move``'s answer (0 = played). A row whose action is negative is left alone and
    gets reason -1."""
    n = act.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _step_range(fields(owner), view(cfg), view(act), view(reasons), lo, hi)
        hold(owner)


@nb.njit(cache=True)
def _mask_range(s, cfg, masks, counts, won, lo, hi):
    for b in range(lo, hi):
        counts[b] = legal_mask(s, b, cfg, masks[b])
        won[b] = is_won(s, b, cfg)


@nb.njit(cache=True, parallel=True)
def mask_rows(
    state, cfg: np.ndarray, masks: np.ndarray, counts: np.ndarray, won: np.ndarray, parts: int
) -> None:
    """Legal-action masks ``(B, n_actions)``, legal counts and won flags of every row."""
    n = counts.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _mask_range(fields(owner), view(cfg), view(masks), view(counts), view(won), lo, hi)
        hold(owner)


@nb.njit(cache=True)
def _undo_range(s, cfg, rows, done, lo, hi):
    for i in range(lo, hi):
        done[i] = undo(s, rows[i], cfg)


@nb.njit(cache=True, parallel=True)
def undo_rows(state, cfg: np.ndarray, rows: np.ndarray, done: np.ndarray, parts: int) -> None:
    n = rows.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _undo_range(fields(owner), view(cfg), view(rows), view(done), lo, hi)
        hold(owner)


MAX_BATCH = 2**22  # games in one batch (a few GB of state at most)
MAX_UNDO_DEPTH = 100_000  # undo records kept per game (8 bytes each); the apps keep 100 or 200


def int_array(values, what: str) -> np.ndarray:
    """``values`` as a 1-D ``int64`` array, refusing anything that is not integers (floats, bools,
    strings, objects): a cast would turn NaN into -2^63 and 0.9 into 0. Compiled code has no
    bounds checks, so every public entry checks its rows, actions and deal numbers with this and
    a range check before any kernel runs."""
    try:
        arr = np.asarray(values)
    except (ValueError, TypeError, OverflowError, RecursionError):
        raise ArgumentError(f"{what} must be integers, not {shown(values)}") from None
    if arr.size and not is_int_dtype(arr.dtype):
        raise ArgumentError(f"{what} must be integers, not {shown(values)}")
    if arr.size and arr.dtype == np.uint64 and int(arr.max()) > np.iinfo(np.int64).max:
        raise ArgumentError(f"{what}: {int(arr.max())} is out of range")
    return arr.astype(np.int64).reshape(-1)


def checked_rows(rows, size: int, *, unique: bool = False) -> np.ndarray:
    """``rows`` as a 1-D ``int64`` array of row numbers of a batch of ``size`` games, each in
    ``0 … size-1`` (and, with ``unique``, none twice); an :class:`ArgumentError` naming the first
    bad one otherwise. Kernels index with them unchecked."""
    rows = int_array(rows, "rows")
    if rows.size and (rows.min() < 0 or rows.max() >= size):
        bad = int(rows[(rows < 0) | (rows >= size)][0])
        raise ArgumentError(f"row {bad} is outside 0 … {size - 1}")
    if unique and np.unique(rows).size != rows.size:
        raise ArgumentError("rows must not repeat")
    return rows


class Batch:
    """``size`` games of one variant in one :class:`State`, stepped together.

    >>> from solitaire_gym.engine.variants import parse_code
    >>> batch = Batch(parse_code("SH1-C4-AAAAAAB")[0], 4)
    >>> batch.deal(np.arange(4))
    >>> batch.masks().sum(axis=1).tolist()
    [12, 13, 12, 13]
    """

    def __init__(self, variant: Variant, size: int, *, undo_depth: int = 0) -> None:
        for name, value, low, high in (
            ("size", size, 1, MAX_BATCH),
            ("undo_depth", undo_depth, 0, MAX_UNDO_DEPTH),
        ):
            if not is_int(value) or not low <= value <= high:
                raise ArgumentError(
                    f"{name} must be an integer in {low} … {high}, not {shown(value)}"
                )
        if not isinstance(variant, Variant):
            raise ArgumentError(f"variant must be a Variant, not {type(variant).__name__}")
        self.variant = variant
        self.cfg = variant.cfg
        self.size = int(size)
        self.n_actions = int(self.cfg[L_N])
        self.state: State = allocate(self.size, variant.n_cards, undo_depth)
        self._masks = np.zeros((self.size, self.n_actions), np.int8)
        self._counts = np.zeros(self.size, np.int32)
        self._won = np.zeros(self.size, np.bool_)
        self._reasons = np.zeros(self.size, np.int64)

    def _run(self, kernel, ranged, n: int, *arrays: np.ndarray) -> None:
        """``kernel`` over all cores, or, where no parallel launch is possible (a process forked
        after the OpenMP threads started: ``threads.parallel_ok``), its range function over rows
        ``0 … n-1`` on this thread."""
        if parallel_ok():
            kernel(self.state, self.cfg, *arrays, num_threads())
        else:
            ranged(self.state, self.cfg, *arrays, 0, n)

    def deal(self, deals, rows=None) -> None:
        """Deal numbers ``deals`` into ``rows`` (default: every row, in order)."""
        deals = int_array(deals, "deal numbers")
        rows = np.arange(self.size) if rows is None else self._rows(rows)
        if deals.shape != rows.shape:
            raise ArgumentError(f"{deals.size} deal numbers for {rows.size} rows")
        if deals.size and (deals.min() < 0 or deals.max() > MAX_DEAL):
            raise ArgumentError(f"deal numbers must lie in 0 … {MAX_DEAL}")
        self._run(deal_rows, _deal_range, rows.size, rows, deals)

    def step(self, actions) -> np.ndarray:
        """Play one action per row (negative: skip the row). Returns ``check_move``'s codes: 0
        where played, the refusal reason where the action is illegal (that row is unchanged)."""
        act = int_array(actions, "actions")
        if act.shape[0] != self.size:
            raise ArgumentError(f"expected {self.size} actions, got {act.shape[0]}")
        if act.size and act.max() >= self.n_actions:
            raise ArgumentError(f"action {int(act.max())} is outside 0 … {self.n_actions - 1}")
        self._run(step_rows, _step_range, act.size, act, self._reasons)
        return self._reasons

    def masks(self) -> np.ndarray:
        """``(size, n_actions)`` int8 legal-action masks (a view, refreshed by each call)."""
        self._run(mask_rows, _mask_range, self.size, self._masks, self._counts, self._won)
        return self._masks

    @property
    def legal_counts(self) -> np.ndarray:
        """Legal actions per row, as of the last :meth:`masks` call."""
        return self._counts

    @property
    def won(self) -> np.ndarray:
        """Won flags, as of the last :meth:`masks` call."""
        return self._won

    def _rows(self, rows) -> np.ndarray:
        # unique: two threads would work on one row at once
        return checked_rows(rows, self.size, unique=True)

    def undo(self, rows) -> np.ndarray:
        """Undo the last action of each of ``rows``; True where there was one to undo."""
        rows = self._rows(rows)
        done = np.zeros(rows.shape[0], np.bool_)
        self._run(undo_rows, _undo_range, rows.size, rows, done)
        return done

    @property
    def bytes_per_game(self) -> int:
        return nbytes_per_game(self.state)
