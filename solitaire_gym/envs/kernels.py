"""Compiled env step: env action -> engine action, play, reward, mask and observation, for every
row of a batch in one ``prange`` loop. Rules come from the engine; this file only wires them.

Env action spaces (``mode``):

* ``MODE_MOVE``: the engine's action layout (``engine/actions.py``), one id per move.
* ``MODE_TAP``: the apps' taps. Id 0 taps the stock (``draw``, or ``recycle`` when it is empty;
  Klondike games only), then one id per double tap on t1 … tC, the waste (Klondike games) and
  c1 … c4 (Seahaven): the app picks the target (``engine/taps.py``).

With ``undo`` on, one more id (the last) undoes the last action.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from solitaire_gym.engine.actions import K_CT, K_FC, K_FT, K_TC, K_TF, decode
from solitaire_gym.engine.borrow import borrow, fields, hold, view
from solitaire_gym.engine.movegen import legal_mask
from solitaire_gym.engine.play import play, undo
from solitaire_gym.engine.rules import R_BAD_ACTION, check_move, is_won
from solitaire_gym.engine.scoring import score_delta
from solitaire_gym.engine.shuffle import deal_into
from solitaire_gym.engine.state import part_rows
from solitaire_gym.engine.taps import WHERE_CELL, WHERE_WASTE, double_tap
from solitaire_gym.engine.variants import G_COLS, G_PILES, L_CELLS, L_DRAW, L_N, L_STOCK
from solitaire_gym.envs.observation import observe

MODE_MOVE = 0
MODE_TAP = 1

REWARD_APP = 0
REWARD_FAIR = 1
REWARD_WIN = 2
REWARD_FOUNDATION = 3

ACT_UNDO = -2  # engine-side marker: the env's undo action
ACT_NONE = -3  # engine-side marker: a tap that finds nothing
ROW_REFRESH = -1  # ``act`` value in step_rows: only recompute mask and observation
ROW_DEAL = -4  # ``act`` value in step_rows: deal ``deals[b]`` into the row first
ROW_SKIP = -5  # ``act`` value in step_rows: leave the row and its buffers as they are
R_NOTHING_TO_UNDO = 250  # reason code beside rules.R_*: undo with an empty history


def tap_size(cfg: np.ndarray) -> int:
    return int(cfg[L_STOCK]) + int(cfg[G_COLS]) + int(cfg[L_STOCK]) + int(cfg[L_CELLS])


def n_env_actions(cfg: np.ndarray, mode: int, undo_on: bool) -> int:
    base = int(cfg[L_N]) if mode == MODE_MOVE else tap_size(cfg)
    return base + int(undo_on)


@nb.njit(cache=True)
def tap_where(cfg: np.ndarray, i: int) -> int:
    """Tap id (after the stock tap) -> the ``where`` that ``engine/taps.py`` takes."""
    cols = cfg[G_COLS]
    if i < cols:
        return i
    if cfg[L_STOCK]:
        return WHERE_WASTE
    return WHERE_CELL + i - cols


@nb.njit(cache=True)
def to_engine(s, b: int, cfg: np.ndarray, mode: int, n_base: int, a: int) -> int:
    """Env action -> engine action id, ``ACT_UNDO`` or ``ACT_NONE``."""
    if a == n_base:
        return ACT_UNDO
    if mode == MODE_MOVE:
        return a
    if cfg[L_STOCK]:
        if a == 0:
            return cfg[L_DRAW] if s.stock_len[b] > 0 else cfg[L_DRAW] + 1
        a -= 1
    e = double_tap(s, b, cfg, tap_where(cfg, a))
    return e if e >= 0 else ACT_NONE


@nb.njit(cache=True)
def env_mask(s, b: int, cfg: np.ndarray, mode: int, n_base: int, undo_on: bool, mask) -> int:
    """Legal env actions of row ``b`` into ``mask``; returns how many."""
    if mode == MODE_MOVE:
        n = legal_mask(s, b, cfg, mask[:n_base])
    else:
        mask[:] = 0
        n = 0
        if not is_won(s, b, cfg):
            for a in range(n_base):
                e = to_engine(s, b, cfg, mode, n_base, a)
                if e >= 0 and check_move(s, b, cfg, e) == 0:
                    mask[a] = 1
                    n += 1
    if undo_on:
        mask[n_base] = 1 if s.hist_len[b] > 0 else 0
        n += mask[n_base]
    return n


@nb.njit(cache=True, inline="always")
def foundation_cards(s, b: int, cfg: np.ndarray) -> int:
    """Cards on the foundations of row ``b``."""
    n = 0
    for p in range(cfg[G_PILES]):
        n += s.found[b, p]
    return n


@nb.njit(cache=True)
def step_row(
    s, b: int, cfg: np.ndarray, mode: int, n_base: int, reward_mode: int, penalty: float,
    bonus: float, a: int,
) -> tuple[float, int, int]:  # fmt: skip
    """Play env action ``a`` in row ``b``. Returns (reward, reason, engine action). ``bonus``:
    the win bonus of ``REWARD_FOUNDATION``. A refused action pays ``0.0 - penalty`` (+0.0, not
    -0.0, when the penalty is 0)."""
    e = to_engine(s, b, cfg, mode, n_base, a)
    before = s.score[b]
    was_won = is_won(s, b, cfg)
    found_before = foundation_cards(s, b, cfg)
    if e == ACT_UNDO:
        if not undo(s, b, cfg):
            return 0.0 - penalty, R_NOTHING_TO_UNDO, e
    elif e == ACT_NONE:
        return 0.0 - penalty, R_BAD_ACTION, e
    else:
        r = check_move(s, b, cfg, e)
        if r != 0:
            return 0.0 - penalty, r, e
        play(s, b, cfg, e)
    if reward_mode == REWARD_WIN:
        return (1.0 if is_won(s, b, cfg) and not was_won else 0.0), 0, e
    if reward_mode == REWARD_FOUNDATION:
        # The change in the number of cards on the foundations (a take-back or an undo of a card
        # put there counts -1), and the bonus when the game becomes won (taken back if an undo
        # un-wins it): a potential, so an episode's rewards add up to its change in foundation
        # cards (plus the bonus when it ends won), and no cycle gains anything.
        reward = float(foundation_cards(s, b, cfg) - found_before)
        won_now = is_won(s, b, cfg)
        if won_now and not was_won:
            reward += bonus
        elif was_won and not won_now:
            reward -= bonus
        return reward, 0, e
    reward = float(s.score[b] - before)
    if reward_mode == REWARD_FAIR and e >= 0:
        # What the apps pay for leaving a place, the fair reward charges for entering it, so no
        # cycle gains anything: a take-back costs the foundation points, a card put into a free
        # cell costs the cell-to-column points.
        kind = decode(cfg, e)[0]
        if kind == K_FT or kind == K_FC:
            reward -= score_delta(cfg, K_TF, False)
        if kind == K_TC or kind == K_FC:
            reward -= score_delta(cfg, K_CT, False)
    return reward, 0, e


@nb.njit(cache=True, inline="always")
def _step_one(
    s, b, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
    rewards, reasons, engine_act, masks, counts, won, obs,
):  # fmt: skip
    """Row ``b``: its action played (or a deal dealt), then its mask and observation; nothing at
    all for ``ROW_SKIP`` (a search's finished copies)."""
    if act[b] == ROW_SKIP:
        return
    if act[b] == ROW_DEAL:
        deal_into(s, b, cfg, np.uint64(deals[b]))
    if act[b] >= 0:
        rw, rs, e = step_row(s, b, cfg, mode, n_base, reward_mode, penalty, bonus, act[b])
        rewards[b] = rw
        reasons[b] = rs
        engine_act[b] = e
    else:
        rewards[b] = 0.0
        reasons[b] = 0
    counts[b] = env_mask(s, b, cfg, mode, n_base, undo_on, masks[b])
    won[b] = is_won(s, b, cfg)
    observe(s, b, cfg, obs[b])


@nb.njit(cache=True)
def _step_range(
    s, lo, hi, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
    rewards, reasons, engine_act, masks, counts, won, obs,
):  # fmt: skip
    for b in range(lo, hi):
        _step_one(
            s, b, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
            rewards, reasons, engine_act, masks, counts, won, obs,
        )  # fmt: skip


@nb.njit(cache=True, parallel=True)
def step_rows(
    state, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
    rewards, reasons, engine_act, masks, counts, won, obs, parts,
):  # fmt: skip
    """Step every row whose ``act`` is >= 0; a row with ``ROW_DEAL`` gets deal ``deals[b]``
    first; every row but those with ``ROW_SKIP`` gets its mask and observation recomputed. One parallel launch per env step:
    the rows are cut into ``parts`` (``state.part_rows``), each worked through borrowed views of
    the state and arrays (``engine/borrow.py``: no reference counting in the loop). Arrays:
    ``act``, ``deals`` (B,) int64; ``rewards`` (B,) float32; ``reasons``, ``engine_act`` (B,)
    int64; ``masks`` (B, n_actions) int8; ``counts`` (B,) int32; ``won`` (B,) bool; ``obs``
    (B, layout size) float32."""
    n = act.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _step_range(
            fields(owner), lo, hi, view(cfg), mode, n_base, undo_on, reward_mode, penalty, bonus,
            view(act), view(deals), view(rewards), view(reasons), view(engine_act), view(masks),
            view(counts), view(won), view(obs),
        )  # fmt: skip
        hold(owner)


@nb.njit(cache=True)
def step_rows_serial(
    state, cfg, mode, n_base, undo_on, reward_mode, penalty, bonus, act, deals,
    rewards, reasons, engine_act, masks, counts, won, obs,
):  # fmt: skip
    """:func:`step_rows` on one thread: for small batches, where waking threads costs more."""
    owner = borrow(state)
    _step_range(
        fields(owner), 0, act.shape[0], view(cfg), mode, n_base, undo_on, reward_mode, penalty,
        bonus, view(act), view(deals), view(rewards), view(reasons), view(engine_act), view(masks),
        view(counts), view(won), view(obs),
    )  # fmt: skip
    hold(owner)


@nb.njit(cache=True)
def _refresh_range(s, lo, hi, cfg, mode, n_base, undo_on, rows, deals, masks, counts, won, obs):
    for i in range(lo, hi):
        b = rows[i]
        if deals.shape[0]:
            deal_into(s, b, cfg, np.uint64(deals[i]))
        counts[b] = env_mask(s, b, cfg, mode, n_base, undo_on, masks[b])
        won[b] = is_won(s, b, cfg)
        observe(s, b, cfg, obs[b])


@nb.njit(cache=True, parallel=True)
def refresh_rows(
    state,
    cfg: np.ndarray,
    mode: int,
    n_base: int,
    undo_on: bool,
    rows: np.ndarray,
    deals: np.ndarray,
    masks: np.ndarray,
    counts: np.ndarray,
    won: np.ndarray,
    obs: np.ndarray,
    parts: int,
) -> None:
    """Deal ``deals[i]`` into row ``rows[i]`` (when ``deals`` is not empty) and recompute the
    mask, legal count, won flag and observation of those rows; ``parts`` as in
    :func:`step_rows`."""
    n = rows.shape[0]
    for t in nb.prange(parts):
        lo, hi = part_rows(n, parts, t)
        owner = borrow(state)
        _refresh_range(
            fields(owner), lo, hi, view(cfg), mode, n_base, undo_on, view(rows), view(deals),
            view(masks), view(counts), view(won), view(obs),
        )  # fmt: skip
        hold(owner)


@nb.njit(cache=True)
def refresh_rows_serial(
    state, cfg, mode, n_base, undo_on, rows, deals, masks, counts, won, obs
):  # fmt: skip
    """:func:`refresh_rows` on one thread."""
    owner = borrow(state)
    _refresh_range(
        fields(owner), 0, rows.shape[0], view(cfg), mode, n_base, undo_on, view(rows),
        view(deals), view(masks), view(counts), view(won), view(obs),
    )  # fmt: skip
    hold(owner)
