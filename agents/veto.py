"""A policy with the solver's veto: what the policy would win if it never made a losing move.

A diagnostic, not a player to ship (it calls the solver at every move, with the whole position,
hidden cards included). :class:`SolverVetoAgent` plays the policy's best-scoring legal move
whose resulting position the solver still proves winnable, trying the moves in the policy's
order, as the teacher (``agents/teacher.py``) tries greedy's; when none is proven within
``max_tries`` tries, the policy's own first choice. Comparing the two on the same deals splits
a policy's lost games in two:

- the games the veto wins were lost by single moves after which no win was left: recognising
  them needs the look-ahead a network does not have (or, in Réfléchi and Double Solitaire, the
  hidden cards the solver sees);
- the games lost even with the veto make no progress although every move keeps a win in reach
  (the policy goes round in circles, or runs out of steps): the policy's own choices between
  safe moves are what is short.

``experiments/veto.py`` plays both on validation deals.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.teacher import DEFAULT_MAX_NODES, MAX_TRIES, prove
from solitaire_gym.game import Game


class SolverVetoAgent(Agent):
    """``inner`` (a :class:`~agents.policy.PolicyAgent` or :class:`~agents.greedy.GreedyAgent`: anything with ``preferences`` and
    ``commit``) with the solver's veto (module docstring). ``vetoed`` counts the moves where
    the policy's first choice was replaced, ``moves`` all the moves chosen."""

    uses = "position"

    def __init__(self, inner: Agent, *, max_nodes: int = DEFAULT_MAX_NODES,
                 max_tries: int = MAX_TRIES) -> None:  # fmt: skip
        if not (hasattr(inner, "preferences") and hasattr(inner, "commit")):
            raise TypeError(f"{inner!r} cannot be vetoed: it has no preferences() and commit()")
        for key, value in (("max_nodes", max_nodes), ("max_tries", max_tries)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{key} must be a positive integer, not {value!r}")
        self.inner = inner
        self.name = f"{inner.name}+veto"
        self.max_nodes = max_nodes
        self.max_tries = max_tries
        self.plans: dict[int, list[str]] = {}  # per game: the rest of the last win found
        self.vetoed = 0
        self.moves = 0

    def reset(self, n: int | None = None) -> None:
        self.inner.reset(n)
        self.plans = {}

    def check_env(self, game: str, options: dict | None = None) -> None:
        self.inner.check_env(game, options)

    def _choose(self, order: np.ndarray, row: int, view) -> int:
        """The first action of ``order`` the solver proves still winnable from game ``row``."""
        position = view.position(row)
        plan = self.plans.get(row, [])
        for a in order[: self.max_tries]:
            move = view.action_to_move(int(a))
            if plan and plan[0] == move:  # the rest of the last win found proves it
                self.plans[row] = plan[1:]
                return int(a)
            g = Game.from_dict(position)
            g.play(move)
            verdict, path = prove(g, self.max_nodes)
            if verdict == "solvable":
                self.plans[row] = [view.action_to_move(b) for b in path]
                return int(a)
        self.plans[row] = []
        return int(order[0])

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        scores = self.inner.preferences(obs, masks, starts)
        out = np.zeros(len(masks), np.int64)
        for row in np.flatnonzero(np.asarray(active, bool) & masks.any(axis=1)):
            if starts[row]:
                self.plans.pop(int(row), None)
            legal = np.flatnonzero(masks[row])
            order = legal[np.argsort(-scores[row, legal], kind="stable")]
            out[row] = self._choose(order, int(row), view)
            self.moves += 1
            self.vetoed += int(out[row] != order[0])
        self.inner.commit(obs, masks, out, active)
        return out
