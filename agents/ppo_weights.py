"""MaskablePPO policies as weights only: an ``.npz`` that plays like the model and loads without
unpickling anything (:func:`save_ppo_weights`, :func:`load_ppo_weights`).

A stable-baselines3 zip holds pickled Python objects, so the package loads one only with
``trusted=True`` (:mod:`agents.learned`, SECURITY.md). What a trained MaskablePPO needs to *play*
is its actor alone: the policy branch of its MLP extractor and its ``action_net``. This module
writes those as plain float32 arrays, named as in the model's ``policy.state_dict()``
(``w/mlp_extractor.policy_net.0.weight``, ``…``, ``w/action_net.bias``), with a JSON record
(``meta``) in the format of :mod:`agents.checkpoint`:

- ``format`` (:data:`FORMAT`), ``format_version`` (:data:`FORMAT_VERSION`);
- ``game``, ``options`` (as :class:`~solitaire_gym.envs.core.EnvOptions` takes them),
  ``variant``, ``prefix``, ``obs_dim``, ``n_actions``, ``layout_id`` (the observation layout the
  network learnt on);
- ``arch``: ``net_arch`` (the hidden layer sizes of the policy branch) and ``activation``
  (:data:`ACTIVATIONS`);
- provenance: ``trained_on`` (the model's own ``solitaire_gym`` record: config, reward mode …),
  ``num_timesteps``, ``versions`` (stable-baselines3, sb3-contrib, torch), and what the writer
  adds (``experiments/train.py``: the ``validation`` result that made it the best).

The value branch (``mlp_extractor.value_net``, ``value_net``) and the optimiser's state are left
out: they are what *training* needs, and the zip keeps them (``experiments/train.py`` resumes
from it). A file is read as every checkpoint of the package is (:mod:`agents.npz`): header first,
no pickle, the record checked (format, game, layout, architecture within the limits of a training
config) before the network is built, every weight's ``.npy`` header checked against the shape
the record implies before its data is read, float32 and finite. A bad file is refused with
:class:`~agents.checkpoint.CheckpointError` naming it and what is wrong.

The agent (:class:`PPOWeightsAgent`) computes what stable-baselines3's ``MaskablePPO.predict``
does: observation → float32 → (Linear, activation) per hidden layer → ``action_net`` → logits,
normalised, the illegal actions' set to −1e8, normalised again (``MaskableCategorical``); then the
most likely action (``deterministic``) or a sample drawn exactly as
:class:`~agents.learned.SB3Agent` draws it from the model (torch seeded from the agent's own
generator), so the file plays the same moves as its zip, sample for sample.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.checkpoint import FORMAT as POLICY_FORMAT
from agents.checkpoint import (
    CheckpointError,
    check_game,
    complete_meta,
    read_meta_record,
    read_weight,
    record_variant,
)
from agents.config import ACTIVATIONS, MAX_NET_WEIGHTS
from agents.dataset import save_npz
from agents.npz import Npz
from agents.torch_setup import net_device, resolve_device
from solitaire_gym.envs.core import EnvOptions
from solitaire_gym.errors import is_int, shown

FORMAT = "solitaire_gym-ppo-policy"
FORMAT_VERSION = 1
MAX_LAYERS = 64
"""Most hidden layers a file's ``net_arch`` may have (as a training config's)."""
MAX_WIDTH = 2**16
"""Most units a hidden layer may have (as a training config's)."""
HUGE_NEG = -1e8
"""The logit sb3-contrib gives an illegal action (``MaskableCategorical.apply_masking``)."""

_RESERVED = ("format", "format_version", "game", "options", "variant", "prefix", "obs_dim",
             "n_actions", "layout_id", "arch", "trained_on", "num_timesteps", "versions")  # fmt: skip


def activation_class(name: str):
    """torch's module class of the activation ``name`` (one of :data:`ACTIVATIONS`): what the
    MaskablePPO trainer builds, this module's networks use and the exporters check."""
    import torch.nn as nn

    return {"tanh": nn.Tanh, "relu": nn.ReLU}[name]


def _activation_name(module) -> str | None:
    return next((n for n in ACTIVATIONS if type(module) is activation_class(n)), None)


def policy_arch(model) -> dict[str, Any]:
    """The ``arch`` record of MaskablePPO ``model``'s actor (``net_arch``, ``activation``); a
    ``ValueError`` naming what does not fit when it is not a masked MLP policy on flat
    observations and discrete actions with one activation of :data:`ACTIVATIONS`."""
    import torch.nn as nn
    from gymnasium import spaces
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    policy = getattr(model, "policy", None)
    if not isinstance(policy, MaskableActorCriticPolicy):
        raise ValueError(f"{type(model).__name__} is not a MaskablePPO model")
    if not isinstance(policy.action_space, spaces.Discrete):
        raise ValueError(f"the model's actions are {policy.action_space}, not Discrete")
    obs_space = policy.observation_space
    if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
        raise ValueError(f"the model's observations are {obs_space}, not a flat Box")
    if type(policy.pi_features_extractor) is not FlattenExtractor:
        raise ValueError(f"the model's features extractor is "
                         f"{type(policy.pi_features_extractor).__name__}, not FlattenExtractor")  # fmt: skip
    layers = list(policy.mlp_extractor.policy_net)
    names = {_activation_name(m) for m in layers[1::2]}
    linear = all(type(m) is nn.Linear and m.bias is not None for m in layers[::2])
    if len(layers) % 2 or not linear or None in names or len(names) > 1:
        raise ValueError(
            "the model's policy network is not Linear layers each followed by one activation of "
            f"{ACTIVATIONS}: {shown([type(m).__name__ for m in layers], 200)}"
        )
    head = policy.action_net
    if (
        type(head) is not nn.Linear
        or head.bias is None
        or head.out_features != policy.action_space.n
    ):
        raise ValueError(f"the model's action_net is not a Linear layer to {policy.action_space.n} "
                         "logits")  # fmt: skip
    # with no hidden layer the activation is never applied; its name is recorded all the same
    activation = names.pop() if names else _activation_name(policy.activation_fn())
    return {"net_arch": [int(m.out_features) for m in layers[::2]],
            "activation": activation or "tanh"}  # fmt: skip


def _weight_names(n_hidden: int) -> dict[str, str]:
    """The built network's parameter names -> the stored arrays' (the model's own names)."""
    out = {}
    for k in range(n_hidden):
        for p in ("weight", "bias"):
            out[f"{2 * k}.{p}"] = f"mlp_extractor.policy_net.{2 * k}.{p}"
    for p in ("weight", "bias"):
        out[f"{2 * n_hidden}.{p}"] = f"action_net.{p}"
    return out


def save_ppo_weights(
    path: str | os.PathLike[str],
    model,
    *,
    game: str | None = None,
    options: dict | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write MaskablePPO ``model``'s actor to ``path`` (``.npz``, atomically; see the module
    docstring) and return the record written. ``game`` and ``options``: what it plays (default:
    the model's ``solitaire_gym`` record, as ``experiments/train.py`` sets it); ``extra``: more
    JSON-able provenance (keys other than the record's own). A model that is not a masked MLP
    policy (:func:`policy_arch`), or whose spaces are not the game's, raises ``ValueError``."""
    import sb3_contrib
    import stable_baselines3
    import torch

    arch = policy_arch(model)
    record = dict(getattr(model, "solitaire_gym", None) or {})
    game = game if game is not None else record.get("game_id")
    options = dict(options if options is not None else record.get("options") or {})
    if not isinstance(game, str):
        raise ValueError("the model records no game: pass game= (and options=)")
    state = model.policy.state_dict()
    weights = {name: state[name] for name in _weight_names(len(arch["net_arch"])).values()}
    versions = {"stable_baselines3": stable_baselines3.__version__,
                "sb3_contrib": sb3_contrib.__version__, "torch": torch.__version__}  # fmt: skip
    return write_ppo_weights(
        path, game, options, arch, weights,
        obs_dim=int(np.prod(model.policy.observation_space.shape)),
        n_actions=int(model.policy.action_space.n), trained_on=record,
        num_timesteps=int(getattr(model, "num_timesteps", 0)), versions=versions, extra=extra,
    )  # fmt: skip


def write_ppo_weights(
    path: str | os.PathLike[str],
    game: str,
    options: dict,
    arch: dict[str, Any],
    weights: dict[str, Any],
    *,
    obs_dim: int,
    n_actions: int,
    trained_on: dict[str, Any],
    num_timesteps: int,
    versions: dict[str, str],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write an actor of ``game`` with ``options`` in this module's format and return the
    record: ``arch``, its ``net_arch`` and ``activation``; ``weights``, its tensors by the
    model's names (:func:`_weight_names`); ``obs_dim`` and ``n_actions``, what it reads and
    scores (a ``ValueError`` when they are not the game's); the provenance; ``extra``, more
    JSON-able keys (not the record's own). :func:`save_ppo_weights` writes a MaskablePPO
    model's with it, and :func:`agents.rllib_training.save_rllib_weights` an RLlib PPO
    module's."""
    meta = complete_meta({"game": game, "options": dict(options)})
    meta["variant"] = EnvOptions.build(game, **options).variant.tag
    if (obs_dim, n_actions) != (meta["obs_dim"], meta["n_actions"]):
        raise ValueError(
            f"the model reads {obs_dim} values and has {n_actions} actions; {meta['variant']} has "
            f"{meta['obs_dim']} and {meta['n_actions']}"
        )
    clash = sorted(set(extra or {}) & set(_RESERVED))
    if clash:
        raise ValueError(f"extra may not set the record's own keys {clash}")
    meta = dict(meta, format=FORMAT, format_version=FORMAT_VERSION, arch=arch,
                trained_on=trained_on, num_timesteps=int(num_timesteps), versions=versions,
                **(extra or {}))  # fmt: skip
    arrays = {}
    for name in _weight_names(len(arch["net_arch"])).values():
        w = weights[name].detach().cpu().numpy()
        if w.dtype != np.float32:
            raise ValueError(f"the model's {name} is {w.dtype}, not float32")
        arrays[f"w/{name}"] = w
    arrays["meta"] = np.frombuffer(json.dumps(meta, sort_keys=True).encode("ascii"), np.uint8)
    save_npz(path, arrays)
    return meta


def check_arch(arch: Any) -> str:
    """What is wrong with a record's ``arch`` ("" if nothing): ``net_arch`` a list of at most
    :data:`MAX_LAYERS` sizes in 1 … :data:`MAX_WIDTH` whose neighbouring products sum to at most
    ``agents.config.MAX_NET_WEIGHTS`` (a training config's limits), ``activation`` one of
    :data:`ACTIVATIONS`."""
    if not isinstance(arch, dict) or set(arch) != {"net_arch", "activation"}:
        return f"'arch' must be a JSON object of net_arch and activation, not {shown(arch, 120)}"
    sizes, act = arch["net_arch"], arch["activation"]
    if (not isinstance(sizes, list) or len(sizes) > MAX_LAYERS
            or not all(is_int(x) and 0 < x <= MAX_WIDTH for x in sizes)):  # fmt: skip
        return (f"net_arch must be a list of at most {MAX_LAYERS} layer sizes (integers "
                f"1 … {MAX_WIDTH}), not {shown(sizes, 120)}")  # fmt: skip
    if sum(a * b for a, b in itertools.pairwise(sizes)) > MAX_NET_WEIGHTS:
        return f"net_arch {shown(sizes, 120)} has more than {MAX_NET_WEIGHTS:,} hidden weights"
    if act not in ACTIVATIONS:
        return f"activation must be one of {list(ACTIVATIONS)}, not {shown(act)}"
    return ""


def read_ppo_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON record of a weights-only MaskablePPO policy, checked (format, fields, game and
    options, observation layout, sizes, architecture) before anything is built from it."""
    meta = read_meta_record(path, "MaskablePPO policy")
    fmt = meta.get("format")
    if fmt != FORMAT:
        hint = " (a policy network: agents.policy.load_policy reads it)" * (fmt == POLICY_FORMAT)
        raise CheckpointError(f"{path} is a {shown(fmt)} file{hint}, not {FORMAT} weights")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path} has format version {shown(meta.get('format_version'))}; "
                              f"this package reads {FORMAT_VERSION}")  # fmt: skip
    words = {str: "a string", dict: "a JSON object", int: "an integer"}
    types = {"game": str, "options": dict, "variant": str, "prefix": str, "layout_id": str,
             "obs_dim": int, "n_actions": int, "arch": dict}  # fmt: skip
    for key, kind in types.items():
        if key not in meta:
            raise CheckpointError(f"{path}: its metadata lacks {key!r}")
        if not isinstance(meta[key], kind) or isinstance(meta[key], bool):
            raise CheckpointError(f"{path}: its {key!r} is {shown(meta[key], 80)}, not "
                                  f"{words[kind]}")  # fmt: skip
    wrong = check_arch(meta["arch"])
    if wrong:
        raise CheckpointError(f"{path}: {wrong}")
    tag = record_variant(path, meta).tag
    implied = complete_meta({"game": meta["game"], "options": meta["options"]}) | {"variant": tag}
    if meta["layout_id"] != implied["layout_id"]:
        raise CheckpointError(
            f"{path} was trained on observation layout {shown(meta['layout_id'])}; this "
            f"package's layout for {tag} is {implied['layout_id']!r}: retrain it"
        )
    for key in ("variant", "prefix", "obs_dim", "n_actions"):
        if meta[key] != implied[key]:
            raise CheckpointError(f"{path}: its {key} {shown(meta[key])} is not its game's "
                                  f"({implied[key]!r})")  # fmt: skip
    return meta


def build_ppo_net(arch: dict[str, Any], obs_dim: int, n_actions: int):
    """The actor of ``arch`` as a plain ``torch.nn.Sequential``: ``(Linear, activation)`` per
    hidden layer, then the ``action_net`` Linear to ``n_actions`` logits (stable-baselines3's
    ``MlpExtractor.policy_net`` followed by ``action_net``)."""
    import torch.nn as nn

    act = activation_class(arch["activation"])
    mods: list[nn.Module] = []
    width = obs_dim
    for size in arch["net_arch"]:
        mods += [nn.Linear(width, size), act()]
        width = size
    mods.append(nn.Linear(width, n_actions))
    return nn.Sequential(*mods)


class PPOWeightsAgent(Agent):
    """A MaskablePPO actor loaded from weights (:func:`load_ppo_weights`), playing as the model
    does (module docstring): ``deterministic``, its most likely legal action, else a sample.
    Uses the observation and the mask only. ``meta``: the file's record."""

    def __init__(self, net, meta: dict[str, Any], *, name: str = "ppo",
                 deterministic: bool = True, seed: int = 0) -> None:  # fmt: skip
        self.net = net.eval()
        self.meta = meta
        self.name = name
        self.deterministic = deterministic
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.path: Path | None = None

    def reset(self, n: int | None = None) -> None:
        self.rng = np.random.default_rng(self.seed)

    def check_env(self, game: str, options: dict | None = None) -> None:
        """Refuse (:class:`~agents.checkpoint.CheckpointError`) a game it cannot play."""
        check_game(self.meta, game, options, f"policy {self.name!r}")

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """The action logits (B, N) of observations (B, D), unmasked."""
        import torch

        with torch.no_grad():
            x = torch.as_tensor(np.asarray(obs), dtype=torch.float32, device=net_device(self.net))
            return self.net(x).cpu().numpy()

    def _act(self, obs, masks, starts, active, view) -> np.ndarray:
        import torch
        from torch.distributions import Categorical

        dev = net_device(self.net)
        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32, device=dev)
            first = Categorical(logits=self.net(x), validate_args=False).logits
            m = torch.as_tensor(masks, dtype=torch.bool, device=dev).reshape(first.shape)
            huge = torch.tensor(HUGE_NEG, dtype=first.dtype, device=dev)
            dist = Categorical(logits=torch.where(m, first, huge), validate_args=False)
            if self.deterministic:
                return dist.probs.argmax(dim=1).cpu().numpy()
            with torch.random.fork_rng(devices=[]):  # the agent's own generator, as SB3Agent
                torch.manual_seed(int(self.rng.integers(2**62)))
                return dist.sample().cpu().numpy()


def load_ppo_weights(
    path: str | os.PathLike[str],
    *,
    game: str | None = None,
    options: dict | None = None,
    name: str = "ppo",
    deterministic: bool = True,
    seed: int = 0,
    device: str = "cpu",
) -> PPOWeightsAgent:
    """Load a weights-only MaskablePPO policy (:func:`save_ppo_weights`) as a
    :class:`PPOWeightsAgent` on ``device`` (:func:`agents.torch_setup.resolve_device`); with
    ``game``, refuse first one that cannot play it. Never unpickles anything: no ``trusted``
    flag is needed. A bad file, or one of another game, raises
    :class:`~agents.checkpoint.CheckpointError` naming it."""
    import torch

    device = resolve_device(device)
    meta = read_ppo_meta(path)
    if game is not None:
        check_game(meta, game, options, f"checkpoint {path}")
    arch = meta["arch"]
    with torch.device("meta"):  # shapes only: memory is taken as checked weights are read
        net = build_ppo_net(arch, meta["obs_dim"], meta["n_actions"])
    state = net.state_dict()
    names = _weight_names(len(arch["net_arch"]))
    with Npz(path, CheckpointError) as z:
        have = {k for k in z.names if k.startswith("w/")}
        want = {f"w/{names[k]}" for k in state}
        if have != want:
            raise CheckpointError(
                f"{path}: its weights do not fit net_arch {shown(arch['net_arch'], 120)} "
                f"({shown(sorted(have ^ want)[:3], 200)} ...)"
            )
        for k, v in state.items():
            like = torch.zeros(()).expand(v.shape)  # v's shape and dtype, without its memory
            w = read_weight(z, f"w/{names[k]}", f"{path}: weight {names[k]!r}", like)
            state[k] = torch.from_numpy(w)
    net.load_state_dict(state, assign=True)
    agent = PPOWeightsAgent(net.to(device), meta, name=name, deterministic=deterministic,
                            seed=seed)  # fmt: skip
    agent.path = Path(path)
    return agent
