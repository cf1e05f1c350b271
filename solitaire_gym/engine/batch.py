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


class Batch:
    """``size`` games of one variant in one :class:`State`, stepped together.

    >>> from solitaire_gym.engine.variants import parse_code
    >>> batch = Batch(parse_code("SH1-C4-AAAAAAB")[0], 4)
    >>> batch.deal(np.arange(4))
    >>> batch.masks().sum(axis=1).tolist()
    [12, 13, 12, 13]
    """

    def __init__(self, variant: Variant, size: int, *, undo_depth: int = 0) -> None:
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
        deals = np.asarray(deals, dtype=np.int64).reshape(-1)
        rows = np.arange(self.size) if rows is None else np.asarray(rows, np.int64).reshape(-1)
        if deals.shape != rows.shape:
            raise ValueError(f"{deals.size} deal numbers for {rows.size} rows")
        if deals.size and (deals.min() < 0 or deals.max() > MAX_DEAL):
            raise ValueError(f"deal numbers must lie in 0 … {MAX_DEAL}")
        if rows.size and (rows.min() < 0 or rows.max() >= self.size):
            raise ValueError(f"rows must lie in 0 … {self.size - 1}")
        self._run(deal_rows, _deal_range, rows.size, rows, deals)

    def step(self, actions) -> np.ndarray:
        """Play one action per row (negative: skip the row). Returns ``check_move``'s codes: 0
        where played, the refusal reason where the action is illegal (that row is unchanged)."""
        act = np.asarray(actions, dtype=np.int64).reshape(-1)
        if act.shape[0] != self.size:
            raise ValueError(f"expected {self.size} actions, got {act.shape[0]}")
        if act.size and act.max() >= self.n_actions:
            raise ValueError(f"action {int(act.max())} is outside 0 … {self.n_actions - 1}")
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

    def undo(self, rows) -> np.ndarray:
        rows = np.asarray(rows, np.int64).reshape(-1)
        done = np.zeros(rows.shape[0], np.bool_)
        self._run(undo_rows, _undo_range, rows.size, rows, done)
        return done

    @property
    def bytes_per_game(self) -> int:
        return nbytes_per_game(self.state)
