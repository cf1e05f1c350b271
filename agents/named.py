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

import os
from pathlib import Path
from typing import Any, NamedTuple

from agents.base import Agent, RandomAgent
from agents.checkpoint import FORMAT as POLICY_FORMAT
from agents.checkpoint import CheckpointError, read_meta_record, read_policy_meta
from agents.play import VARIANTS
from agents.ppo_weights import FORMAT as PPO_FORMAT
from agents.ppo_weights import load_ppo_weights, read_ppo_meta
from solitaire_gym.errors import shown

POLICY_NAMES = ("random", "greedy", "learned", "ppo", "search", "puct", "solver")
"""The players with a name (``ppo``: the committed MaskablePPO baseline, :func:`ppo_baseline`);
a path to an ``.npz`` checkpoint (:func:`load_npz`) is accepted too,
and ``search@N`` (``N`` nodes per move), ``search@N-l2`` (nested level 2), ``search@N-p``
(rollouts played by the policy network), ``search@N-b`` (the budget shared over the game) and
``search@N-v`` (valued by the value network) for other
budgets of the search player (:func:`search_budget`); ``puct@N`` the
tree search at ``N`` nodes per move (:func:`puct_budget`)."""

PUCT_NODES = 256
"""The tree search's budget by its bare name ``puct``."""


class SearchBudget(NamedTuple):
    """What a search player's name asks for: nodes per move, nested level, whether rollouts
    are valued by the variant's committed value network, and whether its committed policy
    network plays them (instead of the greedy player), whether the budget is shared over the
    game (:data:`agents.search.rollouts.NAMED_BANK`), and whether the rollouts are deep (fewer
    candidates and copies: :data:`agents.search.rollouts.DEEP_CANDIDATES`)."""

    nodes: int
    level: int
    value: bool = False
    policy: bool = False
    bank: bool = False
    deep: bool = False


