"""What a player remembers of its own game: how often it has played each action from each
position it has met.

A policy network that sees only the position and its last move cannot tell a position it meets
for the first time from one it has left three times by the same move, and the teacher's labels
depend on exactly that: the greedy order it follows (``agents/greedy.py``) puts the moves it has
played least often from a position first. Trained on the same teacher games, networks with this
memory won far more validation deals than without (``experiments/results/README.md``). A
network built with ``memory: true``
(``agents/networks/cards.py``) gets, for each legal action, how often this game has played it from this
exact observation before (0, 1, 2, or 3 and more: :data:`LEVELS`). With ``memory_mode:
relative`` it also gets how many times more than the least-played legal action there (0 … 3 and
more): greedy, and hence the teacher, plays the least-played moves first however often the game
has come back, while plain counts all read "3 and more" from the fourth visit on
(:data:`MODES`).

The memory is keyed by the observation, so it holds only what the player has seen: two
positions the player cannot tell apart share their counts. It is greedy's own table (the same
position hash and probing, :func:`agents.greedy.lookup`), kept per game of a batch:
:class:`PlayMemory` at play time, :func:`tried_counts` over the stored games of teacher data,
so a network is trained on exactly the counts it sees when it plays.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from agents.greedy import TABLE, lookup, obs_hash
from solitaire_gym.errors import is_int

LEVELS = 4
"""Counts a network tells apart: 0, 1, 2, and 3 or more plays of an action from a position."""

MODES = {"count": LEVELS, "relative": LEVELS * LEVELS}
"""What a memory shows per legal action, and how many values that takes: ``count``, the
capped count ``c``; ``relative``, ``c * LEVELS + r``, with ``r`` how many plays more than the
least-played legal action, capped the same way."""

FULL = TABLE * 3 // 4
"""Entries a game's table takes at most; past that, new (position, action) pairs are not
remembered (they count 0), so that a lookup always meets a free slot and ends."""


@nb.njit(cache=True)
def _counts(obs, masks, keys, counts, relative, out):
    raw = np.zeros(masks.shape[1], np.int64)
    for b in range(obs.shape[0]):
        h = obs_hash(obs[b])
        least = -1
        for a in range(masks.shape[1]):
            if masks[b, a]:
                _, _, cnt = lookup(keys, counts, b, h, a)
                raw[a] = cnt
                if least < 0 or cnt < least:
                    least = cnt
        for a in range(masks.shape[1]):
            if masks[b, a]:
                c = min(raw[a], LEVELS - 1)
                if relative:
                    c = c * LEVELS + min(raw[a] - least, LEVELS - 1)
                out[b, a] = c


@nb.njit(cache=True)
def _record(obs, actions, active, keys, counts, used):
    for b in range(obs.shape[0]):
        if not active[b]:
            continue
        key, slot, cnt = lookup(keys, counts, b, obs_hash(obs[b]), actions[b])
        if cnt == 0:
            if used[b] >= FULL:
                continue
            keys[b, slot] = key
            used[b] += 1
        counts[b, slot] += 1


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"memory mode must be one of {', '.join(MODES)}, not {mode!r}")


class PlayMemory:
    """The memory of ``n`` games played side by side (rows of a batch), showing what ``mode``
    says (:data:`MODES`)."""

    def __init__(self, n: int, mode: str = "count") -> None:
        if not is_int(n) or n < 1:
            raise ValueError(f"PlayMemory needs 1 or more games, not {n!r}")
        _check_mode(mode)
        self.mode = mode
        self.n = int(n)
        self.keys = np.zeros((self.n, TABLE), np.uint64)
        self.table = np.zeros((self.n, TABLE), np.int32)
        self.used = np.zeros(self.n, np.int64)

    def forget(self, rows: np.ndarray | None = None) -> None:
        """Forget the games of ``rows`` (a bool mask of length ``n``; all when None): they
        start again."""
        if rows is None:
            rows = np.ones(self.n, bool)
        rows = self._rows(rows)
        self.keys[rows] = 0
        self.table[rows] = 0
        self.used[rows] = 0

    def counts(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """(n, N) uint8: for each legal action of each game, how often that game has played it
        from this observation (capped at ``LEVELS - 1``; with mode ``relative`` combined with
        the plays more than the least-played legal action: :data:`MODES`; 0 for illegal
        actions)."""
        obs, masks = self._batch(obs, masks)
        out = np.zeros(masks.shape, np.uint8)
        _counts(obs, masks, self.keys, self.table, self.mode == "relative", out)
        return out

    def record(self, obs: np.ndarray, actions: np.ndarray, active: np.ndarray) -> None:
        """Remember that each game of ``active`` (bool, length ``n``) played ``actions``
        from ``obs``."""
        obs = self._batch(obs)[0]
        actions = np.asarray(actions)
        if actions.shape != (self.n,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.n} integers, not {actions.dtype} "
                             f"{actions.shape}")  # fmt: skip
        active = self._rows(active)
        if (actions[active] < 0).any():
            raise ValueError("an active game's action is negative")
        _record(obs, actions.astype(np.int64), active, self.keys, self.table, self.used)

    def _rows(self, rows) -> np.ndarray:
        rows = np.asarray(rows)
        if rows.shape != (self.n,) or rows.dtype != bool:
            raise ValueError(f"rows must be a bool mask of {self.n} games, not {rows.dtype} "
                             f"{rows.shape}")  # fmt: skip
        return rows

    def _batch(self, obs, masks=None):
        obs = np.ascontiguousarray(obs, np.float32)
        if obs.ndim != 2 or obs.shape[0] != self.n:
            raise ValueError(f"obs must be ({self.n}, D), not {obs.shape}")
        if masks is not None:
            masks = np.ascontiguousarray(masks, bool)
            if masks.ndim != 2 or masks.shape[0] != self.n:
                raise ValueError(f"masks must be ({self.n}, N), not {masks.shape}")
        return obs, masks


def tried_counts(obs: np.ndarray, masks: np.ndarray, played: np.ndarray,
                 episode: np.ndarray, mode: str = "count") -> np.ndarray:  # fmt: skip
    """For positions stored game after game (``agents.dataset.load_shards``: ``episode`` the
    deal of each, ``played`` the action played there): the counts a :class:`PlayMemory` of
    ``mode`` shows at each position, (T, N) uint8. A new game starts where ``episode``
    changes."""
    _check_mode(mode)
    obs = np.ascontiguousarray(obs, np.float32)
    masks = np.ascontiguousarray(masks, bool)
    played, episode = np.asarray(played), np.asarray(episode)
    t = len(played)
    if obs.ndim != 2 or masks.ndim != 2 or len(obs) != t or len(masks) != t or len(episode) != t:
        raise ValueError(f"obs, masks, played and episode must hold one row per position, not "
                         f"{obs.shape}, {masks.shape}, {played.shape}, {episode.shape}")  # fmt: skip
    if played.dtype.kind not in "iu" or (played < 0).any():
        raise ValueError("played must hold non-negative action ids")
    out = np.zeros(masks.shape, np.uint8)
    mem = PlayMemory(1)
    _along(obs, masks, played.astype(np.int64), episode.astype(np.int64), mem.keys, mem.table,
           mem.used, mode == "relative", out)  # fmt: skip
    return out


@nb.njit(cache=True)
def _along(obs, masks, played, episode, keys, counts, used, relative, out):
    """:func:`tried_counts` in one compiled pass: per position, the counts, then the record."""
    one = np.ones(1, np.bool_)
    for i in range(obs.shape[0]):
        if i == 0 or episode[i] != episode[i - 1]:  # a new game: forget
            keys[:] = 0
            counts[:] = 0
            used[:] = 0
        _counts(obs[i : i + 1], masks[i : i + 1], keys, counts, relative, out[i : i + 1])
        _record(obs[i : i + 1], played[i : i + 1], one, keys, counts, used)
