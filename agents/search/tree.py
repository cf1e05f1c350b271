"""Tree search guided by a policy network (prior) and a value network (leaves): PUCT over the engine.

**The tree** of a decision holds, per node, the legal moves met there, the policy's prior of each
(a softmax of the network's scores over the legal moves), and per move a visit count ``N`` and a
total value ``W``. A **simulation** walks from the root, at each node taking the move of highest

    Q + c · P · √(ΣN) / (1 + N),   Q = W / N  (an unvisited move: the node's own value),

until it reaches a move not tried yet; the position after it is valued by the value network
(``agents/search/value.py``: the probability that it is winnable; 1 when won, 0 when stuck),
its moves get the policy's priors, and the value is added along the path. After the budget the
most visited root move is played (ties: the higher prior).

**Nodes and batching.** A simulation replays its path from the root on a copy of the game: each
move it applies is a node of the budget, so ``nodes`` bounds the moves applied for a decision:
the root's expansion (one move per legal move, to find the moves that lead back to a position of
the game, while the budget lasts) and every simulation's moves (the last one is cut where the
budget ends, and valued there). A forced move costs nothing. The simulations of every game in play
run together, one copy per game, as rows of one engine batch; the networks score the leaves of all
games in one pass.

**Hidden cards.** In games with hidden cards every simulation runs on a new determinization of
the root (its unseen cards dealt anew at random, ``solitaire_gym.engine.information``): the tree
is open loop, a path of moves. A move of the path that the sampled deal makes illegal ends the
simulation there, valued at the position reached. Nothing reads the hidden cards.

**Circles.** As in the rollout search: the positions a game has stood on are remembered (hashes
of the observation); a root move leading back to one is searched only when every move does.

**Determinism.** The generator of a decision is seeded from ``seed``, the hash of the observation
and the move counter: the same game history gives the same move in any batch.
"""

from __future__ import annotations

import math

import numpy as np

from agents.greedy import obs_hashes
from agents.search.base import EngineSearch
from solitaire_gym.engine.information import copy_rows, redeal_unseen, unseen_counts
from solitaire_gym.envs import kernels
from solitaire_gym.envs.core import EnvCore
from solitaire_gym.errors import ArgumentError, is_int, shown

DEFAULT_C = 1.5
"""The exploration constant ``c`` of the selection rule."""
MAX_PATH = 200
"""Longest path a simulation replays (moves)."""


class _Node:
    """One node: the legal moves met there, their priors, visits and total values; ``child`` the
    node after each move (-1: not expanded), ``value`` the network's value of the node."""

    __slots__ = ("child", "moves", "n", "prior", "value", "w")

    def __init__(self, moves: np.ndarray, prior: np.ndarray, value: float) -> None:
        self.moves = moves
        self.prior = prior
        self.n = np.zeros(moves.size)
        self.w = np.zeros(moves.size)
        self.child = np.full(moves.size, -1, np.int64)
        self.value = value

    def select(self, c: float, allowed: np.ndarray | None = None) -> int:
        q = np.where(self.n > 0, self.w / np.maximum(self.n, 1), self.value)
        u = q + c * self.prior * math.sqrt(max(1.0, self.n.sum())) / (1 + self.n)
        if allowed is not None:
            u = np.where(allowed, u, -np.inf)
        return int(np.argmax(u))


