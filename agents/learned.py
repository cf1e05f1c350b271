"""Learned policies: MaskablePPO checkpoints, any stable-baselines3 model, any torch module.

All three see only the observation and the mask (``uses = "observation"``) and never choose an
illegal action: the policy's scores for illegal actions are set to −inf before the choice.

Checkpoints written by ``experiments/train.py`` carry what they were trained on (the attribute
``solitaire_gym`` of the saved model: game, options, variant tag, observation size, number of
actions, config). :meth:`MaskablePPOAgent.load` refuses a checkpoint for another game or another
action or observation space with a :class:`CheckpointMismatch` that says both; a checkpoint of
the same game with other options (Seahaven 4 cells → 1 cell) is accepted, since the action layout
does not depend on the options, and ``trained_on`` tells. The same script also writes the
best policy as weights only (``best.npz``, :mod:`agents.ppo_weights`), which
:meth:`MaskablePPOAgent.load` loads with no ``trusted`` flag: nothing in it is unpickled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.base import Agent
from agents.torch_setup import net_device, resolve_device
from solitaire_gym.envs.core import EnvOptions
from solitaire_gym.envs.observation import to_dtype

if TYPE_CHECKING:
    from agents.ppo_weights import PPOWeightsAgent


class CheckpointMismatch(ValueError):
    """A checkpoint that cannot play the game asked for."""


class UntrustedCheckpoint(CheckpointMismatch):
    """A stable-baselines3 zip opened without ``trusted=True``: loading one unpickles Python
    objects, which can run any code the file's author put there."""


TRUST_NOTE = (
    "it is a stable-baselines3 zip, whose loading unpickles Python objects and so can run any "
    "code its author put in it; pass trusted=True (evaluate.py: --trusted) only for a file you "
    "made yourself or trust. The package's own policies (agents/policy.py, .npz) load without "
    "unpickling anything"
)


def _check_trusted(path, trusted: bool) -> None:
    if trusted is not True:
        raise UntrustedCheckpoint(f"{path} was not loaded: {TRUST_NOTE}")


def env_signature(game: str, options: dict | None = None) -> dict[str, Any]:
    """What a checkpoint must match to play ``game`` with ``options``."""
    from solitaire_gym.envs.core import EnvCore

    opts = EnvOptions.build(game, **(options or {}))
    core = EnvCore(opts, 1)
    return {
        "game": opts.variant.name,
        "prefix": opts.variant.prefix,
        "variant": opts.variant.tag,
        "obs_dim": int(core.obs_dim),
        "n_actions": int(core.n_actions),
    }


def check_signature(meta: dict[str, Any] | None, want: dict[str, Any], what: str) -> None:
    """Raise :class:`CheckpointMismatch` unless ``meta`` (from a checkpoint) can play ``want``."""
    if meta is None:
        return
    trained = meta.get("variant", "?")
    if meta.get("prefix") not in (None, want["prefix"]):
        raise CheckpointMismatch(
            f"{what} was trained on {meta.get('game', '?')} ({trained}); it cannot play "
            f"{want['game']} ({want['variant']})"
        )
    for key, label in (("n_actions", "actions"), ("obs_dim", "observation values")):
        if key in meta and int(meta[key]) != want[key]:
            raise CheckpointMismatch(
                f"{what} has {meta[key]} {label} ({trained}); {want['variant']} has "
                f"{want[key]}: a checkpoint for another game or action space cannot play it"
            )


def _space_meta(data: dict) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    obs_space = data.get("observation_space")
    act_space = data.get("action_space")
    if getattr(obs_space, "shape", None):
        meta["obs_dim"] = int(np.prod(obs_space.shape))
    if hasattr(act_space, "n"):
        meta["n_actions"] = int(act_space.n)
    return meta


def read_checkpoint_meta(path: str | Path, *, trusted: bool = False) -> dict[str, Any]:
    """The checkpoint's ``solitaire_gym`` record, or what its saved spaces say. Unpickles the
    zip's data: refused (:class:`UntrustedCheckpoint`) unless ``trusted=True``."""
    from stable_baselines3.common.save_util import load_from_zip_file

    _check_trusted(path, trusted)
    data, _, _ = load_from_zip_file(str(path), device="cpu", load_data=True)
    if data is None:
        raise CheckpointMismatch(f"{path} holds no model data")
    meta = dict(data.get("solitaire_gym") or {})
    for k, v in _space_meta(data).items():
        meta.setdefault(k, v)
    return meta


def masked_choice(scores: np.ndarray, masks: np.ndarray, deterministic: bool, rng) -> np.ndarray:
    """Argmax (or softmax sample) of ``scores`` over the legal actions of each row (0 for a row
    with none: a game that is over)."""
    masks = masks.copy()
    masks[~masks.any(axis=1), 0] = True
    scores = np.where(masks, scores.astype(np.float64), -np.inf)
    if deterministic:
        return scores.argmax(axis=1)
    z = scores - scores.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random((p.shape[0], 1))
    out = (p.cumsum(axis=1) < u).sum(axis=1)
    out = np.minimum(out, p.shape[1] - 1)
    # a rounding step past the last legal action: take the last legal one
    fix = ~masks[np.arange(len(out)), out]
    if fix.any():
        out[fix] = masks[fix].shape[1] - 1 - masks[fix][:, ::-1].argmax(axis=1)
    return out


class TorchAgent(Agent):
    """A torch module that maps a batch of observations ``(B, D)`` to action scores ``(B, N)``
    (logits or Q-values; a tuple's first element is taken). ``deterministic``: argmax over the
    legal actions, else a softmax sample."""

    def __init__(self, module, *, name: str = "torch", deterministic: bool = True, seed: int = 0):
        self.module = module
        self.name = name
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def scores(self, obs: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32, device=net_device(self.module))
            out = self.module(x)
        if isinstance(out, (tuple, list)):
            out = out[0]
        return out.detach().cpu().numpy()

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        return masked_choice(self.scores(obs), masks, self.deterministic, self.rng)


