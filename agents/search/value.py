"""A value network: the probability that a position is still winnable, from what the player sees.

**Labels** (:func:`label_positions`). Positions come from the games of teacher or expert shards
(``agents/dataset.py``): each game is replayed from its deal with the moves played, and a share
of its positions is given to the solver (``max_nodes`` nodes): 1 when it finds a win, 0 when it
proves the position lost. A position the solver leaves undecided gets no label and is left out
(on Seahaven Towers, 4 cells, at 20,000 nodes almost every position is decided). In the games
with hidden cards the solver sees the true deal: the label is whether *this deal* can still be
won from here, and the network, which sees only the observation, learns the chance of that over
the deals the observation allows (the information state's value, for a player who would then
play perfectly).

**Network** (:func:`build_value_net`): a multilayer perceptron on the env's float observation,
``arch = {"hidden": H, "layers": L}``, one logit out; trained with binary cross-entropy
(:func:`train_value`).

**Checkpoint**: an ``.npz`` of the weights (``w/<name>``) and a JSON record (``meta``), read
header first like a policy checkpoint (``agents/policy.py``: no unpickling, every array's shape
and type checked against the architecture before it is read). The record holds ``check``: the
network's outputs on the first positions of evaluation deals 0 … 19, which
``tests/test_value.py`` recomputes.

**In the search**: :class:`~agents.search.rollouts.RolloutSearch` with ``value`` scores a rollout
that did not win by the network's output at its last position (0 when stuck) instead of half the
share of cards home; ``agents.make_agent("search@256-v", variant)`` plays with the committed
network of the variant (``agents/checkpoints/value/<variant>.npz``).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.dataset import game_starts, save_npz
from agents.npz import Npz
from agents.play import VARIANTS
from agents.policy import CheckpointError, read_meta_record, read_weight
from agents.torch_setup import net_device, resolve_device
from solitaire_gym.envs.core import EnvCore, EnvOptions
from solitaire_gym.envs.observation import layout_id
from solitaire_gym.errors import shown

FORMAT = "solitaire_gym-value"
FORMAT_VERSION = 1
VALUE_DIR = Path(__file__).parents[1] / "checkpoints" / "value"
"""The committed value networks, one per variant: ``agents/checkpoints/value/<variant>.npz``."""
CHECK_DEALS = 20
"""The record's ``check``: outputs on the first positions of evaluation deals 0 … 19."""


def build_value_net(arch: dict[str, Any], obs_dim: int):
    """The network of ``arch`` (``hidden``, ``layers``) for observations of ``obs_dim`` values:
    (B, obs_dim) float32 in, (B,) logits out."""
    import torch.nn as nn

    hidden, layers = arch.get("hidden"), arch.get("layers")
    for name, v, hi in (("hidden", hidden, 4096), ("layers", layers, 8)):
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
            raise CheckpointError(
                f"value arch {name} must be an integer in 1 … {hi}, not {shown(v)}"
            )
    mods: list[Any] = []
    width = obs_dim
    for _ in range(layers):
        mods += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    mods += [nn.Linear(width, 1), nn.Flatten(0)]
    return nn.Sequential(*mods)


