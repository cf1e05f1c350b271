"""Agents by name: the one place that turns a policy name into a player of a variant.

    >>> from agents.named import make_agent
    >>> make_agent("greedy", "SH1-C4").name
    'greedy'

``experiments/evaluate.py`` (and so the demo), ``experiments/lost_games.py`` and
``experiments/veto.py`` ask this module, so a name means the same player everywhere. Importing it
loads neither torch nor the solver: each player's module is imported when that player is asked
for.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent, RandomAgent
from agents.play import VARIANTS

POLICY_NAMES = ("random", "greedy", "learned", "solver")
"""The players with a name; a path to a policy checkpoint (``.npz``) is accepted as well."""


def make_agent(
    policy: str | Path,
    variant: str,
    *,
    seed: int = 0,
    solver_nodes: int | None = 50_000,
    solver_seconds: float | None = 10.0,
    solver_cache: dict | None = None,
) -> Agent:
    """The player ``policy`` of ``variant`` (a tag of :data:`agents.play.VARIANTS`).

    ``policy`` is one of :data:`POLICY_NAMES` (``learned``: the committed policy network of the
    variant, :func:`agents.policy.learned_agent`) or the path of a policy checkpoint
    (:func:`agents.policy.load_policy`; a bad file raises
    :class:`agents.policy.CheckpointError`). ``seed`` seeds the random player; the solver's
    budget is per game and ``solver_cache`` (a dict) keeps its solutions between games.
    Unknown names and variants raise ``ValueError`` before anything is loaded.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    game, options = VARIANTS[variant]
    if isinstance(policy, Path) or str(policy).endswith(".npz"):
        from agents.policy import load_policy

        return load_policy(policy, game=game, options=options)
    if policy == "random":
        return RandomAgent(seed=seed)
    if policy == "greedy":
        from agents.greedy import GreedyAgent

        return GreedyAgent(game, options)
    if policy == "learned":
        from agents.policy import learned_agent

        return learned_agent(variant, game=game, options=options)
    if policy == "solver":
        from agents.solver_agent import SolverAgent

        return SolverAgent(max_seconds=solver_seconds, max_nodes=solver_nodes, cache=solver_cache)
    raise ValueError(
        f"unknown policy {policy!r}: use {', '.join(POLICY_NAMES)} or a policy checkpoint (.npz)"
    )
