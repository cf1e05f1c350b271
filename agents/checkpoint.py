"""Policy checkpoints: writing (:func:`save_policy`) and reading (:func:`read_policy_meta`,
:func:`load_weights`), and the committed ones (:func:`committed_policies`).

A checkpoint is a single ``.npz`` file: the weights as plain arrays (``w/<parameter name>``)
and a JSON record (``meta``: format, observation layout id, variant, sizes, architecture, how
it was trained, the wins it scored on fixed deals). It is read header first (:mod:`agents.npz`,
as teacher shards are read): no code object is ever unpickled, so a checkpoint from anywhere is
safe to load. A checkpoint whose layout id differs from the package's
(``solitaire_gym.envs.observation.layout_id``) is refused: the observation it was trained on no
longer exists. Each array's ``.npy`` header is read and checked before its data: a weight must
have its parameter's shape and be float32 (either byte order; float64 is refused, not rounded:
:func:`save_policy` never writes it) with finite values, the metadata a byte string of at most
:data:`MAX_META_BYTES` and strict JSON, so a damaged or hostile file (a negative or huge
declared shape, a zip bomb) is refused by name (:class:`CheckpointError`) without allocating
more than those sizes. The record's play rule (:data:`PLAY_RULES`, :func:`play_rule`) is
checked here too; how the agent plays it is :mod:`agents.policy`'s.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from agents.dataset import save_npz
from agents.networks.spec import game_spec
from agents.npz import MAX_META_BYTES, Npz
from solitaire_gym.envs.core import EnvOptions
from solitaire_gym.envs.observation import layout_id
from solitaire_gym.errors import shown
from solitaire_gym.files import FileFormatError, strict_json

FORMAT = "solitaire_gym-policy"
FORMAT_VERSION = 1
PLAY_RULES = ("policy", "veto", "factored")


class CheckpointError(ValueError):
    """A policy checkpoint that cannot be loaded, or not for this game (the message says why)."""


def play_rule(meta: dict[str, Any]) -> tuple[str, float]:
    """The play rule and winnability threshold recorded in ``meta`` (``"policy"`` when none),
    checked against the network's heads."""
    play = meta.get("play", {"rule": "policy"})
    if not isinstance(play, dict):
        raise CheckpointError(f"'play' must be a JSON object, not {shown(play)}")
    rule, threshold = play.get("rule", "policy"), play.get("threshold", 0.5)
    if rule not in PLAY_RULES:
        raise CheckpointError(f"play rule {shown(rule)} is not one of {list(PLAY_RULES)}")
    if (not isinstance(threshold, (int, float)) or isinstance(threshold, bool)
            or not 0.0 <= threshold <= 1.0):  # fmt: skip
        raise CheckpointError(f"play threshold must be a number in 0 … 1, not {shown(threshold)}")
    if rule != "policy" and meta.get("arch", {}).get("heads", "policy") != "factored":
        raise CheckpointError(f"play rule {shown(rule)} needs a network with heads='factored'")
    return rule, float(threshold)


def complete_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` (with ``game`` and ``options``) plus what it implies: the game's prefix, the
    observation size and action count, and the observation layout id."""
    spec = game_spec(meta["game"], meta["options"])
    cfg = EnvOptions.build(meta["game"], **meta["options"]).variant.cfg
    return {**meta, "prefix": spec["prefix"], "obs_dim": spec["obs_dim"],
            "n_actions": spec["n_actions"], "layout_id": layout_id(cfg)}  # fmt: skip


def check_game(meta: dict[str, Any], game: str, options: dict | None, what: str) -> None:
    """Raise :class:`CheckpointError` unless a policy recorded as ``meta`` can play ``game``."""
    want = game_spec(game, options)
    if meta.get("prefix") != want["prefix"]:
        raise CheckpointError(
            f"{what} was trained on {shown(meta.get('variant'))}; it cannot play {want['variant']}"
        )
    for key in ("obs_dim", "n_actions"):
        if meta.get(key) != want[key]:
            raise CheckpointError(
                f"{what} has {key}={shown(meta.get(key))}; {want['variant']} has {want[key]}"
            )


def save_policy(path: str | os.PathLike[str], net, meta: dict[str, Any]) -> None:
    """Write ``net``'s weights and ``meta`` (JSON-able; ``arch``, ``variant``, ``game``,
    ``options`` required) to ``path`` (``.npz``), atomically."""
    full = {**complete_meta(meta), "format": FORMAT, "format_version": FORMAT_VERSION}
    arrays = {f"w/{k}": v.detach().cpu().numpy() for k, v in net.state_dict().items()}
    arrays["meta"] = np.frombuffer(json.dumps(full, sort_keys=True).encode("ascii"), np.uint8)

    save_npz(path, arrays)


def _checkpoint_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path`; a :class:`TypeError` naming it when it is no path at all."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"checkpoint path must be a str or os.PathLike, not {shown(path)}")
    return Path(path)