def _softmax_rows(scores: np.ndarray, masks: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per row: the legal moves and the softmax of their scores."""
    out = []
    for s, m in zip(scores, masks, strict=True):
        moves = np.flatnonzero(m)
        z = s[moves].astype(np.float64)
        z = np.exp(z - z.max()) if moves.size else z
        out.append((moves, z / z.sum() if moves.size else z))
    return out


class TreeSearch(EngineSearch):
    """PUCT (module docstring) for ``game`` with ``options``: ``nodes`` per move, ``policy`` a
    :class:`~agents.policy.PolicyAgent` (its scores are the priors), ``value`` a
    :class:`~agents.search.value.ValueFunction`, exploration ``c``, random choices from ``seed``.
    ``nodes_spent`` and ``decisions`` count its work."""

    def __init__(self, game: str, options: dict | None = None, *, policy, value,
                 nodes: int = 256, c: float = DEFAULT_C, seed: int = 0,
                 name: str | None = None) -> None:  # fmt: skip
        if not is_int(nodes) or not 1 <= nodes <= 1 << 20:
            raise ArgumentError(f"nodes must be an integer in 1 … {1 << 20}, not {shown(nodes)}")
        if not isinstance(c, (int, float)) or isinstance(c, bool) or not 0 <= c <= 100:
            raise ArgumentError(f"c must be a number in 0 … 100, not {shown(c)}")
        if not is_int(seed) or not 0 <= seed < 2**63:
            raise ArgumentError(f"seed must be a non-negative integer, not {shown(seed)}")
        if not hasattr(policy, "scores") or not callable(value):
            raise ArgumentError("policy must be a policy network and value a value network")
        policy.check_env(game, options)
        self.policy, self.value = policy, value
        self.nodes, self.c, self.seed = int(nodes), float(c), int(seed)
        self._setup(game, options, name or f"puct@{nodes}")

    def _evaluate(self, core: EnvCore, rows: np.ndarray, prev: np.ndarray):
        """Values and (moves, priors) of the positions in ``rows`` of ``core``."""
        obs, masks = core.obs[rows], core.masks[rows].astype(bool)
        v = np.where(core.won[rows], 1.0, np.where(core.counts[rows] > 0, self.value(obs), 0.0))
        priors = _softmax_rows(self.policy.scores(obs, masks, prev), masks)
        return v, priors

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        out = np.zeros(len(masks), np.int64)
        rows = np.flatnonzero(np.asarray(active, bool) & masks.any(axis=1))
        _, rngs = self._stand(obs, starts, rows, view)
        if rows.size == 0:
            return out
        src = view.state
        legal = [np.flatnonzero(masks[r]) for r in rows]
        forced = np.array([m.size == 1 for m in legal])
        out[rows[forced]] = [m[0] for m, f in zip(legal, forced, strict=True) if f]
        todo = np.flatnonzero(~forced)
        if todo.size:
            out[rows[todo]] = self._search(src, rows[todo], [rngs[i] for i in todo])
        self.decisions += rows.size
        return out

    def _search(self, src, rows, rngs) -> np.ndarray:
        g = rows.size
        core = self._batch(0, g)
        idx = np.arange(g, dtype=np.int64)
        n_act = core.n_actions
        hidden = unseen_counts(src, rows) > 0
        spent = np.zeros(g, np.int64)

        def fresh_copies() -> None:
            copy_rows(core.state, idx, src, rows)
            for i in np.flatnonzero(hidden):
                redeal_unseen(core.state, [i], rngs[i])
            core.refresh(idx)

        # the root: its priors and value from the real observation (hidden cards unread); which
        # moves lead back to a position of the game, by playing each once (on a copy)
        fresh_copies()
        v0, pri0 = self._evaluate(core, idx, np.full(g, n_act, np.int64))
        trees = [[_Node(pri0[i][0], pri0[i][1], float(v0[i]))] for i in range(g)]
        allowed = [np.ones(trees[i][0].moves.size, bool) for i in range(g)]
        width = max(tree[0].moves.size for tree in trees)
        for j in range(width):
            act = np.full(g, kernels.ROW_SKIP, np.int64)
            has = np.array([trees[i][0].moves.size > j for i in range(g)]) & (spent < self.nodes)
            if not has.any():
                break
            act[has] = [trees[i][0].moves[j] for i in np.flatnonzero(has)]
            fresh_copies()
            core.step(act)
            spent += has
            h = obs_hashes(core.obs)
            for i in np.flatnonzero(has):
                if int(h[i]) in self.visited[int(rows[i])]:
                    allowed[i][j] = False
        for i in range(g):
            if not allowed[i].any():
                allowed[i][:] = True
        # simulations, all games together, until every game has spent its budget
        stalled = np.zeros(g, bool)
        while True:
            live = np.flatnonzero((spent < self.nodes) & ~stalled)
            if live.size == 0:
                break
            paths: list[list[tuple[int, int]]] = [[] for _ in range(g)]
            for i in live:
                tree, node = trees[i], 0
                while True:
                    k = tree[node].select(self.c, allowed[i] if node == 0 else None)
                    paths[i].append((node, k))
                    nxt = int(tree[node].child[k])
                    if nxt < 0 or len(paths[i]) >= MAX_PATH:
                        break
                    node = nxt
            fresh_copies()
            depth = np.zeros(g, np.int64)  # moves of its path each copy has played
            going = np.zeros(g, bool)
            going[live] = True
            prev = np.full(g, n_act, np.int64)
            for t in range(max(len(paths[i]) for i in live)):
                act = np.full(g, kernels.ROW_SKIP, np.int64)
                for i in np.flatnonzero(going):
                    if t >= len(paths[i]) or spent[i] >= self.nodes:
                        going[i] = False
                        continue
                    node, k = paths[i][t]
                    a = int(trees[i][node].moves[k])
                    if core.won[i] or not core.masks[i, a]:  # the sampled deal differs
                        going[i] = False
                        continue
                    act[i] = a
                    prev[i] = a
                core.step(act)
                depth += going
                spent += going
            v, priors = self._evaluate(core, live, prev[live])
            for j, i in enumerate(live):
                path = paths[i][: max(int(depth[i]), 1)]
                node, k = path[-1]
                tree = trees[i]
                if depth[i] == len(paths[i]) and tree[node].child[k] < 0 and priors[j][0].size:
                    tree[node].child[k] = len(tree)
                    tree.append(_Node(priors[j][0], priors[j][1], float(v[j])))
                for node, k in path:
                    tree[node].n[k] += 1
                    tree[node].w[k] += float(v[j])
            stalled[live[depth[live] == 0]] = True  # no move could be played: stop its search
        self.nodes_spent += int(spent.sum())
        best = []
        for i in range(g):
            root = trees[i][0]
            key = np.where(allowed[i], root.n + 1e-6 * root.prior, -np.inf)
            best.append(int(root.moves[int(np.argmax(key))]))
        return np.array(best, np.int64)
