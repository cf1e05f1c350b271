"""Players that look ahead: searches over the engine, blind to the cards the player has not seen.

- :class:`~agents.search.rollouts.RolloutSearch`: nested rollouts of the greedy player (levels 1
  and 2), a budget in nodes per move, determinizations where cards are hidden
  (``agents/search/rollouts.py``); with a value network its rollouts are valued by it.
- :class:`~agents.search.tree.TreeSearch`: PUCT with the policy network as prior and the value
  network at the leaves (``agents/search/tree.py``).
- ``agents/search/value.py``: the value network (solver labels, training, checkpoints).
- ``agents/search/expert.py``: the search player as the expert of expert iteration.
- :class:`~agents.search.finder.WinFinder`: the rollout search on the true deal, a finder of
  wins to certify (Vegas solvability), not a player (``agents/search/finder.py``).

``agents.make_agent("search", variant)`` builds the shipped player (``search@256``);
``"search@N"`` another budget, ``"search@N-l2"`` the nested level 2, ``"search@N-p"`` rollouts
played by the policy network, ``"search@N-d"`` deep rollouts, ``"search@N-b"`` a budget shared
over the game, ``"search@N-v"`` rollouts valued by the committed value network, ``"puct@N"`` the
tree search (``agents.named.search_budget`` parses the names).
"""

from agents.search.rollouts import DEFAULT_NODES, RolloutSearch, plan

__all__ = ["DEFAULT_NODES", "RolloutSearch", "plan"]
