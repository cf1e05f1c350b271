"""Teacher data on disk: shards of (observation, mask, label) records, compact and safe to load.

A shard is one ``.npz`` file (read header first by :mod:`agents.npz`: no pickle, so no code runs;
every array's declared size checked before its data is read) holding, for
``T`` positions of one variant:

==================  ===============  ========================================================
array               dtype, shape     meaning
==================  ===============  ========================================================
``codebook``        float32 (V,)     the distinct observation values of the shard (V <= 256)
``obs``             uint8 (T, D)     each observation value as its index in ``codebook``
``masks``           uint8 (T, ⌈N/8⌉)  legal-action masks, bit-packed (``np.packbits``)
``labels``          int16 (T,)       the teacher's action
``safe``            bool (T,)        the label is proven to keep the game winnable
``played``          int16 (T,)       the action played there (the label, or the student's)
``episode``         int64 (T,)       the deal each position comes from
``deals``           int64 (E,)       the shard's deals, with ``won`` (E,) bool
``meta``            uint8 (bytes)    JSON: variant, layout version, sizes, how it was made
==================  ===============  ========================================================

Observations hold a few dozen distinct values (multiples of 1/32, 1/13, 1/N, 1/10), so the
codebook encoding is exact and takes a byte per value instead of four; the file is compressed
besides (most values are 0). :func:`load_shards` gives back float32 observations equal to the
env's, bit for bit.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.npz import MAX_META_BYTES, Npz
from solitaire_gym.errors import is_int, shown
from solitaire_gym.files import FileFormatError, strict_json


@dataclass
class Episode:
    """What a labeller returns (:func:`agents.teacher.teach_deal`, :func:`agents.search.expert.search_episodes`) for one deal: per position, the observation, the legal
    mask, the teacher's label, whether the label is proven safe, and the action played; then the
    outcome of the played game."""

    deal: int
    obs: np.ndarray  # (T, D) float32
    masks: np.ndarray  # (T, N) bool
    labels: np.ndarray  # (T,) int16: the teacher's action
    safe: np.ndarray  # (T,) bool: the label keeps the position winnable (proven)
    played: np.ndarray  # (T,) int16: the action played (the label, or the student's)
    won: bool
    solver_calls: int


class ShardError(ValueError):
    """A file that is not a teacher-data shard of the expected variant (the message says why)."""


def write_shard(
    path: str | os.PathLike[str] | Any, episodes: Sequence[Episode], meta: dict
) -> None:
    """Write ``episodes`` (at least one position in all) to ``path`` atomically."""
    obs = np.concatenate([e.obs for e in episodes])
    codebook = np.unique(obs)
    if codebook.size > 256:
        raise ValueError(f"{codebook.size} distinct observation values: more than a byte holds")
    masks = np.concatenate([e.masks for e in episodes])
    data = {
        "codebook": codebook.astype(np.float32),
        "obs": np.searchsorted(codebook, obs).astype(np.uint8),
        "masks": np.packbits(masks, axis=1),
        "labels": np.concatenate([e.labels for e in episodes]).astype(np.int16),
        "safe": np.concatenate([e.safe for e in episodes]).astype(bool),
        "played": np.concatenate([e.played for e in episodes]).astype(np.int16),
        "episode": np.concatenate(
            [np.full(len(e.labels), e.deal, np.int64) for e in episodes]
        ).astype(np.int64),
        "deals": np.array([e.deal for e in episodes], np.int64),
        "won": np.array([e.won for e in episodes], bool),
        "meta": np.frombuffer(
            json.dumps(
                {**meta, "n_actions": int(masks.shape[1]), "obs_dim": int(obs.shape[1])}
            ).encode("ascii"),
            np.uint8,
        ),
    }
    save_npz(path, data)


def save_npz(path: str | os.PathLike[str] | Any, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez_compressed`` to ``path`` atomically (written beside it, then renamed), or into
    a file object (a Ray worker's buffer)."""
    if not isinstance(path, (str, os.PathLike)):
        np.savez_compressed(path, **arrays)
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


_SHARD_ARRAYS = {  # name: (dtype kind and size, per row (T) or per deal (E)), as write_shard writes
    "codebook": ("f4", None),
    "obs": ("u1", "T"),
    "masks": ("u1", "T"),
    "labels": ("i2", "T"),
    "safe": ("b1", "T"),
    "played": ("i2", "T"),
    "episode": ("i8", "T"),
    "deals": ("i8", "E"),
    "won": ("b1", "E"),
    "meta": ("u1", None),
}
MAX_SHARD_ROWS = 1 << 22
"""Most positions one shard may hold (``write_shard`` writes 25 deals' worth: thousands)."""
MAX_SHARD_BYTES = 1 << 30
"""Most bytes the arrays of one shard may declare in all; checked from their headers, before
any array is read."""
SHARD_MEMORY_PER_BYTE = 512
"""Most bytes loading a shard may take (:func:`shard_load_bytes`) per byte of its file, beyond
:data:`SHARD_MEMORY_FLOOR`: a shard is compressed, and this bounds what a small file can make
:func:`load_shards` allocate. Genuine shards take a few hundred times their file size
(SECURITY.md gives the measured ratios)."""
SHARD_MEMORY_FLOOR = 32 << 20
"""Bytes loading any shard may take, whatever its file size (small shards compress best)."""


