"""The Game API: one game, readable, in the notation of docs/rules.md. A batch of one over
the engine.

>>> g = Game.from_code("sh1-c4-aaaaaj2 ")
>>> g.code
'SH1-C4-AAAAAJ2'
>>> g.legal_moves()[:3]
['t1>c', 't1>t7', 't2>c']
>>> g.explain("t3>t5")
'a card goes on a card of the same suit and one rank higher'
>>> g.play("t1>t7"); g.moves
1
"""

from __future__ import annotations

from solitaire_gym.engine.game import RulesGame


class Game(RulesGame):
    """A single game of Double Solitaire, Solitaire Réfléchi or Seahaven Towers.

    Make one with :meth:`from_code`, :meth:`new` or :meth:`from_dict`. Moves are strings in the
    notation of ``docs/rules.md`` (``"draw"``, ``"t3:4>t7"``, ``"w>f"``, ``"f3>c"`` …). A refused
    move raises :class:`IllegalMoveError` whose message is the rule that forbids it, and changes
    nothing.

    ``undo_depth`` defaults to the app's (Double Solitaire 200, the others 100).
    """

    def play(self, move: str | int) -> None:
        """Play ``move`` (a string, or an action id). Raises :class:`IllegalMoveError` (the rule)
        or :class:`MoveSyntaxError`; a refused move changes nothing. A move of the solution that
        :meth:`hint` follows keeps the rest of that solution; any other move drops it."""
        plan = self.__dict__.get("_plan")
        if plan is None:
            super().play(move)
            return
        a, why = self._check(move)
        on_plan = why is None and plan[1][:1] == [self.move_text(a)] and plan[0] == self.to_dict()
        super().play(move)
        self._plan = (self.to_dict(), plan[1][1:]) if on_plan else None

    def hint(self, max_seconds: float | None = 2.0) -> str | None:
        """The next move of a solution from this position (the solver, ``solitaire_gym.solver``),
        or None when none is found within ``max_seconds``. In Solitaire Réfléchi and Double
        Solitaire the solver knows the hidden cards: a hint may rely on what the player cannot
        see. Following the hints plays one solution through: the rest of the solution is kept
        while the game stays on it, so two solutions are never interleaved."""
        from solitaire_gym.solver import solve

        here = self.to_dict()
        plan = self.__dict__.get("_plan")
        if plan is not None and plan[0] == here and plan[1]:
            return plan[1][0]
        result = solve(self, max_seconds=max_seconds)
        if not (result.solved and result.solution):
            self._plan = None
            return None
        self._plan = (here, list(result.solution))
        return result.solution[0]