def read_weight(z: Npz, name: str, what: str, like) -> np.ndarray:
    """The weight stored as array ``name`` of ``z``, for the parameter tensor ``like``: its
    header must declare ``like``'s shape and dtype (either byte order) before any data is read,
    and its values must be finite; a :class:`CheckpointError` naming ``what`` otherwise. Returns
    a writable array in native byte order."""
    want = like.detach().cpu().numpy().dtype
    shape_want = tuple(like.shape)

    def check(shape, dtype) -> str:
        if dtype.newbyteorder("<") != want.newbyteorder("<"):
            return f"is {dtype}, not {want}"
        if shape != shape_want:
            return f"has shape {shown(shape)}, not {shape_want}"
        return ""

    w = np.array(z.read(name, math.prod(shape_want) * want.itemsize, check, what), dtype=want)
    if w.dtype.kind in "fc" and not np.isfinite(w).all():
        raise CheckpointError(f"{what} holds NaN or infinite values")
    return w


def _byte_string(shape, dtype) -> str:
    """What is wrong with a metadata array's header ("" if nothing): a 1-D array of bytes."""
    if dtype.newbyteorder("<") != np.dtype(np.uint8) or len(shape) != 1:
        return "is not a short byte string"
    return ""


def read_meta_record(path: str | os.PathLike[str], kind: str = "policy") -> dict[str, Any]:
    """The JSON record of a ``kind`` checkpoint (``"policy"``, ``"value"``) as it is stored (a
    JSON object; nothing else checked), read header first (:mod:`agents.npz`): at most
    :data:`MAX_META_BYTES`, strict ASCII JSON."""
    path = _checkpoint_path(path)
    if not path.is_file():
        raise CheckpointError(f"no {kind} checkpoint at {path}")
    with Npz(path, CheckpointError) as z:
        if "meta" not in z.names:
            raise CheckpointError(f"{path} is not a {kind} checkpoint: it has no metadata")
        raw = z.read("meta", MAX_META_BYTES, _byte_string, f"{path}: its metadata")
    try:
        meta = strict_json(raw.tobytes().decode("ascii"))
    except (UnicodeDecodeError, FileFormatError) as e:
        raise CheckpointError(
            f"{path} is not a {kind} checkpoint (its metadata: {shown(str(e), 120)})"
        ) from None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    return meta


def record_variant(path: str | os.PathLike[str], meta: dict[str, Any]):
    """The variant (``solitaire_gym.engine.catalog``) of a checkpoint record's ``game`` and
    ``options``; a :class:`CheckpointError` naming ``path`` when they are not valid."""
    try:
        return EnvOptions.build(meta["game"], **meta["options"]).variant
    except (TypeError, ValueError) as e:
        raise CheckpointError(
            f"{path}: its game or options are not valid ({shown(str(e), 200)})"
        ) from None


def read_policy_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON record of a policy checkpoint, checked for format and layout."""
    path = _checkpoint_path(path)
    meta = read_meta_record(path)
    if meta.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path} has format version {shown(meta.get('format_version'))}; this package reads "
            f"{FORMAT_VERSION}"
        )
    for key in ("game", "options", "arch", "variant", "layout_id"):
        if key not in meta:
            raise CheckpointError(f"{path}: its metadata lacks {key!r}")
    if not isinstance(meta["options"], dict) or not isinstance(meta["arch"], dict):
        raise CheckpointError(f"{path}: 'options' and 'arch' must be JSON objects")
    try:
        play_rule(meta)
    except CheckpointError as e:
        raise CheckpointError(f"{path}: {e}") from None
    cfg = record_variant(path, meta).cfg
    if meta["layout_id"] != layout_id(cfg):
        raise CheckpointError(
            f"{path} was trained on observation layout {shown(meta['layout_id'])}; this "
            f"package's layout for {shown(meta['variant'])} is {layout_id(cfg)!r}: retrain it"
        )
    return meta


def load_weights(path: str | os.PathLike[str], net, arch: dict[str, Any]) -> None:
    """Load the weights of the checkpoint at ``path`` into ``net`` (built from its record's
    ``arch``): the checkpoint must hold exactly ``net``'s parameters, each checked as
    :func:`read_weight` does; a :class:`CheckpointError` naming ``path`` otherwise."""
    import torch

    state = net.state_dict()
    with Npz(path, CheckpointError) as z:
        names = {k[2:] for k in z.names if k.startswith("w/")}
        if names != set(state):
            raise CheckpointError(
                f"{path}: its weights do not fit architecture {shown(arch, 200)} "
                f"({shown(sorted(names ^ set(state))[:3], 200)} ...)"
            )
        for k, v in state.items():
            w = read_weight(z, f"w/{k}", f"{path}: weight {k!r}", v)
            state[k] = torch.from_numpy(w)
    net.load_state_dict(state)


CHECKPOINT_DIR = Path(__file__).parent / "checkpoints"
"""The committed policies, one per variant: ``agents/checkpoints/<variant>.npz``."""


def committed_policies() -> dict[str, Path]:
    """Variant tag -> path of each committed policy."""
    return {p.stem: p for p in sorted(CHECKPOINT_DIR.glob("*.npz"))}