def shard_load_bytes(stored: int, rows: int, deals: int, obs_dim: int, n_actions: int) -> int:
    """The bytes :func:`load_shards` holds for one shard of ``rows`` positions and ``deals``
    deals whose arrays declare ``stored`` bytes: those arrays, and what they are decoded to
    (float32 observations, a bool per action of each mask, int64 labels, played and previous
    actions, the deal and safety of each position, each deal and whether it was won)."""
    return stored + rows * (4 * obs_dim + n_actions + 8 + 8 + 8 + 8 + 1) + deals * (8 + 1)


def _meta_of(raw: np.ndarray, path) -> dict[str, Any]:
    """The shard's JSON record from the bytes of its ``meta`` array, checked."""
    try:
        meta = strict_json(raw.tobytes().decode("ascii"))
    except (UnicodeDecodeError, FileFormatError) as e:
        raise ShardError(
            f"{path}: not a shard with readable metadata ({shown(str(e), 120)})"
        ) from None
    if not isinstance(meta, dict):
        raise ShardError(f"{path}: its metadata is not a JSON object")
    for key in ("n_actions", "obs_dim"):
        v = meta.get(key)
        if not is_int(v) or not 1 <= v <= 1 << 16:
            raise ShardError(f"{path}: metadata {key!r} is {shown(v)}, not a size")
    return meta


def _byte_string(shape, dtype) -> str:
    return "" if dtype == np.uint8 and len(shape) == 1 else "is not a short byte string"


