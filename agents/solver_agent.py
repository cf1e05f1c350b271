"""The solver as a player: the upper bound the other agents are measured against.

For each game it asks ``solitaire_gym.solver.solve`` for a solution from the game's position
(within ``max_seconds`` / ``max_nodes`` per game) and plays it move by move. It looks at the whole
position through the env (``uses = "position"``): in Double Solitaire and Solitaire Réfléchi that
includes the cards a player cannot see, so its wins are an upper bound, not a player's result
(Seahaven Towers hides nothing: there the bound is exact).

If a move of the plan is not legal in the env (it should not happen: the solver replays every
solution through the engine), it solves again from the position where it stands, once per game.
When the solver finds no solution (verdict ``"unsolvable"``, or ``"unknown"`` when the budget ran
out) the agent resigns the game (:data:`~agents.base.RESIGN`): the game counts as lost, where it
stands (no move played). The evaluation harness plays its plans to the end even past the envs'
step limits (``unlimited_steps``): the solver's depth-first solutions of Double Solitaire are
sometimes longer than 2000 moves, and the solver is the bound on winnability, not a player held
to the limit. ``verdicts`` maps each game code to the solver's verdict, nodes and
seconds; ``cache`` (a dict, e.g. loaded from JSON) lets a later run reuse earlier results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import RESIGN, Agent


def solver_available() -> bool:
    try:
        import solitaire_gym.solver  # noqa: F401
    except ImportError:
        return False
    return True


class SolverAgent(Agent):
    name = "solver"
    uses = "position"
    unlimited_steps = True  # its plans are finite; some are longer than the envs' step limits

    def __init__(
        self,
        *,
        max_seconds: float | None = 2.0,
        max_nodes: int | None = None,
        cache: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        from solitaire_gym.solver import solve  # ImportError while the solver is not built

        self._solve = solve
        self.max_seconds = max_seconds
        self.max_nodes = max_nodes
        self.cache: dict[str, dict[str, Any]] = {} if cache is None else cache
        self.verdicts: dict[str, dict[str, Any]] = {}
        self.replans = 0
        self._plans: list[list[str] | None] = []
        self._pos: list[int] = []
        self._replanned: list[bool] = []

    def reset(self, n: int | None = None) -> None:
        self._plans, self._pos, self._replanned = [], [], []

    def solve(self, position: dict, *, fresh: bool) -> dict[str, Any]:
        """The solver's answer for ``position`` as a dict (verdict, solution, nodes, seconds),
        from the cache for a fresh deal already solved with the same budget."""
        code = position["code"]
        budget = {"max_seconds": self.max_seconds, "max_nodes": self.max_nodes}
        hit = self.cache.get(code) if fresh else None
        if hit is not None and hit.get("budget") == budget:
            return hit
        r = self._solve(position, max_seconds=self.max_seconds, max_nodes=self.max_nodes)
        out = {
            "verdict": r.verdict,
            "solution": list(r.solution),
            "nodes": int(r.nodes),
            "seconds": float(r.seconds),
            "budget": budget,
        }
        if fresh:
            self.cache[code] = out
        return out

    def _start(self, i: int, view) -> None:
        position = view.position(i)
        fresh = position.get("moves", 0) == 0
        res = self.solve(position, fresh=fresh)
        self.verdicts[position["code"]] = {k: res[k] for k in ("verdict", "nodes", "seconds")}
        self._plans[i] = res["solution"] if res["verdict"] == "solvable" else None
        self._pos[i] = 0

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        b = masks.shape[0]
        if len(self._plans) != b:
            self._plans, self._pos, self._replanned = [None] * b, [0] * b, [False] * b
            starts = np.ones(b, bool)
        out = np.zeros(b, np.int64)
        for i in range(b):
            if starts[i]:  # (a game over from the deal on is asked too: its verdict counts)
                self._replanned[i] = False
                self._start(i, view)
            if not active[i]:
                continue
            plan = self._plans[i]
            if plan is None or self._pos[i] >= len(plan):
                out[i] = RESIGN
                continue
            a = view.move_to_action(plan[self._pos[i]])
            if not masks[i, a]:
                if self._replanned[i]:
                    out[i] = RESIGN
                    continue
                self._replanned[i] = True
                self.replans += 1
                res = self.solve(view.position(i), fresh=False)
                self._plans[i] = res["solution"] if res["verdict"] == "solvable" else None
                self._pos[i] = 0
                if not self._plans[i]:
                    out[i] = RESIGN
                    continue
                a = view.move_to_action(self._plans[i][0])
            out[i] = a
            self._pos[i] += 1
        return out
