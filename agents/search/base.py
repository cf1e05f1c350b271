"""What the searches share: the variant they search, their batches of copies, the positions each
game has stood on (for breaking circles), the random generator of each decision, their counters.
"""

from __future__ import annotations

import numpy as np

from agents.base import Agent
from agents.greedy import obs_hashes
from solitaire_gym.envs.core import EnvCore, EnvOptions

MAX_BATCHES = 16
"""Batches of copies kept between decisions (by size); more are dropped and made again."""


class EngineSearch(Agent):
    """Base of the searches over the engine (``uses = "information"``): subclasses call
    :meth:`_setup` in their constructor and :meth:`_stand` at the start of each decision.

    ``visited`` holds, per game (row of the batch played), the hashes of the observations it has
    stood on; ``nodes_spent`` and ``decisions`` count the search's work since it was made."""

    uses = "information"

    def _setup(self, game: str, options: dict | None, name: str) -> None:
        self.opts = EnvOptions.build(game, **(options or {}), split="eval")
        self.game = game
        self.name = name
        self._cores: dict[object, EnvCore] = {}
        self.visited: dict[int, set[int]] = {}
        self.nodes_spent = 0
        self.decisions = 0

    def check_env(self, game: str, options: dict | None = None) -> None:
        variant = EnvOptions.build(game, **(options or {})).variant
        if variant != self.opts.variant:
            raise ValueError(
                f"{self.name} searches {self.opts.variant.tag}, not {variant.tag}: make it for "
                "the game it plays"
            )

    def reset(self, n: int | None = None) -> None:
        self.visited = {}

    def _batch(self, key: object, n: int) -> EnvCore:
        """A batch of ``n`` copies, kept under ``key`` between decisions."""
        core = self._cores.get((key, n))
        if core is None:
            if len(self._cores) >= MAX_BATCHES:
                self._cores.clear()
            core = self._cores[key, n] = EnvCore(self.opts, n)
        return core

    def _stand(self, obs, starts, rows, view) -> tuple[np.ndarray, list[np.random.Generator]]:
        """Check that ``view`` plays this variant with move ids; forget the games of ``starts``;
        remember the position of each game of ``rows``. Returns the hashes of their observations
        and each one's generator for this decision, seeded from the seed, the hash and the move
        counter (the same history gives the same generator in any batch)."""
        if view.options.variant != self.opts.variant or view.options.action_mode != "move":
            raise ValueError(
                f"{self.name} searches {self.opts.variant.tag} with action ids of moves; the env "
                f"plays {view.options.variant.tag} with action_mode={view.options.action_mode!r}"
            )
        for r in np.flatnonzero(starts):
            self.visited.pop(int(r), None)
        hashes = obs_hashes(np.ascontiguousarray(obs[rows], np.float32))
        moves = view.state.moves[rows]
        rngs = []
        for i, r in enumerate(rows):
            self.visited.setdefault(int(r), set()).add(int(hashes[i]))
            rngs.append(np.random.default_rng([self.seed, int(hashes[i]), int(moves[i])]))
        return hashes, rngs