def search_budget(name: str) -> SearchBudget | None:
    """The :class:`SearchBudget` of a search player's name: ``search`` is the shipped budget
    (``agents.search.DEFAULT_NODES``, level 1), ``search@256`` 256 nodes per move, ``search@256-l2``
    the same at level 2, ``-p`` after them has the variant's committed policy network play the
    rollouts (``search@256-p``), ``-d`` after those makes the rollouts deep (four candidates on
    two copies each, ``search@1024-d``), ``-b`` after those shares the budget over the game
    (``search@1024-b``: the nodes easy moves leave pay for hard ones, ``bank`` of
    :class:`~agents.search.RolloutSearch`), a ``-v`` at the end (``search@256-v``, ``search@256-l2-p-v``)
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
    bank = flags[-1:] == ["b"]
    if bank:
        flags.pop()
    deep = flags[-1:] == ["d"]
    if deep:
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
            f"per move), search@N-lL (L in 1 … {MAX_LEVEL}), then -p for policy rollouts, -d "
            "for deep rollouts, -b for a budget shared over the game and -v for the value network"
        )
    return SearchBudget(n, lv, value, policy, bank, deep)


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
    variant, :func:`agents.policy.learned_agent`; ``ppo``: the committed MaskablePPO baseline,
    :func:`ppo_baseline`; ``search``: the search player,
    :class:`agents.search.RolloutSearch`, at its shipped budget, or ``search@N``; ``puct``: the
    tree search, :class:`agents.search.tree.TreeSearch`, with the committed policy and value
    networks of the variant), or the path of an ``.npz`` checkpoint (:func:`load_npz`: a policy
    network or a MaskablePPO policy's weights, played deterministically; a bad file raises
    :class:`agents.policy.CheckpointError`). ``seed`` seeds the random player and the samples of
    ``ppo``; the solver's
    budget is per game and ``solver_cache`` (a dict) keeps its solutions between games.
    ``device`` (:func:`agents.torch_setup.resolve_device`): where the network of ``learned`` or
    of a checkpoint plays. Unknown names and variants raise ``ValueError`` before anything is
    loaded.
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    game, options = VARIANTS[variant]
    if isinstance(policy, Path) or str(policy).endswith(".npz"):
        return load_npz(policy, game=game, options=options, seed=seed, device=device)
    if policy == "random":
        return RandomAgent(seed=seed)
    if policy == "greedy":
        from agents.greedy import GreedyAgent

        return GreedyAgent(game, options)
    if policy == "learned":
        from agents.policy import learned_agent

        return learned_agent(variant, game=game, options=options, device=device)
    if policy == "ppo":
        return ppo_baseline(variant, seed=seed, device=device)
    budget = search_budget(str(policy))
    if budget is not None:
        from agents.search import RolloutSearch
        from agents.search.rollouts import (
            DEEP_CANDIDATES,
            DEEP_SAMPLES,
            DEFAULT_SAMPLES,
            MAX_CANDIDATES,
            NAMED_BANK,
        )

        value = rollout = None
        if budget.value:
            from agents.search.value import committed_value

            value = committed_value(variant)
        if budget.policy:
            from agents.policy import learned_agent

            rollout = learned_agent(variant, game=game, options=options, device=device)
        return RolloutSearch(game, options, nodes=budget.nodes, level=budget.level, seed=seed,
                             value=value, rollout=rollout, name=str(policy),
                             bank=NAMED_BANK if budget.bank else 0,
                             candidates=DEEP_CANDIDATES if budget.deep else MAX_CANDIDATES,
                             samples=DEEP_SAMPLES if budget.deep else DEFAULT_SAMPLES)  # fmt: skip
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


PPO_DIR = Path(__file__).resolve().parent / "checkpoints" / "ppo"
"""The MaskablePPO baselines: ``<variant>.npz``, the final policy of seed 0 of each curve of
``experiments/results/ppo_curves/`` (weights only, :mod:`agents.ppo_weights`)."""


def ppo_baseline(variant: str, *, seed: int = 0, device: str = "cpu") -> Agent:
    """The committed MaskablePPO baseline of ``variant`` (:data:`PPO_DIR`), named ``ppo``,
    sampling its moves from its policy with ``seed`` as its training validated it (the configs'
    ``deterministic_eval: false``: the most likely move repeats itself). A variant with no
    baseline raises ``ValueError`` naming those that have one."""
    path = PPO_DIR / f"{variant}.npz"
    if not path.is_file():
        have = sorted(p.stem for p in PPO_DIR.glob("*.npz"))
        raise ValueError(f"no MaskablePPO baseline for {variant}: there is one for "
                         f"{', '.join(have) or 'no variant'}")  # fmt: skip
    game, options = VARIANTS[variant]
    return load_ppo_weights(path, game=game, options=options, name="ppo", deterministic=False,
                            seed=seed, device=device)  # fmt: skip


NPZ_LOADERS = {
    POLICY_FORMAT: "a policy network (agents.policy.load_policy)",
    PPO_FORMAT: "a MaskablePPO policy's weights (agents.ppo_weights.load_ppo_weights)",
}
"""The ``.npz`` checkpoints that play, by the format name their record holds."""


def npz_format(path: str | os.PathLike[str]) -> str:
    """The format name of the ``.npz`` checkpoint at ``path`` (a key of :data:`NPZ_LOADERS`),
    read header first from its record; a :class:`agents.checkpoint.CheckpointError` naming the
    file and what it is when it is neither (a value network, a teacher shard, no checkpoint)."""
    fmt = read_meta_record(path, "policy").get("format")
    if fmt not in NPZ_LOADERS:
        what = f"a {shown(fmt)} file" if isinstance(fmt, str) else "an .npz with no format name"
        raise CheckpointError(f"{path} is {what}, not {' or '.join(NPZ_LOADERS.values())}")
    return fmt


def read_npz_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The checked record of the ``.npz`` checkpoint at ``path``, whichever of
    :data:`NPZ_LOADERS` it is."""
    if npz_format(path) == POLICY_FORMAT:
        return read_policy_meta(path)
    return read_ppo_meta(path)


def load_npz(
    path: str | os.PathLike[str],
    *,
    game: str | None = None,
    options: dict | None = None,
    name: str | None = None,
    deterministic: bool = True,
    seed: int = 0,
    device: str = "cpu",
) -> Agent:
    """The player of the ``.npz`` checkpoint at ``path``, by its format name
    (:func:`npz_format`): a policy network (:func:`agents.policy.load_policy`) or a MaskablePPO
    policy's weights (:func:`agents.ppo_weights.load_ppo_weights`). Never unpickles anything.
    ``name``: the player's name (default: the loader's, ``learned`` or ``ppo``); with ``game``,
    one that cannot play it is refused first (:class:`agents.checkpoint.CheckpointError`)."""
    kw: dict[str, Any] = {"game": game, "options": options, "deterministic": deterministic,
                          "seed": seed, "device": device}  # fmt: skip
    if name is not None:
        kw["name"] = name
    if npz_format(path) == POLICY_FORMAT:
        from agents.policy import load_policy

        return load_policy(path, **kw)
    return load_ppo_weights(path, **kw)
