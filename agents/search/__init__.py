"""Players that look ahead: searches over the engine, blind to the cards the player has not seen.

- :class:`~agents.search.rollouts.RolloutSearch`: nested rollouts of the greedy player (levels 1
  and 2), a budget in nodes per move, determinizations where cards are hidden
  (``agents/search/rollouts.py``).

``agents.make_agent("search", variant)`` builds the shipped player (``search@256``);
``"search@N"`` another budget, ``"search@N-l2"`` the nested level 2.
"""

from agents.search.rollouts import DEFAULT_NODES, RolloutSearch, plan

__all__ = ["DEFAULT_NODES", "RolloutSearch", "plan"]
