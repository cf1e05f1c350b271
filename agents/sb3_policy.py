"""The ``cards`` network (:mod:`agents.networks.cards`) as a stable-baselines3 policy, so
MaskablePPO can fine-tune a cloned network.

::

    from sb3_contrib import MaskablePPO
    from agents.sb3_policy import CardsPolicy, PrevActionVecEnv
    from solitaire_gym.envs.sb3 import SB3VecEnv

    env = PrevActionVecEnv(SB3VecEnv("seahaven_towers", num_envs=16, cells=4,
                                     reward_mode="foundation", win_bonus=10))
    model = MaskablePPO(CardsPolicy, env, policy_kwargs={
        "game": "seahaven_towers", "options": {"cells": 4},
        "init": "agents/checkpoints/SH1-C4.npz"})   # or "arch": {...} for a fresh network

The network scores each legal action from the embeddings of its source and target places and
from the action played just before. SB3 shows a policy the observation only, so
:class:`PrevActionVecEnv` appends that action to every observation (one more value: the action
id, or the action count at a game's first position) and :class:`CardsPolicy` splits it off
again. The action logits are the network's policy scores (its other heads, if any, are not used
by PPO); the value is a small MLP over the observation. :func:`export_policy` writes the
fine-tuned network as an ordinary policy checkpoint (plain arrays and JSON, loadable without
unpickling: :func:`agents.policy.load_policy`).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from torch import nn

from agents.policy import build_net, game_spec, load_policy, read_policy_meta, save_policy
from solitaire_gym.errors import is_int

NEG = -1e8  # a masked logit: finite, so that entropies and log-probabilities stay finite


class PrevActionVecEnv(VecEnvWrapper):
    """Appends to each game's observation the action that game played last (``n_actions``
    for none: after a reset, and for the next game's first observation when one ends)."""

    def __init__(self, venv: VecEnv) -> None:
        n = int(venv.action_space.n)
        box = venv.observation_space
        low = np.append(box.low.astype(np.float32), np.float32(0))
        high = np.append(box.high.astype(np.float32), np.float32(n))
        super().__init__(venv, observation_space=spaces.Box(low, high, dtype=np.float32))
        self.n_actions = n
        self.prev = np.full(venv.num_envs, n, np.int64)
        self._actions = self.prev.copy()

    def _with_prev(self, obs: np.ndarray) -> np.ndarray:
        return np.concatenate([obs, self.prev[:, None].astype(np.float32)], axis=1)

    def reset(self):
        self.prev[:] = self.n_actions
        return self._with_prev(self.venv.reset())

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(-1).copy()
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        self.prev[:] = self._actions
        self.prev[np.asarray(dones, bool)] = self.n_actions  # the next game's first position
        for i in np.flatnonzero(dones):
            term = infos[i].get("terminal_observation")
            if term is not None:
                infos[i]["terminal_observation"] = np.append(term, np.float32(self._actions[i]))
        return self._with_prev(obs), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


class LostPositionEnd(VecEnvWrapper):
    """The solver-exact signal for RL: a game ends, with reward ``-penalty``, on the move that
    makes its position lost (the solver proves it has no win). Wraps an
    :class:`~solitaire_gym.envs.sb3.SB3VecEnv` directly (other wrappers go outside).

    After every move each game's new position is given to the solver (``max_nodes`` nodes),
    except when the move is the next one of the last win the solver found for that game (the
    rest of that win proves the position winnable). Verdicts: *solvable* keeps the game going
    and remembers the win; *unknown* (the budget ran out) keeps it going; *unsolvable* ends it
    (``info["lost"] = True``) and deals the next game. A game whose first position is already
    lost is never penalised (its deal was unwinnable); it plays on. ``self.calls`` counts the
    solver calls, ``self.ended`` the games ended lost."""

    def __init__(self, venv: VecEnv, *, penalty: float = 10.0, max_nodes: int = 20_000) -> None:
        from solitaire_gym.envs.sb3 import SB3VecEnv

        if not isinstance(venv, SB3VecEnv):
            raise TypeError(f"LostPositionEnd wraps an SB3VecEnv, not {type(venv).__name__}")
        if not (isinstance(penalty, (int, float)) and not isinstance(penalty, bool)
                and 0 <= penalty < float("inf")):  # fmt: skip
            raise ValueError(f"penalty must be a finite number >= 0, not {penalty!r}")
        if not is_int(max_nodes) or max_nodes < 1:
            raise ValueError(f"max_nodes must be a positive integer, not {max_nodes!r}")
        super().__init__(venv)
        self.penalty, self.max_nodes = float(penalty), int(max_nodes)
        n = venv.num_envs
        self.plans: list[list[int]] = [[] for _ in range(n)]
        self.unwinnable = np.zeros(n, bool)  # the game's first position was proven lost
        self.calls = 0
        self.ended = 0
        self._actions = np.zeros(n, np.int64)

    def _verdict(self, row: int) -> str:
        from agents.teacher import prove
        from solitaire_gym.game import Game

        self.calls += 1
        verdict, self.plans[row] = prove(Game.from_dict(self.venv._core.to_dict(row)),
                                         self.max_nodes)  # fmt: skip
        return verdict

    def _start(self, rows) -> None:
        for r in rows:
            self.plans[r] = []
            self.unwinnable[r] = self._verdict(r) == "unsolvable"

    def reset(self):
        obs = self.venv.reset()
        self._start(range(self.num_envs))
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions, np.int64).reshape(-1).copy()
        self.venv.step_async(actions)

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        rewards = np.asarray(rewards, np.float32).copy()
        dones = np.asarray(dones, bool).copy()
        lost = []
        for r in np.flatnonzero(~dones).tolist():
            plan = self.plans[r]
            if plan and plan[0] == self._actions[r]:
                self.plans[r] = plan[1:]
                continue
            if self._verdict(r) == "unsolvable" and not self.unwinnable[r]:
                lost.append(r)
        if lost:
            for r, info in zip(lost, self.venv.end_games(np.array(lost)), strict=True):
                rewards[r] -= self.penalty
                info["episode"]["r"] -= self.penalty
                info["lost"] = True
                infos[r] = info
                dones[r] = True
            self.ended += len(lost)
            obs = self.venv._core.obs
        self._start(np.flatnonzero(dones).tolist())
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()


