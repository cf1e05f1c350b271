"""The win finder: the rollout search on the true deal, to find wins where the solver finds none.

:class:`WinFinder` is :class:`~agents.search.rollouts.RolloutSearch` (nested rollouts, a budget in
nodes per move, lines kept and followed) that counts no card as hidden: its copies of a game are
the game itself, face-down cards and stock order included. It is **not a player** (``uses =
"position"``, like :class:`~agents.SolverAgent`): what it reads, a player never sees. It answers
a question about the deal, whether it can be won, from below: a game it wins is a win that
exists, and its moves are the certificate (:func:`certify` replays them through the engine from
the deal's code). A game it loses proves nothing.

Double Solitaire with Vegas scoring goes through the stock once. There the solver, a depth-first
search over every move, proves a few deals lost and wins none in 30 s a deal
(``docs/solver.md``); the finder's rollouts reach far deeper within the same game
(``experiments/vegas_bracket.py`` puts both into one bracket: ``docs/search.md``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.base import RESIGN
from agents.search.rollouts import RolloutSearch
from solitaire_gym.errors import ArgumentError, IllegalMoveError, MoveSyntaxError, is_int, shown


class WinFinder(RolloutSearch):
    """:class:`~agents.search.rollouts.RolloutSearch` on the true deal (module docstring), named
    ``finder@N``: the same arguments, but no card is hidden from it, so it never deals the unseen
    cards anew and keeps its lines from the first move.

    ``patience`` (moves, 0: never): a game that has gone that many moves without more cards home
    than it ever had is given up (:data:`~agents.base.RESIGN`): a lost Vegas game otherwise
    circles to the step limit, every move at full budget."""

    uses = "position"

    def __init__(self, game: str, options: dict | None = None, *, patience: int = 0,
                 **kwargs) -> None:  # fmt: skip
        if isinstance(patience, bool) or not is_int(patience) or not 0 <= patience <= 10**6:
            raise ArgumentError(
                f"patience must be a whole number in 0 … 10**6, not {shown(patience)}"
            )
        self.patience = int(patience)
        nodes = kwargs.get("nodes")
        kwargs.setdefault("name", f"finder@{nodes}" if nodes is not None else "finder")
        super().__init__(game, options, **kwargs)
        self._since: dict[int, int] = {}  # per game: the move at which its record was set

    def reset(self, n: int | None = None) -> None:
        super().reset(n)
        self._since = {}

    def _unseen(self, state, rows: np.ndarray) -> np.ndarray:
        return np.zeros(len(rows), np.int64)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        # the search keeps each game's record of cards home (``record``): a game whose record
        # this decision did not raise has gone one more move without a gain
        rows = np.flatnonzero(np.asarray(active, bool)).tolist()
        before = [-1 if starts[r] else self.record.get(r, -1) for r in rows]
        out = super()._act(obs, masks, starts, active, view)
        if not self.patience:
            return out
        for r, old in zip(rows, before, strict=True):
            moves = int(view.state.moves[r])
            if self.record.get(r, -1) > old:
                self._since[r] = moves
            elif moves - self._since.get(r, 0) >= self.patience:
                out[r] = RESIGN
        return out


def certify(code: str, moves: Sequence[str]) -> bool:
    """Whether ``moves`` (the notation of docs/rules.md), played by the engine from the deal
    ``code``, win it: every move legal where it is played, the game won after the last."""
    from solitaire_gym import Game

    if not isinstance(moves, (list, tuple)) or not all(isinstance(m, str) for m in moves):
        raise ArgumentError(f"moves must be a list of move strings, not {shown(moves)}")
    game = Game.from_code(code)
    for move in moves:
        if game.won:
            return False  # moves past the win: not the certificate of a game
        try:
            game.play(move)
        except (IllegalMoveError, MoveSyntaxError):
            return False
    return game.won