class SB3Agent(Agent):
    """Any stable-baselines3 model. Maskable models (sb3-contrib) are given the mask; actor-critic
    policies have their action logits masked; DQN-style policies their Q-values; other models'
    illegal choices are replaced by a random legal action (counted in ``replaced``)."""

    def __init__(self, model, *, name: str | None = None, deterministic: bool = False,
                 seed: int = 0, trained_on: dict | None = None):  # fmt: skip
        self.model = model
        self.name = name or type(model).__name__.lower()
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.trained_on = (
            trained_on if trained_on is not None else getattr(model, "solitaire_gym", None)
        )
        self.replaced = 0

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def observations(self, obs: np.ndarray) -> np.ndarray:
        """``obs`` in the dtype of the model's observation space: a model trained on an env
        with ``obs_dtype="uint8"`` gets uint8 counts, any other float32."""
        space = getattr(self.model.observation_space, "dtype", None)
        want = np.uint8 if space == np.uint8 else np.float32
        return to_dtype(obs, want) if obs.dtype in (np.uint8, np.float32) else obs

    def check_env(self, game: str, options: dict | None = None) -> None:
        """Refuse (:class:`CheckpointMismatch`) a game this model cannot play."""
        meta = dict(self.trained_on or {})
        for k, v in _space_meta(
            {"observation_space": self.model.observation_space,
             "action_space": self.model.action_space}
        ).items():  # fmt: skip
            meta.setdefault(k, v)
        check_signature(meta, env_signature(game, options), f"model {self.name!r}")

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        import torch

        model = self.model
        policy = model.policy
        if _is_maskable(model):
            # sample with the agent's own seed, leaving torch's global generator as it was
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(int(self.rng.integers(2**62)))
                actions, _ = model.predict(
                    obs, action_masks=masks, deterministic=self.deterministic
                )
            return np.asarray(actions, np.int64).reshape(-1)
        obs_t, _ = policy.obs_to_tensor(obs)
        with torch.no_grad():
            if hasattr(policy, "get_distribution"):
                scores = policy.get_distribution(obs_t).distribution.logits
            elif hasattr(policy, "q_net"):
                scores = policy.q_net(obs_t)
            else:
                scores = None
        if scores is not None:
            return masked_choice(scores.cpu().numpy(), masks, self.deterministic, self.rng)
        actions, _ = model.predict(obs, deterministic=self.deterministic)
        actions = np.asarray(actions, np.int64).reshape(-1)
        bad = ~masks[np.arange(len(actions)), actions]
        for i in np.flatnonzero(bad):
            actions[i] = self.rng.choice(np.flatnonzero(masks[i]))
            self.replaced += 1
        return actions


def _is_maskable(model) -> bool:
    try:
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    except ImportError:
        return False
    return isinstance(model.policy, MaskableActorCriticPolicy)


class MaskablePPOAgent(SB3Agent):
    """A MaskablePPO checkpoint (``experiments/train.py`` writes them). ``deterministic``:
    the most likely legal action, else a sample from the policy (the default: a deterministic
    policy tends to repeat itself in positions it sees again)."""

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        game: str | None = None,
        options: dict | None = None,
        name: str = "ppo",
        deterministic: bool = False,
        seed: int = 0,
        trusted: bool = False,
        device: str = "cpu",
    ) -> MaskablePPOAgent | PPOWeightsAgent:
        """Load ``path`` onto ``device`` (:func:`agents.torch_setup.resolve_device`); with
        ``game``, refuse first (:class:`CheckpointMismatch`) a checkpoint that cannot play it. A
        stable-baselines3 zip holds pickled Python objects, and loading one can run code: it is
        refused (:class:`UntrustedCheckpoint`) before anything is read unless ``trusted=True``
        (SECURITY.md).

        A weights-only ``.npz`` (``checkpoints/best.npz`` of ``experiments/train.py``,
        :mod:`agents.ppo_weights`) needs no ``trusted``: nothing in it is unpickled. It loads as
        a :class:`~agents.ppo_weights.PPOWeightsAgent` that plays the same moves, and a bad file
        or one of another game raises :class:`~agents.checkpoint.CheckpointError`."""
        if isinstance(path, (str, os.PathLike)) and Path(path).suffix == ".npz":
            from agents.ppo_weights import load_ppo_weights

            return load_ppo_weights(path, game=game, options=options, name=name,
                                    deterministic=deterministic, seed=seed, device=device)  # fmt: skip
        from sb3_contrib import MaskablePPO

        device = resolve_device(device)

        path = Path(path)
        if not path.exists() and path.with_suffix(".zip").exists():
            path = path.with_suffix(".zip")
        if not path.exists():
            raise FileNotFoundError(f"no checkpoint at {path}")
        _check_trusted(path, trusted)
        meta = read_checkpoint_meta(path, trusted=True)
        if game is not None:
            check_signature(meta, env_signature(game, options), f"checkpoint {path}")
        model = MaskablePPO.load(str(path), device=device)
        if not _is_maskable(model):
            raise CheckpointMismatch(f"{path} is not a MaskablePPO checkpoint")
        agent = cls(model, name=name, deterministic=deterministic, seed=seed, trained_on=meta)
        agent.path = path
        return agent


def load_agent(path: str | Path, **kwargs) -> MaskablePPOAgent | PPOWeightsAgent:
    """Shorthand for :meth:`MaskablePPOAgent.load`."""
    return MaskablePPOAgent.load(path, **kwargs)