def read_meta(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A shard's JSON record (variant, sizes, how it was made); :class:`ShardError` naming the
    file when it is not a shard or its record is not readable. The record's size is checked
    from its ``.npy`` header (at most :data:`MAX_META_BYTES`) before it is read."""
    try:
        with Npz(path, ShardError) as z:
            if "meta" not in z.names:
                raise ShardError(f"{path} has no metadata")
            raw = z.read("meta", MAX_META_BYTES, _byte_string, f"{path}: its metadata")
    except ShardError as e:
        raise ShardError(f"not a shard with readable metadata: {e}") from None
    return _meta_of(raw, path)


def _read_shard(path, meta: dict[str, Any]) -> dict[str, np.ndarray]:
    """Every array of the shard at ``path``, checked against :data:`_SHARD_ARRAYS` and ``meta``:
    first from the headers alone (dtypes, matching row counts, the observation and mask widths,
    at most :data:`MAX_SHARD_ROWS` rows and :data:`MAX_SHARD_BYTES` in all, and loading it taking
    at most :data:`SHARD_MEMORY_PER_BYTE` times its file size or :data:`SHARD_MEMORY_FLOOR`),
    then the data (observation indices inside the codebook, labels and played actions inside the
    action space, a finite codebook); :class:`ShardError` otherwise."""
    n_act, dim = meta["n_actions"], meta["obs_dim"]
    with Npz(path, ShardError) as z:
        missing = sorted(set(_SHARD_ARRAYS) - z.names)
        if missing:
            raise ShardError(f"{path}: not a shard (no {', '.join(missing)})")
        heads = {k: z.header(k) for k in _SHARD_ARRAYS if k != "meta"}
        rows = {"T": heads["labels"][0][:1], "E": heads["deals"][0][:1]}
        widths = {"obs": dim, "masks": (n_act + 7) // 8}
        for k, (shape, dtype) in heads.items():
            kind, per = _SHARD_ARRAYS[k]
            want = np.dtype(kind)
            ndim = 2 if k in widths else 1
            if dtype.newbyteorder("=") != want.newbyteorder("=") or len(shape) != ndim:
                raise ShardError(f"{path}: array {k!r} is {dtype} {shown(shape)}, not {want}")
            if per is not None and shape[:1] != rows[per]:
                raise ShardError(f"{path}: array {k!r} has {shape[0]} rows, not {rows[per][0]}")
            if k in widths and shape[1] != widths[k]:
                raise ShardError(
                    f"{path}: observations or masks do not have the widths its metadata says"
                )
        if heads["codebook"][0][0] > 256 or rows["T"][0] > MAX_SHARD_ROWS:
            raise ShardError(f"{path}: more than {MAX_SHARD_ROWS} positions or 256 codebook "
                             "values")  # fmt: skip
        sizes = {k: math.prod(shape) * dtype.itemsize for k, (shape, dtype) in heads.items()}
        if sum(sizes.values()) > MAX_SHARD_BYTES:
            raise ShardError(
                f"{path}: its arrays declare {sum(sizes.values())} bytes; a shard holds at most "
                f"{MAX_SHARD_BYTES}"
            )
        need = shard_load_bytes(sum(sizes.values()), rows["T"][0], rows["E"][0], dim, n_act)
        most = max(SHARD_MEMORY_FLOOR, SHARD_MEMORY_PER_BYTE * z.size)
        if need > most:
            raise ShardError(
                f"{path}: its arrays declare {need} bytes once loaded; a shard of {z.size} bytes "
                f"may take at most {most} ({SHARD_MEMORY_PER_BYTE} per byte of the file, at "
                f"least {SHARD_MEMORY_FLOOR})"
            )
        a = {k: z.read(k, sizes[k]) for k in heads}
    if not np.isfinite(a["codebook"]).all():
        raise ShardError(f"{path}: its codebook is not a list of finite values")
    if a["obs"].size and int(a["obs"].max()) >= a["codebook"].size:
        raise ShardError(f"{path}: an observation index past its codebook")
    for k in ("labels", "played"):
        if a[k].size and (int(a[k].min()) < 0 or int(a[k].max()) >= n_act):
            raise ShardError(f"{path}: array {k!r} holds an action outside 0 … {n_act - 1}")
    return a


def game_starts(episode: np.ndarray) -> np.ndarray:
    """For positions stored game after game (``episode``: each one's deal): the row where each
    game starts, then the number of rows, so game ``i`` is rows ``[s[i], s[i + 1])``."""
    return np.r_[0, np.flatnonzero(episode[1:] != episode[:-1]) + 1, len(episode)]


def won_deals(data: dict[str, np.ndarray]) -> dict[int, bool]:
    """Whether each deal of ``data`` (:func:`load_shards`) was won."""
    return dict(zip(data["deals"].tolist(), data["won"].tolist(), strict=True))


def previous_actions(episode: np.ndarray, played: np.ndarray, n_actions: int) -> np.ndarray:
    """For positions stored game after game: the action played just before each one in its
    game (``n_actions`` for a game's first position)."""
    prev = np.full(len(played), n_actions, np.int64)
    same = episode[1:] == episode[:-1]
    prev[1:][same] = played[:-1][same]
    return prev


def load_shards(
    paths: Sequence[str | os.PathLike[str]], *, variant: str | None = None
) -> dict[str, np.ndarray]:
    """Concatenate shards into arrays: ``obs`` (T, D) float32, ``masks`` (T, N) bool,
    ``labels``, ``safe``, ``played``, ``episode``, ``prev`` (the action played before each
    position in its game, N for the first); plus ``deals`` and ``won`` per deal. With
    ``variant``, refuse a shard of another game variant (its observation or action layout may
    differ). Refuse two shards that hold the same deal (e.g. a folder that holds the shards of
    two chunkings): its games would count twice."""
    parts: dict[str, list[np.ndarray]] = {}
    n_act = None
    holder: dict[int, str] = {}
    for p in paths:
        meta = read_meta(p)
        if variant is not None and meta.get("variant") != variant:
            raise ShardError(f"{p} holds {meta.get('variant')!r} positions, not {variant!r}")
        if n_act is None:
            n_act = meta["n_actions"]
        if meta["n_actions"] != n_act:
            raise ShardError(f"{p}: {meta['n_actions']} actions, other shards {n_act}")
        z = _read_shard(p, meta)
        parts.setdefault("obs", []).append(z["codebook"][z["obs"]])
        masks = np.unpackbits(z["masks"], axis=1, count=n_act).view(bool)  # 0 or 1: no copy
        parts.setdefault("masks", []).append(masks)
        for k in ("labels", "safe", "played", "episode", "deals", "won"):
            parts.setdefault(k, []).append(z[k])
        for d in z["deals"].tolist():
            if d in holder:
                raise ShardError(f"{holder[d]} and {p} both hold training deal {d}")
            holder[d] = str(p)
        del z  # the shard as stored: its arrays are decoded or held in parts
    if not parts:
        raise ShardError("no shards to load")
    # one shard's decoded arrays are new (writable) already: only a read-only one is copied
    out = {
        k: v[0] if len(v) == 1 and v[0].flags.writeable else np.concatenate(v)
        for k, v in parts.items()
    }
    out["labels"] = out["labels"].astype(np.int64)
    out["played"] = out["played"].astype(np.int64)
    out["prev"] = previous_actions(out["episode"], out["played"], n_act)
    rows = np.arange(len(out["labels"]))
    if not out["masks"][rows, out["labels"]].all():
        raise ShardError("a label is not a legal action of its position")
    return out