class CardsPolicy(MaskableActorCriticPolicy):
    """MaskablePPO policy over a :class:`PrevActionVecEnv` observation. ``game`` and
    ``options``: the variant; ``init``: a policy checkpoint to start from (its architecture and
    weights), else ``arch`` (``{"kind": "cards", "hidden": …}``) for a fresh network;
    ``value_hidden``: the value MLP's width."""

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule,
        *,
        game: str,
        options: dict | None = None,
        arch: dict | None = None,
        init: str | os.PathLike[str] | None = None,
        value_hidden: int = 128,
        **kwargs: Any,
    ) -> None:
        self.game, self.options = game, dict(options or {})
        if init is not None:
            arch = read_policy_meta(init)["arch"]
        if arch is None:
            raise ValueError("CardsPolicy needs init (a checkpoint) or arch")
        if arch.get("kind") != "cards":
            raise ValueError(f"CardsPolicy plays a 'cards' network, not {arch.get('kind')!r}")
        if arch.get("memory", False):
            raise ValueError(
                "CardsPolicy cannot fine-tune a network with memory (arch.memory): the "
                "observation it gets from stable-baselines3 does not carry the game's play counts"
            )
        self.arch, self.init, self.value_hidden = dict(arch), init, int(value_hidden)
        self.spec = game_spec(game, self.options)
        want = self.spec["obs_dim"] + 1
        if observation_space.shape != (want,):
            raise ValueError(
                f"CardsPolicy expects observations of {want} values (the game's {want - 1} plus "
                f"the previous action: wrap the env in PrevActionVecEnv), not "
                f"{observation_space.shape}"
            )
        kwargs["net_arch"] = []
        kwargs["ortho_init"] = False
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule) -> None:
        self.card_net = build_net(self.arch, self.spec)
        if self.init is not None:
            loaded = load_policy(self.init, game=self.game, options=self.options)
            self.card_net.load_state_dict(loaded.net.state_dict())
        d = self.spec["obs_dim"]
        self.value_mlp = nn.Sequential(
            nn.Linear(d, self.value_hidden), nn.ReLU(), nn.Linear(self.value_hidden, 1)
        )
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(game=self.game, options=self.options, arch=self.arch, init=None,
                    value_hidden=self.value_hidden)  # fmt: skip
        return data

    def _split(self, obs: torch.Tensor):
        obs = obs.float()
        return obs[:, :-1], obs[:, -1].round().long()

    def _logits(self, obs: torch.Tensor, action_masks) -> torch.Tensor:
        x, prev = self._split(obs)
        mask = None
        if action_masks is not None:
            mask = torch.as_tensor(action_masks, device=x.device).reshape(x.shape[0], -1).bool()
        logits = self.card_net(x, mask, prev)
        return torch.where(torch.isfinite(logits), logits, torch.full_like(logits, NEG))

    def _distribution(self, obs, action_masks):
        dist = self.action_dist.proba_distribution(action_logits=self._logits(obs, action_masks))
        if action_masks is not None:
            dist.apply_masking(action_masks)
        return dist

    def forward(self, obs, deterministic: bool = False, action_masks=None):
        dist = self._distribution(obs, action_masks)
        actions = dist.get_actions(deterministic=deterministic)
        return actions, self.predict_values(obs), dist.log_prob(actions)

    def evaluate_actions(self, obs, actions, action_masks=None):
        dist = self._distribution(obs, action_masks)
        return self.predict_values(obs), dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs, action_masks=None):
        return self._distribution(obs, action_masks)

    def predict_values(self, obs) -> torch.Tensor:
        return self.value_mlp(self._split(obs)[0])


def export_policy(model, path: str | os.PathLike[str], meta: dict[str, Any]) -> None:
    """Write the network of a MaskablePPO ``model`` with :class:`CardsPolicy` to ``path`` as a
    policy checkpoint (``meta`` as for :func:`agents.checkpoint.save_policy`; game, options and
    architecture are filled in from the policy)."""
    pol = model.policy
    if not isinstance(pol, CardsPolicy):
        raise TypeError(f"not a CardsPolicy model: {type(pol).__name__}")
    save_policy(path, pol.card_net, {**meta, "game": pol.game, "options": pol.options,
                                     "arch": pol.arch})  # fmt: skip
