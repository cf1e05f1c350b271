"""Agents for solitaire_gym: one policy interface (:class:`Agent`) and its players.

``RandomAgent`` (uniform legal moves), ``GreedyAgent`` (hand-written priorities per game),
``SolverAgent`` (plays the solver's solutions: the upper bound), ``MaskablePPOAgent`` (a
checkpoint of ``experiments/train.py``), ``SB3Agent`` and ``TorchAgent`` (any stable-baselines3
model or torch module), ``PolicyAgent`` (a policy network taught by the solver:
``agents/imitation.py``; ``learned_agent("SH1-C4")`` loads the committed one of a variant).
``play_deals`` plays a list of deals to the end with any of them; ``make_agent("greedy",
"SH1-C4")`` builds a player by name (``agents/named.py``), as ``experiments/evaluate.py`` does.
"""

from agents.base import RESIGN, Agent, GameView, RandomAgent, view_of
from agents.named import POLICY_NAMES, make_agent
from agents.play import VARIANTS, EpisodeResult, eval_deals, play_deals

__all__ = [
    "POLICY_NAMES",
    "RESIGN",
    "VARIANTS",
    "Agent",
    "CheckpointMismatch",
    "EpisodeResult",
    "GameView",
    "GreedyAgent",
    "MaskablePPOAgent",
    "PolicyAgent",
    "RandomAgent",
    "SB3Agent",
    "SolverAgent",
    "TorchAgent",
    "eval_deals",
    "learned_agent",
    "load_policy",
    "make_agent",
    "play_deals",
    "view_of",
]


def __getattr__(name: str):
    # the learned and solver agents import torch / the solver: load them on first use
    if name in ("MaskablePPOAgent", "SB3Agent", "TorchAgent", "CheckpointMismatch"):
        from agents import learned

        return getattr(learned, name)
    if name in ("PolicyAgent", "learned_agent", "load_policy"):
        from agents import policy

        return getattr(policy, name)
    if name == "GreedyAgent":
        from agents.greedy import GreedyAgent

        return GreedyAgent
    if name == "SolverAgent":
        from agents.solver_agent import SolverAgent

        return SolverAgent
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
