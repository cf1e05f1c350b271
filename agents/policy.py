"""The policy agent: a network of :mod:`agents.networks` playing from a checkpoint of
:mod:`agents.checkpoint` (:func:`load_policy`, :func:`learned_agent` for the committed ones).

The agent scores the legal actions with its network and plays the best (or samples, with
``deterministic=False``); illegal actions are masked, never chosen. It keeps per game the action
played last (every network reads it) and, for a ``memory`` network, how often each action was
played from each observation (:class:`agents.memory.PlayMemory`).

**Play rules.** A network with ``arch["heads"] = "factored"`` scores each legal action three
ways: policy, rank and winnability (:mod:`agents.networks.cards`). How it chooses is its *play
rule* (``meta["play"]``, :data:`PLAY_RULES`): ``"policy"`` the best policy score; ``"veto"`` the
best policy score among the moves whose predicted winnability is at least ``threshold`` (all of
them when none is); ``"factored"`` the best rank score among those moves. Every rule is the
network alone: no solver, greedy code or search at play time.

The public names of :mod:`agents.networks` and :mod:`agents.checkpoint` are importable from
here too (:data:`__all__`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from agents.base import Agent
from agents.checkpoint import (
    CHECKPOINT_DIR,
    FORMAT,
    FORMAT_VERSION,
    PLAY_RULES,
    CheckpointError,
    check_game,
    committed_policies,
    complete_meta,
    load_weights,
    play_rule,
    read_meta_record,
    read_policy_meta,
    read_weight,
    save_policy,
)
from agents.memory import PlayMemory
from agents.networks.build import ARCHS, HEADS, build_net
from agents.networks.spec import DEPTHS, LEFT, PAIRS, PLACE_FEATS, game_spec
from agents.torch_setup import net_device, resolve_device
from solitaire_gym.errors import shown

__all__ = [
    "ARCHS",
    "CHECKPOINT_DIR",
    "DEPTHS",
    "FORMAT",
    "FORMAT_VERSION",
    "HEADS",
    "LEFT",
    "PAIRS",
    "PLACE_FEATS",
    "PLAY_RULES",
    "CheckpointError",
    "PolicyAgent",
    "build_net",
    "check_game",
    "committed_policies",
    "complete_meta",
    "game_spec",
    "learned_agent",
    "load_policy",
    "load_weights",
    "play_rule",
    "read_meta_record",
    "read_policy_meta",
    "read_weight",
    "rule_scores",
    "save_policy",
]


class PolicyAgent(Agent):
    """A policy network playing deterministically (the highest-scoring legal action) or by
    sampling (``deterministic=False``). Uses the observation and the mask only."""

    def __init__(self, net, meta: dict[str, Any], *, name: str = "learned",
                 deterministic: bool = True, seed: int = 0) -> None:  # fmt: skip
        self.prev: np.ndarray | None = None  # per game: the action it played last
        self.memory: PlayMemory | None = None  # per game: what it played from where
        self.net = net.eval()
        self.meta = complete_meta(meta)
        self.name = name
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.rule = play_rule(self.meta)  # checked now, not at the first move

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.prev = None
        self.memory = None

    def check_env(self, game: str, options: dict | None = None) -> None:
        check_game(self.meta, game, options, f"policy {self.name!r}")

    def scores(
        self,
        obs: np.ndarray,
        masks: np.ndarray | None = None,
        prev: np.ndarray | None = None,
        tried: np.ndarray | None = None,
    ) -> np.ndarray:
        """The scores (B, N) the play rule (``meta["play"]``) takes the best of; with
        ``masks``, −inf for the illegal actions; ``prev`` (B,) the action each game played last
        (``N``, the action count: none); ``tried`` (B, N) for a ``memory`` network, how often
        each game played each action from this observation (None: never)."""
        import torch

        rule, threshold = self.rule
        dev = net_device(self.net)
        m = None if masks is None else torch.as_tensor(np.asarray(masks, bool), device=dev)
        p = None if prev is None else torch.as_tensor(np.asarray(prev, np.int64), device=dev)
        t = None if tried is None else torch.as_tensor(np.asarray(tried, np.int64), device=dev)
        x = torch.as_tensor(obs, dtype=torch.float32, device=dev)
        kw = {"tried": t} if getattr(self.net, "memory", False) else {}
        with torch.no_grad():
            if rule == "policy":
                return self.net(x, m, p, **kw).cpu().numpy()
            policy, rank, safe = (t.cpu().numpy() for t in self.net(x, m, p, heads=True, **kw))
        return rule_scores(rule, threshold, policy, rank, safe)

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        from agents.learned import masked_choice

        scores = self.preferences(obs, masks, starts)
        out = masked_choice(scores, masks, self.deterministic, self.rng)
        self.commit(obs, masks, out, active)
        return out

    def preferences(self, obs: np.ndarray, masks: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """The scores (B, N) this agent plays the best of now (−inf for illegal actions), the
        games of ``starts`` forgotten first. The memory is read, not changed: :meth:`commit`
        records the move played (``agents/veto.py`` plays another move in between)."""
        b, n = masks.shape
        if self.prev is None or self.prev.shape[0] != b:
            self.prev = np.full(b, n, np.int64)
        self.prev[starts] = n  # a new game: no move before
        tried = None
        if getattr(self.net, "memory", False):
            if self.memory is None or self.memory.n != b:
                self.memory = PlayMemory(b, self.net.memory_mode)
            self.memory.forget(np.asarray(starts, bool))
            tried = self.memory.counts(obs, masks)
        return self.scores(obs, masks, self.prev, tried)

    def commit(self, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
               active: np.ndarray) -> None:  # fmt: skip
        """Remember that each ``active`` game plays ``actions`` from ``obs`` (after
        :meth:`preferences` on the same batch)."""
        self.prev[active] = actions[active]
        if getattr(self.net, "memory", False):
            self.memory.record(obs, actions, np.asarray(active, bool) & masks.any(axis=1))


def rule_scores(rule: str, threshold: float, policy: np.ndarray, rank: np.ndarray,
                safe_logits: np.ndarray) -> np.ndarray:  # fmt: skip
    """Scores whose best legal entry is the move ``rule`` chooses (module docstring): the
    policy (``"veto"``) or rank (``"factored"``) score, lowered by 1e6 where the predicted
    winnability is below ``threshold``, so the best vetted move wins and, when every move is
    vetoed, the best of all."""
    base = policy if rule == "veto" else rank
    p = 1.0 / (1.0 + np.exp(-np.clip(safe_logits, -60.0, 60.0)))
    return np.where(p >= threshold, base, base - 1e6)


def load_policy(
    path: str | os.PathLike[str],
    *,
    game: str | None = None,
    options: dict | None = None,
    name: str = "learned",
    deterministic: bool = True,
    seed: int = 0,
    device: str = "cpu",
) -> PolicyAgent:
    """Load a policy checkpoint as a :class:`PolicyAgent` whose network is on ``device``
    (:func:`agents.torch_setup.resolve_device`); with ``game``, refuse first one that cannot
    play it. Never unpickles anything."""
    device = resolve_device(device)

    meta = read_policy_meta(path)
    if game is not None:
        check_game(meta, game, options, f"checkpoint {path}")
    spec = game_spec(meta["game"], meta["options"])
    try:
        net = build_net(meta["arch"], spec)
    except CheckpointError as e:
        raise CheckpointError(f"{path}: {e}") from None
    load_weights(path, net, meta["arch"])
    return PolicyAgent(net.to(device), meta, name=name, deterministic=deterministic, seed=seed)


def learned_agent(variant: str, **kwargs) -> PolicyAgent:
    """The committed policy of ``variant`` (``"SH1-C4"``, ...), as played by ``evaluate.py
    --policies learned``. A variant without one of its own gets the committed policy of the
    nearest other option of the same game, if any: the one whose tag shares the longest start
    with ``variant``'s (Seahaven 2 or 1 cells: the 4-cell policy; Double Solitaire draw 3 with
    Vegas scoring: draw 3 with Normal scoring; the layouts are the same);
    ``agent.meta["variant"]`` says which it is."""
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a variant tag such as 'SH1-C4', not {shown(variant)}")
    paths = committed_policies()
    if variant not in paths:
        same_game = [t for t in paths if t.split("-")[0] == variant.split("-")[0]]
        if not same_game:
            raise CheckpointError(
                f"no committed policy for {shown(variant)} or its game; there are: "
                f"{', '.join(paths) or 'none'}"
            )

        def shared(tag: str) -> int:  # how many leading characters it shares with variant
            return next((i for i, (a, b) in enumerate(zip(tag, variant, strict=False)) if a != b),
                        min(len(tag), len(variant)))  # fmt: skip

        variant = max(same_game, key=shared)
    return load_policy(paths[variant], **kwargs)
