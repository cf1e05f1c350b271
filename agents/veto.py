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

**Without the hidden cards** (``samples=K``, Solitaire Réfléchi only): until the stock is first
turned over, the player has seen none of the stock's cards (it knows which they are: every other
card is face up, but not their order). The veto then judges each tried move under ``K`` random
orders of the stock instead of the real one and lets it through when the solver finds a win under
most of them: what a player could know with perfect look-ahead and no hidden card. After the
first turn-over the stock's order is known and the real position is judged.

``experiments/veto.py`` plays both on validation deals.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.teacher import DEFAULT_MAX_NODES, MAX_TRIES, first_winnable, prove
from solitaire_gym.errors import is_int
from solitaire_gym.game import Game


class SolverVetoAgent(Agent):
    """``inner`` (a :class:`~agents.policy.PolicyAgent` or :class:`~agents.greedy.GreedyAgent`:
    anything with ``preferences`` and ``commit``) with the solver's veto (module docstring);
    ``samples`` random stock orders per judged move instead of the real one (0: the real one),
    drawn from ``seed``. ``vetoed`` counts the moves where the policy's first choice was
    replaced, ``moves`` all the moves chosen."""

    uses = "position"

    def __init__(self, inner: Agent, *, max_nodes: int = DEFAULT_MAX_NODES,
                 max_tries: int = MAX_TRIES, samples: int = 0, seed: int = 0) -> None:  # fmt: skip
        if not (hasattr(inner, "preferences") and hasattr(inner, "commit")):
            raise TypeError(f"{inner!r} cannot be vetoed: it has no preferences() and commit()")
        for key, value, least in (("max_nodes", max_nodes, 1), ("max_tries", max_tries, 1),
                                  ("samples", samples, 0)):  # fmt: skip
            if not is_int(value) or value < least:
                raise ValueError(f"{key} must be an integer of at least {least}, not {value!r}")
        self.inner = inner
        self.name = f"{inner.name}+veto" + (f"@{samples}" if samples else "")
        self.max_nodes = int(max_nodes)
        self.max_tries = int(max_tries)
        self.samples = int(samples)
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.plans: dict[int, list[str]] = {}  # per game: the rest of the last win found
        self.turned: set[int] = set()  # the games whose stock has been turned over
        self.vetoed = 0
        self.moves = 0

    def reset(self, n: int | None = None) -> None:
        self.inner.reset(n)
        self.plans = {}
        self.turned = set()
        self.rng = np.random.default_rng(self.seed)

    def check_env(self, game: str, options: dict | None = None) -> None:
        if self.samples and game != "solitaire_reflechi":
            raise ValueError(f"samples: only Solitaire Réfléchi hides the stock alone, not {game}")
        self.inner.check_env(game, options)

    def _sampled(self, position: dict, move: str) -> bool:
        """Whether the solver finds a win after ``move`` under most of ``samples`` random
        orders of the stock of ``position``."""
        wins = 0
        for _ in range(self.samples):
            sample = dict(position)
            # from the cards sorted: the samples cannot depend on the real order
            sample["stock"] = [str(c) for c in self.rng.permutation(sorted(position["stock"]))]
            g = Game.from_dict(sample)
            g.play(move)
            wins += prove(g, self.max_nodes)[0] == "solvable"
        return 2 * wins > self.samples

    def _choose(self, order: np.ndarray, row: int, view) -> int:
        """The first action of ``order`` the solver proves still winnable from game ``row``."""
        position = view.position(row)
        if self.samples and row not in self.turned and position["stock"]:
            for a in order[: self.max_tries]:
                if self._sampled(position, view.action_to_move(int(a))):
                    return int(a)
            return int(order[0])
        a, self.plans[row], _ = first_winnable(position, order, self.plans.get(row, []),
                                               view.action_to_move, self.max_nodes,
                                               self.max_tries)  # fmt: skip
        return int(order[0]) if a is None else a

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        scores = self.inner.preferences(obs, masks, starts)
        out = np.zeros(len(masks), np.int64)
        for row in np.flatnonzero(np.asarray(active, bool) & masks.any(axis=1)):
            if starts[row]:
                self.plans.pop(int(row), None)
                self.turned.discard(int(row))
            legal = np.flatnonzero(masks[row])
            order = legal[np.argsort(-scores[row, legal], kind="stable")]
            out[row] = self._choose(order, int(row), view)
            if view.action_to_move(int(out[row])) == "recycle":
                self.turned.add(int(row))
            self.moves += 1
            self.vetoed += int(out[row] != order[0])
        self.inner.commit(obs, masks, out, active)
        return out
