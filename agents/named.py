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
from typing import NamedTuple

from agents.base import Agent, RandomAgent
from agents.play import VARIANTS

POLICY_NAMES = ("random", "greedy", "learned", "search", "puct", "solver")
"""The players with a name; a path to a policy checkpoint (``.npz``) is accepted as well, and
``search@N`` (``N`` nodes per move), ``search@N-l2`` (nested level 2), ``search@N-p`` (rollouts
played by the policy network) and ``search@N-v`` (valued by the value network) for other budgets of the search player (:func:`search_budget`); ``puct@N`` the
tree search at ``N`` nodes per move (:func:`puct_budget`)."""

PUCT_NODES = 256
"""The tree search's budget by its bare name ``puct``."""


class SearchBudget(NamedTuple):
    """What a search player's name asks for: nodes per move, nested level, whether rollouts
    are valued by the variant's committed value network, and whether its committed policy
    network plays them (instead of the greedy player)."""

    nodes: int
    level: int
    value: bool = False
    policy: bool = False


def search_budget(name: str) -> SearchBudget | None:
    """The :class:`SearchBudget` of a search player's name: ``search`` is the shipped budget
    (``agents.search.DEFAULT_NODES``, level 1), ``search@256`` 256 nodes per move, ``search@256-l2``
    the same at level 2, ``-p`` after them has the variant's committed policy network play the
    rollouts (``search@256-p``), a ``-v`` at the end (``search@256-v``, ``search@256-l2-p-v``)
    values the rollouts with the value network (``agents/search/value.py``); None for a name that
    is not the search player's. A malformed budget raises ``ValueError`` naming it."""
    if not isinstance(name, str) or not (name == "search" or name.startswith("search@")):
        return None
    from agents.search.rollouts import DEFAULT_NODES, MAX_LEVEL, MAX_NODES

    if name == "search":
        return SearchBudget(DEFAULT_NODES, 1)
    nodes, *flags = name[len("search@") :].split("-")
    value = flags[-1:] == ["v"]
    if value:
        flags.pop()
    policy = flags[-1:] == ["p"]
    if policy:
        flags.pop()
    level = flags[0][1:] if len(flags) == 1 and flags[0].startswith("l") else ""
    ok = nodes.isascii() and nodes.isdigit() and len(nodes) <= 8 and len(flags) <= 1
    ok = ok and (not flags or (level.isascii() and level.isdigit() and len(level) == 1))
    n = int(nodes) if ok else 0
    lv = int(level) if ok and level else 1
    if not ok or not 1 <= n <= MAX_NODES or not 1 <= lv <= MAX_LEVEL:
        raise ValueError(
            f"bad search budget {name[:40]!r}: use search, search@N (N in 1 … {MAX_NODES} nodes "
            f"per move), search@N-lL (L in 1 … {MAX_LEVEL}), then -p for policy rollouts and -v "
            "for the value network"
        )
    return SearchBudget(n, lv, value, policy)


def puct_budget(name: str) -> int | None:
    """Nodes per move of a tree search's name (``puct``: :data:`PUCT_NODES`, ``puct@N``); None
    for another name; a malformed budget raises ``ValueError`` naming it."""
    if not isinstance(name, str) or not (name == "puct" or name.startswith("puct@")):
        return None
    if name == "puct":
        return PUCT_NODES
    nodes = name[len("puct@") :]
    if (
        not (nodes.isascii() and nodes.isdigit() and len(nodes) <= 8)
        or not 1 <= int(nodes) <= 1 << 20
    ):
        raise ValueError(
            f"bad tree search budget {name[:40]!r}: use puct or puct@N (N in 1 … {1 << 20})"
        )
    return int(nodes)


def is_policy_name(name: str) -> bool:
    """Whether ``name`` names a player (:data:`POLICY_NAMES`, a search or tree search budget); a
    malformed budget raises ``ValueError``."""
    return name in POLICY_NAMES or search_budget(name) is not None or puct_budget(name) is not None


def make_agent(
    policy: str | Path,
    variant: str,
    *,
    seed: int = 0,
    solver_nodes: int | None = 50_000,
    solver_seconds: float | None = 10.0,
    solver_cache: dict | None = None,
    device: str = "cpu",
) -> Agent:
    """The player ``policy`` of ``variant`` (a tag of :data:`agents.play.VARIANTS`).

    ``policy`` is one of :data:`POLICY_NAMES` (``learned``: the committed policy network of the
    variant, :func:`agents.policy.learned_agent`; ``search``: the search player,
    :class:`agents.search.RolloutSearch`, at its shipped budget, or ``search@N``; ``puct``: the
    tree search, :class:`agents.search.tree.TreeSearch`, with the committed policy and value
    networks of the variant), or the path of a policy checkpoint
    (:func:`agents.policy.load_policy`; a bad file raises
    :class:`agents.policy.CheckpointError`). ``seed`` seeds the random player; the solver's
    budget is per game and ``solver_cache`` (a dict) keeps its solutions between games.
    ``device`` (:func:`agents.torch_setup.resolve_device`): where the network of ``learned`` or
    of a checkpoint plays. Unknown names and variants raise ``ValueError`` before anything is
    loaded.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    game, options = VARIANTS[variant]
    if isinstance(policy, Path) or str(policy).endswith(".npz"):
        from agents.policy import load_policy

        return load_policy(policy, game=game, options=options, device=device)
    if policy == "random":
        return RandomAgent(seed=seed)
    if policy == "greedy":
        from agents.greedy import GreedyAgent

        return GreedyAgent(game, options)
    if policy == "learned":
        from agents.policy import learned_agent

        return learned_agent(variant, game=game, options=options, device=device)
    budget = search_budget(str(policy))
    if budget is not None:
        from agents.search import RolloutSearch

        value = rollout = None
        if budget.value:
            from agents.search.value import committed_value

            value = committed_value(variant)
        if budget.policy:
            from agents.policy import learned_agent

            rollout = learned_agent(variant, game=game, options=options, device=device)
        return RolloutSearch(game, options, nodes=budget.nodes, level=budget.level, seed=seed,
                             value=value, rollout=rollout, name=str(policy))  # fmt: skip
    nodes = puct_budget(str(policy))
    if nodes is not None:
        from agents.policy import learned_agent
        from agents.search.tree import TreeSearch
        from agents.search.value import committed_value

        value = committed_value(variant)
        prior = learned_agent(variant, game=game, options=options)
        return TreeSearch(game, options, policy=prior, value=value, nodes=nodes, seed=seed,
                          name=str(policy))  # fmt: skip
    if policy == "solver":
        from agents.solver_agent import SolverAgent

        return SolverAgent(max_seconds=solver_seconds, max_nodes=solver_nodes, cache=solver_cache)
    raise ValueError(
        f"unknown policy {policy!r}: use {', '.join(POLICY_NAMES)}, search@N, puct@N or a "
        "policy checkpoint (.npz)"
    )
