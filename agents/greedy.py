"""A hand-written greedy player: the legal move of highest priority, never the same move twice
from the same position while another is untried.

It uses only the observation and the mask (``uses = "observation"``): the board is read back
from the observation's card block (which column, cell, waste or foundation each seen card lies
in, and how many cards lie on it) and pile block (column lengths, face-down counts, foundation
heights), and each legal action id is decoded with ``engine.actions.decode``. Besides, it
remembers per game the (position, action) pairs it has played, as hashes of the observation.

Priorities, highest first (ties: the fuller source column, then the lower action id):

==========================================================  ==========  =====================
move                                                        priority    games
==========================================================  ==========  =====================
card to a foundation that uncovers a face-down card         100 + down  Double Solitaire
card to a foundation, "safe" (no card still in play could   90          all (Seahaven: always
be built on it: both opposite-colour cards one rank lower                safe, same-suit
are on the foundations, or it is an Ace or a 2)                           building)
column run whose move turns a face-down card over           80 + down   Double Solitaire
column run whose move uncovers a card that then goes to     75          all
a foundation
column run (not a King) whose move empties its column       70          all
card to a foundation, not safe                              60          Klondike games
free cell to column (frees a cell, +5)                      55          Seahaven
waste to column (+5)                                        50          Klondike games
same-suit build (column to column, nothing of the above);   45; 50      Seahaven
50 if its column holds a card a foundation wants next
run off a card it does not build on (column to column)      40          Klondike games
column to free cell, then the uncovered card plays to a     30 / 25 /   Seahaven (minus 5
foundation / the column empties / it plays onto a column    20          per occupied cell)
column to free cell, digging towards a card a foundation    28 − 2·d    Seahaven (minus 5
wants next, ``d`` cards down, if the free cells suffice                 per occupied cell)
draw; recycle                                               10; 5       Klondike games
column to free cell, nothing gained                         −10 − 5·k   Seahaven (k occupied)
column to free cell, a card off the card it builds on       −40 − 5·k   Seahaven
the last free cell, for anything below 25 above             −30 more    Seahaven
run off the card it already builds on (pointless shuffle)   −50         all
a move that puts back the card the last move moved          −60         all
take a card back from a foundation                          −80         all
move a King (run) that lies at the bottom of its column     −100        all
==========================================================  ==========  =====================

The agent plays the highest-priority legal move it has not yet played from this exact
observation; when it has tried them all, the one it has played least often there (ties by
priority). So it never loops while something untried is left, and it goes on until the game is
won, stuck, or cut off by the step limit.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.base import Agent
from solitaire_gym.engine.actions import (
    K_CF,
    K_CT,
    K_DRAW,
    K_FC,
    K_FT,
    K_RECYCLE,
    K_TC,
    K_TF,
    K_TT,
    K_WF,
    K_WT,
    decode,
)
from solitaire_gym.engine.variants import DOUBLE, G_CELLS, G_COLS, G_GAME, L_N, SEAHAVEN
from solitaire_gym.envs.core import EnvOptions
from solitaire_gym.envs.observation import DEPTH_SCALE, HEIGHT_SCALE, Layout, layout
from solitaire_gym.errors import is_int

P_NONE = -1000.0
RANK_PER_PLAY = 10_000.0  # one more play from a position outweighs any priority
TABLE = 8192  # (position, action) slots per game: more than the longest episode (2000 steps)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_FROM_CELL = 100
_FROM_WASTE = 200
_FROM_FOUND = 300
# Positions of the observation offsets in the ``lay`` array handed to the compiled code.
_WIDTH, _COLUMNS, _DEPTH, _WASTE, _CELL = (
    Layout._fields.index(k) for k in ("width", "columns", "depth", "waste", "cell")
)
_LENGTHS, _DOWNS, _HEIGHTS = (Layout._fields.index(k) for k in ("lengths", "downs", "heights"))


@nb.njit(cache=True, inline="always")
def _mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def obs_hash(o):
    """A 64-bit hash of one observation (its nonzero values, in steps of 1/4096, and where they
    are): :func:`obs_hashes` of one row."""
    h = np.uint64(0x12345)
    for i in range(o.shape[0]):
        v = o[i]
        if v != 0.0:
            q = np.uint64(np.int64(v * 4096.0 + 0.5))
            h = _mix(h ^ (np.uint64(i) * _GOLD + q))
    return h


@nb.njit(cache=True)
def obs_hashes(obs):
    """A 64-bit hash of each row of a batch of observations (the greedy agent's and the search's
    name for a position as the player sees it)."""
    out = np.empty(obs.shape[0], np.uint64)
    for b in range(obs.shape[0]):
        out[b] = obs_hash(obs[b])
    return out


@nb.njit(cache=True, inline="always")
def _red(face):
    s = face // 13
    return s == 1 or s == 2


@nb.njit(cache=True, inline="always")
def _builds_on(game, card, under):
    """``card`` may lie on ``under`` in the tableau."""
    if card < 0 or under < 0 or card % 13 + 1 != under % 13:
        return False
    if game == SEAHAVEN:
        return card // 13 == under // 13
    return _red(card) != _red(under)


@nb.njit(cache=True)
def _priorities(o, mask, table, game, n_cards, decks, cols, cells, lay, last_card, last_from, out):
    """Priority of every legal action of one game (``P_NONE`` for illegal ones)."""
    width = lay[_WIDTH]
    col_len = np.zeros(10, np.int64)
    down = np.zeros(10, np.int64)
    for c in range(cols):
        col_len[c] = np.int64(o[lay[_LENGTHS] + c] * DEPTH_SCALE + 0.5)
        if lay[_DOWNS] >= 0:
            down[c] = np.int64(o[lay[_DOWNS] + c] * DEPTH_SCALE + 0.5)
    found_min = np.full(4, 99, np.int64)  # per suit: the lowest of its piles
    fh = np.zeros(8, np.int64)  # foundation heights
    piles = 8 if decks == 2 else 4
    for p in range(piles):
        fh[p] = np.int64(o[lay[_HEIGHTS] + p] * HEIGHT_SCALE + 0.5)
        s = p // 2 if decks == 2 else p
        if fh[p] < found_min[s]:
            found_min[s] = fh[p]
    grid = np.full((10, 32), -1, np.int64)  # grid[c, k]: the card k below the top of column c
    cell = np.full(4, -1, np.int64)
    waste_top = -1
    for r in range(n_cards):
        face = r // decks
        row = r * width
        depth = np.int64(o[row + lay[_DEPTH]] * DEPTH_SCALE + 0.5)
        for c in range(cols):
            if o[row + lay[_COLUMNS] + c] != 0.0:
                grid[c, depth] = face
        if lay[_WASTE] >= 0 and o[row + lay[_WASTE]] != 0.0 and depth == 0:
            waste_top = face
        for k in range(cells):
            if o[row + lay[_CELL] + k] != 0.0:
                cell[k] = face
    occupied = 0
    for k in range(cells):
        if cell[k] >= 0:
            occupied += 1
    # need[c]: how many cards lie on the shallowest card of column c that a foundation wants next
    need = np.full(10, 99, np.int64)
    for c in range(cols):
        for k in range(col_len[c] - down[c]):
            if grid[c, k] >= 0 and _plays_to_foundation(grid[c, k], fh, decks):
                need[c] = k
                break
    for a in range(mask.shape[0]):
        if not mask[a]:
            out[a] = P_NONE
            continue
        kind = table[a, 0]
        src = table[a, 1]
        dst = table[a, 2]
        n = table[a, 3]
        p = 0.0
        moved = -1
        target = -1
        if kind == K_TF or kind == K_WF or kind == K_CF:
            if kind == K_TF:
                moved = grid[src, 0]
            elif kind == K_WF:
                moved = waste_top
            else:
                moved = cell[src]
            target = _FROM_FOUND
            rank = moved % 13 if moved >= 0 else 0
            safe = True
            if game != SEAHAVEN and rank >= 2:
                red = _red(moved)
                for s in range(4):
                    if (s == 1 or s == 2) != red and found_min[s] < rank:
                        safe = False
            if kind == K_TF and down[src] > 0 and col_len[src] - 1 == down[src]:
                p = 100.0 + down[src]
            elif safe:
                p = 90.0
            else:
                p = 60.0
        elif kind == K_TT:
            moved = grid[src, n - 1]
            target = dst
            left = col_len[src] - n
            under = grid[src, n] if left > 0 else -1
            if moved >= 0 and moved % 13 == 12 and left == 0:
                p = -100.0  # a King run from the bottom of a column to an empty one
            elif left > 0 and left == down[src]:
                p = 80.0 + down[src]  # turns a face-down card over
            elif under >= 0 and _plays_to_foundation(under, fh, decks):
                p = 75.0
            elif left == 0:
                p = 70.0
            elif _builds_on(game, moved, under):
                p = -50.0
            elif game == SEAHAVEN:
                p = 45.0 + (5.0 if need[src] < 99 else 0.0)
            else:
                p = 40.0
            p += 0.01 * col_len[src]
        elif kind == K_WT:
            moved = waste_top
            target = dst
            p = 50.0
        elif kind == K_CT:
            moved = cell[src]
            target = dst
            p = 55.0
        elif kind == K_TC:
            moved = grid[src, 0]
            target = _FROM_CELL
            left = col_len[src] - 1
            under = grid[src, 1] if left > 0 else -1
            if moved >= 0 and moved % 13 == 12 and left == 0:
                p = -100.0
            elif under >= 0 and _plays_to_foundation(under, fh, decks):
                p = 30.0
            elif left == 0:
                p = 25.0
            elif under >= 0 and _has_column_place(game, under, grid, col_len, cols, src):
                p = 20.0
            elif _builds_on(game, moved, under):
                p = -40.0
            elif need[src] <= cells - occupied:
                p = 28.0 - 2.0 * need[src]  # digs towards a card a foundation wants
            else:
                p = -10.0
            p -= 5.0 * occupied
            if occupied == cells - 1 and p < 25.0:
                p -= 30.0  # the last free cell: only for a card that frees something at once
        elif kind == K_DRAW:
            p = 10.0
        elif kind == K_RECYCLE:
            p = 5.0
        elif kind == K_FT or kind == K_FC:
            p = -80.0
        if moved >= 0 and moved == last_card and target >= 0 and target == last_from:
            p = min(p, -60.0)
        out[a] = p


@nb.njit(cache=True, inline="always")
def _plays_to_foundation(card, fh, decks):
    """``card`` could go to a foundation now (``fh``: the piles' heights)."""
    s, r = card // 13, card % 13
    if decks == 2:
        return fh[2 * s] == r or fh[2 * s + 1] == r
    return fh[s] == r


@nb.njit(cache=True)
def _has_column_place(game, card, grid, col_len, cols, skip):
    for c in range(cols):
        if c != skip and col_len[c] > 0 and _builds_on(game, card, grid[c, 0]):
            return True
    return False


@nb.njit(cache=True)
def lookup(keys, counts, b, h, a):
    """Slot of (position hash ``h``, action ``a``) in game ``b``'s table and how often it was
    played (slot of the first free place when never)."""
    size = keys.shape[1]
    key = _mix(h ^ (np.uint64(a + 1) * _GOLD)) | np.uint64(1)
    slot = np.int64(key % np.uint64(size))
    while keys[b, slot] != 0:
        if keys[b, slot] == key:
            return key, slot, counts[b, slot]
        slot = (slot + 1) % size
    return key, slot, 0


@nb.njit(cache=True)
def _rank(obs, masks, active, table, game, n_cards, decks, cols, cells, lay,
          keys, counts, last_card, last_from, out):  # fmt: skip
    """``out[b, a]``: how much the agent prefers action ``a`` in game ``b`` (higher first;
    ``-inf`` for an illegal action or an inactive game): fewest plays from this position first,
    then the priority. Changes no memory."""
    n_act = masks.shape[1]
    pri = np.empty(n_act, np.float64)
    for b in range(obs.shape[0]):
        out[b, :] = -np.inf
        if not active[b]:
            continue
        _priorities(obs[b], masks[b], table, game, n_cards, decks, cols, cells, lay,
                    last_card[b], last_from[b], pri)  # fmt: skip
        h = obs_hash(obs[b])
        for a in range(n_act):
            if pri[a] <= P_NONE:
                continue
            _, _, cnt = lookup(keys, counts, b, h, a)
            out[b, a] = pri[a] - RANK_PER_PLAY * cnt


@nb.njit(cache=True)
def _record(obs, actions, active, table, n_cards, decks, lay, keys, counts, last_card,
            last_from):  # fmt: skip
    """Remember that game ``b`` played ``actions[b]`` from ``obs[b]``."""
    for b in range(obs.shape[0]):
        if not active[b]:
            continue
        a = actions[b]
        key, slot, _ = lookup(keys, counts, b, obs_hash(obs[b]), a)
        keys[b, slot] = key
        counts[b, slot] += 1
        # remember the card this move moves and where from (to avoid moving it straight back)
        last_card[b], last_from[b] = _moved(obs[b], table[a], n_cards, decks, lay)


@nb.njit(cache=True)
def _moved(o, t, n_cards, decks, lay):
    kind, src, n = t[0], t[1], t[3]
    want_col, want_depth, want_cell, want_waste = -1, -1, -1, False
    origin = -1
    if kind == K_TT or kind == K_TF or kind == K_TC:
        want_col, want_depth, origin = src, n - 1, src
    elif kind == K_CT or kind == K_CF:
        want_cell, origin = src, _FROM_CELL
    elif kind == K_WT or kind == K_WF:
        want_waste, origin = True, _FROM_WASTE
    elif kind == K_FT or kind == K_FC:
        return -1, _FROM_FOUND
    else:
        return -1, -1
    for r in range(n_cards):
        row = r * lay[_WIDTH]
        depth = np.int64(o[row + lay[_DEPTH]] * DEPTH_SCALE + 0.5)
        if want_col >= 0 and o[row + lay[_COLUMNS] + want_col] != 0.0 and depth == want_depth:
            return r // decks, origin
        if want_cell >= 0 and o[row + lay[_CELL] + want_cell] != 0.0:
            return r // decks, origin
        if want_waste and o[row + lay[_WASTE]] != 0.0 and depth == 0:
            return r // decks, origin
    return -1, origin


class GreedyAgent(Agent):
    """The priority player above, for any of the three games (``game`` and ``options`` as for
    the envs; the agent adapts to the game of its first batch if not given)."""

    name = "greedy"

    def __init__(self, game: str | None = None, options: dict | None = None, *,
                 memory: int = TABLE) -> None:  # fmt: skip
        """``memory``: (position, action) slots kept per game, more than the moves of the
        longest game it will play (a search's short rollouts need fewer than a whole game)."""
        if not is_int(memory) or not 16 <= memory <= TABLE:
            raise ValueError(f"memory must be an integer in 16 … {TABLE}, not {memory!r}")
        self.memory = int(memory)
        self._setup = None
        if game is not None:
            self.check_env(game, options)
        self._n = 0

    def check_env(self, game: str, options: dict | None = None) -> None:
        opts = EnvOptions.build(game, **(options or {}))
        cfg = opts.variant.cfg
        n_actions = int(cfg[L_N])
        table = np.array([decode(cfg, a) for a in range(n_actions)], np.int64)
        self._setup = (
            int(cfg[G_GAME]),
            opts.variant.n_cards,
            2 if int(cfg[G_GAME]) == DOUBLE else 1,
            int(cfg[G_COLS]),
            int(cfg[G_CELLS]),
            np.array(layout(cfg), np.int64),
            table,
        )
        self._n = 0

    def reset(self, n: int | None = None) -> None:
        self._n = 0
        if n:
            self._alloc(n)

    def _alloc(self, n: int) -> None:
        self._n = n
        self.keys = np.zeros((n, self.memory), np.uint64)
        self.counts = np.zeros((n, self.memory), np.int32)
        self.last_card = np.full(n, -1, np.int64)
        self.last_from = np.full(n, -1, np.int64)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        ranks = self.preferences(obs, masks, starts, active)
        out = np.argmax(ranks, axis=1).astype(np.int64)  # ties: the lower action id
        playing = active & ~np.isneginf(ranks.max(axis=1))
        out[~playing] = 0
        self.commit(obs, masks, out, playing)
        return out

    def preferences(self, obs: np.ndarray, masks: np.ndarray, starts: np.ndarray,
                    active: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
        """:meth:`ranking` of the ``active`` games (all by default), the games of ``starts``
        forgotten first; :meth:`commit` then records the move played (``agents/veto.py``)."""
        if self._setup is None:
            raise ValueError("GreedyAgent: say which game it plays (GreedyAgent(game, options))")
        game, n_cards, decks, cols, cells, lay, table = self._setup
        if masks.shape[1] != table.shape[0]:
            raise ValueError(
                f"GreedyAgent is set up for {table.shape[0]} actions, the batch has "
                f"{masks.shape[1]}: call check_env(game, options) for this game"
            )
        if obs.shape[1] != lay[-1]:
            raise ValueError(
                f"GreedyAgent is set up for observations of {lay[-1]} values, the batch has "
                f"{obs.shape[1]}: call check_env(game, options) for this game"
            )
        b = masks.shape[0]
        if self._n != b:
            self._alloc(b)
        elif starts.any():
            self.keys[starts] = 0
            self.counts[starts] = 0
            self.last_card[starts] = -1
            self.last_from[starts] = -1
        return self.ranking(obs, masks, np.ones(b, bool) if active is None else active)

    def commit(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               active: np.ndarray) -> None:  # fmt: skip
        """Remember the moves ``actions`` of the ``active`` games that have a legal move."""
        self.record(obs, actions, np.asarray(active, bool) & masks.any(axis=1))

    def ranking(self, obs: np.ndarray, masks: np.ndarray, active: np.ndarray) -> np.ndarray:
        """(B, N) float64: how much the agent prefers each action now (higher first, ``-inf``
        for illegal ones): the moves it has played least often from this exact position first,
        then the priority table. Reads the memory without changing it (:meth:`record` does); a
        teacher uses it to try the agent's choices in order (``agents/teacher.py``)."""
        game, n_cards, decks, cols, cells, lay, table = self._setup
        out = np.empty(masks.shape, np.float64)
        _rank(np.ascontiguousarray(obs, np.float32), masks, active, table, game, n_cards,
              decks, cols, cells, lay, self.keys, self.counts, self.last_card, self.last_from,
              out)  # fmt: skip
        return out

    def record(self, obs: np.ndarray, actions: np.ndarray, active: np.ndarray) -> None:
        """Remember that each active game played ``actions`` from ``obs``."""
        game, n_cards, decks, cols, cells, lay, table = self._setup
        _record(np.ascontiguousarray(obs, np.float32), np.asarray(actions, np.int64), active,
                table, n_cards, decks, lay, self.keys, self.counts, self.last_card,
                self.last_from)  # fmt: skip