class ValueFunction:
    """A trained value network as a function of a batch of observations: ``v(obs)`` gives, for
    (B, D) observations of its variant, (B,) probabilities that the positions are winnable."""

    def __init__(self, net, meta: dict[str, Any]) -> None:
        self.net = net.eval()
        self.meta = meta
        self.obs_dim = int(meta["obs_dim"])

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        import torch

        obs = np.asarray(obs, np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(
                f"the value network of {self.meta['variant']} reads (B, {self.obs_dim}) "
                f"observations, not {obs.shape}"
            )
        x = torch.from_numpy(np.ascontiguousarray(obs)).to(net_device(self.net))
        with torch.no_grad():
            return torch.sigmoid(self.net(x)).cpu().numpy()


def start_observations(game: str, options: dict | None, deals: Sequence[int]) -> np.ndarray:
    """The first observations of evaluation ``deals`` (the record's ``check`` inputs)."""
    core = EnvCore(EnvOptions.build(game, **(options or {}), split="eval"), len(deals))
    core.deal(np.arange(len(deals)), np.asarray(deals, np.int64))
    return core.obs.copy()


def save_value(path: str | os.PathLike[str], net, meta: dict[str, Any]) -> None:
    """Write ``net``'s weights and ``meta`` (``variant``, ``game``, ``options``, ``arch``,
    ``obs_dim`` required; ``format``, ``layout_id`` and ``check`` are added) to ``path``."""
    cfg = EnvOptions.build(meta["game"], **meta["options"]).variant.cfg
    fn = ValueFunction(net, meta)
    obs = start_observations(meta["game"], meta["options"], range(CHECK_DEALS))
    full = {
        **meta,
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "layout_id": layout_id(cfg),
        "check": [round(float(v), 6) for v in fn(obs)],
    }
    arrays = {f"w/{k}": v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    arrays["meta"] = np.frombuffer(json.dumps(full, sort_keys=True).encode("ascii"), np.uint8)
    save_npz(path, arrays)


def read_value_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON record of a value checkpoint, checked for format, fields and layout."""
    meta = read_meta_record(path, "value")
    if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint of version {FORMAT_VERSION}")
    for key in ("game", "options", "arch", "variant", "layout_id", "obs_dim", "check"):
        if key not in meta:
            raise CheckpointError(f"{path}: its metadata lacks {key!r}")
    if not isinstance(meta["options"], dict) or not isinstance(meta["arch"], dict):
        raise CheckpointError(f"{path}: 'options' and 'arch' must be JSON objects")
    try:
        opts = EnvOptions.build(meta["game"], **meta["options"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(
            f"{path}: its game or options are not valid ({shown(str(e), 200)})"
        ) from None
    if meta["layout_id"] != layout_id(opts.variant.cfg):
        raise CheckpointError(
            f"{path} was trained on observation layout {shown(meta['layout_id'])}, not this "
            f"package's {layout_id(opts.variant.cfg)!r}: retrain it"
        )
    if meta["obs_dim"] != EnvCore(opts, 1).obs_dim:
        raise CheckpointError(f"{path}: obs_dim {shown(meta['obs_dim'])} is not the variant's")
    return meta


def load_value(path: str | os.PathLike[str], *, game: str | None = None,
               options: dict | None = None) -> ValueFunction:  # fmt: skip
    """Load a value checkpoint; with ``game``, refuse one of another variant first. Never
    unpickles anything."""
    import torch

    meta = read_value_meta(path)
    if game is not None:
        tag = EnvOptions.build(game, **(options or {})).variant.tag
        if meta["variant"] != tag:
            raise CheckpointError(
                f"value checkpoint {path} is for {shown(meta['variant'])}, not {tag}"
            )
    net = build_value_net(meta["arch"], meta["obs_dim"])
    state = net.state_dict()
    with Npz(path, CheckpointError) as z:
        names = {k[2:] for k in z.names if k.startswith("w/")}
        if names != set(state):
            raise CheckpointError(f"{path}: its weights do not fit arch {shown(meta['arch'], 200)}")
        for k, v in state.items():
            state[k] = torch.from_numpy(read_weight(z, f"w/{k}", f"{path}: weight {k!r}", v))
    net.load_state_dict(state)
    return ValueFunction(net, meta)


def committed_value(variant: str) -> ValueFunction:
    """The committed value network of ``variant`` (a :class:`CheckpointError` when there is
    none: the variants that have one are the files of :data:`VALUE_DIR`)."""
    path = VALUE_DIR / f"{variant}.npz"
    if variant not in VARIANTS or not path.is_file():
        have = sorted(p.stem for p in VALUE_DIR.glob("*.npz"))
        raise CheckpointError(
            f"no committed value network for {shown(variant)}; there are: {', '.join(have) or 'none'}"
        )
    game, options = VARIANTS[variant]
    return load_value(path, game=game, options=options)


# ---- labels and training ----------------------------------------------------------------------


def _label_games(task: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Replay the games of ``task`` and label its chosen positions (:func:`label_positions`)."""
    from agents.teacher import prove
    from solitaire_gym.game import Game

    game, options = VARIANTS[task["variant"]]
    core = EnvCore(EnvOptions.build(game, **options, split="eval"), 1)
    obs, labels, episode, undecided = [], [], [], 0
    for deal, played, chosen in task["games"]:
        core.deal(np.zeros(1, np.int64), np.array([deal], np.int64))
        for t, a in enumerate(played):
            if chosen[t]:
                g = Game.from_dict(core.to_dict(0))
                verdict = "solvable" if g.won else prove(g, task["max_nodes"])[0]
                if verdict in ("solvable", "unsolvable"):
                    obs.append(core.obs[0].copy())
                    labels.append(verdict == "solvable")
                    episode.append(deal)
                else:
                    undecided += 1
            core.step(np.array([a], np.int64))
    dim = core.obs_dim
    return (np.array(obs, np.float32).reshape(-1, dim), np.array(labels, bool),
            np.array(episode, np.int64), undecided)  # fmt: skip


def label_positions(variant: str, data: dict[str, np.ndarray], *, share: float = 0.25,
                    max_nodes: int = 20_000, seed: int = 0, jobs: int = 1,
                    progress: bool = True) -> dict[str, Any]:  # fmt: skip
    """Solver labels for a random ``share`` of the positions of ``data``
    (:func:`agents.dataset.load_shards`: whole games, in the order played) of ``variant``:
    ``{"obs": (T, D) float32, "won": (T,) bool, "episode": (T,) deal, "undecided": n}``
    (module docstring)."""
    from agents.teacher import workers_closed

    if variant not in VARIANTS:
        raise ValueError(f"variant {variant!r} is not one of {', '.join(VARIANTS)}")
    if not 0 < share <= 1:
        raise ValueError(f"share must lie in (0, 1], not {shown(share)}")
    rng = np.random.default_rng(seed)
    chosen = rng.random(len(data["played"])) < share
    games = [
        (int(data["episode"][a]), data["played"][a:b].tolist(), chosen[a:b].tolist())
        for a, b in itertools.pairwise(game_starts(data["episode"]).tolist())
    ]
    tasks = [{"variant": variant, "max_nodes": max_nodes, "games": games[i : i + 20]}
             for i in range(0, len(games), 20)]  # fmt: skip
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(games), unit="game", desc=f"{variant} labels")
    pool = None
    if jobs > 1:
        import multiprocessing as mp

        _label_games({**tasks[0], "games": tasks[0]["games"][:1]})  # compile once, here
        pool = mp.get_context("spawn").Pool(jobs)
        results = pool.imap(_label_games, tasks)
    else:
        results = map(_label_games, tasks)
    parts_obs, parts_won, parts_ep, undecided = [], [], [], 0
    with workers_closed(pool, bar):
        for task, (o, w, e, u) in zip(tasks, results, strict=True):
            parts_obs.append(o)
            parts_won.append(w)
            parts_ep.append(e)
            undecided += u
            if bar is not None:
                bar.update(len(task["games"]))
    return {"obs": np.concatenate(parts_obs), "won": np.concatenate(parts_won),
            "episode": np.concatenate(parts_ep), "undecided": undecided}  # fmt: skip


def train_value(net, obs: np.ndarray, won: np.ndarray, *, epochs: int = 4, batch_size: int = 512,
                learning_rate: float = 2e-3, seed: int = 0, log=None,
                device: str = "cpu") -> None:  # fmt: skip
    """Fit ``net`` to the labels ``won`` of ``obs`` (binary cross-entropy, AdamW, one-cycle
    learning rate) on ``device`` (:func:`agents.torch_setup.resolve_device`; ``net`` is moved
    there and stays, the data goes a batch at a time); ``log`` gets ``{"epoch", "loss",
    "accuracy"}`` after each epoch."""
    import torch
    import torch.nn.functional as F

    dev = torch.device(resolve_device(device))
    net.to(dev)
    g = torch.Generator().manual_seed(seed)
    x = torch.from_numpy(np.ascontiguousarray(obs, np.float32))
    y = torch.from_numpy(np.asarray(won, np.float32))
    n = len(y)
    opt = torch.optim.AdamW(net.parameters(), lr=learning_rate)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, learning_rate, total_steps=max(1, steps))
    for epoch in range(1, epochs + 1):
        net.train()
        total, right = 0.0, 0
        for idx in torch.randperm(n, generator=g).split(batch_size):
            xb, yb = x[idx].to(dev), y[idx].to(dev)
            z = net(xb)
            loss = F.binary_cross_entropy_with_logits(z, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
            right += int(((z > 0) == (yb > 0.5)).sum())
        net.eval()
        if log is not None:
            log({"epoch": epoch, "loss": total / n, "accuracy": right / n})
